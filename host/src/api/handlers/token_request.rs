//! `POST .../serviceaccounts/<name>/token` (TokenRequest, what `kubectl
//! create token` calls): reads the ServiceAccount and any bound object, then
//! lets the server's signing key check the request and mint the token.

use super::negotiate::respond;
use super::{body, Call};
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::auth::service_account::token_request::{
    bound_target, new_jti, pod_node_name, BoundTarget, TokenRequestCall, DEFAULT_EXPIRATION_SECONDS,
};
use crate::catalogue::ResourceInfo;
use crate::registry::Registry;
use axum::body::Body;
use axum::response::Response;
use http::StatusCode;
use serde_json::Value;

pub fn is_token_request(call: &Call<'_>) -> bool {
    call.res.group.is_empty()
        && call.res.plural == "serviceaccounts"
        && call.req.subresource.as_deref() == Some("token")
}

pub async fn create(call: &Call<'_>, raw: Body) -> ApiResult<Response> {
    let issuer =
        call.state.tokens.as_ref().ok_or_else(|| {
            ApiError::internal("this server does not issue service account tokens")
        })?;
    let bytes = body::read(raw).await?;
    let ct = call.header(http::header::CONTENT_TYPE);
    let request = body::decode(&bytes, ct, call.cat.schemas())?;
    let namespace = call.namespace().unwrap_or_default();
    let registry = &call.state.registry;
    let service_account = read(
        call,
        registry,
        "serviceaccounts",
        Some(namespace),
        call.name(),
    )
    .await?;
    let target = bound_target(&request)?;
    let bound = match &target {
        Some(t) => read_bound(call, t, namespace).await?,
        None => None,
    };
    let node_name = bound.as_ref().and_then(pod_node_name).map(String::from);
    let pod_node = match node_name.filter(|_| target.as_ref().is_some_and(is_pod)) {
        Some(node) => read(call, registry, "nodes", None, &node).await?,
        None => None,
    };
    let token_call = TokenRequestCall {
        namespace,
        name: call.name(),
        body: &request,
        service_account: service_account.as_ref(),
        bound_object: bound.as_ref(),
        pod_node: pod_node.as_ref(),
        now: chrono::Utc::now(),
        jti: new_jti(),
    };
    let (mut response, warnings) = issuer.key.issue(&token_call, &issuer.settings)?;
    track(call, &request, &mut response);
    Ok(respond(
        StatusCode::CREATED,
        &response,
        call.output()?,
        &warnings,
    ))
}

/// The Update entry kube's create handler records (subresource `token`)
/// for the fields of the request as decoded and defaulted, kept in the answer.
fn track(call: &Call<'_>, request: &Value, response: &mut Value) {
    let res = token_request_kind(call.res);
    let mut defaulted = request.clone();
    if let Some(spec) = defaulted.get_mut("spec").and_then(Value::as_object_mut) {
        spec.entry("expirationSeconds")
            .or_insert(DEFAULT_EXPIRATION_SECONDS.into());
    }
    let manager = call.field_manager();
    let who = call.tracking(&manager);
    let entries = crate::patch::managed_fields::record(&res, None, &defaulted, &defaulted, &who);
    let metadata = response.get_mut("metadata").and_then(Value::as_object_mut);
    if let (Some(entries), Some(metadata)) = (entries, metadata) {
        metadata.insert("managedFields".into(), entries);
    }
}

/// The kind `serviceaccounts/token` accepts and returns, as a resource.
fn token_request_kind(service_accounts: &ResourceInfo) -> ResourceInfo {
    ResourceInfo {
        group: "authentication.k8s.io".into(),
        version: "v1".into(),
        kind: "TokenRequest".into(),
        schema_name: "io.k8s.api.authentication.v1.TokenRequest".into(),
        verbs: vec!["create".into()],
        custom: None,
        ..service_accounts.clone()
    }
}

fn is_pod(t: &BoundTarget) -> bool {
    t.resource() == "pods"
}

async fn read_bound(call: &Call<'_>, t: &BoundTarget, ns: &str) -> ApiResult<Option<Value>> {
    let ns = t.namespaced().then_some(ns);
    read(call, &call.state.registry, t.resource(), ns, &t.name).await
}

/// A core object, or None when it does not exist.
async fn read(
    call: &Call<'_>,
    registry: &Registry,
    resource: &str,
    ns: Option<&str>,
    name: &str,
) -> ApiResult<Option<Value>> {
    let res = call
        .state
        .catalogue
        .builtin()
        .lookup("", "v1", resource)
        .ok_or_else(|| ApiError::internal(format!("{resource} are not served")))?;
    match registry.get(res, ns, name).await {
        Ok(obj) => Ok(Some(obj)),
        Err(e) if e.code == 404 => Ok(None),
        Err(e) => Err(e),
    }
}
