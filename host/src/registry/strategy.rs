//! The per-kind rules of a write (kube-apiserver's registry strategies):
//! PrepareForCreate/PrepareForUpdate (status reset, generation, initial
//! status), defaulting, and Validate. The registry calls the hook once per
//! create and once per update attempt, after mutating admission and before
//! validating admission; the server plugs the Wasm `strategy` plugin in.
//! The strategy also prints objects for Table output (kube's printers).

use crate::apimachinery::status::ApiResult;
use crate::catalogue::ResourceInfo;
use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

/// What a strategy prints of objects for a Table: its printer's column
/// definitions and one row (`cells`, optional `conditions`) per object.
#[derive(Debug, Default)]
pub struct PrintedRows {
    pub columns: Vec<Value>,
    pub rows: Vec<Map<String, Value>>,
}

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

    /// The object to store for a write through `subresource` (pods'
    /// `resize`), whose REST has a strategy of its own, or a 422 Invalid.
    /// Required, so that a strategy wrapping another passes it on.
    fn update_subresource<'a>(
        &'a self,
        res: &'a ResourceInfo,
        subresource: &'a str,
        obj: Value,
        old: &'a Value,
    ) -> BoxFuture<'a, ApiResult<Value>>;

    /// The object as kube's decoder leaves it: its defaults, without the
    /// strategy's preparation (the fields a write sets, its managedFields,
    /// are found on it). The default: the object as it is.
    fn defaults<'a>(
        &'a self,
        _res: &'a ResourceInfo,
        obj: Value,
    ) -> BoxFuture<'a, ApiResult<Value>> {
        Box::pin(async { Ok(obj) })
    }

    /// The rows of `objects` (served form) with ages counted to `now`;
    /// `None` when the strategy has no printer for the kind (the default:
    /// the host then prints NAME and CREATED AT).
    fn table<'a>(
        &'a self,
        _res: &'a ResourceInfo,
        _objects: &'a [Value],
        _now: DateTime<Utc>,
    ) -> BoxFuture<'a, ApiResult<Option<PrintedRows>>> {
        Box::pin(async { Ok(None) })
    }
}

/// Stores objects as given (no per-kind rules), for servers without the plugin.
pub struct NoStrategy;

impl Strategy for NoStrategy {
    fn create<'a>(&'a self, _: &'a ResourceInfo, obj: Value) -> BoxFuture<'a, ApiResult<Value>> {
        Box::pin(async { Ok(obj) })
    }

    fn update_subresource<'a>(
        &'a self,
        _: &'a ResourceInfo,
        _: &'a str,
        obj: Value,
        _: &'a Value,
    ) -> BoxFuture<'a, ApiResult<Value>> {
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
