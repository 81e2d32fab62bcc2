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

use crate::apimachinery::status::ApiResult;
use futures_util::future::BoxFuture;
use serde_json::Value;

pub use chain::{Chain, RequestAdmission};

/// The hooks the registry calls around a write: `mutate` before the strategy
/// prepares the object, `validate` after (for DELETE, `obj` is None).
pub trait Admit: Send + Sync {
    fn mutate<'a>(&'a self, obj: Value, old: Option<&'a Value>) -> BoxFuture<'a, ApiResult<Value>>;
    fn validate<'a>(
        &'a self,
        obj: Option<&'a Value>,
        old: Option<&'a Value>,
    ) -> BoxFuture<'a, ApiResult<()>>;
}

/// No admission (server-internal writes: bootstrap, controllers).
pub struct NoAdmission;

impl Admit for NoAdmission {
    fn mutate<'a>(
        &'a self,
        obj: Value,
        _old: Option<&'a Value>,
    ) -> BoxFuture<'a, ApiResult<Value>> {
        Box::pin(async move { Ok(obj) })
    }

    fn validate<'a>(
        &'a self,
        _obj: Option<&'a Value>,
        _old: Option<&'a Value>,
    ) -> BoxFuture<'a, ApiResult<()>> {
        Box::pin(async { Ok(()) })
    }
}

/// How an entry is called: a Wasm plugin or an HTTPS webhook. Both take the
/// AdmissionReview JSON text and return the AdmissionReview JSON text.
pub trait Transport: Send + Sync {
    fn call<'a>(&'a self, review: &'a str) -> BoxFuture<'a, Result<String, String>>;
}
