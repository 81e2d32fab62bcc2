//! `componentstatuses` (deprecated, still served by kube 1.33): the health of
//! what kube-apiserver probes — the scheduler at 127.0.0.1:10259, the
//! controller manager and etcd — as true for Capstan: the controllers are
//! built in, etcd is listed only when it is the store, and the scheduler
//! port is probed as kube does.

use super::read::render;
use super::{respond, Call};
use crate::apimachinery::status::{ApiError, ApiResult};
use axum::response::Response;
use http::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;

const SCHEDULER_PORT: u16 = 10259;

pub fn is_component_status(call: &Call<'_>) -> bool {
    call.res.group.is_empty() && call.res.plural == "componentstatuses"
}

/// A ComponentStatus with one Healthy condition: a failed probe is False
/// with its failure as the message (kube's HTTP prober reports a refused
/// or timed-out connection as a Failure, not as an error).
pub fn component(name: &str, healthy: Result<&str, String>) -> Value {
    let (status, message) = match healthy {
        Ok(message) => ("True", message.to_string()),
        Err(failure) => ("False", failure),
    };
    let condition = json!({"type": "Healthy", "status": status, "message": message});
    json!({"kind": "ComponentStatus", "apiVersion": "v1",
           "metadata": {"name": name, "creationTimestamp": null},
           "conditions": [condition]})
}

/// kube's probe of the scheduler's /healthz; refused is reported in Go's words.
async fn scheduler() -> Result<&'static str, String> {
    let addr = ("127.0.0.1", SCHEDULER_PORT);
    match tokio::time::timeout(Duration::from_secs(1), tokio::net::TcpStream::connect(addr)).await {
        Ok(Ok(_)) => Ok("ok"),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => Err(format!(
            "Get \"https://127.0.0.1:{SCHEDULER_PORT}/healthz\": dial tcp 127.0.0.1:{SCHEDULER_PORT}: connect: connection refused"
        )),
        Ok(Err(e)) => Err(format!("Get \"https://127.0.0.1:{SCHEDULER_PORT}/healthz\": {e}")),
        Err(_) => Err(format!(
            "Get \"https://127.0.0.1:{SCHEDULER_PORT}/healthz\": context deadline exceeded"
        )),
    }
}

/// Every component, sorted by name as kube lists them.
async fn components(call: &Call<'_>) -> Vec<Value> {
    let mut out = vec![component("controller-manager", Ok("ok"))];
    if call.state.on_etcd {
        let etcd = match call.state.storage.current_revision().await {
            Ok(_) => Ok("ok"),
            Err(e) => Err(e.to_string()),
        };
        out.push(component("etcd-0", etcd));
    }
    out.push(component("scheduler", scheduler().await));
    out
}

const DEPRECATED: &str = "v1 ComponentStatus is deprecated in v1.19+";

pub async fn serve(call: &Call<'_>) -> ApiResult<Response> {
    let output = call.output()?;
    let all = components(call).await;
    let warnings = [DEPRECATED.to_string()];
    if call.req.name.is_none() {
        let body = render(call, output, all, json!({}), false).await?;
        return Ok(respond(StatusCode::OK, &body, output, &warnings));
    }
    let found = all
        .into_iter()
        .find(|c| c["metadata"]["name"] == call.name())
        .ok_or_else(|| ApiError::not_found("", "componentstatuses", call.name()))?;
    let body = render(call, output, vec![found], json!({}), true).await?;
    Ok(respond(StatusCode::OK, &body, output, &warnings))
}
