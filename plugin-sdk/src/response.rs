//! The response half of an AdmissionReview and its builders: allow, deny
//! with a metav1.Status, JSON patches, warnings and audit annotations.
//! `forbidden` and `not_found` word their messages exactly as
//! kube-apiserver's `apierrors.NewForbidden` / `NewNotFound` do.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::patch::PatchOp;
use crate::review::AdmissionRequest;

/// `AdmissionReview.response`. `uid` is filled in by the SDK's dispatcher.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    #[serde(default)]
    pub uid: String,
    pub allowed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub audit_annotations: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The operations behind `patch`, kept for tests (not serialized).
    #[serde(skip)]
    pub patch_ops: Vec<PatchOp>,
}

/// A metav1.Status as carried in an admission response.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Status {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub status: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<StatusDetails>,
    #[serde(default)]
    pub code: u16,
}

/// metav1.StatusDetails.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatusDetails {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<StatusCause>,
}

/// metav1.StatusCause.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatusCause {
    #[serde(default, rename = "reason", skip_serializing_if = "String::is_empty")]
    pub cause_type: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field: String,
}

/// `<resource>.<group>`, or `<resource>` for the core group (GroupResource.String()).
pub fn group_resource(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

impl AdmissionResponse {
    /// Admits the request unchanged.
    pub fn allow() -> Self {
        AdmissionResponse {
            allowed: true,
            ..Default::default()
        }
    }

    /// Rejects the request with a Failure status (`code` e.g. 403, `reason`
    /// e.g. "Forbidden"); `message` is what kubectl prints after "Error from server".
    pub fn deny(code: u16, reason: &str, message: impl Into<String>) -> Self {
        AdmissionResponse {
            allowed: false,
            status: Some(Status {
                status: "Failure".to_string(),
                message: message.into(),
                reason: reason.to_string(),
                details: None,
                code,
            }),
            ..Default::default()
        }
    }

    /// kube's `admission.NewForbidden(a, err)`: 403,
    /// `<resource> "<name>" is forbidden: <message>`.
    pub fn forbidden(request: &AdmissionRequest, message: &str) -> Self {
        let name = request.object_name();
        let text = format!(
            "{} \"{}\" is forbidden: {}",
            request.group_resource(),
            name,
            message
        );
        Self::deny(403, "Forbidden", text).with_details(StatusDetails {
            name,
            group: request.resource.group.clone(),
            kind: request.resource.resource.clone(),
            causes: Vec::new(),
        })
    }

    /// kube's `apierrors.NewNotFound`: 404, `<resource> "<name>" not found`.
    pub fn not_found(group: &str, resource: &str, name: &str) -> Self {
        let text = format!("{} \"{}\" not found", group_resource(group, resource), name);
        Self::deny(404, "NotFound", text).with_details(StatusDetails {
            name: name.to_string(),
            group: group.to_string(),
            kind: resource.to_string(),
            causes: Vec::new(),
        })
    }

    /// Sets `status.details` (no effect on an allowed response without status).
    pub fn with_details(mut self, details: StatusDetails) -> Self {
        if let Some(status) = self.status.as_mut() {
            status.details = Some(details);
        }
        self
    }

    /// Adds a cause to `status.details.causes`.
    pub fn with_cause(mut self, cause_type: &str, field: &str, message: &str) -> Self {
        if let Some(status) = self.status.as_mut() {
            let details = status.details.get_or_insert_with(Default::default);
            details.causes.push(StatusCause {
                cause_type: cause_type.to_string(),
                message: message.to_string(),
                field: field.to_string(),
            });
        }
        self
    }

    /// Attaches a JSON patch (base64, patchType "JSONPatch"); an empty list
    /// leaves the response without a patch.
    pub fn with_patch(mut self, ops: Vec<PatchOp>) -> Self {
        if ops.is_empty() {
            return self;
        }
        let json = serde_json::to_vec(&ops).unwrap_or_else(|_| b"[]".to_vec());
        self.patch = Some(base64::engine::general_purpose::STANDARD.encode(json));
        self.patch_type = Some("JSONPatch".to_string());
        self.patch_ops = ops;
        self
    }

    /// Adds a warning (shown by kubectl as "Warning: ...").
    pub fn with_warning(mut self, warning: impl Into<String>) -> Self {
        self.warnings.push(warning.into());
        self
    }

    /// Adds an audit annotation.
    pub fn with_audit_annotation(
        mut self,
        key: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        self.audit_annotations.insert(key.into(), value.into());
        self
    }

    /// The status message, "" when none (handy in tests).
    pub fn message(&self) -> &str {
        self.status
            .as_ref()
            .map(|s| s.message.as_str())
            .unwrap_or("")
    }

    /// The status code, 0 when none.
    pub fn code(&self) -> u16 {
        self.status.as_ref().map(|s| s.code).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::GroupVersionResource;
    use serde_json::json;

    fn pod_request() -> AdmissionRequest {
        AdmissionRequest {
            resource: GroupVersionResource {
                group: String::new(),
                version: "v1".into(),
                resource: "pods".into(),
            },
            object: Some(json!({"metadata": {"name": "web"}})),
            ..Default::default()
        }
    }

    #[test]
    fn forbidden_reads_like_kube() {
        let r = AdmissionResponse::forbidden(&pod_request(), "no");
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["allowed"], false);
        assert_eq!(v["status"]["code"], 403);
        assert_eq!(v["status"]["reason"], "Forbidden");
        assert_eq!(v["status"]["status"], "Failure");
        assert_eq!(v["status"]["message"], "pods \"web\" is forbidden: no");
        assert_eq!(v["status"]["details"]["kind"], "pods");
    }

    #[test]
    fn not_found_names_group_resource() {
        let r = AdmissionResponse::not_found("apps", "deployments", "d");
        assert_eq!(r.code(), 404);
        assert_eq!(r.message(), "deployments.apps \"d\" not found");
    }

    #[test]
    fn patch_is_base64_json_patch() {
        let r = AdmissionResponse::allow()
            .with_patch(vec![PatchOp::add("/a", json!(1))])
            .with_warning("careful")
            .with_audit_annotation("k", "v");
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["patchType"], "JSONPatch");
        let raw = base64::engine::general_purpose::STANDARD
            .decode(v["patch"].as_str().unwrap())
            .unwrap();
        let ops: serde_json::Value = serde_json::from_slice(&raw).unwrap();
        assert_eq!(ops, json!([{"op": "add", "path": "/a", "value": 1}]));
        assert_eq!(v["warnings"], json!(["careful"]));
        assert_eq!(v["auditAnnotations"], json!({"k": "v"}));
        assert!(v.get("patchOps").is_none());
    }

    #[test]
    fn empty_patch_is_omitted() {
        let v = serde_json::to_value(AdmissionResponse::allow().with_patch(vec![])).unwrap();
        assert!(v.get("patch").is_none() && v.get("patchType").is_none());
    }
}
