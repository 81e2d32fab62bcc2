//! The RBAC objects as the policy needs them (Role/ClusterRole, RoleBinding/
//! ClusterRoleBinding, Subject, RoleRef), read leniently from the JSON that
//! the store returns: objects without a name (or, when namespaced, without
//! a namespace) are skipped, and malformed fields read as empty.

use serde_json::Value;

use crate::rules::PolicyRule;

/// `Subject.kind` of a user.
pub const USER_KIND: &str = "User";
/// `Subject.kind` of a group.
pub const GROUP_KIND: &str = "Group";
/// `Subject.kind` of a service account.
pub const SERVICE_ACCOUNT_KIND: &str = "ServiceAccount";
/// `RoleRef.kind` of a Role.
pub const ROLE_KIND: &str = "Role";
/// `RoleRef.kind` of a ClusterRole.
pub const CLUSTER_ROLE_KIND: &str = "ClusterRole";

/// A Role (namespace set) or ClusterRole (namespace "").
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Role {
    pub namespace: String,
    pub name: String,
    pub rules: Vec<PolicyRule>,
}

impl Role {
    /// Reads a Role (`namespaced`) or ClusterRole; None without a name or
    /// (for a Role) without a namespace.
    pub fn from_json(object: &Value, namespaced: bool) -> Option<Role> {
        let (namespace, name) = identity(object, namespaced)?;
        Some(Role {
            namespace,
            name,
            rules: PolicyRule::list_from_json(object, "rules"),
        })
    }
}

/// `roleRef` of a binding.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoleRef {
    pub api_group: String,
    pub kind: String,
    pub name: String,
}

impl RoleRef {
    /// Reads `roleRef` of a binding object (empty fields when absent).
    pub fn from_binding(object: &Value) -> RoleRef {
        let field = |key: &str| text(object, &["roleRef", key]);
        RoleRef {
            api_group: field("apiGroup"),
            kind: field("kind"),
            name: field("name"),
        }
    }
}

/// One subject of a binding.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subject {
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

impl Subject {
    fn from_json(subject: &Value) -> Subject {
        Subject {
            kind: text(subject, &["kind"]),
            name: text(subject, &["name"]),
            namespace: text(subject, &["namespace"]),
        }
    }

    /// The namespace of a ServiceAccount subject: its own, else the
    /// binding's (kube's appliesToUser); "" when neither is set.
    pub fn service_account_namespace<'a>(&'a self, binding_namespace: &'a str) -> &'a str {
        if self.namespace.is_empty() {
            binding_namespace
        } else {
            &self.namespace
        }
    }
}

/// The user name of service account `name` in `namespace`.
pub fn service_account_username(namespace: &str, name: &str) -> String {
    format!("system:serviceaccount:{namespace}:{name}")
}

/// A RoleBinding (namespace set) or ClusterRoleBinding (namespace "").
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Binding {
    pub namespace: String,
    pub name: String,
    pub role_ref: RoleRef,
    pub subjects: Vec<Subject>,
}

impl Binding {
    /// Reads a RoleBinding (`namespaced`) or ClusterRoleBinding; None
    /// without a name or (for a RoleBinding) without a namespace.
    pub fn from_json(object: &Value, namespaced: bool) -> Option<Binding> {
        let (namespace, name) = identity(object, namespaced)?;
        let subjects = match object.get("subjects") {
            Some(Value::Array(items)) => items.iter().map(Subject::from_json).collect(),
            _ => Vec::new(),
        };
        Some(Binding {
            namespace,
            name,
            role_ref: RoleRef::from_binding(object),
            subjects,
        })
    }

    /// True for a ClusterRoleBinding.
    pub fn is_cluster(&self) -> bool {
        self.namespace.is_empty()
    }
}

/// (namespace, name) of an object; "" namespace for cluster-scoped ones.
fn identity(object: &Value, namespaced: bool) -> Option<(String, String)> {
    let name = text(object, &["metadata", "name"]);
    let namespace = if namespaced {
        text(object, &["metadata", "namespace"])
    } else {
        String::new()
    };
    let complete = !name.is_empty() && (!namespaced || !namespace.is_empty());
    complete.then_some((namespace, name))
}

/// The string at a path of keys, "" when absent or not a string.
fn text(object: &Value, path: &[&str]) -> String {
    path.iter()
        .try_fold(object, |v, key| v.get(*key))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_bindings_and_skips_incomplete_ones() {
        let rb = json!({"metadata": {"name": "b", "namespace": "ns"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": [{"kind": "User", "name": "alice"}, "junk"]});
        let b = Binding::from_json(&rb, true).unwrap();
        assert_eq!(b.namespace, "ns");
        assert_eq!(b.role_ref.kind, "Role");
        assert_eq!(b.subjects.len(), 2);
        assert_eq!(b.subjects[1], Subject::default());
        assert!(Binding::from_json(&json!({"metadata": {"name": "b"}}), true).is_none());
        assert!(Binding::from_json(&json!({"metadata": {}}), false).is_none());
        let crb = Binding::from_json(&json!({"metadata": {"name": "c", "namespace": "x"}}), false);
        assert!(crb.unwrap().is_cluster());
    }

    #[test]
    fn reads_roles() {
        let role = json!({"metadata": {"name": "r", "namespace": "ns"},
            "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]});
        let r = Role::from_json(&role, true).unwrap();
        assert_eq!(r.rules.len(), 1);
        assert!(Role::from_json(&json!("nope"), false).is_none());
    }

    #[test]
    fn service_account_namespace_defaults_to_the_binding() {
        let s = Subject {
            kind: SERVICE_ACCOUNT_KIND.into(),
            name: "sa".into(),
            namespace: String::new(),
        };
        assert_eq!(s.service_account_namespace("ns"), "ns");
        assert_eq!(
            service_account_username("ns", "sa"),
            "system:serviceaccount:ns:sa"
        );
    }
}
