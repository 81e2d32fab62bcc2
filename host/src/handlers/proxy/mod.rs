//! `nodes/<name>/proxy/...` and `services/<name>/proxy/...`: kube's
//! ResourceLocation for each (pkg/registry/core/node/strategy.go,
//! pkg/registry/core/service/storage), with its errors when there is no
//! backend, then the request forwarded over plain HTTP (`forward.rs`).

pub(super) mod forward;
pub(super) mod location;

use super::Call;
use crate::status::ApiResult;
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
        && matches!(call.res.plural.as_str(), "nodes" | "services")
        && call.req.subresource.as_deref() == Some("proxy")
}

/// The path after `<name>/proxy`, with its query.
fn subpath(call: &Call<'_>) -> String {
    let path = call.parts.uri.path();
    let marker = format!("/{}/proxy", call.name());
    let rest = path
        .find(&marker)
        .map(|i| &path[i + marker.len()..])
        .unwrap_or_default();
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
    forward::forward(call, &target, &subpath(call), raw).await
}
