//! Roles and ClusterRoles (`ValidateRole`, `ValidateClusterRole`: each
//! rule's verbs, groups and resources or non-resource URLs, aggregation
//! selectors), and RoleBindings and ClusterRoleBindings
//! (`ValidateRoleBinding`, `ValidateClusterRoleBinding` and their updates):
//! roleRef's apiGroup, kind and name, the subjects, and a roleRef that
//! never changes.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common::{self, list, text};
use crate::selector;
use kube_rules::gofmt;

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
        common::invalid_each(
            &mut causes,
            "roleRef.name",
            name,
            kube_rules::path_segment_name(name),
        );
    }
    for (i, subject) in list(object, "subjects").iter().enumerate() {
        causes.extend(subject_causes(subject, !cluster, &format!("subjects[{i}]")));
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

/// `ValidateRoleBindingSubject`.
fn subject_causes(subject: &Value, namespaced: bool, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let name = text(subject, "name");
    if name.is_empty() {
        causes.push(common::required(&format!("{at}.name"), ""));
    }
    let group = text(subject, "apiGroup");
    let group_field = format!("{at}.apiGroup");
    match text(subject, "kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                let field = format!("{at}.name");
                common::invalid_each(
                    &mut causes,
                    &field,
                    name,
                    kube_rules::dns1123_subdomain(name),
                );
            }
            if !group.is_empty() {
                causes.push(common::not_supported(&group_field, group, &[""]));
            }
            if !namespaced && text(subject, "namespace").is_empty() {
                causes.push(common::required(&format!("{at}.namespace"), ""));
            }
        }
        "User" | "Group" => {
            if group != RBAC_GROUP {
                causes.push(common::not_supported(&group_field, group, &[RBAC_GROUP]));
            }
        }
        other => causes.push(common::not_supported(
            &format!("{at}.kind"),
            other,
            &["ServiceAccount", "User", "Group"],
        )),
    }
    causes
}

/// A Role (`namespaced`) or ClusterRole create or update.
pub fn role(object: &Value, namespaced: bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (i, rule) in list(object, "rules").iter().enumerate() {
        causes.extend(policy_rule(rule, namespaced, &format!("rules[{i}]")));
    }
    if namespaced {
        return causes;
    }
    if let Some(aggregation) = object.get("aggregationRule").filter(|a| !a.is_null()) {
        aggregation_rule(aggregation, &mut causes);
    }
    causes
}

fn aggregation_rule(aggregation: &Value, causes: &mut Vec<Cause>) {
    let at = "aggregationRule.clusterRoleSelectors";
    let selectors = list(aggregation, "clusterRoleSelectors");
    if selectors.is_empty() {
        let detail = "at least one clusterRoleSelector required if aggregationRule is non-nil";
        causes.push(common::required(at, detail));
    }
    for (i, sel) in selectors.iter().enumerate() {
        let field = format!("{at}[{i}]");
        let (problems, usable) = selector::check(sel, &field);
        causes.extend(problems);
        if !usable {
            causes.push(common::invalid_str(
                &field,
                "null",
                "invalid label selector.",
            ));
        }
    }
}

/// `ValidatePolicyRule`.
fn policy_rule(rule: &Value, namespaced: bool, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    if list(rule, "verbs").is_empty() {
        let detail = "verbs must contain at least one value";
        causes.push(common::required(&format!("{at}.verbs"), detail));
    }
    let urls = list(rule, "nonResourceURLs");
    if !urls.is_empty() {
        let field = format!("{at}.nonResourceURLs");
        let shown = gofmt::string_slice(rule.get("nonResourceURLs"));
        if namespaced {
            let detail = "namespaced rules cannot apply to non-resource URLs";
            causes.push(common::invalid(&field, &shown, detail));
        }
        let mixed = ["apiGroups", "resources", "resourceNames"]
            .iter()
            .any(|key| !list(rule, key).is_empty());
        if mixed {
            let detail = "rules cannot apply to both regular resources and non-resource URLs";
            causes.push(common::invalid(&field, &shown, detail));
        }
        return causes;
    }
    if list(rule, "apiGroups").is_empty() {
        let detail = "resource rules must supply at least one api group";
        causes.push(common::required(&format!("{at}.apiGroups"), detail));
    }
    if list(rule, "resources").is_empty() {
        let detail = "resource rules must supply at least one resource";
        causes.push(common::required(&format!("{at}.resources"), detail));
    }
    causes
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
    fn subjects_need_names_kinds_and_groups() {
        let mut b = rb("Role", "r");
        b["subjects"] = json!([{"kind": "ServiceAccount", "name": "Bad_SA", "apiGroup": "x"},
                               {"kind": "Robot", "name": "r"}]);
        let got = messages(&binding(&b, None, false));
        assert_eq!(
            got[1],
            "subjects[0].apiGroup: Unsupported value: \"x\": supported values: \"\""
        );
        assert_eq!(
            got[2],
            "subjects[1].kind: Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\""
        );
        let mut c = rb("ClusterRole", "r");
        c["subjects"] = json!([{"kind": "ServiceAccount", "name": "sa"}]);
        assert_eq!(
            messages(&binding(&c, None, true)),
            vec!["subjects[0].namespace: Required value"]
        );
    }

    #[test]
    fn rules_need_verbs_and_resources() {
        let r = json!({"rules": [{"resources": ["pods"]}, {"verbs": ["get"], "nonResourceURLs": ["/x"]}]});
        assert_eq!(
            messages(&role(&r, true)),
            vec![
                "rules[0].verbs: Required value: verbs must contain at least one value",
                "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
                "rules[1].nonResourceURLs: Invalid value: []string{\"/x\"}: namespaced rules cannot apply to non-resource URLs",
            ]
        );
        assert_eq!(messages(&role(&r, false)).len(), 2);
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
