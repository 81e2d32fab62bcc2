//! Admission: the ordered chain of mutating and validating entries that every
//! write passes through. Built-in plugins, user Wasm plugins and the API's
//! webhooks are entries of one list, matched by one matcher and called with
//! one contract (AdmissionReview), over two transports (Wasm, HTTPS).

pub mod assemble;
pub mod cel_policy;
pub mod chain;
pub mod config;
pub mod manifest;
pub mod match_conditions;
pub mod matcher;
pub mod metrics;
pub mod review;
mod trace;
pub mod watched;
pub mod webhook;

use futures_util::future::BoxFuture;

pub use chain::{Chain, RequestAdmission};

/// How an entry is called: a Wasm plugin or an HTTPS webhook. Both take the
/// AdmissionReview JSON text and return the AdmissionReview JSON text.
pub trait Transport: Send + Sync {
    fn call<'a>(&'a self, review: &'a str) -> BoxFuture<'a, Result<String, String>>;
}
