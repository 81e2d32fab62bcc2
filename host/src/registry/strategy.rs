//! The per-kind rules of a write (kube-apiserver's registry strategies):
//! PrepareForCreate/PrepareForUpdate (status reset, generation, initial
//! status), defaulting, and Validate. The registry calls the hook once per
//! create and once per update attempt, after mutating admission and before
//! validating admission; the server plugs the Wasm `strategy` plugin in.

use crate::catalogue::ResourceInfo;
use crate::status::ApiResult;
use futures_util::future::BoxFuture;
use serde_json::Value;

pub trait Strategy: Send + Sync {
    /// The object to store for a create, or a 422 Invalid naming every problem.
    fn create<'a>(&'a self, res: &'a ResourceInfo, obj: Value) -> BoxFuture<'a, ApiResult<Value>>;

    /// The object to store for an update of `old`, or a 422 Invalid.
    fn update<'a>(
        &'a self,
        res: &'a ResourceInfo,
        obj: Value,
        old: &'a Value,
    ) -> BoxFuture<'a, ApiResult<Value>>;
}

/// Stores objects as given (no per-kind rules), for servers without the plugin.
pub struct NoStrategy;

impl Strategy for NoStrategy {
    fn create<'a>(&'a self, _: &'a ResourceInfo, obj: Value) -> BoxFuture<'a, ApiResult<Value>> {
        Box::pin(async { Ok(obj) })
    }

    fn update<'a>(
        &'a self,
        _: &'a ResourceInfo,
        obj: Value,
        _: &'a Value,
    ) -> BoxFuture<'a, ApiResult<Value>> {
        Box::pin(async { Ok(obj) })
    }
}
