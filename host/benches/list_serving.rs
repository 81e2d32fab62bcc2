//! What serving a LIST and a GET costs in process, side by side in one run,
//! over the watch cache on SQLite with 2,000 ConfigMaps of ~430 bytes:
//! (a) the decoded path (every object decoded from the cache and the list
//! encoded in kube's field order: what every JSON LIST cost before), and
//! (b) the served path (each object's served JSON is its stored value with
//! the resourceVersion spliced in, copied into the list body). GETs by name
//! the same way. Medians; the ratio is (a)/(b). Also the watch cache's
//! memory per object (live map and ring of recent events), before and after
//! the reads. `cargo bench -p capstan --bench list_serving`.

// A benchmark: a failed assumption fails the run, so unwrapping is fine here
// (the server itself never unwraps; see the workspace lints).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use capstan::catalogue::{Catalogue, ResourceInfo};
use capstan::registry::{ListQuery, Registry, WriteOptions};
use capstan::storage::{CachedStorage, SqliteStorage};
use serde_json::{json, Value};
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

const OBJECTS: usize = 2000;
const LISTS: usize = 40;
const GETS: usize = 4000;

fn config_map(i: usize) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": format!("cm-{i:05}"), "namespace": "bench",
                     "labels": {"app": "bench", "shard": (i % 8).to_string()}},
        "data": {"payload": "x".repeat(250)}})
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

async fn decoded_list(reg: &Registry, res: &ResourceInfo) -> usize {
    let page = reg
        .list(res, Some("bench"), &ListQuery::default())
        .await
        .expect("list");
    let list = json!({"kind": "ConfigMapList", "apiVersion": "v1",
        "metadata": {"resourceVersion": page.revision.to_string()}, "items": page.items});
    capstan::apimachinery::kube_json::to_vec(&list).len()
}

async fn served_list(reg: &Registry, res: &ResourceInfo) -> usize {
    let page = reg
        .list_served(res, Some("bench"), &ListQuery::default())
        .await
        .expect("list");
    let head = json!({"kind": "ConfigMapList", "apiVersion": "v1",
        "metadata": {"resourceVersion": page.revision.to_string()}});
    capstan::apimachinery::kube_json::list_with_items(&head, &page.items).len()
}

async fn time_lists(reg: &Registry, res: &ResourceInfo, served: bool) -> (Duration, usize) {
    let mut samples = Vec::with_capacity(LISTS);
    let mut size = 0;
    for _ in 0..LISTS {
        let started = Instant::now();
        size = match served {
            true => served_list(reg, res).await,
            false => decoded_list(reg, res).await,
        };
        samples.push(started.elapsed());
    }
    (median(samples), size)
}

async fn time_gets(reg: &Registry, res: &ResourceInfo, served: bool) -> Duration {
    let mut samples = Vec::with_capacity(GETS);
    for i in 0..GETS {
        let name = format!("cm-{:05}", i % OBJECTS);
        let started = Instant::now();
        if served {
            black_box(
                reg.get_served(res, Some("bench"), &name)
                    .await
                    .expect("get"),
            );
        } else {
            let obj = reg.get(res, Some("bench"), &name).await.expect("get");
            black_box(capstan::apimachinery::kube_json::to_vec(&obj));
        }
        samples.push(started.elapsed());
    }
    median(samples)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let dir = tempfile::tempdir().expect("temp dir");
        let sqlite = SqliteStorage::open(&dir.path().join("db")).expect("store");
        let cache = Arc::new(CachedStorage::start(Arc::new(sqlite)));
        assert!(cache.wait_synced(Duration::from_secs(10)).await, "cache synced");
        let reg = Registry::new(cache.clone());
        let res = Catalogue::builtin().lookup("", "v1", "configmaps").expect("served").clone();
        for i in 0..OBJECTS {
            reg.create(&res, Some("bench"), config_map(i), WriteOptions::default())
                .await
                .expect("create");
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let before = cache.memory_bytes();
        let (decoded, size) = time_lists(&reg, &res, false).await;
        let (served, served_size) = time_lists(&reg, &res, true).await;
        assert_eq!(size, served_size, "both paths send the same bytes");
        let after = cache.memory_bytes();
        let get_decoded = time_gets(&reg, &res, false).await;
        let get_served = time_gets(&reg, &res, true).await;
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
        println!("| {OBJECTS} ConfigMaps, {} KiB list | (a) decoded | (b) served | (a)/(b) |", size / 1024);
        println!("|---|---|---|---|");
        println!("| LIST p50 | {:.2} ms | {:.2} ms | {:.1}× |", ms(decoded), ms(served), ratio(decoded, served));
        println!("| GET p50 | {:.1} µs | {:.1} µs | {:.1}× |", us(get_decoded), us(get_served), ratio(get_decoded, get_served));
        let per = |bytes: usize| bytes as f64 / OBJECTS as f64;
        let stored = serde_json::to_vec(&config_map(0)).map_or(0, |v| v.len());
        for (when, used) in [("before any read", before), ("after the lists and gets", after)] {
            println!(
                "watch cache {when}: {:.0} B per object in the live map ({:.2}× the {stored}-byte stored value), {:.0} B per object in the ring of recent events ({} events at most)",
                per(used.live),
                per(used.live) / stored as f64,
                per(used.ring),
                capstan::storage::CacheOptions::default().ring_capacity,
            );
        }
    });
}
