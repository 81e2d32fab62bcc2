//! The store as kube's etcd3 layer reports it, for either backend:
//! `etcd_request_duration_seconds` and `etcd_requests_total` by operation
//! and object type, `apiserver_storage_objects` (counted every minute, as
//! kube's object count tracker), and a span per call (`Create etcd3`,
//! `GuaranteedUpdate sqlite`, ...). It sits under the watch cache: only
//! what reaches the backend is measured.

use super::{
    BoxFuture, ProgressWatch, RangeRequest, RangeResult, Revision, Storage, StorageResult,
    WatchStream,
};
use crate::storage::{object_type, KeyValue};
use crate::telemetry::metrics::{Exposition, Histogram, MetricSource};
use bytes::Bytes;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// kube's etcd request latency buckets.
const BUCKETS: &[f64] = &[
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];
/// Object types are as many as the resources served; past this, `<other>`.
const MAX_TYPES: usize = 2_000;
/// kube's object count tracker's period.
const COUNT_EVERY: Duration = Duration::from_secs(60);

pub struct Instrumented {
    inner: Arc<dyn Storage>,
    /// `etcd3` or `sqlite`: the spans' suffix.
    backend: &'static str,
    pub metrics: Arc<StorageMetrics>,
}

impl Instrumented {
    pub fn new(inner: Arc<dyn Storage>, backend: &'static str) -> Self {
        Instrumented {
            inner,
            backend,
            metrics: Arc::default(),
        }
    }

    /// kube's `storage_cluster_id` of the store: `etcd-0` (kube's name for
    /// its first etcd cluster) or `sqlite-0`.
    fn cluster_id(&self) -> &'static str {
        match self.backend {
            "etcd3" => "etcd-0",
            _ => "sqlite-0",
        }
    }

    fn timed<'a, T: Send + 'a>(
        &'a self,
        (operation, span): (&'static str, &'static str),
        key: &'a str,
        call: BoxFuture<'a, StorageResult<T>>,
    ) -> BoxFuture<'a, StorageResult<T>> {
        Box::pin(async move {
            let kind = object_type(key);
            let span = crate::telemetry::otel::Span::start(
                || format!("{span} {}", self.backend),
                || {
                    use opentelemetry::KeyValue as Kv;
                    vec![
                        Kv::new("key", key.to_string()),
                        Kv::new("resource", kind.clone()),
                    ]
                },
            );
            let started = Instant::now();
            let out = span.run(call).await;
            self.metrics.observe(operation, kind, started.elapsed());
            if let Err(e) = &out {
                span.fail(&e.to_string());
            }
            out
        })
    }
}

impl Storage for Instrumented {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StorageResult<Option<KeyValue>>> {
        self.timed(("get", "Get"), key, self.inner.get(key))
    }

    fn range<'a>(&'a self, req: RangeRequest<'a>) -> BoxFuture<'a, StorageResult<RangeResult>> {
        let prefix = req.prefix;
        self.timed(("list", "List"), prefix, self.inner.range(req))
    }

    fn count<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, StorageResult<i64>> {
        self.timed(("listWithCount", "Count"), prefix, self.inner.count(prefix))
    }

    fn get_recent<'a>(
        &'a self,
        key: &'a str,
        seen: Revision,
    ) -> BoxFuture<'a, StorageResult<Option<KeyValue>>> {
        self.timed(("get", "Get"), key, self.inner.get_recent(key, seen))
    }

    fn range_recent<'a>(
        &'a self,
        req: RangeRequest<'a>,
        seen: Revision,
    ) -> BoxFuture<'a, StorageResult<RangeResult>> {
        let prefix = req.prefix;
        self.timed(("list", "List"), prefix, self.inner.range_recent(req, seen))
    }

    fn create<'a>(&'a self, key: &'a str, value: Bytes) -> BoxFuture<'a, StorageResult<KeyValue>> {
        self.timed(("create", "Create"), key, self.inner.create(key, value))
    }

    fn update<'a>(
        &'a self,
        key: &'a str,
        value: Bytes,
        expected: Revision,
    ) -> BoxFuture<'a, StorageResult<KeyValue>> {
        let call = self.inner.update(key, value, expected);
        self.timed(("update", "GuaranteedUpdate"), key, call)
    }

    fn delete<'a>(
        &'a self,
        key: &'a str,
        expected: Option<Revision>,
    ) -> BoxFuture<'a, StorageResult<KeyValue>> {
        self.timed(("delete", "Delete"), key, self.inner.delete(key, expected))
    }

    fn current_revision(&self) -> BoxFuture<'_, StorageResult<Revision>> {
        self.inner.current_revision()
    }

    fn watch<'a>(
        &'a self,
        prefix: &'a str,
        after_revision: Revision,
    ) -> BoxFuture<'a, StorageResult<WatchStream>> {
        self.inner.watch(prefix, after_revision)
    }

    fn watch_progress<'a>(
        &'a self,
        prefix: &'a str,
        after_revision: Revision,
    ) -> BoxFuture<'a, StorageResult<ProgressWatch>> {
        self.inner.watch_progress(prefix, after_revision)
    }

    fn compact(&self, revision: Revision) -> BoxFuture<'_, StorageResult<()>> {
        self.inner.compact(revision)
    }

    fn compacted_revision(&self) -> BoxFuture<'_, StorageResult<Revision>> {
        self.inner.compacted_revision()
    }

    fn is_ready(&self) -> BoxFuture<'_, StorageResult<()>> {
        self.inner.is_ready()
    }

    fn size_bytes(&self) -> BoxFuture<'_, Option<u64>> {
        self.inner.size_bytes()
    }
}

/// Counts every stored resource's objects now and every minute after
/// (`apiserver_storage_objects`; -1 when a count failed, as kube);
/// `prefixes` names the key prefix of each stored resource at the time.
pub fn count_objects<F>(store: Arc<Instrumented>, prefixes: F)
where
    F: Fn() -> Vec<String> + Send + 'static,
{
    tokio::spawn(async move {
        loop {
            let prefixes: BTreeMap<String, String> = prefixes()
                .into_iter()
                .map(|prefix| (object_type(&prefix), prefix))
                .collect();
            for (kind, prefix) in prefixes {
                let n = store.count(&prefix).await.unwrap_or(-1);
                store.metrics.objects(kind, n);
            }
            let size = store.size_bytes().await;
            *lock(&store.metrics.size) = size.map(|bytes| (store.cluster_id(), bytes));
            tokio::time::sleep(COUNT_EVERY).await;
        }
    });
}

type Calls = BTreeMap<(&'static str, String), (u64, Histogram)>;

#[derive(Default)]
pub struct StorageMetrics {
    calls: Mutex<Calls>,
    objects: Mutex<BTreeMap<String, i64>>,
    /// The database's size, by kube's `storage_cluster_id`.
    size: Mutex<Option<(&'static str, u64)>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl StorageMetrics {
    fn calls(&self) -> MutexGuard<'_, Calls> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn observe(&self, operation: &'static str, kind: String, took: Duration) {
        let mut calls = self.calls();
        let key = match calls.len() >= MAX_TYPES && !calls.contains_key(&(operation, kind.clone()))
        {
            true => (operation, "<other>".to_string()),
            false => (operation, kind),
        };
        let (n, h) = calls
            .entry(key)
            .or_insert_with(|| (0, Histogram::new(BUCKETS)));
        *n += 1;
        h.observe(took.as_secs_f64());
    }

    fn objects(&self, kind: String, n: i64) {
        let mut objects = self.objects.lock().unwrap_or_else(|p| p.into_inner());
        if objects.len() < MAX_TYPES || objects.contains_key(&kind) {
            objects.insert(kind, n);
        }
    }
}

impl MetricSource for StorageMetrics {
    fn render(&self, out: &mut Exposition) {
        let calls = self.calls();
        let duration = "etcd_request_duration_seconds";
        out.family(
            duration,
            "histogram",
            "[ALPHA] Etcd request latency in seconds for each operation and object type.",
        );
        for ((operation, kind), (_, h)) in calls.iter() {
            h.render(out, duration, &[("operation", operation), ("type", kind)]);
        }
        let total = "etcd_requests_total";
        out.family(
            total,
            "counter",
            "[ALPHA] Etcd request counts for each operation and object type.",
        );
        for ((operation, kind), (n, _)) in calls.iter() {
            out.sample(
                total,
                &[("operation", operation), ("type", kind)],
                *n as f64,
            );
        }
        drop(calls);
        let objects = "apiserver_storage_objects";
        out.family(
            objects,
            "gauge",
            "[STABLE] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
        );
        let counted = lock(&self.objects);
        for (kind, n) in counted.iter() {
            out.sample(objects, &[("resource", kind)], *n as f64);
        }
        let size = "apiserver_storage_size_bytes";
        out.family(
            size,
            "gauge",
            "[STABLE] Size of the storage database file physically allocated in bytes.",
        );
        if let Some((cluster, bytes)) = *lock(&self.size) {
            out.sample(size, &[("storage_cluster_id", cluster)], bytes as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn calls_are_timed_by_operation_and_type() {
        let dir = tempfile::tempdir().unwrap();
        let sqlite = crate::storage::sqlite::SqliteStorage::open(&dir.path().join("db")).unwrap();
        let store = Instrumented::new(Arc::new(sqlite), "sqlite");
        store
            .create("/registry/core/configmaps/d/a", Bytes::from_static(b"{}"))
            .await
            .unwrap();
        store.get("/registry/core/configmaps/d/a").await.unwrap();
        let mut out = Exposition::default();
        store.metrics.render(&mut out);
        let text = out.into_text();
        assert!(
            text.contains("etcd_requests_total{operation=\"create\",type=\"configmaps\"} 1"),
            "{text}"
        );
        assert!(
            text.contains(
                "etcd_request_duration_seconds_count{operation=\"get\",type=\"configmaps\"} 1"
            ),
            "{text}"
        );
    }
}
