//! kube's watch cache figures, by object type (`configmaps`,
//! `deployments.apps`): `apiserver_watch_cache_events_received_total`,
//! `apiserver_watch_cache_resource_version`,
//! `apiserver_watch_cache_initializations_total`, and the lists served from
//! memory (`apiserver_cache_list_total`, `_fetched_objects_total`,
//! `_returned_objects_total`, by kube's `resource_prefix`). Capstan keeps
//! one cache for every type; the figures are split as kube's per-type
//! caches report them. Types are bounded.

use crate::storage::object_type;
use crate::telemetry::metrics::{Exposition, MetricSource};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

const MAX_TYPES: usize = 2_000;

#[derive(Default, Clone, Copy)]
struct Figures {
    received: u64,
    resource_version: i64,
    initializations: u64,
    lists: u64,
    fetched: u64,
    returned: u64,
}

#[derive(Default)]
pub struct CacheMetrics(Mutex<BTreeMap<String, Figures>>);

impl CacheMetrics {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Figures>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn of_key(&self, key: &str, change: impl FnOnce(&mut Figures)) {
        let kind = object_type(key);
        let mut all = self.lock();
        if all.len() >= MAX_TYPES && !all.contains_key(&kind) {
            return;
        }
        change(all.entry(kind).or_default());
    }

    /// An event of the inner store's watch, applied.
    pub fn received(&self, key: &str, revision: i64) {
        self.of_key(key, |f| {
            f.received += 1;
            f.resource_version = f.resource_version.max(revision);
        });
    }

    /// The cache (re)filled by a list at `revision` with `keys`.
    pub fn initialized<'k>(&self, keys: impl Iterator<Item = &'k str>, revision: i64) {
        let mut types: Vec<String> = keys.map(object_type).collect();
        types.dedup();
        for kind in types {
            let key = format!("/registry/{}", path_of(&kind));
            self.of_key(&key, |f| {
                f.initializations += 1;
                f.resource_version = f.resource_version.max(revision);
            });
        }
    }

    /// A list under `prefix` answered from memory: `fetched` objects read,
    /// `returned` sent.
    pub fn listed(&self, prefix: &str, fetched: usize, returned: usize) {
        self.of_key(prefix, |f| {
            f.lists += 1;
            f.fetched += fetched as u64;
            f.returned += returned as u64;
        });
    }
}

/// `deployments.apps` → `apps/deployments/`, `configmaps` → `core/configmaps/`.
fn path_of(kind: &str) -> String {
    match kind.split_once('.') {
        Some((resource, group)) => format!("{group}/{resource}/"),
        None => format!("core/{kind}/"),
    }
}

/// kube's `resource_prefix` label: `/configmaps`, `/apps/deployments`.
fn resource_prefix(kind: &str) -> String {
    match kind.split_once('.') {
        Some((resource, group)) => format!("/{group}/{resource}"),
        None => format!("/{kind}"),
    }
}

/// One figure of a type's.
type Read = fn(&Figures) -> f64;

impl MetricSource for CacheMetrics {
    fn render(&self, out: &mut Exposition) {
        let all = self.lock().clone();
        let by_type: [(&str, &str, &str, Read); 3] = [
            (
                "apiserver_watch_cache_events_received_total",
                "counter",
                "[ALPHA] Counter of events received in watch cache broken by resource type.",
                |f| f.received as f64,
            ),
            (
                "apiserver_watch_cache_initializations_total",
                "counter",
                "[ALPHA] Counter of watch cache initializations broken by resource type.",
                |f| f.initializations as f64,
            ),
            (
                "apiserver_watch_cache_resource_version",
                "gauge",
                "[ALPHA] Current resource version of watch cache broken by resource type.",
                |f| f.resource_version as f64,
            ),
        ];
        for (name, kind, help, value) in by_type {
            out.family(name, kind, help);
            for (resource, f) in &all {
                out.sample(name, &[("resource", resource)], value(f));
            }
        }
        let lists: [(&str, &str, Read); 3] = [
            ("apiserver_cache_list_total", "[ALPHA] Number of LIST requests served from watch cache", |f| f.lists as f64),
            ("apiserver_cache_list_fetched_objects_total", "[ALPHA] Number of objects read from watch cache in the course of serving a LIST request", |f| f.fetched as f64),
            ("apiserver_cache_list_returned_objects_total", "[ALPHA] Number of objects returned for a LIST request from watch cache", |f| f.returned as f64),
        ];
        for (name, help, value) in lists {
            out.family(name, "counter", help);
            for (resource, f) in all.iter().filter(|(_, f)| f.lists > 0) {
                let prefix = resource_prefix(resource);
                out.sample(
                    name,
                    &[("index", ""), ("resource_prefix", &prefix)],
                    value(f),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_split_by_type_as_kube_s_caches_report_them() {
        let m = CacheMetrics::default();
        m.initialized(
            [
                "/registry/core/configmaps/a/x",
                "/registry/core/configmaps/b/y",
                "/registry/apps/deployments/a/d",
            ]
            .into_iter(),
            7,
        );
        m.received("/registry/apps/deployments/a/d", 9);
        m.listed("/registry/core/configmaps/a/", 1, 1);
        let mut out = Exposition::default();
        m.render(&mut out);
        let text = out.into_text();
        for line in [
            r#"apiserver_watch_cache_initializations_total{resource="configmaps"} 1"#,
            r#"apiserver_watch_cache_events_received_total{resource="deployments.apps"} 1"#,
            r#"apiserver_watch_cache_resource_version{resource="deployments.apps"} 9"#,
            r#"apiserver_watch_cache_resource_version{resource="configmaps"} 7"#,
            r#"apiserver_cache_list_total{index="",resource_prefix="/configmaps"} 1"#,
        ] {
            assert!(text.contains(line), "{line} not in {text}");
        }
    }
}
