//! Memory per stored object: starts the server on a fresh data directory
//! (with a warm plugin cache),
//! reads its RSS once it is ready and idle, creates N ConfigMaps (the
//! phases' body, 32 clients), and reads the RSS again: the difference over N
//! is what one cached object costs.

use super::client::Client;
use super::kinds::{configmap_body, Kind};
use super::kubeconfig;
use super::phases::{self, Scope, Versions};
use super::startup::{wait_ready, Scratch, Spawned};
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Clients creating the objects.
const CONCURRENCY: usize = 32;
/// Time for the server to settle (controllers, caches) before each reading.
const SETTLE: Duration = Duration::from_secs(3);

#[derive(Debug, Clone, Serialize)]
pub struct MemoryResult {
    pub objects: usize,
    /// Bytes of one create's JSON body.
    pub body_bytes: usize,
    pub rss_ready_mib: f64,
    pub rss_after_mib: f64,
    /// (after - ready) / objects.
    pub bytes_per_object: f64,
    pub create_errors: usize,
}

/// Measures the RSS cost of `objects` ConfigMaps in a server of `binary`.
pub async fn measure(binary: &Path, objects: usize) -> Result<MemoryResult> {
    let scratch = Scratch::new(&std::env::temp_dir());
    let cache = scratch.0.join("plugin-cache");
    let log = scratch.0.join("server.log");
    // A first start fills the plugin cache, so the measured one does not
    // compile (compiling leaves freed memory behind that objects would reuse).
    let started = Instant::now();
    let mut warming = Spawned::start(binary, &scratch.0.join("warm"), &cache, &log)?;
    wait_ready(&mut warming, started).await?;
    drop(warming);
    let started = Instant::now();
    let mut server = Spawned::start(binary, &scratch.0.join("data"), &cache, &log)?;
    wait_ready(&mut server, started).await?;
    tokio::time::sleep(SETTLE).await;
    let rss_ready_mib = server.rss_mib()?;
    let kc = kubeconfig::load(&server.kubeconfig(), None)?;
    let client = Client::connect(&kc, true)
        .await
        .context("connecting to the server")?;
    let scope = Arc::new(Scope {
        client: client.clone(),
        watcher: client,
        namespace: "default".into(),
        prefix: "memory".into(),
        kind: Kind::ConfigMap,
    });
    let created = phases::create(&scope, CONCURRENCY, objects, &Versions::new(objects)).await;
    tokio::time::sleep(SETTLE).await;
    let rss_after_mib = server.rss_mib()?;
    let body_bytes = configmap_body(&scope.object_name(objects.saturating_sub(1)), None, 0).len();
    Ok(MemoryResult {
        objects,
        body_bytes,
        rss_ready_mib,
        rss_after_mib,
        bytes_per_object: (rss_after_mib - rss_ready_mib) * 1024.0 * 1024.0 / objects as f64,
        create_errors: created.errors,
    })
}
