//! A PolicyBundle's spec as the loader reads it (the schema in
//! `resource.rs` has checked its shape on write; `paths.rs` where its
//! bundle may be read from).

use super::mode::Mode;
use crate::admission::config::FailurePolicy;
use crate::admission::matcher::Rule;
use serde::Deserialize;
use serde_json::Value;

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Spec {
    pub bundle: String,
    /// None: every policy of the bundle.
    #[serde(default)]
    pub policies: Option<Vec<String>>,
    #[serde(default)]
    pub mode: Mode,
    #[serde(default)]
    pub overrides: Vec<Override>,
    #[serde(default)]
    pub namespace_selector: Option<Value>,
    #[serde(default)]
    pub object_selector: Option<Value>,
    /// CEL conditions, as a webhook's: every policy runs only where all hold.
    #[serde(default)]
    pub match_conditions: Option<Value>,
}

/// What a PolicyBundle changes in one policy.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Override {
    pub name: String,
    #[serde(default)]
    pub settings: Option<Value>,
    #[serde(default)]
    pub rules: Option<Vec<Rule>>,
    #[serde(default)]
    pub failure_policy: Option<FailurePolicy>,
    /// Instead of the spec's matchConditions, for this policy.
    #[serde(default)]
    pub match_conditions: Option<Value>,
}

impl Spec {
    /// The spec of a stored PolicyBundle.
    pub fn of(obj: &Value) -> Result<Spec, String> {
        let spec = obj.get("spec").cloned().unwrap_or_default();
        serde_json::from_value(spec).map_err(|e| format!("spec: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_spec_defaults_to_enforcing_every_policy() {
        let spec = Spec::of(&json!({"spec": {"bundle": "b.tar"}})).unwrap();
        assert_eq!((spec.mode, spec.policies), (Mode::Enforce, None));
        let spec = Spec::of(&json!({"spec": {"bundle": "b.tar", "mode": "Audit",
            "overrides": [{"name": "p", "failurePolicy": "Ignore", "settings": {"a": 1}}]}}))
        .unwrap();
        assert_eq!(spec.mode, Mode::Audit);
        assert_eq!(
            spec.overrides[0].failure_policy,
            Some(FailurePolicy::Ignore)
        );
    }
}
