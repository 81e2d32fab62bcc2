//! Capstan's per-plugin metrics, for every Wasm plugin call (admission,
//! authentication, authorization, conversion, strategy, PolicyBundles'):
//! `capstan_plugin_calls_total{plugin, result}` (ok, or the failure's kind:
//! timeout, out_of_memory, out_of_fuel, trap, returned_error, internal),
//! `capstan_plugin_call_duration_seconds{plugin}`,
//! `capstan_plugin_instances_reused_total{plugin}` (calls served by a warm
//! instance) and `capstan_plugin_compile_seconds{plugin}` (the last load's
//! compile or cache load). Plugin names come from the configuration and
//! the PolicyBundles; past [`MAX_PLUGINS`] they are counted as `<other>`.

use std::collections::BTreeMap;
use std::sync::{LazyLock, Mutex, MutexGuard};
use std::time::Duration;

use crate::telemetry::metrics::{Exposition, Histogram, MetricSource};

const MAX_PLUGINS: usize = 2_000;
/// In-process calls take microseconds; a slow one up to its deadline.
const BUCKETS: &[f64] = &[
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1,
    0.5, 2.5,
];

#[derive(Default)]
pub struct PluginMetrics(Mutex<BTreeMap<String, Figures>>);

#[derive(Default)]
struct Figures {
    results: BTreeMap<&'static str, u64>,
    duration: Option<Histogram>,
    reused: u64,
    compile_seconds: Option<f64>,
}

/// The process's plugin metrics (plugins are loaded before any server
/// state exists).
pub static PLUGINS: LazyLock<PluginMetrics> = LazyLock::new(PluginMetrics::default);

impl PluginMetrics {
    fn with(&self, plugin: &str, f: impl FnOnce(&mut Figures)) {
        let mut all = self.lock();
        if !all.contains_key(plugin) && all.len() >= MAX_PLUGINS {
            f(all.entry("<other>".to_string()).or_default());
            return;
        }
        match all.get_mut(plugin) {
            Some(figures) => f(figures),
            None => f(all.entry(plugin.to_string()).or_default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Figures>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One call of `plugin`: how it ended, how long it took, whether a warm
    /// instance served it.
    pub fn called(&self, plugin: &str, result: &'static str, took: Duration, reused: bool) {
        self.with(plugin, |f| {
            *f.results.entry(result).or_default() += 1;
            f.duration
                .get_or_insert_with(|| Histogram::new(BUCKETS))
                .observe(took.as_secs_f64());
            f.reused += u64::from(reused);
        });
    }

    pub fn compiled(&self, plugin: &str, took: Duration) {
        self.with(plugin, |f| f.compile_seconds = Some(took.as_secs_f64()));
    }
}

/// The process's plugin metrics as a metric source.
pub struct Source;

impl MetricSource for Source {
    fn render(&self, out: &mut Exposition) {
        let all = PLUGINS.lock();
        let calls = "capstan_plugin_calls_total";
        out.family(
            calls,
            "counter",
            "Calls of each Wasm plugin, by result (ok or the failure's kind).",
        );
        for (plugin, f) in all.iter() {
            for (result, n) in &f.results {
                out.sample(
                    calls,
                    &[("plugin", plugin.as_str()), ("result", result)],
                    *n as f64,
                );
            }
        }
        let duration = "capstan_plugin_call_duration_seconds";
        out.family(
            duration,
            "histogram",
            "How long each Wasm plugin's calls took.",
        );
        for (plugin, f) in all.iter() {
            if let Some(h) = &f.duration {
                h.render(out, duration, &[("plugin", plugin.as_str())]);
            }
        }
        let reused = "capstan_plugin_instances_reused_total";
        out.family(
            reused,
            "counter",
            "Calls of each Wasm plugin served by a warm instance of an earlier call.",
        );
        for (plugin, f) in all.iter() {
            out.sample(reused, &[("plugin", plugin.as_str())], f.reused as f64);
        }
        let compile = "capstan_plugin_compile_seconds";
        out.family(
            compile,
            "gauge",
            "How long each Wasm plugin's last load took (compiling, or loading from the cache).",
        );
        for (plugin, f) in all.iter() {
            if let Some(s) = f.compile_seconds {
                out.sample(compile, &[("plugin", plugin.as_str())], s);
            }
        }
    }
}
