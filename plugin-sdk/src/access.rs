//! TokenReview (authentication.k8s.io/v1) and SubjectAccessReview
//! (authorization.k8s.io/v1): the payloads of authenticator and authorizer
//! plugins, reduced to the fields a plugin reads or writes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::review::UserInfo;

/// A TokenReview as the host sends it (`spec`) and expects it back (`status`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenReview {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    #[serde(default)]
    pub spec: TokenReviewSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TokenReviewStatus>,
}

/// The annotation that carries the verified client certificate (base64 DER).
pub const CLIENT_CERTIFICATE_ANNOTATION: &str = "authentication.capstan.dev/client-certificate";

impl TokenReview {
    /// The DER bytes of the client certificate the server verified, if the
    /// request came with one.
    pub fn client_certificate(&self) -> Option<Vec<u8>> {
        use base64::Engine;
        let text = self
            .metadata
            .as_ref()?
            .pointer("/annotations")?
            .get(CLIENT_CERTIFICATE_ANNOTATION)?
            .as_str()?;
        base64::engine::general_purpose::STANDARD.decode(text).ok()
    }
}

/// `TokenReview.spec`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TokenReviewSpec {
    #[serde(default)]
    pub token: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audiences: Vec<String>,
}

/// `TokenReview.status`: authenticated with a user, or not (with an error).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TokenReviewStatus {
    #[serde(default)]
    pub authenticated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<UserInfo>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audiences: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub error: String,
}

impl TokenReviewStatus {
    /// The token belongs to `user`.
    pub fn authenticated(user: UserInfo) -> Self {
        TokenReviewStatus {
            authenticated: true,
            user: Some(user),
            ..Default::default()
        }
    }

    /// The token is not one this plugin recognises (the next authenticator is asked).
    pub fn unauthenticated(error: impl Into<String>) -> Self {
        TokenReviewStatus {
            error: error.into(),
            ..Default::default()
        }
    }
}

/// A SubjectAccessReview as the host sends it (`spec`) and expects it back (`status`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubjectAccessReview {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default)]
    pub spec: SubjectAccessReviewSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<SubjectAccessReviewStatus>,
}

/// `SubjectAccessReview.spec`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubjectAccessReviewSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_attributes: Option<ResourceAttributes>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_resource_attributes: Option<NonResourceAttributes>,
    #[serde(default)]
    pub user: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
}

/// `spec.resourceAttributes` (selectors kept as raw JSON).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceAttributes {
    #[serde(default)]
    pub namespace: String,
    #[serde(default)]
    pub verb: String,
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub resource: String,
    #[serde(default)]
    pub subresource: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_selector: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<Value>,
}

/// `spec.nonResourceAttributes`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct NonResourceAttributes {
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub verb: String,
}

/// `SubjectAccessReview.status`: allowed, denied, or neither (no opinion).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubjectAccessReviewStatus {
    pub allowed: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub denied: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub evaluation_error: String,
}

impl SubjectAccessReviewStatus {
    /// Allows the request.
    pub fn allow(reason: impl Into<String>) -> Self {
        SubjectAccessReviewStatus {
            allowed: true,
            reason: reason.into(),
            ..Default::default()
        }
    }

    /// Denies the request outright (later authorizers are not asked).
    pub fn deny(reason: impl Into<String>) -> Self {
        SubjectAccessReviewStatus {
            denied: true,
            reason: reason.into(),
            ..Default::default()
        }
    }

    /// Neither allows nor denies: the next authorizer decides.
    pub fn no_opinion() -> Self {
        Self::default()
    }
}

/// A rules review: which actions `spec.user` may perform in `spec.namespace`
/// (the host's form of SelfSubjectRulesReview, with the user filled in).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubjectRulesReview {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default)]
    pub spec: SubjectRulesReviewSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<SubjectRulesReviewStatus>,
}

/// `SubjectRulesReview.spec`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SubjectRulesReviewSpec {
    #[serde(default)]
    pub namespace: String,
    #[serde(default)]
    pub user: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
}

/// SelfSubjectRulesReview's status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubjectRulesReviewStatus {
    #[serde(default)]
    pub resource_rules: Vec<ResourceRule>,
    #[serde(default)]
    pub non_resource_rules: Vec<NonResourceRule>,
    #[serde(default)]
    pub incomplete: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub evaluation_error: String,
}

impl SubjectRulesReviewStatus {
    /// "I cannot list rules": the answer of authorizers without rules.
    pub fn unsupported(why: impl Into<String>) -> Self {
        SubjectRulesReviewStatus {
            incomplete: true,
            evaluation_error: why.into(),
            ..Default::default()
        }
    }
}

/// One resource rule (authorization.k8s.io/v1 ResourceRule).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRule {
    pub verbs: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_groups: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_names: Vec<String>,
}

/// One non-resource rule (authorization.k8s.io/v1 NonResourceRule).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NonResourceRule {
    pub verbs: Vec<String>,
    #[serde(
        default,
        rename = "nonResourceURLs",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub non_resource_urls: Vec<String>,
}
