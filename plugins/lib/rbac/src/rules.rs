//! rbac.authorization.k8s.io/v1 PolicyRule and the matching helpers of
//! kube's `pkg/apis/rbac/v1/evaluation_helpers.go` (VerbMatches,
//! APIGroupMatches, ResourceMatches, ResourceNameMatches,
//! NonResourceURLMatches) plus `CompactString` for escalation messages.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use kube_rules::gofmt::quote_list;

/// `*`: every verb, group, resource or non-resource URL.
pub const ALL: &str = "*";

/// One rule of a Role or ClusterRole.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRule {
    #[serde(default)]
    pub verbs: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_groups: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_names: Vec<String>,
    #[serde(
        default,
        rename = "nonResourceURLs",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub non_resource_urls: Vec<String>,
}

impl PolicyRule {
    /// Reads a rule from JSON leniently: missing or non-array fields are
    /// empty, non-string entries are dropped (stored objects may be malformed).
    pub fn from_json(rule: &Value) -> PolicyRule {
        PolicyRule {
            verbs: strings(rule, "verbs"),
            api_groups: strings(rule, "apiGroups"),
            resources: strings(rule, "resources"),
            resource_names: strings(rule, "resourceNames"),
            non_resource_urls: strings(rule, "nonResourceURLs"),
        }
    }

    /// The rules under `field` of an object (`rules` of a Role), leniently.
    pub fn list_from_json(object: &Value, field: &str) -> Vec<PolicyRule> {
        match object.get(field) {
            Some(Value::Array(rules)) => rules.iter().map(PolicyRule::from_json).collect(),
            _ => Vec::new(),
        }
    }

    /// kube's `CompactString`: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["create"]}`,
    /// listing only the non-empty fields, in this order.
    pub fn compact_string(&self) -> String {
        let fields = [
            ("APIGroups", &self.api_groups),
            ("Resources", &self.resources),
            ("NonResourceURLs", &self.non_resource_urls),
            ("ResourceNames", &self.resource_names),
            ("Verbs", &self.verbs),
        ];
        let parts: Vec<String> = fields
            .iter()
            .filter(|(_, values)| !values.is_empty())
            .map(|(label, values)| format!("{label}:{}", quote_list(values)))
            .collect();
        format!("{{{}}}", parts.join(", "))
    }

    /// kube's `VerbMatches`.
    pub fn verb_matches(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == ALL || v == verb)
    }

    /// kube's `APIGroupMatches`.
    pub fn api_group_matches(&self, group: &str) -> bool {
        self.api_groups.iter().any(|g| g == ALL || g == group)
    }

    /// kube's `ResourceMatches`: `*`, an exact `resource` or
    /// `resource/subresource`, or `*/subresource` for any resource's subresource.
    pub fn resource_matches(&self, resource: &str, subresource: &str) -> bool {
        let combined = combined_resource(resource, subresource);
        self.resources.iter().any(|r| {
            r == ALL
                || *r == combined
                || (!subresource.is_empty() && r.strip_prefix("*/") == Some(subresource))
        })
    }

    /// kube's `ResourceNameMatches`: no names means every name.
    pub fn resource_name_matches(&self, name: &str) -> bool {
        self.resource_names.is_empty() || self.resource_names.iter().any(|n| n == name)
    }

    /// kube's `NonResourceURLMatches`: `*`, exact, or a prefix ending in `*`.
    pub fn non_resource_url_matches(&self, path: &str) -> bool {
        self.non_resource_urls
            .iter()
            .any(|url| url == ALL || url_covers(url, path))
    }
}

/// `resource/subresource`, or `resource` when there is no subresource.
fn combined_resource(resource: &str, subresource: &str) -> String {
    if subresource.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}/{subresource}")
    }
}

/// An owner URL covers a path when equal, or when it ends in `*` and the
/// path starts with what precedes the trailing stars.
pub(crate) fn url_covers(owner: &str, path: &str) -> bool {
    owner == path || (owner.ends_with('*') && path.starts_with(owner.trim_end_matches('*')))
}

/// The strings of an array field; empty when absent or not an array.
fn strings(object: &Value, field: &str) -> Vec<String> {
    match object.get(field) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// Builds a rule from string slices (handy in tests and for fixed rules).
pub fn rule(verbs: &[&str], api_groups: &[&str], resources: &[&str]) -> PolicyRule {
    let owned = |items: &[&str]| items.iter().map(|s| s.to_string()).collect();
    PolicyRule {
        verbs: owned(verbs),
        api_groups: owned(api_groups),
        resources: owned(resources),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn verbs_and_groups_match_exactly_or_by_star() {
        let r = rule(&["get", "list"], &["", "apps"], &["pods"]);
        assert!(r.verb_matches("get") && !r.verb_matches("delete"));
        assert!(r.api_group_matches("") && r.api_group_matches("apps"));
        assert!(!r.api_group_matches("batch"));
        let star = rule(&["*"], &["*"], &["*"]);
        assert!(star.verb_matches("escalate") && star.api_group_matches("x.io"));
    }

    #[test]
    fn resources_match_subresources_only_when_named() {
        let pods = rule(&["get"], &[""], &["pods"]);
        assert!(pods.resource_matches("pods", ""));
        assert!(!pods.resource_matches("pods", "log"));
        let log = rule(&["get"], &[""], &["pods/log"]);
        assert!(log.resource_matches("pods", "log"));
        assert!(!log.resource_matches("pods", ""));
        let any_status = rule(&["get"], &["*"], &["*/status"]);
        assert!(any_status.resource_matches("deployments", "status"));
        assert!(!any_status.resource_matches("deployments", "scale"));
        assert!(!any_status.resource_matches("deployments", ""));
        let star = rule(&["get"], &[""], &["*"]);
        assert!(star.resource_matches("pods", "exec"));
    }

    #[test]
    fn resource_slash_star_is_not_a_wildcard() {
        let r = rule(&["get"], &[""], &["pods/*"]);
        assert!(!r.resource_matches("pods", "log"));
        assert!(!r.resource_matches("pods", ""));
    }

    #[test]
    fn resource_names_restrict_when_present() {
        let mut r = rule(&["get"], &[""], &["configmaps"]);
        assert!(r.resource_name_matches("anything") && r.resource_name_matches(""));
        r.resource_names = vec!["a".into()];
        assert!(r.resource_name_matches("a"));
        assert!(!r.resource_name_matches("b") && !r.resource_name_matches(""));
    }

    #[test]
    fn non_resource_urls_match_exactly_or_by_trailing_star() {
        let r = PolicyRule {
            verbs: vec!["get".into()],
            non_resource_urls: vec!["/healthz".into(), "/apis/*".into()],
            ..Default::default()
        };
        assert!(r.non_resource_url_matches("/healthz"));
        assert!(!r.non_resource_url_matches("/healthz/ready"));
        assert!(r.non_resource_url_matches("/apis/"));
        assert!(r.non_resource_url_matches("/apis/apps/v1"));
        assert!(!r.non_resource_url_matches("/api"));
        let all = PolicyRule {
            non_resource_urls: vec!["*".into()],
            ..Default::default()
        };
        assert!(all.non_resource_url_matches("/anything"));
    }

    #[test]
    fn parses_leniently() {
        let r = PolicyRule::from_json(&json!({"verbs": ["get", 3], "apiGroups": "apps",
            "resources": ["pods"], "nonResourceURLs": null}));
        assert_eq!(r, rule(&["get"], &[], &["pods"]));
        assert!(PolicyRule::list_from_json(&json!({"rules": {}}), "rules").is_empty());
    }

    #[test]
    fn compact_string_reads_like_kube() {
        let mut r = rule(&["create"], &["apps"], &["deployments"]);
        assert_eq!(
            r.compact_string(),
            "{APIGroups:[\"apps\"], Resources:[\"deployments\"], Verbs:[\"create\"]}"
        );
        r.resource_names = vec!["a".into(), "b".into()];
        assert_eq!(
            r.compact_string(),
            "{APIGroups:[\"apps\"], Resources:[\"deployments\"], ResourceNames:[\"a\" \"b\"], Verbs:[\"create\"]}"
        );
        let url = PolicyRule {
            verbs: vec!["get".into()],
            non_resource_urls: vec!["/metrics".into()],
            ..Default::default()
        };
        assert_eq!(
            url.compact_string(),
            "{NonResourceURLs:[\"/metrics\"], Verbs:[\"get\"]}"
        );
    }
}
