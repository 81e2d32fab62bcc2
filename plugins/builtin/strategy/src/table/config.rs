//! Rows for configuration and policy objects: ConfigMaps, Secrets,
//! ServiceAccounts, Leases, ResourceQuotas, PriorityClasses,
//! PodDisruptionBudgets, (Cluster)RoleBindings, CertificateSigningRequests
//! and webhook configurations (kube's printers).

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::access::{age, flag, human_duration, int, list, map, map_len, name, non_empty, text};

pub(crate) fn config_map_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let entries = map_len(obj, "/data") + map_len(obj, "/binaryData");
    vec![name(obj), Value::from(entries), age(obj, now)]
}

pub(crate) fn secret_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(obj),
        Value::from(text(obj, "/type")),
        Value::from(map_len(obj, "/data")),
        age(obj, now),
    ]
}

pub(crate) fn service_account_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let secrets = list(obj, "/secrets").len() as i64;
    vec![name(obj), Value::from(secrets), age(obj, now)]
}

pub(crate) fn lease_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(obj),
        Value::from(text(obj, "/spec/holderIdentity")),
        age(obj, now),
    ]
}

fn quantity_text(m: Option<&Map<String, Value>>, key: &str) -> String {
    match m.and_then(|m| m.get(key)) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "0".to_string(),
    }
}

/// REQUEST and LIMIT cells: `res: used/hard` pairs sorted by resource name.
fn quota_usage(obj: &Value) -> (String, String) {
    let hard = map(obj, "/status/hard");
    let used = map(obj, "/status/used");
    let mut names: Vec<&String> = hard.map(|h| h.keys().collect()).unwrap_or_default();
    names.sort();
    let (mut request, mut limit) = (Vec::new(), Vec::new());
    for res in names {
        let entry = format!(
            "{res}: {}/{}",
            quantity_text(used, res),
            quantity_text(hard, res)
        );
        let is_limit = res
            .split_once('.')
            .is_some_and(|(head, _)| head == "limits");
        if is_limit {
            limit.push(entry);
        } else {
            request.push(entry);
        }
    }
    (request.join(", "), limit.join(", "))
}

pub(crate) fn resource_quota_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let (request, limit) = quota_usage(obj);
    vec![
        name(obj),
        age(obj, now),
        Value::from(request),
        Value::from(limit),
    ]
}

pub(crate) fn priority_class_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(obj),
        Value::from(int(obj, "/value")),
        Value::from(flag(obj, "/globalDefault")),
        age(obj, now),
        Value::from(text(obj, "/preemptionPolicy")),
    ]
}

/// An IntOrString rendered like kube, or `N/A` when unset.
fn int_or_string(v: Option<&Value>) -> String {
    match v {
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) => s.clone(),
        _ => "N/A".to_string(),
    }
}

pub(crate) fn pod_disruption_budget_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(obj),
        Value::from(int_or_string(obj.pointer("/spec/minAvailable"))),
        Value::from(int_or_string(obj.pointer("/spec/maxUnavailable"))),
        Value::from(int(obj, "/status/disruptionsAllowed")),
        age(obj, now),
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

fn csr_condition(obj: &Value) -> String {
    let has = |kind: &str| {
        list(obj, "/status/conditions")
            .iter()
            .any(|c| text(c, "/type") == kind)
    };
    let mut status = if has("Denied") {
        "Denied"
    } else if has("Approved") {
        "Approved"
    } else {
        "Pending"
    }
    .to_string();
    if has("Failed") {
        status.push_str(",Failed");
    }
    if non_empty(obj, "/status/certificate").is_some() {
        status.push_str(",Issued");
    }
    status
}

pub(crate) fn certificate_signing_request_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let duration = match obj
        .pointer("/spec/expirationSeconds")
        .and_then(Value::as_i64)
    {
        Some(secs) => human_duration(chrono::Duration::seconds(secs)),
        None => "<none>".to_string(),
    };
    vec![
        name(obj),
        age(obj, now),
        Value::from(non_empty(obj, "/spec/signerName").unwrap_or("<none>")),
        Value::from(text(obj, "/spec/username")),
        Value::from(duration),
        Value::from(csr_condition(obj)),
    ]
}

pub(crate) fn webhook_configuration_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let count = list(obj, "/webhooks").len() as i64;
    vec![name(obj), Value::from(count), age(obj, now)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2024-01-01T00:00:30Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    fn meta() -> Value {
        json!({"name": "x", "creationTimestamp": "2024-01-01T00:00:00Z"})
    }

    #[test]
    fn data_counts() {
        let cm = json!({"metadata": meta(), "data": {"a": "1", "b": "2"}, "binaryData": {"c": ""}});
        assert_eq!(
            config_map_row(&cm, now()),
            [json!("x"), json!(3), json!("30s")]
        );
        let sec = json!({"metadata": meta(), "type": "Opaque", "data": {"k": "dg=="}});
        assert_eq!(secret_row(&sec, now())[1..3], [json!("Opaque"), json!(1)]);
        let sa = json!({"metadata": meta()});
        assert_eq!(service_account_row(&sa, now())[1], json!(0));
    }

    #[test]
    fn quota_columns() {
        let q = json!({"status": {
            "hard": {"limits.cpu": "2", "requests.cpu": "1", "pods": "10"},
            "used": {"limits.cpu": "500m", "pods": "3"}}});
        let (request, limit) = quota_usage(&q);
        assert_eq!(request, "pods: 3/10, requests.cpu: 0/1");
        assert_eq!(limit, "limits.cpu: 500m/2");
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

    #[test]
    fn csr_and_priority_class() {
        let csr = json!({"spec": {"signerName": "kubernetes.io/kube-apiserver-client",
                                  "username": "alice", "expirationSeconds": 86400},
                         "status": {"conditions": [{"type": "Approved"}], "certificate": "Zm9v"}});
        let cells = certificate_signing_request_row(&csr, now());
        assert_eq!(
            cells[3..6],
            [json!("alice"), json!("24h"), json!("Approved,Issued")]
        );
        let pc = json!({"value": 1000, "globalDefault": true});
        assert_eq!(
            priority_class_row(&pc, now())[1..3],
            [json!(1000), json!(true)]
        );
    }
}
