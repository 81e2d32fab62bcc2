//! The HTTP transport of the registry puller: GETs over hyper (HTTP/1.1) and rustls
//! (the platform's trust roots, as oci-client's reqwest had), plain HTTP
//! only for `--insecure-registry` hosts, with every wait and every byte
//! bounded (a registry is a remote party that may be hostile):
//!
//! - connecting within [`CONNECT_TIMEOUT`], then no read (the answer's
//!   headers, each chunk of its body) waiting more than [`READ_TIMEOUT`];
//!   the caller bounds the whole operation;
//! - a body is refused when its `Content-Length` or, streamed, its bytes
//!   pass the caller's bound (nothing past the bound is read);
//! - an error answer's body is read to at most [`ERROR_BODY_BYTES`], and
//!   what is shown of it is cut to [`MAX_SHOWN`] characters.
//!
//! Redirects (at most [`MAX_REDIRECTS`]): the distribution API has them for
//! blob downloads, which registries send to their storage backend (S3, a
//! CDN) on another host, so [`Redirects::AnyHost`] follows those;
//! manifests and token requests never leave the host asked
//! ([`Redirects::SameHost`]). containerd, oras-go and oci-client (Go's and
//! reqwest's default policy) follow up to 10 redirects to any host; we
//! follow fewer, only where the protocol has them. As Go's client does,
//! credentials (`Authorization`) are never sent to another host, and a
//! redirect may not go from HTTPS to plain HTTP unless the target is an
//! insecure registry.

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_LENGTH, HOST, LOCATION};
use http::StatusCode;
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use url::Url;

/// Connecting (TCP and TLS) to a registry, its storage or its token service.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest wait for the answer's headers or for any chunk of its body.
pub const READ_TIMEOUT: Duration = Duration::from_secs(30);
/// At most this much of an error answer's body is read.
pub const ERROR_BODY_BYTES: u64 = 4096;
/// Text from a registry (an error's message) is cut to this many characters.
pub const MAX_SHOWN: usize = 256;
/// Redirects followed for one request.
pub const MAX_REDIRECTS: usize = 3;

/// Where a request's redirects may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redirects {
    /// Only to the host (and port) asked: manifests, tokens.
    SameHost,
    /// Anywhere: blob downloads (a registry's storage backend).
    AnyHost,
}

/// An answer whose body has not been read yet.
pub struct Response {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Incoming,
    /// The URL that answered (after redirects).
    pub url: Url,
}

/// GETs to registries (`insecure`: the `host[:port]`s reached over plain HTTP).
#[derive(Clone, Debug, Default)]
pub struct Http {
    pub insecure: Vec<String>,
}

impl Http {
    /// The scheme `authority` (`host[:port]`) is reached with.
    pub fn scheme(&self, authority: &str) -> &'static str {
        match self.insecure.iter().any(|i| i == authority) {
            true => "http",
            false => "https",
        }
    }

    /// GETs `url`, following redirects as `redirects` allows; `authorization`
    /// is sent to `url`'s host only.
    pub async fn get(
        &self,
        url: &Url,
        accept: &str,
        authorization: Option<&str>,
        redirects: Redirects,
    ) -> Result<Response, String> {
        let mut current = url.clone();
        for _ in 0..=MAX_REDIRECTS {
            let same_host = authority(&current) == authority(url);
            let auth = authorization.filter(|_| same_host);
            let response = self.get_once(&current, accept, auth).await?;
            if !response.status.is_redirection() {
                return Ok(response);
            }
            current = self.redirect_target(url, &response, redirects)?;
        }
        Err(format!(
            "{}: more than {MAX_REDIRECTS} redirects",
            shown_url(url)
        ))
    }

    /// Where a redirect answer sends the request, if the rules allow it.
    fn redirect_target(
        &self,
        asked: &Url,
        response: &Response,
        redirects: Redirects,
    ) -> Result<Url, String> {
        let from = shown_url(&response.url);
        let location = response
            .headers
            .get(LOCATION)
            .and_then(|l| l.to_str().ok())
            .ok_or_else(|| format!("{from}: a redirect without a Location"))?;
        let target = response
            .url
            .join(location)
            .map_err(|_| format!("{from}: a redirect to an invalid URL"))?;
        if redirects == Redirects::SameHost && authority(&target) != authority(asked) {
            return Err(format!(
                "{from}: redirected to another host ({}), which only blob downloads may do",
                clip(&authority(&target))
            ));
        }
        let plain_allowed = self.scheme(&authority(&target)) == "http";
        match target.scheme() {
            "https" => Ok(target),
            "http" if plain_allowed => Ok(target),
            _ => Err(format!(
                "{from}: redirected to {}, which is not HTTPS (nor an insecure registry)",
                shown_url(&target)
            )),
        }
    }

    async fn get_once(
        &self,
        url: &Url,
        accept: &str,
        authorization: Option<&str>,
    ) -> Result<Response, String> {
        let shown = shown_url(url);
        let host = url.host_str().ok_or_else(|| format!("{shown}: no host"))?;
        let host = host.trim_matches(|c| c == '[' || c == ']').to_string();
        let port = url
            .port_or_known_default()
            .ok_or_else(|| format!("{shown}: no port"))?;
        let mut sender = connect(url.scheme(), &host, port)
            .await
            .map_err(|e| format!("{shown}: {e}"))?;
        let mut request = http::Request::get(path_and_query(url))
            .header(HOST, authority(url))
            .header(http::header::ACCEPT, accept)
            .header(http::header::USER_AGENT, "capstan");
        if let Some(auth) = authorization {
            request = request.header(AUTHORIZATION, auth);
        }
        let request = request
            .body(Empty::<Bytes>::new())
            .map_err(|e| format!("{shown}: {e}"))?;
        let response = tokio::time::timeout(READ_TIMEOUT, sender.send_request(request))
            .await
            .map_err(|_| format!("{shown}: no answer within {READ_TIMEOUT:?}"))?
            .map_err(|e| format!("{shown}: {e}"))?;
        let (parts, body) = response.into_parts();
        Ok(Response {
            status: parts.status,
            headers: parts.headers,
            body,
            url: url.clone(),
        })
    }
}

/// A new HTTP/1.1 connection (over TLS for https), ready for one request.
async fn connect(
    scheme: &str,
    host: &str,
    port: u16,
) -> Result<hyper::client::conn::http1::SendRequest<Empty<Bytes>>, String> {
    let tcp = tokio::time::timeout(
        CONNECT_TIMEOUT,
        tokio::net::TcpStream::connect((host, port)),
    )
    .await
    .map_err(|_| format!("no connection within {CONNECT_TIMEOUT:?}"))?
    .map_err(|e| e.to_string())?;
    let _ = tcp.set_nodelay(true);
    match scheme {
        "http" => handshake(tcp).await,
        "https" => {
            let name = rustls::pki_types::ServerName::try_from(host.to_string())
                .map_err(|e| e.to_string())?;
            let connector = tokio_rustls::TlsConnector::from(tls()?);
            let tls = tokio::time::timeout(CONNECT_TIMEOUT, connector.connect(name, tcp))
                .await
                .map_err(|_| format!("no TLS handshake within {CONNECT_TIMEOUT:?}"))?
                .map_err(|e| e.to_string())?;
            handshake(tls).await
        }
        other => Err(format!("unsupported scheme {}", clip(other))),
    }
}

async fn handshake<T>(
    io: T,
) -> Result<hyper::client::conn::http1::SendRequest<Empty<Bytes>>, String>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(io))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// The client TLS configuration: the platform's verifier (its trust roots).
fn tls() -> Result<Arc<rustls::ClientConfig>, String> {
    static TLS: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    TLS.get_or_init(|| {
        use rustls_platform_verifier::BuilderVerifierExt;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_platform_verifier()
            .map_err(|e| format!("the platform's trust roots: {e}"))?
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    })
    .clone()
}

/// The body, refused past `max` bytes (its `Content-Length` first, then
/// as it streams: nothing past the bound is read); each chunk within [`READ_TIMEOUT`].
pub async fn read_body(response: Response, max: u64, what: &str) -> Result<Vec<u8>, String> {
    let too_big = || format!("{what} is more than {max} bytes");
    if content_length(&response.headers).is_some_and(|n| n > max) {
        return Err(too_big());
    }
    let mut body = response.body;
    let mut out = Vec::new();
    while let Some(frame) = next_frame(&mut body, what).await? {
        if out.len() as u64 + frame.len() as u64 > max {
            return Err(too_big());
        }
        out.extend_from_slice(&frame);
    }
    Ok(out)
}

/// The next chunk of data (None at the end), within [`READ_TIMEOUT`].
async fn next_frame(body: &mut Incoming, what: &str) -> Result<Option<Bytes>, String> {
    loop {
        let frame = tokio::time::timeout(READ_TIMEOUT, body.frame())
            .await
            .map_err(|_| format!("{what}: no data for {READ_TIMEOUT:?}"))?;
        match frame {
            None => return Ok(None),
            Some(Err(e)) => return Err(format!("{what}: {e}")),
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    return Ok(Some(data));
                }
            }
        }
    }
}

/// What an error answer says: its status, and the distribution API's
/// error envelope (`{"errors": [{"code", "message"}]}`) or the start of
/// its text, from at most [`ERROR_BODY_BYTES`] of the body, cut to [`MAX_SHOWN`].
pub async fn error_text(response: Response) -> String {
    let status = response.status;
    let mut body = response.body;
    let mut head = Vec::new();
    let read = async {
        while (head.len() as u64) < ERROR_BODY_BYTES {
            match next_frame(&mut body, "").await {
                Ok(Some(data)) => head.extend_from_slice(&data),
                _ => break,
            }
        }
    };
    // What arrived within one read timeout, however slowly it trickles.
    let _ = tokio::time::timeout(READ_TIMEOUT, read).await;
    head.truncate(ERROR_BODY_BYTES as usize);
    let said = envelope(&head).unwrap_or_else(|| String::from_utf8_lossy(&head).into_owned());
    match clip(said.trim()) {
        s if s.is_empty() => format!("HTTP {}", status.as_u16()),
        s => format!("HTTP {}: {s}", status.as_u16()),
    }
}

/// The first error of a distribution API error envelope: `CODE: message`.
fn envelope(body: &[u8]) -> Option<String> {
    let doc: serde_json::Value = serde_json::from_slice(body).ok()?;
    let first = doc.get("errors")?.as_array()?.first()?;
    let field = |k: &str| first.get(k).and_then(|v| v.as_str()).unwrap_or_default();
    Some(format!("{}: {}", field("code"), field("message")))
}

fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(CONTENT_LENGTH)
        .and_then(|v: &HeaderValue| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}

/// `host[:port]` as written in a reference or `--insecure-registry`.
pub fn authority(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    }
}

fn path_and_query(url: &Url) -> String {
    match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    }
}

/// A URL for a message: without its query (a storage backend's signed
/// query can hold credentials) and cut to [`MAX_SHOWN`].
pub fn shown_url(url: &Url) -> String {
    let mut shown = url.clone();
    shown.set_query(None);
    clip(shown.as_str())
}

/// `text` cut to [`MAX_SHOWN`] characters, without control characters.
pub fn clip(text: &str) -> String {
    crate::policy::bundles::clip(text, MAX_SHOWN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_text_is_clipped_and_cleaned() {
        assert_eq!(clip("a\nb\u{1b}[31m"), "ab[31m");
        let long = "x".repeat(10_000);
        let clipped = clip(&long);
        assert_eq!(clipped.chars().count(), MAX_SHOWN + 1);
        assert!(clipped.ends_with('…'));
        assert_eq!(
            envelope(br#"{"errors":[{"code":"DENIED","message":"no"}]}"#).as_deref(),
            Some("DENIED: no")
        );
        let url = Url::parse("https://s3.example/blob?X-Amz-Signature=secret").unwrap();
        assert_eq!(shown_url(&url), "https://s3.example/blob");
        assert_eq!(authority(&url), "s3.example");
    }
}
