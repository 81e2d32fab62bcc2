//! HTTP client for the benchmark. Over TLS it offers HTTP/2 through ALPN and, when the
//! server picks it, shares ONE connection among all workers (as client-go does); when
//! the server answers with HTTP/1.1 (or the URL is plain http) it keeps a small pool of
//! HTTP/1.1 connections, one per request in flight.

use super::kubeconfig::Kubeconfig;
use super::tls;
use anyhow::{anyhow, bail, Context, Result};
use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::ServerName;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// Longest wait for a complete response (or, for a stream, its headers).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
const USER_AGENT: &str = concat!("capstan/", env!("CARGO_PKG_VERSION"));

type Body = Full<Bytes>;

/// A complete response.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub body: Bytes,
}

/// A cheap-to-clone handle; all clones share the same connection(s).
#[derive(Clone)]
pub struct Client {
    target: Arc<Target>,
    mode: Mode,
}

#[derive(Clone)]
enum Mode {
    Http2(http2::SendRequest<Body>),
    Http1(Arc<Mutex<Vec<http1::SendRequest<Body>>>>),
}

enum Conn {
    H2(http2::SendRequest<Body>),
    H1(http1::SendRequest<Body>),
}

/// Where and how to connect.
struct Target {
    scheme: String,
    authority: String,
    prefix: String,
    addr: String,
    tls: Option<(TlsConnector, ServerName<'static>)>,
    authorization: Option<HeaderValue>,
}

impl Client {
    /// Opens the first connection; HTTP/2 if `allow_h2` and the server selects it.
    pub async fn connect(kc: &Kubeconfig, allow_h2: bool) -> Result<Client> {
        let target = Arc::new(Target::new(kc, allow_h2)?);
        let mode = match open(&target).await? {
            Conn::H2(sender) => Mode::Http2(sender),
            Conn::H1(sender) => Mode::Http1(Arc::new(Mutex::new(vec![sender]))),
        };
        Ok(Client { target, mode })
    }

    /// "HTTP/2" or "HTTP/1.1".
    pub fn protocol(&self) -> &'static str {
        match self.mode {
            Mode::Http2(_) => "HTTP/2",
            Mode::Http1(_) => "HTTP/1.1",
        }
    }

    /// The server URL (scheme, authority and path prefix).
    pub fn server(&self) -> String {
        let t = &self.target;
        format!("{}://{}{}", t.scheme, t.authority, t.prefix)
    }

    /// Sends one request (a JSON body, if any) and reads the whole response body.
    pub async fn request(&self, method: Method, path: &str, body: Option<Bytes>) -> Result<Reply> {
        self.request_as(method, path, body, "application/json")
            .await
    }

    /// Sends one request whose body is of `content_type`.
    pub async fn request_as(
        &self,
        method: Method,
        path: &str,
        body: Option<Bytes>,
        content_type: &'static str,
    ) -> Result<Reply> {
        let what = format!("{method} {path}");
        let req = self.build(method, path, body, content_type)?;
        let exchange = async {
            match &self.mode {
                Mode::Http2(sender) => read_reply(send_h2(sender, req).await?).await,
                Mode::Http1(pool) => self.exchange_h1(pool, req).await,
            }
        };
        tokio::time::timeout(REQUEST_TIMEOUT, exchange)
            .await
            .map_err(|_| anyhow!("{what}: no response within {REQUEST_TIMEOUT:?}"))?
            .with_context(|| what)
    }

    /// Sends a GET and returns as soon as the response headers arrive (for watches).
    pub async fn stream(&self, path: &str) -> Result<Response<Incoming>> {
        let req = self.build(Method::GET, path, None, "application/json")?;
        let send = async {
            match &self.mode {
                Mode::Http2(sender) => send_h2(sender, req).await,
                Mode::Http1(pool) => {
                    let mut sender = self.checkout(pool).await?;
                    Ok(sender.send_request(req).await?)
                }
            }
        };
        tokio::time::timeout(REQUEST_TIMEOUT, send)
            .await
            .map_err(|_| anyhow!("GET {path}: no response headers within {REQUEST_TIMEOUT:?}"))?
            .with_context(|| format!("GET {path}"))
    }

    fn build(
        &self,
        method: Method,
        path: &str,
        body: Option<Bytes>,
        content_type: &'static str,
    ) -> Result<Request<Body>> {
        let t = &self.target;
        let origin = format!("{}{}", t.prefix, path);
        let mut builder = Request::builder()
            .method(method)
            .header(header::ACCEPT, "application/json")
            .header(header::USER_AGENT, USER_AGENT);
        builder = match self.mode {
            Mode::Http2(_) => builder.uri(format!("{}://{}{}", t.scheme, t.authority, origin)),
            Mode::Http1(_) => builder
                .uri(origin)
                .header(header::HOST, t.authority.as_str()),
        };
        if let Some(auth) = &t.authorization {
            builder = builder.header(header::AUTHORIZATION, auth.clone());
        }
        if body.is_some() {
            builder = builder.header(header::CONTENT_TYPE, content_type);
        }
        Ok(builder.body(Full::new(body.unwrap_or_default()))?)
    }

    async fn exchange_h1(
        &self,
        pool: &Mutex<Vec<http1::SendRequest<Body>>>,
        req: Request<Body>,
    ) -> Result<Reply> {
        let mut sender = self.checkout(pool).await?;
        let reply = read_reply(sender.send_request(req).await?).await?;
        pool.lock().unwrap_or_else(|e| e.into_inner()).push(sender);
        Ok(reply)
    }

    /// An idle HTTP/1.1 connection from the pool, or a new one.
    async fn checkout(
        &self,
        pool: &Mutex<Vec<http1::SendRequest<Body>>>,
    ) -> Result<http1::SendRequest<Body>> {
        loop {
            let idle = pool.lock().unwrap_or_else(|e| e.into_inner()).pop();
            let Some(mut sender) = idle else { break };
            if sender.ready().await.is_ok() {
                return Ok(sender);
            }
        }
        match open(&self.target).await? {
            Conn::H1(sender) => Ok(sender),
            Conn::H2(_) => bail!("server switched from HTTP/1.1 to HTTP/2 between connections"),
        }
    }
}

impl Reply {
    /// `self` if the status is 2xx, else an error quoting the Status message.
    pub fn check(self) -> Result<Reply> {
        if self.status.is_success() {
            return Ok(self);
        }
        let message = serde_json::from_slice::<serde_json::Value>(&self.body)
            .ok()
            .and_then(|v| {
                v.get("message")
                    .and_then(|m| m.as_str())
                    .map(str::to_string)
            })
            .unwrap_or_else(|| {
                let end = self.body.len().min(200);
                String::from_utf8_lossy(&self.body[..end]).into_owned()
            });
        bail!("HTTP {}: {}", self.status, message)
    }
}

impl Target {
    fn new(kc: &Kubeconfig, allow_h2: bool) -> Result<Target> {
        let url = &kc.server;
        let host = url
            .host_str()
            .ok_or_else(|| anyhow!("server URL {url} has no host"))?;
        let port = url
            .port_or_known_default()
            .ok_or_else(|| anyhow!("server URL {url} has no port"))?;
        let authority = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        let tls = match url.scheme() {
            "https" => Some(tls_target(kc, url, allow_h2)?),
            "http" => None,
            other => bail!("unsupported server URL scheme {other:?}"),
        };
        let authorization = match &kc.authorization {
            Some(value) => Some(HeaderValue::from_str(value).context("authorization header")?),
            None => None,
        };
        Ok(Target {
            scheme: url.scheme().to_string(),
            authority,
            prefix: url.path().trim_end_matches('/').to_string(),
            addr: format!("{host}:{port}"),
            tls,
            authorization,
        })
    }
}

fn tls_target(
    kc: &Kubeconfig,
    url: &url::Url,
    allow_h2: bool,
) -> Result<(TlsConnector, ServerName<'static>)> {
    let config = tls::client_config(kc, allow_h2)?;
    let name = match (&kc.tls_server_name, url.host()) {
        (Some(name), _) => ServerName::try_from(name.clone())?,
        (None, Some(url::Host::Domain(d))) => ServerName::try_from(d.to_string())?,
        (None, Some(url::Host::Ipv4(ip))) => ServerName::IpAddress(std::net::IpAddr::V4(ip).into()),
        (None, Some(url::Host::Ipv6(ip))) => ServerName::IpAddress(std::net::IpAddr::V6(ip).into()),
        (None, None) => bail!("server URL {url} has no host"),
    };
    Ok((TlsConnector::from(Arc::new(config)), name))
}

async fn open(t: &Target) -> Result<Conn> {
    let tcp = TcpStream::connect(&t.addr)
        .await
        .with_context(|| format!("connecting to {}", t.addr))?;
    tcp.set_nodelay(true)?;
    let Some((connector, name)) = &t.tls else {
        return handshake_h1(TokioIo::new(tcp)).await;
    };
    let stream = connector
        .connect(name.clone(), tcp)
        .await
        .with_context(|| format!("TLS handshake with {}", t.addr))?;
    if stream.get_ref().1.alpn_protocol() == Some(tls::ALPN_H2) {
        handshake_h2(TokioIo::new(stream)).await
    } else {
        handshake_h1(TokioIo::new(stream)).await
    }
}

async fn handshake_h2<T>(io: T) -> Result<Conn>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (sender, conn) = http2::Builder::new(TokioExecutor::new())
        .adaptive_window(true)
        .handshake(io)
        .await
        .context("HTTP/2 handshake")?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::debug!(error = %e, "HTTP/2 connection ended");
        }
    });
    Ok(Conn::H2(sender))
}

async fn handshake_h1<T>(io: T) -> Result<Conn>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (sender, conn) = http1::handshake(io).await.context("HTTP/1.1 handshake")?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::debug!(error = %e, "HTTP/1.1 connection ended");
        }
    });
    Ok(Conn::H1(sender))
}

async fn send_h2(
    sender: &http2::SendRequest<Body>,
    req: Request<Body>,
) -> Result<Response<Incoming>> {
    let mut sender = sender.clone();
    sender.ready().await.context("HTTP/2 connection")?;
    Ok(sender.send_request(req).await?)
}

async fn read_reply(resp: Response<Incoming>) -> Result<Reply> {
    let status = resp.status();
    let body = resp.into_body().collect().await?.to_bytes();
    Ok(Reply { status, body })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kube_client::testing::{
        full, kubeconfig_for, serve_tls, test_pki, Handler, TestPki,
    };

    /// Answers every request with "<version> <path> <has-client-cert>".
    async fn serve(pki: &TestPki, alpn: Vec<Vec<u8>>) -> u16 {
        let handler: Handler = Arc::new(|req, has_cert| {
            let text = format!("{:?} {} {}", req.version(), req.uri().path(), has_cert);
            Box::pin(async move { Response::new(full(text)) })
        });
        serve_tls(pki, alpn, handler).await
    }

    #[tokio::test]
    async fn negotiates_http2_and_presents_the_client_certificate() {
        let pki = test_pki();
        let port = serve(&pki, vec![b"h2".to_vec(), b"http/1.1".to_vec()]).await;
        let kc = kubeconfig_for(&pki, &format!("https://127.0.0.1:{port}/prefix/"));
        let client = Client::connect(&kc, true).await.unwrap();
        assert_eq!(client.protocol(), "HTTP/2");
        assert_eq!(client.server(), format!("https://127.0.0.1:{port}/prefix"));
        let reply = client.request(Method::GET, "/readyz", None).await.unwrap();
        assert_eq!(reply.status, StatusCode::OK);
        assert_eq!(&reply.body[..], b"HTTP/2.0 /prefix/readyz true");
    }

    #[tokio::test]
    async fn falls_back_to_http1_pool_when_server_does_not_pick_h2() {
        let pki = test_pki();
        let port = serve(&pki, vec![b"http/1.1".to_vec()]).await;
        let kc = kubeconfig_for(&pki, &format!("https://localhost:{port}"));
        let client = Client::connect(&kc, true).await.unwrap();
        assert_eq!(client.protocol(), "HTTP/1.1");
        let calls = (0..8).map(|i| {
            let client = client.clone();
            async move { client.request(Method::GET, &format!("/x/{i}"), None).await }
        });
        for (i, reply) in futures_util::future::join_all(calls)
            .await
            .into_iter()
            .enumerate()
        {
            assert_eq!(reply.unwrap().body, format!("HTTP/1.1 /x/{i} true"));
        }
    }

    #[tokio::test]
    async fn untrusted_server_certificate_is_an_error_unless_insecure() {
        let pki = test_pki();
        let port = serve(&pki, vec![b"h2".to_vec()]).await;
        let mut kc = kubeconfig_for(&pki, &format!("https://127.0.0.1:{port}"));
        kc.ca_pem = Some(test_pki().ca_pem.into_bytes());
        let err = format!("{:#}", Client::connect(&kc, true).await.err().unwrap());
        assert!(err.contains("TLS handshake"), "{err}");
        kc.insecure_skip_tls_verify = true;
        let client = Client::connect(&kc, true).await.unwrap();
        assert_eq!(
            client.request(Method::GET, "/", None).await.unwrap().status,
            200
        );
    }

    #[test]
    fn check_quotes_the_status_message() {
        let body =
            Bytes::from_static(br#"{"kind":"Status","message":"configmaps \"a\" already exists"}"#);
        let reply = Reply {
            status: StatusCode::CONFLICT,
            body,
        };
        let err = reply.check().unwrap_err().to_string();
        assert_eq!(err, "HTTP 409 Conflict: configmaps \"a\" already exists");
        let ok = Reply {
            status: StatusCode::CREATED,
            body: Bytes::new(),
        };
        assert!(ok.check().is_ok());
    }
}
