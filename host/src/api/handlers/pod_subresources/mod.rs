//! The pod subresources that are not plain reads and writes of the pod:
//! `exec`, `attach`, `portforward` and `log` (answered as kube-apiserver
//! answers when it cannot reach a kubelet), `binding`, `eviction` (honouring
//! PodDisruptionBudgets), `ephemeralcontainers` and `resize`, each with the
//! rules of kube's REST for it (pkg/registry/core/pod).

mod binding;
mod ephemeral;
mod eviction;
mod resize;
mod streams;

use super::{body, Call};
use crate::apimachinery::status::{ApiError, ApiResult};
use axum::body::Body;
use axum::response::Response;
use serde_json::{json, Value};

const HANDLED: [&str; 8] = [
    "attach",
    "binding",
    "ephemeralcontainers",
    "eviction",
    "exec",
    "log",
    "portforward",
    "resize",
];

/// Whether the request is for one of the pod subresources served here, or
/// for `bindings` (kube's LegacyBindingREST: `pods/binding` of the pod the
/// Binding names).
pub fn handles(call: &Call<'_>) -> bool {
    let legacy_binding = call.res.group.is_empty() && call.res.plural == "bindings";
    legacy_binding
        || call.res.group.is_empty()
            && call.res.plural == "pods"
            && call
                .req
                .subresource
                .as_deref()
                .is_some_and(|s| HANDLED.contains(&s))
}

pub async fn serve(call: &Call<'_>, raw: Body) -> ApiResult<Response> {
    let sub = call.req.subresource.as_deref().unwrap_or_default();
    if call.res.plural == "bindings" {
        return binding::create_named_in_body(call, raw).await;
    }
    // A body these answers leave unread is drained by `unread_body`.
    match sub {
        "exec" | "attach" => streams::container_stream(call).await,
        "portforward" => streams::port_forward(call).await,
        "log" => streams::log(call).await,
        "binding" => binding::create(call, raw).await,
        "eviction" => eviction::create(call, raw).await,
        "resize" => resize::serve(call, raw).await,
        _ => ephemeral::serve(call, raw).await,
    }
}

/// The pod the request names (404 worded as kube's when absent).
/// The pod (as a write of one of its subresources left it) rendered as a
/// GET of the pod renders it.
async fn answer_pod(call: &Call<'_>, obj: Value) -> ApiResult<Response> {
    let output = call.output()?;
    let body = super::read::render(call, output, vec![obj], json!({}), true).await?;
    Ok(super::respond(http::StatusCode::OK, &body, output, &[]))
}

async fn pod(call: &Call<'_>) -> ApiResult<Value> {
    call.state
        .registry
        .get(call.res, call.namespace(), call.name())
        .await
}

/// A request body decoded as JSON, YAML or protobuf.
async fn decode_body(call: &Call<'_>, raw: Body) -> ApiResult<Value> {
    let bytes = body::read(raw).await?;
    body::decode(
        &bytes,
        call.header(http::header::CONTENT_TYPE),
        call.cat.schemas(),
    )
}

/// The `metav1.Status` a successful create of binding or eviction returns (201).
fn created_success() -> Response {
    let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201});
    super::respond(http::StatusCode::CREATED, &status, super::Output::Json, &[])
}

/// kube's check that the body names the object of the URL.
fn check_body_name(call: &Call<'_>, obj: &Value, what: &str) -> ApiResult<()> {
    let in_body = obj.pointer("/metadata/name").and_then(Value::as_str);
    if in_body != Some(call.name()) {
        return Err(ApiError::bad_request(format!(
            "name in URL does not match name in {what} object"
        )));
    }
    Ok(())
}
