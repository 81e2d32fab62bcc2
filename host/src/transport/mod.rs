//! One contract for every call that hands a review to someone else to
//! decide: the review's JSON text in, the answer's JSON text out. A Wasm
//! component (`wasm::WasmTransport`) and an HTTPS webhook
//! ([`https::HttpsWebhook`]) are its two implementations, so admission,
//! authentication, authorization, CRD conversion and PolicyBundle policies
//! call a plugin or a webhook the same way, and a webhook's logic can move
//! in process without its callers changing.

pub mod https;

use futures_util::future::BoxFuture;

/// A review sent, its answer returned. An error is the failure's text (a
/// trap, timeout, memory overrun, refused connection, an answer too large),
/// which the caller words under its failurePolicy.
pub trait ReviewTransport: Send + Sync {
    fn call<'a>(&'a self, review: &'a str) -> BoxFuture<'a, Result<String, String>>;
}
