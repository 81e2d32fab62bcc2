//! Which admission entries a request reaches: the rules of
//! admissionregistration.k8s.io/v1 webhooks (operations, apiGroups,
//! apiVersions, resources with subresources and wildcards, scope), plus
//! namespaceSelector and objectSelector. Wasm plugins and HTTP webhooks are
//! matched by this one code.

use crate::apimachinery::selectors::{from_label_selector_object, LabelSelector};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One rule, as in a webhook configuration.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rule {
    #[serde(default)]
    pub operations: Vec<String>,
    #[serde(default)]
    pub api_groups: Vec<String>,
    #[serde(default)]
    pub api_versions: Vec<String>,
    #[serde(default)]
    pub resources: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// What a request is, for matching.
#[derive(Clone, Debug)]
pub struct RequestAttributes {
    pub operation: &'static str,
    pub group: String,
    pub version: String,
    pub resource: String,
    pub subresource: String,
    pub namespaced: bool,
}

const OPERATIONS: [&str; 5] = ["*", "CREATE", "UPDATE", "DELETE", "CONNECT"];
const SCOPES: [&str; 3] = ["*", "Cluster", "Namespaced"];

fn listed(list: &[String], value: &str) -> bool {
    list.iter().any(|v| v == "*" || v == value)
}

/// `pods`, `pods/status`, `*`, `*/status`, `pods/*`, `*/*` as kube matches them.
fn resource_matches(patterns: &[String], resource: &str, subresource: &str) -> bool {
    patterns.iter().any(|p| {
        let (pr, ps) = p.split_once('/').unwrap_or((p.as_str(), ""));
        let res_ok = pr == "*" || pr == resource;
        let sub_ok = match (ps, subresource) {
            ("*", _) => true,
            (ps, sub) => ps == sub,
        };
        res_ok && sub_ok && !(pr == "*" && ps.is_empty() && !subresource.is_empty())
    })
}

impl Rule {
    /// Does this rule cover the request?
    pub fn matches(&self, a: &RequestAttributes) -> bool {
        let scope_ok = match self.scope.as_deref().unwrap_or("*") {
            "Cluster" => !a.namespaced,
            "Namespaced" => a.namespaced,
            _ => true,
        };
        listed(&self.operations, a.operation)
            && listed(&self.api_groups, &a.group)
            && listed(&self.api_versions, &a.version)
            && resource_matches(&self.resources, &a.resource, &a.subresource)
            && scope_ok
    }

    /// Problems with the rule, each a sentence (for configuration errors).
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for op in &self.operations {
            if !OPERATIONS.contains(&op.as_str()) {
                out.push(format!(
                    "unsupported operation {op:?} (one of {})",
                    OPERATIONS.join(", ")
                ));
            }
        }
        if let Some(s) = &self.scope {
            if !SCOPES.contains(&s.as_str()) {
                out.push(format!(
                    "unsupported scope {s:?} (one of {})",
                    SCOPES.join(", ")
                ));
            }
        }
        for (field, list) in [
            ("operations", &self.operations),
            ("apiGroups", &self.api_groups),
            ("apiVersions", &self.api_versions),
            ("resources", &self.resources),
        ] {
            if list.is_empty() {
                out.push(format!("{field} must not be empty"));
            }
        }
        for r in &self.resources {
            if r.matches('/').count() > 1 || r.is_empty() {
                out.push(format!("invalid resource {r:?}"));
            }
        }
        out
    }
}

/// A parsed label selector; `None` in the configuration means "everything".
#[derive(Clone, Debug)]
pub struct Selector(Option<LabelSelector>);

impl Selector {
    pub fn parse(v: Option<&Value>) -> Result<Selector, String> {
        match v {
            None | Some(Value::Null) => Ok(Selector(None)),
            Some(obj) => from_label_selector_object(obj).map(|s| Selector(Some(s))),
        }
    }

    /// The selector of everything (an absent one).
    pub fn everything() -> Selector {
        Selector(None)
    }

    pub fn matches(&self, labels: &Map<String, Value>) -> bool {
        self.0.as_ref().is_none_or(|s| s.matches(labels))
    }

    pub fn is_everything(&self) -> bool {
        self.0.is_none()
    }
}

/// Labels of an object (empty when it has none).
pub fn labels_of(obj: Option<&Value>) -> Map<String, Value> {
    obj.and_then(|o| o.pointer("/metadata/labels"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(op: &'static str, resource: &str, sub: &str) -> RequestAttributes {
        RequestAttributes {
            operation: op,
            group: String::new(),
            version: "v1".into(),
            resource: resource.into(),
            subresource: sub.into(),
            namespaced: true,
        }
    }

    fn rule(ops: &[&str], resources: &[&str]) -> Rule {
        Rule {
            operations: ops.iter().map(|s| s.to_string()).collect(),
            api_groups: vec!["".into()],
            api_versions: vec!["*".into()],
            resources: resources.iter().map(|s| s.to_string()).collect(),
            scope: None,
        }
    }

    #[test]
    fn wildcards_and_subresources_follow_webhook_rules() {
        assert!(rule(&["CREATE"], &["pods"]).matches(&attrs("CREATE", "pods", "")));
        assert!(!rule(&["CREATE"], &["pods"]).matches(&attrs("CREATE", "pods", "status")));
        assert!(rule(&["*"], &["pods/*"]).matches(&attrs("UPDATE", "pods", "status")));
        assert!(rule(&["*"], &["*/status"]).matches(&attrs("UPDATE", "deployments", "status")));
        assert!(!rule(&["*"], &["*"]).matches(&attrs("UPDATE", "pods", "status")));
        assert!(rule(&["*"], &["*/*"]).matches(&attrs("UPDATE", "pods", "status")));
        assert!(!rule(&["UPDATE"], &["*"]).matches(&attrs("CREATE", "pods", "")));
    }

    #[test]
    fn scope_limits_matches() {
        let mut r = rule(&["*"], &["*"]);
        r.scope = Some("Cluster".into());
        assert!(!r.matches(&attrs("CREATE", "pods", "")));
        r.scope = Some("Namespaced".into());
        assert!(r.matches(&attrs("CREATE", "pods", "")));
    }

    #[test]
    fn bad_rules_are_described() {
        let mut r = rule(&["CRATE"], &["pods"]);
        r.scope = Some("Global".into());
        let p = r.problems();
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p[0].contains("CRATE"));
    }

    #[test]
    fn selectors_default_to_everything() {
        let s = Selector::parse(None).unwrap();
        assert!(s.is_everything() && s.matches(&Map::new()));
        let s =
            Selector::parse(Some(&serde_json::json!({"matchLabels": {"env": "prod"}}))).unwrap();
        assert!(!s.matches(&Map::new()));
    }
}
