//! The HTTPS client of webhooks: one POST of a review (JSON) per call, over
//! TLS trusting only the webhook's caBundle (`bundle_verifier.rs`: as
//! kube-apiserver's Go client does), with a deadline, the answer read as it
//! streams in and refused past a size bound.

mod bundle_verifier;

use crate::storage::MAX_STORED_BYTES;
use base64::Engine;
use bundle_verifier::BundleVerifier;
use futures_util::future::BoxFuture;
use http_body_util::{BodyExt, Full};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use std::sync::Arc;
use std::time::Duration;

/// The largest answer to a review of one object (admission, TokenReview,
/// SubjectAccessReview). kube-apiserver reads webhook answers whole through
/// client-go's rest client, without a bound; ours fits the largest legal
/// answer with room: a patch replacing the largest storable object
/// ([`MAX_STORED_BYTES`], a third more as base64) plus warnings and audit
/// annotations. A longer answer is refused once this much has arrived and
/// its connection dropped: the call fails, and the webhook's failurePolicy
/// decides, as for any other failed call.
pub const MAX_REVIEW_ANSWER_BYTES: usize = 4 * MAX_STORED_BYTES;

/// The largest answer to a ConversionReview of `objects` objects: each
/// converted object may be as large as the store allows, plus a review's
/// room for the envelope and the result.
pub fn conversion_answer_limit(objects: usize) -> usize {
    objects
        .saturating_mul(MAX_STORED_BYTES)
        .saturating_add(MAX_REVIEW_ANSWER_BYTES)
}

/// One HTTPS webhook endpoint (admission, token or authorization webhooks).
pub struct HttpsWebhook {
    /// The URL, or why there is none (e.g. an unresolvable service reference).
    pub url: Result<String, String>,
    /// Base64 PEM of the CAs to trust; required (no system roots).
    pub ca_bundle: Option<String>,
    pub timeout: Duration,
}

impl HttpsWebhook {
    /// POSTs a review (JSON text) and returns the answer's body, within the
    /// timeout; errors worded as admission webhooks' (`failed to call webhook: Post ...`).
    pub async fn post(&self, review: &str) -> Result<String, String> {
        let answer = self.post_plain(review, MAX_REVIEW_ANSWER_BYTES).await;
        match self.url {
            Err(_) => answer,
            Ok(_) => answer.map_err(|e| format!("failed to call webhook: {e}")),
        }
    }

    /// As `post`, for an answer of at most `max_answer` bytes; errors as
    /// Go's HTTP client words them (`Post "url": ...`).
    pub async fn post_plain(&self, review: &str, max_answer: usize) -> Result<String, String> {
        let url = self.url.clone()?;
        let body = review.as_bytes().to_vec();
        let post = post(&url, self.ca_bundle.as_deref(), body, max_answer);
        match tokio::time::timeout(self.timeout, post).await {
            Ok(r) => r.map_err(|e| format!("Post {url:?}: {e}")),
            Err(_) => Err(format!("Post {url:?}: context deadline exceeded")),
        }
    }
}

impl super::ReviewTransport for HttpsWebhook {
    fn call<'a>(&'a self, review: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(self.post(review))
    }
}

/// The URL of a webhook's `clientConfig` (admission and conversion
/// webhooks): its `url`, or its `service` (namespace, name, path) through
/// `services`, the configuration's `webhookServices` (`namespace/name` → base URL).
pub fn client_config_url(
    client: &serde_json::Value,
    services: &std::collections::HashMap<String, String>,
) -> Result<String, String> {
    use serde_json::Value;
    if let Some(url) = client.get("url").and_then(Value::as_str) {
        return Ok(url.to_string());
    }
    let svc = client
        .get("service")
        .ok_or("clientConfig needs url or service")?;
    let ns = svc
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let name = svc.get("name").and_then(Value::as_str).unwrap_or_default();
    let path = svc.get("path").and_then(Value::as_str).unwrap_or("");
    match services.get(&format!("{ns}/{name}")) {
        Some(base) => Ok(format!("{}{path}", base.trim_end_matches('/'))),
        None => Err(format!("service {ns}/{name} is not reachable from this server: map it to a URL under webhookServices in the configuration")),
    }
}

fn tls_config(ca_bundle: Option<&str>) -> Result<rustls::ClientConfig, String> {
    let pem = ca_bundle.ok_or("clientConfig.caBundle is required (no system roots are trusted)")?;
    let pem = base64::engine::general_purpose::STANDARD
        .decode(pem.trim())
        .map_err(|e| format!("caBundle is not base64: {e}"))?;
    let bundle = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("caBundle: {e}"))?;
    let verifier = BundleVerifier::new(bundle)?;
    Ok(rustls::ClientConfig::builder()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth())
}

/// POSTs `body` as JSON over HTTPS/1.1 and returns the response body (2xx
/// only, at most `max_answer` bytes), on a kept-alive connection to the same
/// endpoint when one is idle.
async fn post(
    url: &str,
    ca_bundle: Option<&str>,
    body: Vec<u8>,
    max_answer: usize,
) -> Result<String, String> {
    let (endpoint, path) = target(url, ca_bundle)?;
    let body = bytes::Bytes::from(body);
    // A client span, whose trace context (W3C) the call carries, as kube's
    // webhook clients (otelhttp) send it.
    let span = crate::telemetry::otel::Span::client(
        || "HTTP POST",
        || {
            use opentelemetry::KeyValue;
            vec![
                KeyValue::new("http.method", "POST"),
                KeyValue::new("http.url", url.to_string()),
            ]
        },
    );
    let mut traced = http::HeaderMap::new();
    span.inject(&mut traced);
    let request = || {
        let mut request = http::Request::post(path.as_str());
        if let Some(headers) = request.headers_mut() {
            headers.extend(traced.clone());
        }
        request
            .header(
                http::header::HOST,
                format!("{}:{}", endpoint.host, endpoint.port),
            )
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json")
            .body(Full::new(body.clone()))
            .map_err(|e| e.to_string())
    };
    let sent = send(&endpoint, ca_bundle, request).await;
    if let Err(e) = &sent {
        span.fail(e);
    }
    let (sender, resp) = sent?;
    let status = resp.status();
    span.set("http.status_code", i64::from(status.as_u16()));
    if !status.is_success() {
        // Its body is not read: the connection is closed with `sender`.
        return Err(format!("webhook answered HTTP {}", status.as_u16()));
    }
    // On refusal the body is dropped unread and `sender` with it: the
    // connection is closed, not kept.
    let bytes = read_bounded(resp, max_answer).await?;
    pool::give_back(endpoint, sender);
    String::from_utf8(bytes.into()).map_err(|_| "response is not UTF-8".to_string())
}

/// Where an https `url` goes: its endpoint and its path with the query.
fn target(url: &str, ca_bundle: Option<&str>) -> Result<(Endpoint, String), String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("invalid URL: {e}"))?;
    if parsed.scheme() != "https" {
        return Err("webhook URLs must use https".into());
    }
    let host = parsed
        .host_str()
        .ok_or("URL has no host")?
        .trim_matches(|c| c == '[' || c == ']')
        .to_string();
    let endpoint = Endpoint {
        host,
        port: parsed.port().unwrap_or(443),
        ca_bundle: ca_bundle.unwrap_or_default().to_string(),
    };
    let path = match parsed.query() {
        Some(q) => format!("{}?{q}", parsed.path()),
        None => parsed.path().to_string(),
    };
    Ok((endpoint, path))
}

/// Sends a request made by `request` on an idle connection to `endpoint`,
/// or a new one (also when the idle one went away meanwhile).
async fn send(
    endpoint: &Endpoint,
    ca_bundle: Option<&str>,
    request: impl Fn() -> Result<http::Request<Full<bytes::Bytes>>, String>,
) -> Result<(Sender, http::Response<hyper::body::Incoming>), String> {
    if let Some(mut sender) = pool::take(endpoint).await {
        if let Ok(resp) = sender.send_request(request()?).await {
            return Ok((sender, resp));
        }
    }
    let mut sender = connect(endpoint, ca_bundle).await?;
    let resp = sender
        .send_request(request()?)
        .await
        .map_err(|e| e.to_string())?;
    Ok((sender, resp))
}

/// The answer's body, read as it arrives and refused as soon as it is
/// announced or found to be longer than `limit` bytes.
async fn read_bounded(
    resp: http::Response<hyper::body::Incoming>,
    limit: usize,
) -> Result<bytes::Bytes, String> {
    let too_large = || format!("the webhook's answer is larger than the limit of {limit} bytes");
    let announced = resp
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    match http_body_util::Limited::new(resp.into_body(), limit)
        .collect()
        .await
    {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Err(e) => Err(e.to_string()),
    }
}

/// A new TLS connection to `endpoint`, ready for requests.
async fn connect(endpoint: &Endpoint, ca_bundle: Option<&str>) -> Result<Sender, String> {
    let tcp = tokio::net::TcpStream::connect((endpoint.host.as_str(), endpoint.port))
        .await
        .map_err(|e| e.to_string())?;
    let _ = tcp.set_nodelay(true);
    let name = ServerName::try_from(endpoint.host.clone()).map_err(|e| e.to_string())?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(tls_config(ca_bundle)?));
    let tls = connector
        .connect(name, tcp)
        .await
        .map_err(|e| e.to_string())?;
    let (sender, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
        .await
        .map_err(|e| e.to_string())?;
    let task = tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(Sender {
        requests: sender,
        task: task.abort_handle(),
    })
}

/// One connection: requests go in through `requests`; dropping it closes
/// the connection (its task is aborted), also with an answer half read.
struct Sender {
    requests: hyper::client::conn::http1::SendRequest<Full<bytes::Bytes>>,
    task: tokio::task::AbortHandle,
}

impl Sender {
    fn is_closed(&self) -> bool {
        self.requests.is_closed()
    }

    async fn ready(&mut self) -> bool {
        self.requests.ready().await.is_ok()
    }

    async fn send_request(
        &mut self,
        request: http::Request<Full<bytes::Bytes>>,
    ) -> hyper::Result<http::Response<hyper::body::Incoming>> {
        self.requests.send_request(request).await
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Where a connection goes: host, port and the CAs it was verified with.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Endpoint {
    host: String,
    port: u16,
    ca_bundle: String,
}

/// Idle keep-alive connections, a few per endpoint.
mod pool {
    use super::{Endpoint, Sender};
    use std::collections::HashMap;
    use std::sync::{LazyLock, Mutex};

    const MAX_IDLE: usize = 8;

    static IDLE: LazyLock<Mutex<HashMap<Endpoint, Vec<Sender>>>> = LazyLock::new(Default::default);

    /// An idle connection that is still open and ready.
    pub(super) async fn take(endpoint: &Endpoint) -> Option<Sender> {
        loop {
            let candidate = {
                let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
                idle.get_mut(endpoint)?.pop()?
            };
            let mut sender = candidate;
            if !sender.is_closed() && sender.ready().await {
                return Some(sender);
            }
        }
    }

    pub(super) fn give_back(endpoint: Endpoint, sender: Sender) {
        if sender.is_closed() {
            return;
        }
        let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
        let list = idle.entry(endpoint).or_default();
        if list.len() < MAX_IDLE {
            list.push(sender);
        }
    }
}
