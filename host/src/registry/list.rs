//! LIST: one page of a resource's objects at one revision, paged with
//! limit/continue (`limit` counts matching objects, as kube does) and
//! filtered by selectors. A page comes decoded (what handlers, controllers
//! and tables use) or, for built-ins, as each object's served JSON: bytes
//! memoised with the key-value, so a version the watch cache keeps is
//! encoded once, by its first reader (a list, a GET or a watch line), and
//! every later read copies it.

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::stored::Served;
use super::{decode, keys, storage_error, Registry};
use crate::apimachinery::kube_json;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
use crate::storage::{KeyValue, RangeRequest, StorageError};

/// What a paged, filtered list asks for.
#[derive(Default)]
pub struct ListQuery<'a> {
    pub limit: Option<usize>,
    pub continue_token: Option<&'a str>,
    /// A revision to read at exactly (resourceVersionMatch=Exact).
    pub exact_revision: Option<i64>,
    pub filter: Option<&'a (dyn Fn(&Value) -> bool + Send + Sync)>,
    /// Read the latest objects as this server sees them, not older than
    /// this revision (the last write it knows of under the resource),
    /// without asking the store how far it got (an informer's view:
    /// plugins' `list-objects` on the write path). `None`: a consistent read.
    pub recent: Option<i64>,
}

impl ListQuery<'_> {
    fn keeps(&self, obj: &Value) -> bool {
        self.filter.is_none_or(|f| f(obj))
    }
}

/// A page of objects (decoded, or their served JSON) read at one revision.
pub struct ListPage<T = Value> {
    pub items: Vec<T>,
    pub revision: i64,
    pub continue_token: Option<String>,
    pub remaining: Option<i64>,
}

/// Turns one range of key-values into the page's items (filtered).
type Take<'a, T> = Box<dyn FnMut(Vec<KeyValue>) -> BoxFuture<'a, ApiResult<Vec<T>>> + Send + 'a>;

impl Registry {
    /// One page of decoded objects, filtered.
    pub async fn list(
        &self,
        res: &ResourceInfo,
        ns: Option<&str>,
        q: &ListQuery<'_>,
    ) -> ApiResult<ListPage> {
        let take: Take<'_, Value> = Box::new(|kvs| Box::pin(decoded(res, q, kvs)));
        self.list_with(res, ns, q, take).await
    }

    /// One page of a built-in resource's objects as their served JSON (kube's
    /// field order, resourceVersion set), filtered. A custom resource is
    /// served in the version asked for: list it decoded.
    pub async fn list_served(
        &self,
        res: &ResourceInfo,
        ns: Option<&str>,
        q: &ListQuery<'_>,
    ) -> ApiResult<ListPage<Served>> {
        let take: Take<'_, Served> =
            Box::new(|kvs| Box::pin(async move { crate::cpu::heavy(|| served(q, &kvs)) }));
        self.list_with(res, ns, q, take).await
    }

    /// One object of a built-in resource as its served JSON (see [`Self::list_served`]).
    pub async fn get_served(
        &self,
        res: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
    ) -> ApiResult<Served> {
        let key = keys::key(res, ns, name);
        let found = self.storage.get(&key).await;
        match found.map_err(|e| storage_error(res, name, e))? {
            Some(kv) => crate::cpu::for_request(|| served_of(&kv, None)),
            None => Err(ApiError::not_found(&res.group, &res.plural, name)),
        }
    }

    async fn list_with<'a, T>(
        &self,
        res: &ResourceInfo,
        ns: Option<&str>,
        q: &ListQuery<'_>,
        mut take: Take<'a, T>,
    ) -> ApiResult<ListPage<T>> {
        let prefix = keys::prefix(res, ns);
        let (mut revision, mut start) = match q.continue_token {
            Some(t) => {
                let (rv, start) = keys::decode_continue(t, &prefix)?;
                (Some(rv).filter(|rv| *rv > 0), Some(start))
            }
            None => (q.exact_revision, None),
        };
        let resume = start.clone();
        let limit = q.limit.filter(|l| *l > 0);
        let mut items = Vec::new();
        loop {
            let req = RangeRequest {
                prefix: &prefix,
                start_after: start.as_deref(),
                limit: limit.map(|l| l - items.len()),
                revision,
            };
            let page = match q.recent {
                Some(seen) => self.storage.range_recent(req, seen).await,
                None => self.storage.range(req).await,
            };
            let page = page.map_err(|e| list_error(res, e, resume.as_deref(), &prefix))?;
            revision = Some(page.revision);
            let last_key = page.kvs.last().map(|kv| kv.key.clone());
            items.extend(take(page.kvs).await?);
            let full = limit.is_some_and(|l| items.len() >= l);
            if !page.more || last_key.is_none() {
                return Ok(ListPage {
                    items,
                    revision: page.revision,
                    continue_token: None,
                    remaining: None,
                });
            }
            if full {
                let token = last_key
                    .as_deref()
                    .map(|k| keys::encode_continue(page.revision, k, &prefix));
                let remaining = self
                    .remaining(q, &prefix, last_key.as_deref(), page.revision)
                    .await;
                return Ok(ListPage {
                    items,
                    revision: page.revision,
                    continue_token: token,
                    remaining,
                });
            }
            start = last_key;
        }
    }

    async fn remaining(
        &self,
        q: &ListQuery<'_>,
        prefix: &str,
        after: Option<&str>,
        revision: i64,
    ) -> Option<i64> {
        if q.filter.is_some() {
            return None;
        }
        let req = RangeRequest {
            prefix,
            start_after: after,
            limit: None,
            revision: Some(revision),
        };
        self.storage
            .range(req)
            .await
            .ok()
            .map(|r| r.kvs.len() as i64)
    }
}

/// The decoded objects of a range that the query keeps. Built-ins are
/// filtered as they are decoded (nothing that does not match is kept);
/// custom resources once they are in the requested version, which is what
/// their selectors see.
async fn decoded(
    res: &ResourceInfo,
    q: &ListQuery<'_>,
    kvs: Vec<KeyValue>,
) -> ApiResult<Vec<Value>> {
    let custom = !res.served_as_stored();
    let decoded = crate::cpu::heavy(|| {
        let mut kept = Vec::new();
        for kv in &kvs {
            let obj = decode(kv)?;
            if custom || q.keeps(&obj) {
                kept.push(obj);
            }
        }
        Ok::<_, ApiError>(kept)
    })?;
    let viewed = crate::catalogue::custom::versions::view_all(res, decoded).await?;
    Ok(viewed
        .into_iter()
        .filter(|obj| !custom || q.keeps(obj))
        .collect())
}

/// The served JSON of the key-values the query keeps.
fn served(q: &ListQuery<'_>, kvs: &[KeyValue]) -> ApiResult<Vec<Served>> {
    let mut kept = Vec::new();
    for kv in kvs {
        if q.filter.is_none() {
            kept.push(served_of(kv, None)?);
            continue;
        }
        let obj = decode(kv)?;
        if q.keeps(&obj) {
            kept.push(served_of(kv, Some(&obj))?);
        }
    }
    Ok(kept)
}

/// A key-value's served JSON (see [`super::stored`]), encoded from
/// `decoded` when it must be encoded and the caller has decoded it already.
fn served_of(kv: &KeyValue, decoded: Option<&Value>) -> ApiResult<Served> {
    super::stored::served_item(kv, || {
        Ok(match decoded {
            Some(obj) => kube_json::to_item(obj),
            None => kube_json::to_item(&decode(kv)?),
        })
    })
}

/// kube's 410 for a continue token whose revision was compacted: the
/// Status carries a token (revision -1) that continues the list at the
/// latest revision from where the client's token pointed.
const INCONSISTENT_CONTINUE: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

fn list_error(res: &ResourceInfo, e: StorageError, resume: Option<&str>, prefix: &str) -> ApiError {
    match (e, resume) {
        (StorageError::Compacted { .. }, Some(after)) => ApiError {
            list_continue: Some(keys::encode_continue(-1, after, prefix)),
            ..ApiError::gone(INCONSISTENT_CONTINUE)
        },
        (other, _) => storage_error(res, "", other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Catalogue;
    use crate::registry::WriteOptions;
    use crate::storage::{CachedStorage, SqliteStorage, Storage};
    use serde_json::json;
    use std::sync::Arc;
    use std::time::Duration;

    async fn registry_with(names: &[&str]) -> (Registry, ResourceInfo, tempfile::TempDir) {
        let dir = tempfile::tempdir().expect("temp dir");
        let sqlite = SqliteStorage::open(&dir.path().join("db")).expect("store");
        let cache = CachedStorage::start(Arc::new(sqlite));
        assert!(cache.wait_synced(Duration::from_secs(5)).await);
        let registry = Registry::new(Arc::new(cache));
        let res = Catalogue::builtin()
            .lookup("", "v1", "configmaps")
            .expect("served")
            .clone();
        for (i, name) in names.iter().enumerate() {
            let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "d", "labels": {"even": (i % 2 == 0).to_string()}},
                "data": {"k": "v"}});
            let opts = WriteOptions::default();
            registry
                .create(&res, Some("d"), cm, opts)
                .await
                .expect("created");
        }
        (registry, res, dir)
    }

    #[tokio::test]
    async fn served_items_are_the_decoded_objects_encoded() {
        let (registry, res, _dir) = registry_with(&["a", "b", "c"]).await;
        let q = ListQuery::default();
        let decoded = registry.list(&res, Some("d"), &q).await.expect("list");
        let served = registry
            .list_served(&res, Some("d"), &q)
            .await
            .expect("list");
        assert_eq!(served.revision, decoded.revision);
        let expected: Vec<Vec<u8>> = decoded.items.iter().map(kube_json::to_item).collect();
        let got: Vec<Vec<u8>> = served.items.iter().map(Served::to_vec).collect();
        assert_eq!(got, expected);
    }

    #[tokio::test]
    async fn served_lists_filter_and_page_as_decoded_ones() {
        let (registry, res, _dir) = registry_with(&["a", "b", "c", "d", "e"]).await;
        let even = |o: &Value| o.pointer("/metadata/labels/even") == Some(&json!("true"));
        let q = ListQuery {
            limit: Some(2),
            filter: Some(&even),
            ..ListQuery::default()
        };
        let first = registry
            .list_served(&res, Some("d"), &q)
            .await
            .expect("list");
        let names = |items: &[Served]| -> Vec<String> {
            let name = |b: &Served| {
                serde_json::from_slice::<Value>(&b.to_vec()).expect("json")["metadata"]["name"]
                    .clone()
            };
            items
                .iter()
                .map(|b| name(b).as_str().unwrap_or_default().to_string())
                .collect()
        };
        assert_eq!(names(&first.items), ["a", "c"]);
        let token = first.continue_token.expect("more");
        let q = ListQuery {
            continue_token: Some(&token),
            ..q
        };
        let rest = registry
            .list_served(&res, Some("d"), &q)
            .await
            .expect("list");
        assert_eq!(names(&rest.items), ["e"]);
        assert!(rest.continue_token.is_none());
    }

    #[tokio::test]
    async fn a_compacted_continue_token_gets_a_token_for_the_rest_at_the_latest_revision() {
        let dir = tempfile::tempdir().expect("temp dir");
        let sqlite = SqliteStorage::open(&dir.path().join("db")).expect("store");
        let cache = Arc::new(CachedStorage::start(Arc::new(sqlite)));
        assert!(cache.wait_synced(Duration::from_secs(5)).await);
        let registry = Registry::new(cache.clone());
        let res = Catalogue::builtin()
            .lookup("", "v1", "configmaps")
            .expect("served")
            .clone();
        let create = |name: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "d"}});
        for name in ["a", "b", "c"] {
            let opts = WriteOptions::default();
            registry
                .create(&res, Some("d"), create(name), opts)
                .await
                .expect("created");
        }
        let q = ListQuery {
            limit: Some(1),
            ..ListQuery::default()
        };
        let first = registry.list(&res, Some("d"), &q).await.expect("list");
        let token = first.continue_token.expect("more");
        let opts = WriteOptions::default();
        registry
            .create(&res, Some("d"), create("bb"), opts)
            .await
            .expect("created");
        let latest = cache.current_revision().await.expect("revision");
        cache.compact(latest).await.expect("compacted");

        let q = ListQuery {
            limit: Some(10),
            continue_token: Some(&token),
            ..ListQuery::default()
        };
        let Err(err) = registry.list(&res, Some("d"), &q).await else {
            panic!("a compacted token must be refused");
        };
        assert_eq!((err.code, err.reason), (410, "Expired"));
        assert!(err.message.contains("inconsistent list"), "{}", err.message);
        let fresh = err.list_continue.clone().expect("a token in the Status");
        assert_eq!(err.to_status()["metadata"]["continue"], json!(fresh));

        let q = ListQuery {
            continue_token: Some(&fresh),
            ..q
        };
        let rest = registry.list(&res, Some("d"), &q).await.expect("list");
        let names: Vec<&str> = rest
            .items
            .iter()
            .filter_map(|o| o["metadata"]["name"].as_str())
            .collect();
        assert_eq!(names, ["b", "bb", "c"], "the rest, as it is now");
        assert_eq!(rest.revision, latest);
    }
}
