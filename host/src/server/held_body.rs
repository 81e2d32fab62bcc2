//! A response whose body keeps something alive (an in-flight slot, a
//! connection's activity count, a parked request body) until the body has
//! been sent or the client went away, as a Go handler holds them until
//! ServeHTTP returns.

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use std::pin::Pin;
use std::task::{Context, Poll};

/// `resp` with `guard` dropped only when its body is done with.
pub fn hold<G: Send + Unpin + 'static>(resp: Response, guard: G) -> Response {
    resp.map(|inner| {
        Body::new(Held {
            inner,
            _guard: guard,
        })
    })
}

struct Held<G> {
    inner: Body,
    _guard: G,
}

impl<G: Send + Unpin + 'static> HttpBody for Held<G> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use std::sync::Arc;

    #[tokio::test]
    async fn the_guard_lives_until_the_body_is_consumed() {
        let guard = Arc::new(());
        let resp = hold(Response::new(Body::from("hello")), guard.clone());
        assert_eq!(Arc::strong_count(&guard), 2);
        let body = resp.into_body();
        assert_eq!(body.size_hint().exact(), Some(5));
        let bytes = body.collect().await.map(|c| c.to_bytes());
        assert_eq!(bytes.ok().as_deref(), Some(&b"hello"[..]));
        assert_eq!(Arc::strong_count(&guard), 1);
    }
}
