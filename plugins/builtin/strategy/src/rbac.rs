//! RoleBindings and ClusterRoleBindings (`ValidateRoleBinding`,
//! `ValidateClusterRoleBinding` and their updates): roleRef's apiGroup,
//! kind and name, and a roleRef that never changes.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common::{self, text};
use crate::gofmt;

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// A create or update of a binding; `cluster` for ClusterRoleBindings.
pub fn binding(object: &Value, old: Option<&Value>, cluster: bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    let role_ref = object.get("roleRef").unwrap_or(&Value::Null);
    let api_group = text(role_ref, "apiGroup");
    if api_group != RBAC_GROUP {
        causes.push(common::not_supported(
            "roleRef.apiGroup",
            api_group,
            &[RBAC_GROUP],
        ));
    }
    let kinds: &[&str] = if cluster {
        &["ClusterRole"]
    } else {
        &["Role", "ClusterRole"]
    };
    let kind = text(role_ref, "kind");
    if !kinds.contains(&kind) {
        causes.push(common::not_supported("roleRef.kind", kind, kinds));
    }
    let name = text(role_ref, "name");
    if name.is_empty() {
        causes.push(common::required("roleRef.name", ""));
    } else {
        common::invalid_each(&mut causes, "roleRef.name", name, path_segment(name));
    }
    if let Some(old) = old {
        let old_ref = old.get("roleRef").unwrap_or(&Value::Null);
        if rendered(old_ref) != rendered(role_ref) {
            causes.push(common::invalid(
                "roleRef",
                &rendered(role_ref),
                "cannot change roleRef",
            ));
        }
    }
    causes
}

/// `path.ValidatePathSegmentName` (what `ValidateRBACName` checks).
fn path_segment(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    match name {
        "." | ".." => errs.push(format!("may not be '{name}'")),
        _ => {
            for bad in ["/", "%"] {
                if name.contains(bad) {
                    errs.push(format!("may not contain '{bad}'"));
                }
            }
        }
    }
    errs
}

/// The internal `rbac.RoleRef` as Go's `%#v` prints it.
fn rendered(role_ref: &Value) -> String {
    format!(
        "rbac.RoleRef{{APIGroup:{}, Kind:{}, Name:{}}}",
        gofmt::quote(text(role_ref, "apiGroup")),
        gofmt::quote(text(role_ref, "kind")),
        gofmt::quote(text(role_ref, "name"))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::messages;
    use serde_json::json;

    fn rb(kind: &str, name: &str) -> Value {
        json!({"roleRef": {"apiGroup": RBAC_GROUP, "kind": kind, "name": name}})
    }

    #[test]
    fn role_ref_kind_group_and_name() {
        assert!(binding(&rb("Role", "r"), None, false).is_empty());
        assert_eq!(
            messages(&binding(&rb("clusterrole", "r"), None, false)),
            vec!["roleRef.kind: Unsupported value: \"clusterrole\": supported values: \"Role\", \"ClusterRole\""]
        );
        assert_eq!(
            messages(&binding(&rb("Role", "r"), None, true)),
            vec!["roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\""]
        );
        assert_eq!(
            messages(&binding(&json!({}), None, false)),
            vec![
                "roleRef.apiGroup: Unsupported value: \"\": supported values: \"rbac.authorization.k8s.io\"",
                "roleRef.kind: Unsupported value: \"\": supported values: \"Role\", \"ClusterRole\"",
                "roleRef.name: Required value",
            ]
        );
        assert_eq!(
            messages(&binding(&rb("Role", "a/b"), None, false)),
            vec!["roleRef.name: Invalid value: \"a/b\": may not contain '/'"]
        );
    }

    #[test]
    fn role_ref_is_immutable() {
        assert!(binding(&rb("Role", "a"), Some(&rb("Role", "a")), false).is_empty());
        assert_eq!(
            messages(&binding(&rb("Role", "b"), Some(&rb("Role", "a")), false)),
            vec![
                "roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", \
                 Kind:\"Role\", Name:\"b\"}: cannot change roleRef"
            ]
        );
    }
}
