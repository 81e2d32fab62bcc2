//! The `get-object` / `list-objects` host imports over the server's own
//! registry, so context-aware plugins read cluster state without a copy.
//! They read the watch cache's view (as kube's admission plugins read
//! informers): not older than the last write this server made or saw under
//! the resource (its watermark), without a round trip asking the store how
//! far it got; `get-object` of an object not found there asks the store.

use crate::apimachinery::selectors::{parse_field_selector, parse_label_selector};
use crate::catalogue::live::LiveCatalogue;
use crate::catalogue::ResourceInfo;
use crate::registry::keys;
use crate::registry::{ListQuery, Registry};
use crate::storage::watermarks::Watermarks;
use crate::wasm::ObjectReader;
use futures_util::future::BoxFuture;
use serde_json::{json, Value};
use std::sync::Arc;

pub struct StoreReader {
    pub registry: Registry,
    pub catalogue: Arc<LiveCatalogue>,
    pub watermarks: Arc<Watermarks>,
}

impl StoreReader {
    /// `f` of the resource served as `resource` in `api_version`.
    fn with_resource<T>(
        &self,
        api_version: &str,
        resource: &str,
        f: impl FnOnce(&ResourceInfo) -> T,
    ) -> Result<T, String> {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        self.catalogue
            .get()
            .lookup(group, version, resource)
            .map(f)
            .ok_or_else(|| format!("the server does not serve {resource} in {api_version}"))
    }

    /// The last write this server knows of under the resource: reads are
    /// not older (a plugin reads back what this server wrote).
    fn seen(&self, res: &ResourceInfo) -> i64 {
        self.watermarks.revision(&keys::prefix(res, None))
    }

    fn resource(&self, api_version: &str, resource: &str) -> Result<ResourceInfo, String> {
        self.with_resource(api_version, resource, ResourceInfo::clone)
    }
}

impl ObjectReader for StoreReader {
    fn get(
        &self,
        api_version: &str,
        resource: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> BoxFuture<'_, Result<Option<String>, String>> {
        let res = self.resource(api_version, resource);
        let (namespace, name) = (namespace.map(String::from), name.to_string());
        Box::pin(async move {
            let res = res?;
            match self
                .registry
                .get_recent(&res, namespace.as_deref(), &name, self.seen(&res))
                .await
            {
                Ok(obj) => Ok(Some(obj.to_string())),
                Err(e) if e.code == 404 => Ok(None),
                Err(e) => Err(e.message),
            }
        })
    }

    /// Read by hot plugins on every call: the resource is only looked up.
    fn watermark(&self, api_version: &str, resource: &str) -> Result<String, String> {
        self.with_resource(api_version, resource, |res| {
            self.watermarks.get(&keys::prefix(res, None))
        })
    }

    fn list(
        &self,
        api_version: &str,
        resource: &str,
        namespace: Option<&str>,
        label_selector: Option<&str>,
        field_selector: Option<&str>,
    ) -> BoxFuture<'_, Result<String, String>> {
        let res = self.resource(api_version, resource);
        let namespace = namespace.map(String::from);
        let labels = label_selector
            .filter(|s| !s.is_empty())
            .map(parse_label_selector)
            .transpose();
        let fields = field_selector
            .filter(|s| !s.is_empty())
            .map(parse_field_selector)
            .transpose();
        Box::pin(async move {
            let (res, labels, fields) = (res?, labels?, fields?);
            let empty = serde_json::Map::new();
            let filter = |o: &Value| {
                let l = o
                    .pointer("/metadata/labels")
                    .and_then(Value::as_object)
                    .unwrap_or(&empty);
                labels.as_ref().is_none_or(|s| s.matches(l))
                    && fields
                        .as_ref()
                        .is_none_or(|f| f.matches(res.field_labels, o))
            };
            let q = ListQuery {
                filter: Some(&filter),
                recent: Some(self.seen(&res)),
                ..ListQuery::default()
            };
            let page = self
                .registry
                .list(&res, namespace.as_deref(), &q)
                .await
                .map_err(|e| e.message)?;
            let list = json!({"kind": res.list_kind, "apiVersion": res.api_version(), "metadata": {"resourceVersion": page.revision.to_string()}, "items": page.items});
            Ok(list.to_string())
        })
    }
}
