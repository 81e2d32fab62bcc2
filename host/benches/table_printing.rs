//! What Table output (`kubectl get`) costs now that the built-in printers run
//! in the strategy plugin's "table" phase, in process and side by side in one
//! run: for a list of N pods and of N ConfigMaps, (a) encoding the list as
//! JSON (what `-o json` costs; the baseline) and (b) printing it as a Table
//! through the plugin (objects encoded, sent in calls of about 1 MiB,
//! printed in Wasm, rows parsed back). Reports the median over the runs,
//! per list and per row, and the ratio (b)/(a).
//! `cargo bench -p capstan --bench table_printing`.

// A benchmark: a failed assumption fails the run, so unwrapping is fine here
// (the server itself never unwraps; see the workspace lints).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use capstan::api::state::AppState;
use capstan::catalogue::{Catalogue, ResourceInfo};
use capstan::registry::strategy::Strategy;
use capstan::registry::wasm_strategy::WasmStrategy;
use capstan::storage::sqlite::SqliteStorage;
use capstan::wasm::PluginRuntime;
use serde_json::{json, Value};
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Timed repetitions per figure.
const RUNS: usize = 15;

fn pod(i: usize) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("web-{i}"), "namespace": "default", "uid": format!("uid-{i}"),
                     "resourceVersion": "12", "creationTimestamp": "2024-01-01T00:00:00Z",
                     "labels": {"app": "web", "pod-template-hash": "5d8f7"}},
        "spec": {"nodeName": "node-1", "containers": [{"name": "nginx", "image": "nginx:1.27",
                 "ports": [{"containerPort": 80}], "resources": {"requests": {"cpu": "100m"}}}]},
        "status": {"phase": "Running", "podIP": "10.0.0.7",
                   "conditions": [{"type": "Ready", "status": "True"}],
                   "containerStatuses": [{"name": "nginx", "ready": true, "restartCount": 1,
                                          "state": {"running": {"startedAt": "2024-01-01T00:00:05Z"}}}]}})
}

fn config_map(i: usize) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": format!("cm-{i}"), "namespace": "default", "uid": format!("uid-{i}"),
                     "resourceVersion": "12", "creationTimestamp": "2024-01-01T00:00:00Z"},
        "data": {"a": "x".repeat(300), "b": "two"}})
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

async fn table_time(strategy: &WasmStrategy, res: &ResourceInfo, objects: &[Value]) -> Duration {
    let mut samples = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        let printed = strategy.table(res, objects, chrono::Utc::now()).await;
        black_box(printed.expect("table").expect("a printer"));
        samples.push(started.elapsed());
    }
    median(samples)
}

fn json_time(objects: &[Value]) -> Duration {
    let list = json!({"kind": "List", "apiVersion": "v1", "items": objects});
    let samples = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            black_box(serde_json::to_vec(&list).expect("encode"));
            started.elapsed()
        })
        .collect();
    median(samples)
}

async fn report(strategy: &WasmStrategy, res: &ResourceInfo, label: &str, objects: Vec<Value>) {
    let n = objects.len() as f64;
    let encoded = json_time(&objects);
    let table = table_time(strategy, res, &objects).await;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let us_per_row = |d: Duration| d.as_secs_f64() * 1e6 / n;
    println!(
        "| {label} | {:.2} ms ({:.1} µs/row) | {:.2} ms ({:.1} µs/row) | {:.1}× |",
        ms(encoded),
        us_per_row(encoded),
        ms(table),
        us_per_row(table),
        table.as_secs_f64() / encoded.as_secs_f64()
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let dir = tempfile::tempdir().expect("temp dir");
        let storage = Arc::new(SqliteStorage::open(&dir.path().join("db")).expect("store"));
        let state = AppState::new(Catalogue::builtin(), storage, "127.0.0.1:0".into());
        let runtime = PluginRuntime::new(Some(dir.path().join("cache"))).expect("runtime");
        let strategy = WasmStrategy::builtin(&runtime, state.reader())
            .expect("plugin loads")
            .expect("the binary embeds the strategy plugin");
        let cat = state.catalogue.builtin();
        let pods = cat.lookup("", "v1", "pods").expect("served").clone();
        let cms = cat.lookup("", "v1", "configmaps").expect("served").clone();
        table_time(&strategy, &pods, &[pod(0)]).await;
        println!("| list | (a) JSON list encode | (b) Table through the plugin | (b)/(a) |\n|---|---|---|---|");
        for n in [1, 100, 2000] {
            report(&strategy, &pods, &format!("{n} pods"), (0..n).map(pod).collect()).await;
        }
        for n in [1, 2000] {
            let objects = (0..n).map(config_map).collect();
            report(&strategy, &cms, &format!("{n} ConfigMaps"), objects).await;
        }
    });
}
