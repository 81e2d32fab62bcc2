//! The printers of RoleBindings and ClusterRoleBindings (kube's printers.go, wide cells included).

use crate::table::access::{age, list, name, text};
use crate::table::columns;
use crate::table::Column;
use chrono::{DateTime, Utc};
use serde_json::Value;

pub(crate) fn role_binding_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Role", "The role being granted."),
        columns::AGE,
        columns::wide("Users", "Users in the binding"),
        columns::wide("Groups", "Groups in the binding"),
        columns::wide("ServiceAccounts", "ServiceAccounts in the binding"),
    ]
}

/// kube's `SubjectsStrings`: users, groups and `namespace/name` accounts.
fn subjects(obj: &Value) -> [String; 3] {
    let (mut users, mut groups, mut accounts) = (Vec::new(), Vec::new(), Vec::new());
    for s in list(obj, "/subjects") {
        let n = text(s, "/name").to_string();
        match text(s, "/kind") {
            "User" => users.push(n),
            "Group" => groups.push(n),
            "ServiceAccount" => accounts.push(format!("{}/{n}", text(s, "/namespace"))),
            _ => {}
        }
    }
    [users.join(", "), groups.join(", "), accounts.join(", ")]
}

pub(crate) fn role_binding_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let role = format!(
        "{}/{}",
        text(obj, "/roleRef/kind"),
        text(obj, "/roleRef/name")
    );
    let mut cells = vec![name(obj), Value::from(role), age(obj, now)];
    cells.extend(subjects(obj).into_iter().map(Value::from));
    cells
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::policy::table::pod_disruption_budget_row;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        crate::table::at("2024-01-01T00:00:30Z")
    }

    fn meta() -> Value {
        json!({"name": "x", "creationTimestamp": "2024-01-01T00:00:00Z"})
    }

    #[test]
    fn bindings_and_budgets() {
        let rb = json!({"metadata": meta(), "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "alice"}, {"kind": "User", "name": "bob"},
                         {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}]});
        assert_eq!(
            role_binding_row(&rb, now()),
            [
                json!("x"),
                json!("ClusterRole/view"),
                json!("30s"),
                json!("alice, bob"),
                json!(""),
                json!("ns/sa")
            ]
        );
        let pdb = json!({"spec": {"minAvailable": "50%"}, "status": {"disruptionsAllowed": 1}});
        assert_eq!(
            pod_disruption_budget_row(&pdb, now())[1..4],
            [json!("50%"), json!("N/A"), json!(1)]
        );
    }
}
