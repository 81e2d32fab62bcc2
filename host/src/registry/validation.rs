//! The strategy's Validate step: a hook the registry calls on every create
//! and update, after the object is prepared and before validating admission
//! (kube-apiserver's `rest.BeforeCreate/BeforeUpdate`). The server plugs a
//! Wasm strategy plugin in; without one, nothing beyond names is checked.

use crate::catalogue::ResourceInfo;
use crate::status::ApiResult;
use futures_util::future::BoxFuture;
use serde_json::Value;

pub trait Validation: Send + Sync {
    /// Ok, or a 422 Invalid naming every problem.
    fn validate<'a>(
        &'a self,
        res: &'a ResourceInfo,
        obj: &'a Value,
        old: Option<&'a Value>,
    ) -> BoxFuture<'a, ApiResult<()>>;
}

/// No per-kind validation.
pub struct NoValidation;

impl Validation for NoValidation {
    fn validate<'a>(
        &'a self,
        _: &'a ResourceInfo,
        _: &'a Value,
        _: Option<&'a Value>,
    ) -> BoxFuture<'a, ApiResult<()>> {
        Box::pin(async { Ok(()) })
    }
}
