//! One client connection, with kube-apiserver's protections (its Go
//! http.Server): the TLS handshake and the first request's headers must
//! arrive within the header timeout (32 s), a connection with no request in
//! progress is closed after the idle timeout (90 s), headers are limited
//! (1 MiB, and at most 100 of them: 431 with a Status), and HTTP/2 gets
//! kube's settings (100 streams, 256 KiB frames and per-stream window).

use crate::apimachinery::status::ApiError;
use crate::server::PeerIdentity;
use crate::{server::held_body, server::unread_body};
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;
use tower::ServiceExt;

/// How long a connection may take to present a request, and to stay idle.
#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    /// TLS handshake, and the headers of the first request (Go's ReadHeaderTimeout).
    pub read_header: Duration,
    /// No request in progress (Go's IdleTimeout).
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            read_header: Duration::from_secs(32),
            idle: Duration::from_secs(90),
        }
    }
}

/// Requests with more headers than this are refused with 431.
pub const MAX_HEADERS: usize = 100;
/// How many headers HTTP/1 parsing accepts, so that requests over
/// [`MAX_HEADERS`] reach us and get a Status (beyond this, hyper's bare 431).
const PARSED_HEADERS: usize = 1000;
/// kube's MaxHeaderBytes (1 MiB; Go allows 4 KiB over it on HTTP/1).
const MAX_HEADER_BYTES: usize = 1 << 20;
/// kube's HTTP/2 settings: the streams a client may open at once, and the
/// frame size and per-stream receive buffer (the connection's is both multiplied).
const H2_MAX_STREAMS: u32 = 100;
const H2_BUFFER_PER_STREAM: u32 = 256 * 1024;
/// After asking a connection to close, how long its last frames may take.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// Serves one accepted TCP connection until it ends or is timed out.
pub async fn serve(
    tcp: TcpStream,
    peer: SocketAddr,
    acceptor: tokio_rustls::TlsAcceptor,
    app: axum::Router,
    (timeouts, shutdown): (Timeouts, crate::api::shutdown::Shutdown),
) {
    let tls = match tokio::time::timeout(timeouts.read_header, acceptor.accept(tcp)).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(e)) => return tracing::debug!(%peer, error = %e, "TLS handshake failed"),
        Err(_) => return tracing::debug!(%peer, "TLS handshake timed out"),
    };
    let certificate = tls
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|c| c.first())
        .map(|c| c.to_vec());
    let activity = Arc::new(Activity::new(Instant::now()));
    let svc = service(
        app,
        PeerIdentity::new(certificate, Some(peer.ip())),
        activity.clone(),
    );
    let builder = builder();
    let conn = builder.serve_connection_with_upgrades(TokioIo::new(tls), svc);
    let mut conn = std::pin::pin!(conn);
    let mut closing = None;
    loop {
        let now = Instant::now();
        let wake = match activity.next(timeouts, now, closing) {
            Next::WaitUntil(at) => at,
            Next::Drop(why) => return tracing::debug!(%peer, "{why}"),
            Next::Close => {
                tracing::debug!(%peer, "closing an idle connection");
                conn.as_mut().graceful_shutdown();
                closing = Some(now);
                continue;
            }
        };
        tokio::select! {
            ended = conn.as_mut() => {
                if let Err(e) = ended {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                }
                return;
            }
            () = tokio::time::sleep_until(wake.into()) => {}
            // Shutting down: the connection closes after its current
            // requests (HTTP/2: GOAWAY).
            () = shutdown.closing(), if closing.is_none() => {
                conn.as_mut().graceful_shutdown();
                closing = Some(Instant::now());
            }
        }
    }
}

/// hyper's HTTP/1.1 and HTTP/2 server with kube's limits.
fn builder() -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .header_read_timeout(None)
        .max_headers(PARSED_HEADERS)
        .max_buf_size(MAX_HEADER_BYTES + 4096);
    builder
        .http2()
        .max_concurrent_streams(H2_MAX_STREAMS)
        .max_frame_size(H2_BUFFER_PER_STREAM)
        .initial_stream_window_size(H2_BUFFER_PER_STREAM)
        .initial_connection_window_size(H2_BUFFER_PER_STREAM * H2_MAX_STREAMS)
        .max_header_list_size(MAX_HEADER_BYTES as u32);
    builder
}

/// The per-request service of a connection: the request is counted as
/// activity until its response is sent; over HTTP/2 what the handler does
/// not read of its body is drained (`unread_body`), so that an early
/// answer (413) reaches the client instead of a reset.
fn service(
    app: axum::Router,
    identity: PeerIdentity,
    activity: Arc<Activity>,
) -> impl hyper::service::Service<
    http::Request<Incoming>,
    Response = Response,
    Error = std::convert::Infallible,
    Future = impl std::future::Future<Output = Result<Response, std::convert::Infallible>>
                 + Send
                 + 'static,
> + Clone {
    hyper::service::service_fn(move |mut req: http::Request<Incoming>| {
        let busy = activity.begin();
        let app = app.clone();
        req.extensions_mut().insert(identity.clone());
        async move {
            if req.headers().len() > MAX_HEADERS {
                let resp = ApiError::header_fields_too_large(MAX_HEADERS).into_response();
                return Ok(held_body::hold(resp, busy));
            }
            let (req, sent) = if req.version() == http::Version::HTTP_2 {
                let (req, sent) = unread_body::drain_when_dropped(req);
                (req, Some(sent))
            } else {
                (req.map(Body::new), None)
            };
            let resp = match app.oneshot(req).await {
                Ok(resp) => resp,
                Err(never) => match never {},
            };
            Ok(held_body::hold(resp, (busy, sent)))
        }
    })
}

/// How many requests of a connection are in progress, and since when it
/// has had none.
#[derive(Debug)]
struct Activity {
    state: Mutex<ActivityState>,
}

#[derive(Debug)]
struct ActivityState {
    in_progress: usize,
    quiet_since: Instant,
    served_any: bool,
}

/// What a connection's watchdog does next.
#[derive(Debug, PartialEq, Eq)]
enum Next {
    WaitUntil(Instant),
    Close,
    Drop(&'static str),
}

/// One request in progress; dropped when its response is done with.
struct Busy(Arc<Activity>);

impl Activity {
    fn new(now: Instant) -> Self {
        Activity {
            state: Mutex::new(ActivityState {
                in_progress: 0,
                quiet_since: now,
                served_any: false,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ActivityState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn begin(self: &Arc<Self>) -> Busy {
        let mut state = self.lock();
        state.in_progress += 1;
        state.served_any = true;
        Busy(self.clone())
    }

    /// What to do about the connection at `now`: wait (a request is in
    /// progress, or its timeout has not passed), close it gracefully (idle
    /// after requests), or drop it (no request headers in time, or it did
    /// not close within the grace after being asked to at `closing`).
    fn next(&self, timeouts: Timeouts, now: Instant, closing: Option<Instant>) -> Next {
        let state = self.lock();
        if state.in_progress > 0 {
            return Next::WaitUntil(now + timeouts.idle);
        }
        if let Some(asked) = closing {
            let limit = asked + CLOSE_GRACE;
            return if now >= limit {
                Next::Drop("the connection did not close after an idle timeout")
            } else {
                Next::WaitUntil(limit)
            };
        }
        let allowed = if state.served_any {
            timeouts.idle
        } else {
            timeouts.read_header
        };
        let deadline = state.quiet_since + allowed;
        if now < deadline {
            Next::WaitUntil(deadline)
        } else if state.served_any {
            Next::Close
        } else {
            Next::Drop("no request headers within the timeout")
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.in_progress = state.in_progress.saturating_sub(1);
        if state.in_progress == 0 {
            state.quiet_since = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeouts() -> Timeouts {
        Timeouts {
            read_header: Duration::from_secs(2),
            idle: Duration::from_secs(9),
        }
    }

    #[test]
    fn a_connection_without_a_request_is_dropped_after_the_header_timeout() {
        let t0 = Instant::now();
        let activity = Activity::new(t0);
        let header_deadline = t0 + Duration::from_secs(2);
        assert_eq!(
            activity.next(timeouts(), t0, None),
            Next::WaitUntil(header_deadline)
        );
        assert!(matches!(
            activity.next(timeouts(), header_deadline, None),
            Next::Drop(_)
        ));
    }

    #[test]
    fn a_request_in_progress_keeps_the_connection_then_idle_closes_it() {
        let t0 = Instant::now();
        let activity = Arc::new(Activity::new(t0));
        let busy = activity.begin();
        let much_later = t0 + Duration::from_secs(3600);
        assert_eq!(
            activity.next(timeouts(), much_later, None),
            Next::WaitUntil(much_later + Duration::from_secs(9))
        );
        drop(busy);
        let idle_deadline = activity.lock().quiet_since + Duration::from_secs(9);
        assert_eq!(
            activity.next(timeouts(), idle_deadline - Duration::from_secs(1), None),
            Next::WaitUntil(idle_deadline)
        );
        assert_eq!(activity.next(timeouts(), idle_deadline, None), Next::Close);
        let grace_over = idle_deadline + CLOSE_GRACE;
        assert!(matches!(
            activity.next(timeouts(), grace_over, Some(idle_deadline)),
            Next::Drop(_)
        ));
    }
}
