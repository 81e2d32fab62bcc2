//! `nodes/<name>/proxy/...`, `services/<name>/proxy/...` and
//! `pods/<name>/proxy/...`: kube's ResourceLocation for each
//! (pkg/registry/core/{node,pod}/strategy.go, pkg/registry/core/service/storage),
//! with its errors when there is no backend, then, as kube's upgrade-aware
//! proxy, a GET or HEAD of the bare `proxy` redirected to `proxy/` and
//! anything else forwarded over plain HTTP (`forward.rs`).

pub(super) mod forward;
pub(super) mod location;

use super::Call;
use crate::apimachinery::status::ApiResult;
use axum::body::Body;
use axum::response::Response;

/// Where a proxied request goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub scheme: String,
    pub host: String,
    pub port: u16,
}

pub fn handles(call: &Call<'_>) -> bool {
    call.res.group.is_empty()
        && matches!(call.res.plural.as_str(), "nodes" | "services" | "pods")
        && call.req.subresource.as_deref() == Some("proxy")
}

/// The path after `<name>/proxy` ("" when the request ends there).
fn rest_of_path<'c>(call: &'c Call<'_>) -> &'c str {
    let path = call.parts.uri.path();
    let marker = format!("/{}/proxy", call.name());
    path.find(&marker)
        .map(|i| &path[i + marker.len()..])
        .unwrap_or_default()
}

/// The path after `<name>/proxy`, with its query.
fn subpath(call: &Call<'_>) -> String {
    let rest = rest_of_path(call);
    let mut out = if rest.starts_with('/') {
        rest.to_string()
    } else {
        format!("/{rest}")
    };
    if let Some(q) = call.parts.uri.query() {
        out = format!("{out}?{q}");
    }
    out
}

pub async fn serve(call: &Call<'_>, raw: Body) -> ApiResult<Response> {
    let target = match call.res.plural.as_str() {
        "nodes" => location::node(call).await,
        "pods" => location::pod(call).await,
        _ => location::service(call).await,
    };
    let target = match target {
        Ok(t) => t,
        Err(e) => {
            // Read what was sent, so an HTTP/2 client sees the answer.
            let _ = super::body::read(raw).await;
            return Err(e);
        }
    };
    if let Some(redirect) = to_trailing_slash(call) {
        return Ok(redirect);
    }
    forward::forward(call, &target, &subpath(call), raw).await
}

/// kube's answer to a GET or HEAD of `.../proxy` with nothing after it: 301
/// to `.../proxy/`, the query kept.
fn to_trailing_slash(call: &Call<'_>) -> Option<Response> {
    let method = &call.parts.method;
    let bare = rest_of_path(call).is_empty();
    if !bare || !(method == http::Method::GET || method == http::Method::HEAD) {
        return None;
    }
    let mut location = format!("{}/", call.parts.uri.path());
    if let Some(q) = call.parts.uri.query().filter(|q| !q.is_empty()) {
        location = format!("{location}?{q}");
    }
    let mut answer = Response::new(Body::empty());
    *answer.status_mut() = http::StatusCode::MOVED_PERMANENTLY;
    let value = http::HeaderValue::from_str(&location).ok()?;
    answer.headers_mut().insert(http::header::LOCATION, value);
    Some(answer)
}
