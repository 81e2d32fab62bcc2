//! Forwarding a proxied request to its backend over plain HTTP/1.1; a
//! backend that cannot be reached is kube's 503 `error trying to reach
//! service: ...` (apimachinery's proxy transport), worded as Go's dialer.

use super::{Call, Target};
use crate::api::handlers::body;
use crate::apimachinery::status::{ApiError, ApiResult};
use axum::body::Body;
use axum::response::Response;
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use std::time::Duration;
use tokio::net::TcpStream;

const DIAL_TIMEOUT: Duration = Duration::from_secs(10);

/// Request headers that are the API server's business, not the backend's.
const DROPPED: [&str; 8] = [
    "authorization",
    "host",
    "connection",
    "upgrade",
    "te",
    "transfer-encoding",
    "keep-alive",
    "proxy-connection",
];

fn unreachable(detail: impl std::fmt::Display) -> ApiError {
    ApiError::unavailable(format!("error trying to reach service: {detail}"))
}

/// `host:port`, with brackets around IPv6 addresses.
pub(in crate::api::handlers) fn join_host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

pub(in crate::api::handlers) async fn dial(addr: &str) -> Result<TcpStream, String> {
    use std::io::ErrorKind;
    match tokio::time::timeout(DIAL_TIMEOUT, TcpStream::connect(addr)).await {
        Ok(Ok(stream)) => Ok(stream),
        Ok(Err(e)) => Err(match e.kind() {
            ErrorKind::ConnectionRefused => format!("dial tcp {addr}: connect: connection refused"),
            ErrorKind::NetworkUnreachable => {
                format!("dial tcp {addr}: connect: network is unreachable")
            }
            ErrorKind::HostUnreachable => format!("dial tcp {addr}: connect: no route to host"),
            _ => format!("dial tcp {addr}: {e}"),
        }),
        Err(_) => Err(format!("dial tcp {addr}: i/o timeout")),
    }
}

pub async fn forward(
    call: &Call<'_>,
    target: &Target,
    path: &str,
    raw: Body,
) -> ApiResult<Response> {
    let addr = join_host_port(&target.host, target.port);
    let payload = body::read(raw).await?;
    let stream = dial(&addr).await.map_err(unreachable)?;
    if target.scheme != "http" {
        return Err(unreachable(format!(
            "{} to {addr}: Capstan forwards plain HTTP only",
            target.scheme
        )));
    }
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(unreachable)?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::debug!(error = %e, "proxied connection ended");
        }
    });
    let mut request = http::Request::builder()
        .method(call.parts.method.clone())
        .uri(path)
        .header(http::header::HOST, &addr);
    for (name, value) in &call.parts.headers {
        let lower = name.as_str();
        if !DROPPED.contains(&lower) && !lower.starts_with("impersonate-") {
            request = request.header(name, value);
        }
    }
    let request = request
        .body(Full::new(payload))
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let answer = sender.send_request(request).await.map_err(unreachable)?;
    let (mut parts, incoming) = answer.into_parts();
    for name in ["connection", "keep-alive", "transfer-encoding"] {
        parts.headers.remove(name);
    }
    Ok(Response::from_parts(parts, Body::new(incoming)))
}
