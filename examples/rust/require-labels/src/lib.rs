//! Admission policy `require-labels`: rejects creates and updates of
//! objects that lack any of the labels listed in its configuration,
//! `{"labels": ["team"]}`. Subresources (status, scale...) and deletes are
//! not checked.

use capstan_plugin_sdk::{
    host, object, AdmissionPlugin, AdmissionRequest, AdmissionResponse, Operation,
};
use serde::Deserialize;

/// The plugin's configuration.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    /// Label keys every object must carry.
    #[serde(default)]
    labels: Vec<String>,
}

/// The policy.
pub struct Policy;

impl AdmissionPlugin for Policy {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let writes = matches!(req.operation, Operation::Create | Operation::Update);
        let Some(obj) = req
            .object
            .as_ref()
            .filter(|_| writes && req.subresource().is_empty())
        else {
            return Ok(AdmissionResponse::allow());
        };
        let config: Config = host::config()?;
        let present = object::labels(obj);
        let missing: Vec<&str> = config
            .labels
            .iter()
            .map(String::as_str)
            .filter(|key| !present.contains_key(*key))
            .collect();
        if missing.is_empty() {
            return Ok(AdmissionResponse::allow());
        }
        host::log(
            host::Level::Info,
            &format!("rejecting {}: missing {missing:?}", req.object_name()),
        );
        let message = format!("missing required label(s): {}", missing.join(", "));
        Ok(AdmissionResponse::forbidden(req, &message))
    }
}

capstan_plugin_sdk::admission_plugin!(Policy);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::{json, testing, Value};

    fn create(obj: Value) -> AdmissionResponse {
        let req = testing::request(
            Operation::Create,
            "apps/v1",
            "deployments",
            "Deployment",
            "ns",
            obj,
        );
        Policy::review(&req).unwrap()
    }

    #[test]
    fn rejects_objects_missing_a_listed_label() {
        testing::reset();
        testing::set_config(json!({"labels": ["team", "tier"]}));
        let r = create(json!({"metadata": {"name": "web", "labels": {"tier": "front"}}}));
        assert!(!r.allowed);
        assert_eq!(r.code(), 403);
        assert_eq!(
            r.message(),
            "deployments.apps \"web\" is forbidden: missing required label(s): team"
        );
        assert_eq!(testing::logs().len(), 1);
    }

    #[test]
    fn allows_labelled_objects_and_empty_config() {
        testing::reset();
        testing::set_config(json!({"labels": ["team"]}));
        assert!(create(json!({"metadata": {"name": "web", "labels": {"team": "a"}}})).allowed);
        testing::reset();
        assert!(create(json!({"metadata": {"name": "web"}})).allowed);
    }

    #[test]
    fn deletes_and_subresources_are_not_checked_and_bad_config_fails() {
        testing::reset();
        testing::set_config(json!({"labels": ["team"]}));
        let mut req = testing::request(
            Operation::Update,
            "v1",
            "pods",
            "Pod",
            "ns",
            json!({"metadata": {}}),
        );
        req.sub_resource = Some("status".into());
        assert!(Policy::review(&req).unwrap().allowed);
        testing::set_config(json!({"label": "team"}));
        assert!(Policy::review(&testing::request(
            Operation::Create,
            "v1",
            "pods",
            "Pod",
            "ns",
            json!({})
        ))
        .is_err());
    }
}
