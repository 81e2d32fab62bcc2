//! kube-apiserver's watch metrics: `apiserver_watch_events_total` and
//! `apiserver_watch_events_sizes` by the watched kind (group, version,
//! kind), counted as each event is sent to a watcher. Kinds are bounded.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use crate::telemetry::metrics::{Exposition, Histogram, MetricSource};

/// kube's event size buckets.
const SIZES: &[f64] = &[
    1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0, 65536.0, 131072.0,
];
const MAX_KINDS: usize = 2_000;

type Key = (String, String, String);

#[derive(Default)]
pub struct WatchMetrics(Mutex<BTreeMap<Key, (u64, Histogram)>>);

impl WatchMetrics {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<Key, (u64, Histogram)>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One event of `group`/`version` `kind`, `bytes` long, sent.
    pub fn sent(&self, (group, version, kind): (&str, &str, &str), bytes: usize) {
        let mut all = self.lock();
        let key = (group.to_string(), version.to_string(), kind.to_string());
        let key = match all.len() >= MAX_KINDS && !all.contains_key(&key) {
            true => ("<other>".into(), "<other>".into(), "<other>".into()),
            false => key,
        };
        let (n, sizes) = all.entry(key).or_insert_with(|| (0, Histogram::new(SIZES)));
        *n += 1;
        sizes.observe(bytes as f64);
    }
}

impl MetricSource for WatchMetrics {
    fn render(&self, out: &mut Exposition) {
        let all = self.lock();
        let total = "apiserver_watch_events_total";
        out.family(
            total,
            "counter",
            "[ALPHA] Number of events sent in watch clients",
        );
        for ((group, version, kind), (n, _)) in all.iter() {
            let labels = [
                ("group", group.as_str()),
                ("kind", kind.as_str()),
                ("version", version.as_str()),
            ];
            out.sample(total, &labels, *n as f64);
        }
        let sizes = "apiserver_watch_events_sizes";
        out.family(
            sizes,
            "histogram",
            "[ALPHA] Watch event size distribution in bytes",
        );
        for ((group, version, kind), (_, h)) in all.iter() {
            let labels = [
                ("group", group.as_str()),
                ("kind", kind.as_str()),
                ("version", version.as_str()),
            ];
            h.render(out, sizes, &labels);
        }
    }
}
