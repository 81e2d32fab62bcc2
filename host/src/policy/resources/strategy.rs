//! PolicyBundles' write check beyond their schema, as a strategy around
//! the server's: a `spec.bundle` path outside the allowed roots
//! (`paths.rs`) is a 422 on create, and on an update that changes it (an
//! object stored before the roots changed can still be updated, e.g. its
//! status, as kube ratchets validation). Only the path as written is
//! checked here (no file system access on the request's path); symlinks
//! are resolved when the bundle is loaded.

use super::paths::BundleRoots;
use crate::apimachinery::status::{ApiError, ApiResult, Cause};
use crate::catalogue::policy_bundle::{GROUP, PLURAL};
use crate::catalogue::ResourceInfo;
use crate::policy::bundles::registry::SCHEME;
use crate::registry::strategy::{PrintedRows, Strategy};
use futures_util::future::BoxFuture;
use serde_json::Value;
use std::sync::Arc;

pub struct BundlePaths {
    pub inner: Arc<dyn Strategy>,
    pub roots: BundleRoots,
}

impl Strategy for BundlePaths {
    fn create<'a>(&'a self, res: &'a ResourceInfo, obj: Value) -> BoxFuture<'a, ApiResult<Value>> {
        Box::pin(async move {
            let cause = self.cause(res, &obj, None);
            with_cause(res, &obj, self.inner.create(res, obj.clone()).await, cause)
        })
    }

    fn update<'a>(
        &'a self,
        res: &'a ResourceInfo,
        obj: Value,
        old: &'a Value,
    ) -> BoxFuture<'a, ApiResult<Value>> {
        Box::pin(async move {
            let cause = self.cause(res, &obj, Some(old));
            with_cause(
                res,
                &obj,
                self.inner.update(res, obj.clone(), old).await,
                cause,
            )
        })
    }

    fn update_subresource<'a>(
        &'a self,
        res: &'a ResourceInfo,
        subresource: &'a str,
        obj: Value,
        old: &'a Value,
    ) -> BoxFuture<'a, ApiResult<Value>> {
        self.inner.update_subresource(res, subresource, obj, old)
    }

    fn defaults<'a>(
        &'a self,
        res: &'a ResourceInfo,
        obj: Value,
    ) -> BoxFuture<'a, ApiResult<Value>> {
        self.inner.defaults(res, obj)
    }

    fn table<'a>(
        &'a self,
        res: &'a ResourceInfo,
        objects: &'a [Value],
        now: chrono::DateTime<chrono::Utc>,
    ) -> BoxFuture<'a, ApiResult<Option<PrintedRows>>> {
        self.inner.table(res, objects, now)
    }
}

impl BundlePaths {
    /// The problem with a PolicyBundle's (new) bundle path, if any.
    fn cause(&self, res: &ResourceInfo, obj: &Value, old: Option<&Value>) -> Option<Cause> {
        if res.group != GROUP || res.plural != PLURAL {
            return None;
        }
        let bundle = obj.pointer("/spec/bundle").and_then(Value::as_str)?;
        let unchanged = old.and_then(|o| o.pointer("/spec/bundle")) == Some(&Value::from(bundle));
        let parent = std::path::Component::ParentDir;
        let dotdot = std::path::Path::new(bundle)
            .components()
            .any(|c| c == parent);
        if unchanged || bundle.starts_with(SCHEME) || dotdot {
            // `..` has the schema's own rule and message.
            return None;
        }
        let refused = self.roots.path(bundle).err()?;
        let rule = refused
            .split_once(": ")
            .map_or(refused.as_str(), |(_, rule)| rule);
        Some(Cause::invalid("spec.bundle", bundle, rule))
    }
}

/// The inner strategy's answer with the path's cause added (one 422 with
/// every problem).
fn with_cause(
    res: &ResourceInfo,
    obj: &Value,
    answer: ApiResult<Value>,
    cause: Option<Cause>,
) -> ApiResult<Value> {
    let Some(cause) = cause else {
        return answer;
    };
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let invalid = ApiError::invalid(&res.group, &res.kind, name, vec![cause]);
    match answer {
        Ok(_) => Err(invalid),
        Err(e) if e.code == 422 => Err(e.and_invalid(invalid)),
        Err(e) => Err(e),
    }
}
