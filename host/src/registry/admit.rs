//! The registry's admission hooks: what a write passes through before and
//! after the strategy (the server's admission chain implements them; the
//! server's own writes use [`NoAdmission`]).

use crate::apimachinery::status::ApiResult;
use futures_util::future::BoxFuture;
use serde_json::Value;

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
