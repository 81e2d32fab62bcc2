//! The TokenRequest subresource (authentication.k8s.io/v1 TokenRequest,
//! `POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token`), as
//! kube-apiserver's pkg/registry/core/serviceaccount/storage/token.go with
//! pkg/apis/authentication/validation and pkg/serviceaccount/claims.go.
//!
//! The caller reads the objects (the ServiceAccount, the object named by
//! [`bound_target`], and for a pod its node, see [`pod_node_name`]) and
//! passes them in a [`TokenRequestCall`]; [`prepare`] checks everything in
//! kube's order and returns the claims to sign and the response, or the
//! `Status` error kube would answer. [`SigningKey::issue`] does both steps.

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use serde::{Deserialize, Deserializer};
use serde_json::{json, Map, Value};

use super::SigningKey;
use crate::apimachinery::status::{ApiError, Cause};

/// `validation.MinTokenAgeSec`.
const MIN_EXPIRATION_SECONDS: i64 = 10 * 60;
/// The largest expiration validation accepts (2^32 seconds).
const MAX_EXPIRATION_SECONDS: i64 = 1 << 32;
/// The v1 default of `spec.expirationSeconds` (SetDefaults_TokenRequestSpec).
pub const DEFAULT_EXPIRATION_SECONDS: i64 = 60 * 60;
/// `serviceaccount.WarnOnlyBoundTokenExpirationSeconds`: kubelet's request
/// that gets a long-lived token which only warns after an hour.
const WARN_ONLY_EXPIRATION_SECONDS: i64 = 60 * 60 + 7;
/// `serviceaccount.ExpirationExtensionSeconds` (one year).
pub const EXPIRATION_EXTENSION_SECONDS: i64 = 24 * 365 * 60 * 60;

/// The server's settings for issuing tokens.
#[derive(Debug, Clone)]
pub struct TokenSettings {
    /// `--service-account-issuer` (the first one): the `iss` claim.
    pub issuer: String,
    /// `--api-audiences`: the default audiences of a request.
    pub audiences: Vec<String>,
    /// `--service-account-max-token-expiration`: longer requests are shortened.
    pub max_expiration_seconds: Option<i64>,
    /// `--service-account-extend-token-expiration` (kube's default: true).
    pub extend_expiration: bool,
    /// The extended lifetime of kubelet's warn-only tokens.
    pub max_extended_expiration_seconds: i64,
}

impl TokenSettings {
    /// kube's defaults for `issuer` and `audiences` (no maximum, extension on).
    pub fn new(issuer: &str, audiences: Vec<String>) -> Self {
        TokenSettings {
            issuer: issuer.to_string(),
            audiences,
            max_expiration_seconds: None,
            extend_expiration: true,
            max_extended_expiration_seconds: EXPIRATION_EXTENSION_SECONDS,
        }
    }
}

/// One TokenRequest with the objects it needs, read by the caller.
#[derive(Debug, Clone)]
pub struct TokenRequestCall<'a> {
    /// The namespace and ServiceAccount name from the URL.
    pub namespace: &'a str,
    pub name: &'a str,
    /// The request body (a TokenRequest).
    pub body: &'a Value,
    /// The ServiceAccount, `None` when it does not exist.
    pub service_account: Option<&'a Value>,
    /// The object [`bound_target`] named, `None` when it does not exist (or none was named).
    pub bound_object: Option<&'a Value>,
    /// The Node of a bound pod (`spec.nodeName`), `None` when it does not exist.
    pub pod_node: Option<&'a Value>,
    /// The time of the request.
    pub now: DateTime<Utc>,
    /// The token's unique ID (`jti`), e.g. [`new_jti`].
    pub jti: String,
}

/// A checked request: the claims to sign, and the response without its token.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedToken {
    pub claims: Value,
    pub response: Value,
    /// Warnings for the client (`Warning` headers), as kube adds them.
    pub warnings: Vec<String>,
}

impl PreparedToken {
    /// The TokenRequest response with `status.token` set.
    pub fn into_response(mut self, token: String) -> Value {
        self.response["status"]["token"] = Value::String(token);
        self.response
    }
}

/// `errors.NewInvalid(TokenRequest.authentication.k8s.io, name, [one field error])`.
fn invalid(name: &str, field: &str, value: &Value, detail: &str) -> ApiError {
    let cause = Cause {
        reason: "FieldValueInvalid",
        field: field.to_string(),
        message: format!("Invalid value: {value}: {detail}"),
    };
    ApiError::invalid(GROUP, "TokenRequest", name, vec![cause])
}

const GROUP: &str = "authentication.k8s.io";

/// A fresh token ID (a random UUID, as kube's `ServiceAccountTokenJTI`).
pub fn new_jti() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The kinds a token may be bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoundKind {
    Pod,
    Secret,
    Node,
}

/// The object a request binds its token to, for the caller to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundTarget {
    pub kind: BoundKind,
    pub name: String,
}

impl BoundTarget {
    /// The plural resource in the core group ("pods", "secrets", "nodes").
    pub fn resource(&self) -> &'static str {
        match self.kind {
            BoundKind::Pod => "pods",
            BoundKind::Secret => "secrets",
            BoundKind::Node => "nodes",
        }
    }

    /// Whether it lives in the request's namespace (Node does not).
    pub fn namespaced(&self) -> bool {
        self.kind != BoundKind::Node
    }
}

/// The object `spec.boundObjectRef` names, when it is of a supported kind
/// (others are refused by [`prepare`], in kube's order); an error when the
/// body is not a TokenRequest.
pub fn bound_target(body: &Value) -> Result<Option<BoundTarget>, ApiError> {
    let request = Body::parse(body)?;
    Ok(request.spec.bound_object_ref.and_then(|r| {
        let kind = r.supported_kind()?;
        Some(BoundTarget { kind, name: r.name })
    }))
}

/// The node a pod runs on (`spec.nodeName`), whose Node the caller reads.
pub fn pod_node_name(pod: &Value) -> Option<&str> {
    pod.pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
}

/// The request body, as far as TokenRequest reads it.
#[derive(Debug, Default, Deserialize)]
struct Body {
    #[serde(default, deserialize_with = "nullable")]
    metadata: Metadata,
    #[serde(default, deserialize_with = "nullable")]
    spec: Spec,
}

#[derive(Debug, Default, Deserialize)]
struct Metadata {
    #[serde(default, deserialize_with = "nullable")]
    name: String,
    #[serde(default, deserialize_with = "nullable")]
    namespace: String,
    #[serde(default, deserialize_with = "nullable")]
    uid: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    #[serde(default, deserialize_with = "nullable")]
    audiences: Vec<String>,
    #[serde(default)]
    expiration_seconds: Option<i64>,
    #[serde(default)]
    bound_object_ref: Option<BoundObjectReference>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BoundObjectReference {
    #[serde(default, deserialize_with = "nullable")]
    kind: String,
    #[serde(default, deserialize_with = "nullable")]
    api_version: String,
    #[serde(default, deserialize_with = "nullable")]
    name: String,
    #[serde(default, deserialize_with = "nullable")]
    uid: String,
}

/// JSON `null` reads as the default, as Go's decoder leaves the zero value.
fn nullable<'de, D: Deserializer<'de>, T: Default + Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

impl Body {
    fn parse(body: &Value) -> Result<Self, ApiError> {
        Body::deserialize(body).map_err(|e| {
            ApiError::bad_request(format!(
                "TokenRequest in version \"v1\" cannot be handled as a TokenRequest: {e}"
            ))
        })
    }
}

impl BoundObjectReference {
    /// (group, version) of `apiVersion` as `schema.FromAPIVersionAndKind` reads it.
    fn group_version(&self) -> (&str, &str) {
        match self.api_version.split_once('/') {
            Some((_, v)) if v.contains('/') => ("", ""),
            Some((g, v)) => (g, v),
            None => ("", self.api_version.as_str()),
        }
    }

    fn supported_kind(&self) -> Option<BoundKind> {
        match (self.group_version().0, self.kind.as_str()) {
            ("", "Pod") => Some(BoundKind::Pod),
            ("", "Secret") => Some(BoundKind::Secret),
            ("", "Node") => Some(BoundKind::Node),
            _ => None,
        }
    }

    /// `GroupVersionKind.String()`: `group/version, Kind=kind`.
    fn gvk_string(&self) -> String {
        let (group, version) = self.group_version();
        format!("{group}/{version}, Kind={}", self.kind)
    }
}

/// Checks a request in kube's order and builds the claims and response.
pub fn prepare(
    call: &TokenRequestCall,
    settings: &TokenSettings,
) -> Result<PreparedToken, ApiError> {
    let mut body = Body::parse(call.body)?;
    check_names(call, &body.metadata)?;
    let sa = call
        .service_account
        .ok_or_else(|| ApiError::not_found("", "serviceaccounts", call.name))?;
    let sa_uid = str_at(sa, "/metadata/uid");
    if !body.metadata.uid.is_empty() && body.metadata.uid != sa_uid {
        let why = format!(
            "the UID in the token request ({}) does not match the UID of the service account ({sa_uid})",
            body.metadata.uid
        );
        return Err(ApiError::conflict(GROUP, "TokenRequest", call.name, &why));
    }
    if body.spec.audiences.is_empty() {
        body.spec.audiences = settings.audiences.clone();
    }
    let requested = body
        .spec
        .expiration_seconds
        .unwrap_or(DEFAULT_EXPIRATION_SECONDS);
    check_expiration(requested)?;
    let bound = Bound::resolve(call, body.spec.bound_object_ref.as_ref())?;
    let mut warnings = Vec::new();
    let expiration = match settings.max_expiration_seconds {
        Some(max) if max > 0 && requested > max => {
            warnings.push(format!(
                "requested expiration of {requested} seconds shortened to {max} seconds"
            ));
            max
        }
        _ => requested,
    };
    let (lifetime, warn_after) = extended(settings, &bound, expiration, &body.spec.audiences);
    let claims = claims(
        call,
        settings,
        &bound,
        &body.spec.audiences,
        lifetime,
        warn_after,
    );
    let response = response(call, sa, &body, expiration);
    Ok(PreparedToken {
        claims,
        response,
        warnings,
    })
}

/// Body name and namespace, when given, must match the URL's.
fn check_names(call: &TokenRequestCall, meta: &Metadata) -> Result<(), ApiError> {
    let mismatch = |field: &str, value: &str, what: &str| {
        let detail = format!("must match the service account {what} if specified");
        Err(invalid(call.name, field, &json!(value), &detail))
    };
    if !meta.name.is_empty() && meta.name != call.name {
        return mismatch("metadata.name", &meta.name, "name");
    }
    if !meta.namespace.is_empty() && meta.namespace != call.namespace {
        return mismatch("metadata.namespace", &meta.namespace, "namespace");
    }
    Ok(())
}

/// `ValidateTokenRequest`'s expiration bounds (reported with name "", as kube).
fn check_expiration(seconds: i64) -> Result<(), ApiError> {
    let field = "spec.expirationSeconds";
    if seconds < MIN_EXPIRATION_SECONDS {
        return Err(invalid(
            "",
            field,
            &json!(seconds),
            "may not specify a duration less than 10 minutes",
        ));
    }
    if seconds > MAX_EXPIRATION_SECONDS {
        return Err(invalid(
            "",
            field,
            &json!(seconds),
            "may not specify a duration larger than 2^32 seconds",
        ));
    }
    Ok(())
}

/// The objects a token is bound to, as claim references.
#[derive(Debug, Default)]
struct Bound {
    pod: Option<Value>,
    secret: Option<Value>,
    node: Option<Value>,
}

impl Bound {
    /// Resolves `spec.boundObjectRef` against the objects the caller read.
    fn resolve(
        call: &TokenRequestCall,
        reference: Option<&BoundObjectReference>,
    ) -> Result<Self, ApiError> {
        let Some(r) = reference else {
            return Ok(Bound::default());
        };
        let Some(kind) = r.supported_kind() else {
            return Err(ApiError::bad_request(format!(
                "cannot bind token to object of type {}",
                r.gvk_string()
            )));
        };
        let target = BoundTarget {
            kind,
            name: r.name.clone(),
        };
        let object = call
            .bound_object
            .ok_or_else(|| ApiError::not_found("", target.resource(), &r.name))?;
        let bound = match kind {
            BoundKind::Pod => Self::pod(call, object)?,
            BoundKind::Secret => Bound {
                secret: Some(reference_to(object)),
                ..Bound::default()
            },
            BoundKind::Node => Bound {
                node: Some(reference_to(object)),
                ..Bound::default()
            },
        };
        let uid = str_at(object, "/metadata/uid");
        if !r.uid.is_empty() && uid != r.uid {
            let why = format!(
                "the UID in the bound object reference ({}) does not match the UID in record. \
                 The object might have been deleted and then recreated",
                r.uid
            );
            return Err(ApiError::conflict("", &r.kind, &r.name, &why));
        }
        Ok(bound)
    }

    /// A pod must run as the service account; its node goes into the claims
    /// (by name only when the Node does not exist).
    fn pod(call: &TokenRequestCall, pod: &Value) -> Result<Self, ApiError> {
        if str_at(pod, "/spec/serviceAccountName") != call.name {
            return Err(ApiError::bad_request(format!(
                "cannot bind token for serviceaccount \"{}\" to pod running with different serviceaccount name.",
                call.name
            )));
        }
        let node = pod_node_name(pod).map(|name| match call.pod_node {
            Some(node) => reference_to(node),
            None => json!({"name": name}),
        });
        Ok(Bound {
            pod: Some(reference_to(pod)),
            node,
            ..Bound::default()
        })
    }
}

/// kube's warn-only extension: a pod-bound token for the server's own
/// audiences requested for 3607 s lives the extended lifetime and warns after 3607 s.
fn extended(
    settings: &TokenSettings,
    bound: &Bound,
    expiration: i64,
    audiences: &[String],
) -> (i64, Option<i64>) {
    let kube_audiences = audiences.iter().all(|a| settings.audiences.contains(a));
    if settings.extend_expiration
        && bound.pod.is_some()
        && expiration == WARN_ONLY_EXPIRATION_SECONDS
        && kube_audiences
    {
        (settings.max_extended_expiration_seconds, Some(expiration))
    } else {
        (expiration, None)
    }
}

/// `{"name", "uid"}` of an object, empty ones left out (kube's `ref`, omitempty).
fn reference_to(object: &Value) -> Value {
    let mut map = Map::new();
    for key in ["name", "uid"] {
        let value = str_at(object, &format!("/metadata/{key}"));
        if !value.is_empty() {
            map.insert(key.to_string(), json!(value));
        }
    }
    Value::Object(map)
}

fn str_at<'v>(object: &'v Value, pointer: &str) -> &'v str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The token's claims, keys in the order kube's tokens have them (sorted).
fn claims(
    call: &TokenRequestCall,
    settings: &TokenSettings,
    bound: &Bound,
    audiences: &[String],
    lifetime: i64,
    warn_after: Option<i64>,
) -> Value {
    let now = call.now.timestamp();
    let sa = call
        .service_account
        .map(reference_to)
        .unwrap_or_else(|| json!({}));
    let mut private = Map::new();
    private.insert("namespace".into(), json!(call.namespace));
    for (key, value) in [
        ("node", &bound.node),
        ("pod", &bound.pod),
        ("secret", &bound.secret),
    ] {
        if let Some(value) = value {
            private.insert(key.into(), value.clone());
        }
    }
    private.insert("serviceaccount".into(), sa);
    if let Some(after) = warn_after {
        private.insert("warnafter".into(), json!(now + after));
    }
    json!({
        "aud": audiences,
        "exp": now + lifetime,
        "iat": now,
        "iss": settings.issuer,
        "jti": call.jti,
        "kubernetes.io": private,
        "nbf": now,
        "sub": format!("system:serviceaccount:{}:{}", call.namespace, call.name),
    })
}

/// The TokenRequest answered: metadata filled from the ServiceAccount,
/// defaulted spec, and `status.expirationTimestamp` (token added later).
fn response(call: &TokenRequestCall, sa: &Value, body: &Body, expiration: i64) -> Value {
    let time = |t: DateTime<Utc>| t.to_rfc3339_opts(SecondsFormat::Secs, true);
    let or = |given: &str, fallback: &str| {
        if given.is_empty() {
            fallback.to_string()
        } else {
            given.to_string()
        }
    };
    let mut spec = json!({"audiences": body.spec.audiences, "expirationSeconds": expiration});
    if let Some(r) = &body.spec.bound_object_ref {
        let fields = [
            ("kind", &r.kind),
            ("apiVersion", &r.api_version),
            ("name", &r.name),
            ("uid", &r.uid),
        ];
        let reference: Map<String, Value> = fields
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
        spec["boundObjectRef"] = Value::Object(reference);
    } else {
        // A nil pointer without omitempty, as Go encodes it.
        spec["boundObjectRef"] = Value::Null;
    }
    json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {
            "name": or(&body.metadata.name, str_at(sa, "/metadata/name")),
            "namespace": or(&body.metadata.namespace, str_at(sa, "/metadata/namespace")),
            "uid": or(&body.metadata.uid, str_at(sa, "/metadata/uid")),
            "creationTimestamp": time(call.now),
        },
        "spec": spec,
        "status": {"token": "", "expirationTimestamp": time(call.now + Duration::seconds(expiration))},
    })
}

impl SigningKey {
    /// [`prepare`], then signs: the TokenRequest response and the warnings.
    pub fn issue(
        &self,
        call: &TokenRequestCall,
        settings: &TokenSettings,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let prepared = prepare(call, settings)?;
        let token = self
            .mint(&prepared.claims)
            .map_err(|e| ApiError::internal(format!("failed to generate token: {e}")))?;
        let warnings = prepared.warnings.clone();
        Ok((prepared.into_response(token), warnings))
    }
}

#[cfg(test)]
mod tests;
