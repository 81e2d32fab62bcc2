//! Multi-tenancy policy `require-namespace-labels`: a Namespace, when
//! created or updated, carries every label its settings list
//! (`{"labels": ["team", "cost-center"]}`), so each tenant's namespaces can
//! be told apart by selectors, quotas and reports. A label counts when its
//! key is present. A namespace already being deleted may still be updated
//! (its finalizers removed) whatever its labels.

use capstan_plugin_sdk::{host, object, AdmissionPlugin, AdmissionRequest, AdmissionResponse};
use serde::Deserialize;

/// The settings.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    /// The label keys every namespace carries.
    labels: Vec<String>,
}

/// The plugin.
pub struct RequireNamespaceLabels;

impl AdmissionPlugin for RequireNamespaceLabels {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let Some(namespace) = req.written_object("", "namespaces") else {
            return Ok(AdmissionResponse::allow());
        };
        if object::get(namespace, &["metadata", "deletionTimestamp"]).is_some() {
            return Ok(AdmissionResponse::allow());
        }
        let settings: Settings = host::config()?;
        let labels = object::labels(namespace);
        let missing: Vec<&str> = settings
            .labels
            .iter()
            .map(String::as_str)
            .filter(|key| !labels.contains_key(*key))
            .collect();
        Ok(verdict(req, &missing))
    }
}

/// Allowed when nothing is missing, else kube's Forbidden naming every
/// missing label, each also a `FieldValueRequired` cause at its key.
fn verdict(req: &AdmissionRequest, missing: &[&str]) -> AdmissionResponse {
    if missing.is_empty() {
        return AdmissionResponse::allow();
    }
    let quoted: Vec<String> = missing.iter().map(|k| format!("{k:?}")).collect();
    let plural = if missing.len() == 1 { "" } else { "s" };
    let message = format!("missing required label{plural} {}", quoted.join(", "));
    missing
        .iter()
        .fold(AdmissionResponse::forbidden(req, &message), |r, key| {
            r.with_cause(
                "FieldValueRequired",
                &format!("metadata.labels[{key}]"),
                "Required value",
            )
        })
}

capstan_plugin_sdk::admission_plugin!(RequireNamespaceLabels);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::{json, testing, Operation, Value};

    fn request(operation: Operation, labels: Value) -> AdmissionRequest {
        let ns = json!({"apiVersion": "v1", "kind": "Namespace",
                        "metadata": {"name": "payments", "labels": labels}});
        testing::request(operation, "v1", "namespaces", "Namespace", "", ns)
    }

    fn review(required: Value, operation: Operation, labels: Value) -> AdmissionResponse {
        testing::reset();
        testing::set_config(json!({ "labels": required }));
        RequireNamespaceLabels::review(&request(operation, labels)).unwrap()
    }

    #[test]
    fn a_namespace_with_every_required_label_is_allowed() {
        let labels = json!({"team": "payments", "cost-center": "cc-42", "other": "x"});
        let r = review(json!(["team", "cost-center"]), Operation::Create, labels);
        assert!(r.allowed);
        assert!(review(json!([]), Operation::Create, json!({})).allowed);
    }

    #[test]
    fn missing_labels_are_named_in_the_settings_order() {
        let r = review(
            json!(["team", "cost-center", "env"]),
            Operation::Create,
            json!({"env": "prod"}),
        );
        assert!(!r.allowed);
        assert_eq!(r.code(), 403);
        assert_eq!(
            r.message(),
            "namespaces \"payments\" is forbidden: missing required labels \"team\", \"cost-center\""
        );
        let details = r.status.unwrap().details.unwrap();
        assert_eq!(details.kind, "namespaces");
        let fields: Vec<&str> = details.causes.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(
            fields,
            ["metadata.labels[team]", "metadata.labels[cost-center]"]
        );
        assert_eq!(details.causes[0].cause_type, "FieldValueRequired");
    }

    #[test]
    fn an_update_dropping_a_required_label_is_refused() {
        let r = review(json!(["team"]), Operation::Update, json!({}));
        assert_eq!(
            r.message(),
            "namespaces \"payments\" is forbidden: missing required label \"team\""
        );
    }

    #[test]
    fn a_namespace_being_deleted_and_other_requests_are_allowed() {
        testing::reset();
        testing::set_config(json!({"labels": ["team"]}));
        let mut req = request(Operation::Update, json!({}));
        if let Some(o) = req.object.as_mut() {
            o["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        }
        assert!(RequireNamespaceLabels::review(&req).unwrap().allowed);
        let mut status = request(Operation::Update, json!({}));
        status.sub_resource = Some("status".into());
        assert!(RequireNamespaceLabels::review(&status).unwrap().allowed);
        let delete = request(Operation::Delete, json!({}));
        assert!(RequireNamespaceLabels::review(&delete).unwrap().allowed);
    }

    #[test]
    fn settings_are_required_and_checked() {
        testing::reset();
        let e = RequireNamespaceLabels::review(&request(Operation::Create, json!({}))).unwrap_err();
        assert!(e.contains("labels"), "{e}");
        testing::set_config(json!({"labels": ["team"], "extra": 1}));
        let e = RequireNamespaceLabels::review(&request(Operation::Create, json!({}))).unwrap_err();
        assert!(e.contains("extra"), "{e}");
    }
}
