//! The part of an HTTP/2 request body a handler did not read (it answered
//! early: 413 over the size limit, 403, ...). Dropping it would reset the
//! stream while the client is still sending, and clients such as curl
//! then report a failure instead of the answer; so it is read and thrown
//! away (up to [`DRAIN_LIMIT`]), letting the client finish its upload and
//! see the response. Past the limit the stream is reset with NO_ERROR,
//! after the response is sent, as RFC 9113 §8.1 allows.

use axum::body::Body;
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body as HttpBody, Frame, Incoming, SizeHint};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::oneshot;

/// How much of an unread body is read and discarded.
const DRAIN_LIMIT: usize = 16 * 1024 * 1024;

/// Dropped when the request's response has been sent (or abandoned).
pub struct ResponseSent {
    _sender: oneshot::Sender<()>,
}

/// The request with its body drained when the handler drops it unread,
/// and the guard to hold until the response is sent.
pub fn drain_when_dropped(req: http::Request<Incoming>) -> (http::Request<Body>, ResponseSent) {
    let (sent_tx, sent_rx) = oneshot::channel();
    let req = req.map(|inner| {
        Body::new(Unread {
            inner: Some(inner),
            response_sent: Some(sent_rx),
        })
    });
    (req, ResponseSent { _sender: sent_tx })
}

struct Unread {
    inner: Option<Incoming>,
    response_sent: Option<oneshot::Receiver<()>>,
}

impl HttpBody for Unread {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        match self.inner.as_mut() {
            Some(inner) => Pin::new(inner).poll_frame(cx),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(|b| b.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        self.inner
            .as_ref()
            .map(|b| b.size_hint())
            .unwrap_or_default()
    }
}

impl Drop for Unread {
    fn drop(&mut self) {
        let (Some(inner), Some(sent)) = (self.inner.take(), self.response_sent.take()) else {
            return;
        };
        if inner.is_end_stream() {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(drain(inner, sent));
        }
    }
}

/// Reads and discards the body; past the limit, waits for the response
/// to be sent before dropping it (which resets the stream).
async fn drain(mut body: Incoming, response_sent: oneshot::Receiver<()>) {
    let mut drained = 0;
    while drained <= DRAIN_LIMIT {
        match body.frame().await {
            Some(Ok(frame)) => drained += frame.data_ref().map_or(0, Bytes::len),
            Some(Err(_)) | None => return,
        }
    }
    tracing::debug!(
        drained,
        "request body over the drain limit; resetting the stream"
    );
    let _ = response_sent.await;
}
