//! JSON builders for RBAC objects, as the store would return them; for the
//! tests of this crate and of the plugins built on it.

use serde_json::{json, Value};

use crate::rules::PolicyRule;
use crate::GROUP;

/// The JSON of `rules`.
pub fn rules_json(rules: &[PolicyRule]) -> Value {
    serde_json::to_value(rules).unwrap_or(Value::Null)
}

/// A ClusterRole named `name` with `rules`.
pub fn cluster_role(name: &str, rules: &[PolicyRule]) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
           "metadata": {"name": name}, "rules": rules_json(rules)})
}

/// A Role `namespace/name` with `rules`.
pub fn role(namespace: &str, name: &str, rules: &[PolicyRule]) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
           "metadata": {"name": name, "namespace": namespace}, "rules": rules_json(rules)})
}

/// A binding with one subject: a ClusterRoleBinding when `namespace` is
/// "", else a RoleBinding in `namespace`. `subject_name` of a service
/// account may be `namespace:name` to set the subject's namespace.
pub fn binding(
    namespace: &str,
    name: &str,
    role_kind: &str,
    role_name: &str,
    subject_kind: &str,
    subject_name: &str,
) -> Value {
    let kind = if namespace.is_empty() {
        "ClusterRoleBinding"
    } else {
        "RoleBinding"
    };
    let mut metadata = json!({"name": name});
    if !namespace.is_empty() {
        metadata["namespace"] = json!(namespace);
    }
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": metadata,
           "roleRef": {"apiGroup": GROUP, "kind": role_kind, "name": role_name},
           "subjects": [subject(subject_kind, subject_name)]})
}

fn subject(kind: &str, name: &str) -> Value {
    match (kind, name.split_once(':')) {
        ("ServiceAccount", Some((namespace, name))) => {
            json!({"kind": kind, "name": name, "namespace": namespace})
        }
        ("ServiceAccount", None) => json!({"kind": kind, "name": name}),
        _ => json!({"apiGroup": GROUP, "kind": kind, "name": name}),
    }
}
