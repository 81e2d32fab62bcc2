//! The request half of an AdmissionReview (admission.k8s.io/v1): what a
//! plugin is asked about. Only the fields plugins need are typed; objects
//! stay `serde_json::Value` so every kind (built-in or custom) fits.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::response::AdmissionResponse;

/// The envelope the host sends (with `request`) and expects back (with `response`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionReview {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<AdmissionRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<AdmissionResponse>,
}

/// A group, version and kind (`request.kind`, `request.requestKind`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupVersionKind {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub kind: String,
}

/// A group, version and plural resource (`request.resource`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupVersionResource {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub resource: String,
}

/// The admission operation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Operation {
    #[default]
    Create,
    Update,
    Delete,
    Connect,
}

/// The user making the request (authentication.k8s.io/v1 UserInfo).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UserInfo {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub username: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
}

/// `AdmissionReview.request`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest {
    #[serde(default)]
    pub uid: String,
    #[serde(default)]
    pub kind: GroupVersionKind,
    #[serde(default)]
    pub resource: GroupVersionResource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_resource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_kind: Option<GroupVersionKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_resource: Option<GroupVersionResource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_sub_resource: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(default)]
    pub operation: Operation,
    #[serde(default)]
    pub user_info: UserInfo,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_object: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
}

impl AdmissionRequest {
    /// True when the request is about `group`/`resource` itself (not a subresource).
    pub fn is_resource(&self, group: &str, resource: &str) -> bool {
        self.resource.group == group
            && self.resource.resource == resource
            && self.sub_resource.as_deref().unwrap_or("").is_empty()
    }

    /// The object being created or updated, when the request writes `group/resource`
    /// itself (not a subresource); None for other requests.
    pub fn written_object(&self, group: &str, resource: &str) -> Option<&Value> {
        let writes = matches!(self.operation, Operation::Create | Operation::Update);
        self.object
            .as_ref()
            .filter(|_| writes && self.is_resource(group, resource))
    }

    /// The subresource, "" when none.
    pub fn subresource(&self) -> &str {
        self.sub_resource.as_deref().unwrap_or("")
    }

    /// The name kube's admission errors use: the object's name, else its
    /// generateName, else the request's name, else "Unknown".
    pub fn object_name(&self) -> String {
        let from_object = self
            .object
            .as_ref()
            .and_then(crate::object::name_or_generate_name);
        match from_object {
            Some(name) => name,
            None if !self.name.is_empty() => self.name.clone(),
            None => "Unknown".to_string(),
        }
    }

    /// `<resource>[.<group>]`, as kube prints a GroupResource in messages.
    pub fn group_resource(&self) -> String {
        crate::response::group_resource(&self.resource.group, &self.resource.resource)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_a_webhook_request() {
        let review: AdmissionReview = serde_json::from_value(json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": "u1",
                "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
                "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
                "subResource": "scale",
                "namespace": "ns", "name": "d", "operation": "UPDATE",
                "userInfo": {"username": "alice", "groups": ["dev"]},
                "object": {"metadata": {"name": "d"}}, "dryRun": true
            }
        }))
        .unwrap();
        let req = review.request.unwrap();
        assert_eq!(req.operation, Operation::Update);
        assert_eq!(req.subresource(), "scale");
        assert!(!req.is_resource("apps", "deployments"));
        assert_eq!(req.group_resource(), "deployments.apps");
        assert_eq!(req.user_info.groups, vec!["dev"]);
        assert_eq!(req.dry_run, Some(true));
    }

    #[test]
    fn object_name_prefers_name_then_generate_name() {
        let mut req = AdmissionRequest {
            object: Some(json!({"metadata": {"generateName": "web-"}})),
            ..Default::default()
        };
        assert_eq!(req.object_name(), "web-");
        req.object = None;
        assert_eq!(req.object_name(), "Unknown");
    }
}
