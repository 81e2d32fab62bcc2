//! The `rbac.authorization.k8s.io` group's kinds.

pub(crate) mod validation;

pub(crate) mod table;
use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use super::{KindRules, Printer};
use crate::json::{child_mut, items_mut, set_if_zero};

pub(super) struct Roles;

impl KindRules for Roles {
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        validation::role(object, true)
    }
}

pub(super) struct ClusterRoles;

impl KindRules for ClusterRoles {
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        validation::role(object, false)
    }
}

pub(super) struct RoleBindings;

impl KindRules for RoleBindings {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        binding_defaults(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        validation::binding(object, old, false)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::role_binding_columns,
            table::role_binding_row,
        ))
    }
}

pub(super) struct ClusterRoleBindings;

impl KindRules for ClusterRoleBindings {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        binding_defaults(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        validation::binding(object, old, true)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::role_binding_columns,
            table::role_binding_row,
        ))
    }
}

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// `SetDefaults_RoleBinding` / `SetDefaults_ClusterRoleBinding` and
/// `SetDefaults_Subject`: the role and user or group subjects are RBAC's.
fn binding_defaults(object: &mut Value) {
    if let Some(role_ref) = child_mut(object, "roleRef") {
        set_if_zero(role_ref, "/apiGroup", json!(RBAC_GROUP));
    }
    for subject in items_mut(object, "subjects") {
        let kind = subject.get("kind").and_then(Value::as_str);
        if matches!(kind, Some("User" | "Group")) {
            set_if_zero(subject, "/apiGroup", json!(RBAC_GROUP));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defaults::with;
    use serde_json::json;

    #[test]
    fn bindings_name_the_rbac_group() {
        let b = with(
            binding_defaults,
            json!({"roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "u"}, {"kind": "Group", "name": "g"},
                         {"kind": "ServiceAccount", "name": "sa", "namespace": "d"}]}),
        );
        assert_eq!(b["roleRef"]["apiGroup"], RBAC_GROUP);
        assert_eq!(b["subjects"][0]["apiGroup"], RBAC_GROUP);
        assert_eq!(b["subjects"][1]["apiGroup"], RBAC_GROUP);
        assert!(b["subjects"][2].get("apiGroup").is_none());
    }
}
