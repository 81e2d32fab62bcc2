//! capstan-bench: drives any Kubernetes API server (Capstan or kube-apiserver) through
//! create/get/list/update/watch/delete phases at several concurrency levels, on
//! ConfigMaps and/or a custom resource of the same size (side by side, with ratios),
//! and optionally measures a server binary's startup time.

pub use capstan::kube_client::client;
pub mod custom;
#[cfg(test)]
mod fake_api;
pub mod heavy;
pub mod hostile_cel;
pub mod kinds;
pub use capstan::kube_client::kubeconfig;
pub mod memory;
pub mod otlp_sink;
pub mod phases;
pub mod report;
pub mod runner;
pub mod startup;
pub mod stats;
pub mod swap;
#[cfg(test)]
#[path = "../../kube_client/testing.rs"]
#[allow(dead_code)] // the library's client tests use the rest
mod testing;
pub mod watch;

use anyhow::{Context, Result};
use client::Client;
use kinds::Kind;
use phases::{Scope, Versions};
use rand::Rng;
use report::{ApiRun, Report};
use stats::PhaseResult;
use std::path::PathBuf;
use std::sync::Arc;

/// What to run (the command line, parsed).
#[derive(Debug, Clone)]
pub struct Options {
    pub kubeconfig: Option<PathBuf>,
    /// Another server (replica) to watch through in the watch-delivery phase.
    pub watch_kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub namespace: Option<String>,
    pub ops: usize,
    pub list_ops: Option<usize>,
    pub watch_ops: Option<usize>,
    pub concurrency: Vec<usize>,
    /// The kinds of object every level runs its phases on, in this order.
    pub kinds: Vec<Kind>,
    pub http1: bool,
    pub startup_binary: Option<PathBuf>,
    pub startup_runs: usize,
    /// ConfigMaps to create in the memory-per-object measurement (0: skip).
    pub memory_objects: usize,
    /// Clients sending the heaviest requests the limits allow, in the
    /// heavy-load phase (0: no such phase).
    pub heavy_clients: usize,
    pub heavy_seconds: u64,
    /// What the heavy clients send.
    pub heavy_load: heavy::Load,
    /// A PolicyBundle whose mode is flipped during every create phase.
    pub swap_policy_bundle: Option<String>,
    /// How often it is flipped.
    pub swap_every: std::time::Duration,
}

impl Options {
    fn list_ops(&self) -> usize {
        self.list_ops.unwrap_or(self.ops / 20).max(1)
    }

    fn watch_ops(&self) -> usize {
        self.watch_ops.unwrap_or(self.ops / 4).max(1)
    }
}

/// Runs everything `opts` asks for.
pub async fn run(opts: &Options) -> Result<Report> {
    let mut report = Report::default();
    if let Some(path) = &opts.kubeconfig {
        report.api = Some(api_run(opts, path).await?);
    }
    if let Some(binary) = &opts.startup_binary {
        tracing::info!(binary = %binary.display(), runs = opts.startup_runs, "measuring startup");
        report.startup = startup::measure(binary, opts.startup_runs).await;
        if opts.memory_objects > 0 {
            tracing::info!(objects = opts.memory_objects, "measuring memory per object");
            report.memory = Some(memory::measure(binary, opts.memory_objects).await?);
        }
    }
    Ok(report)
}

async fn api_run(opts: &Options, path: &std::path::Path) -> Result<ApiRun> {
    let kc = kubeconfig::load(path, opts.context.as_deref())?;
    let client = Client::connect(&kc, !opts.http1)
        .await
        .with_context(|| format!("connecting to {}", kc.server))?;
    let watcher = match &opts.watch_kubeconfig {
        Some(path) => {
            let kc = kubeconfig::load(path, None)?;
            Client::connect(&kc, !opts.http1)
                .await
                .with_context(|| format!("connecting to {} (watch)", kc.server))?
        }
        None => client.clone(),
    };
    let run_id = run_id();
    let namespace = opts
        .namespace
        .clone()
        .unwrap_or_else(|| format!("bench-{run_id}"));
    let created = phases::ensure_namespace(&client, &namespace)
        .await
        .with_context(|| format!("preparing namespace {namespace}"))?;
    let crd_created = match opts.kinds.contains(&Kind::Custom) {
        true => custom::install(&client, &namespace)
            .await
            .context("installing the benchmark CRD")?,
        false => false,
    };
    tracing::info!(server = %client.server(), protocol = client.protocol(), namespace, "benchmark starting");
    let mut results = Vec::new();
    for &c in &opts.concurrency {
        for &kind in &opts.kinds {
            let scope = Arc::new(Scope {
                client: client.clone(),
                watcher: watcher.clone(),
                namespace: namespace.clone(),
                prefix: format!("bench-{run_id}-c{c}{}", prefix_of(kind)),
                kind,
            });
            results.extend(run_level(&scope, c, opts).await);
        }
    }
    if opts.heavy_clients > 0 {
        let scope = Arc::new(Scope {
            client: client.clone(),
            watcher: watcher.clone(),
            namespace: namespace.clone(),
            prefix: format!("bench-{run_id}"),
            kind: Kind::ConfigMap,
        });
        let duration = std::time::Duration::from_secs(opts.heavy_seconds);
        let clients = (opts.heavy_clients, opts.heavy_load);
        let heavy = heavy::run(&scope, &kc, !opts.http1, clients, duration).await?;
        results.extend(heavy.into_iter().map(logged));
    }
    if crd_created {
        custom::remove(&client).await;
    }
    if created {
        phases::delete_namespace(&client, &namespace).await;
    }
    Ok(ApiRun {
        ratios: report::ratios(&results),
        server: client.server(),
        protocol: client.protocol().to_string(),
        namespace,
        ops: opts.ops,
        concurrency: opts.concurrency.clone(),
        phases: results,
    })
}

/// Object names of a kind: ConfigMaps keep the historical ones.
fn prefix_of(kind: Kind) -> &'static str {
    match kind {
        Kind::ConfigMap => "",
        Kind::Custom => "-cr",
    }
}

/// All phases at one concurrency level on the scope's kind, in order.
async fn run_level(scope: &Arc<Scope>, c: usize, opts: &Options) -> Vec<PhaseResult> {
    let n = opts.ops;
    let rvs = Versions::new(n);
    let kind = scope.kind;
    let of_kind = |mut result: PhaseResult| {
        result.kind = kind;
        logged(result)
    };
    let mut out = Vec::new();
    let swapper = opts
        .swap_policy_bundle
        .as_ref()
        .map(|name| swap::start(scope.client.clone(), name.clone(), opts.swap_every, c));
    out.push(of_kind(phases::create(scope, c, n, &rvs).await));
    if let Some(swapper) = swapper {
        out.push(of_kind(swapper.stop().await));
    }
    out.push(of_kind(phases::get(scope, c, n, &rvs).await));
    out.push(of_kind(phases::list(scope, c, opts.list_ops()).await));
    out.push(of_kind(phases::update(scope, c, n, &rvs).await));
    out.push(of_kind(watch::delivery(scope, c, opts.watch_ops()).await));
    let name_of = |s: &Scope, i: usize| s.object_name(i);
    out.push(of_kind(phases::delete(scope, c, n, name_of).await));
    out
}

fn logged(result: PhaseResult) -> PhaseResult {
    tracing::info!(
        phase = %result.phase,
        kind = result.kind.label(),
        concurrency = result.concurrency,
        ops = result.ops,
        errors = result.errors,
        throughput = format!("{:.1}", result.throughput),
        p50_ms = format!("{:.3}", result.latency.p50_ms),
        p99_ms = format!("{:.3}", result.latency.p99_ms),
        "phase done"
    );
    result
}

/// Six lowercase alphanumerics, to keep names of concurrent runs apart.
fn run_id() -> String {
    rand::thread_rng()
        .sample_iter(&rand::distributions::Alphanumeric)
        .take(6)
        .map(|b| char::from(b).to_ascii_lowercase())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(ops: usize) -> Options {
        Options {
            kubeconfig: None,
            watch_kubeconfig: None,
            context: None,
            namespace: None,
            ops,
            list_ops: None,
            watch_ops: None,
            concurrency: vec![1],
            kinds: vec![Kind::ConfigMap],
            http1: false,
            startup_binary: None,
            startup_runs: 5,
            memory_objects: 0,
            heavy_clients: 0,
            heavy_seconds: 20,
            heavy_load: heavy::Load::Bodies,
            swap_policy_bundle: None,
            swap_every: std::time::Duration::from_millis(100),
        }
    }

    #[test]
    fn derived_op_counts_are_fractions_of_ops_but_never_zero() {
        assert_eq!((opts(2000).list_ops(), opts(2000).watch_ops()), (100, 500));
        assert_eq!((opts(3).list_ops(), opts(3).watch_ops()), (1, 1));
        let mut o = opts(2000);
        o.list_ops = Some(7);
        o.watch_ops = Some(9);
        assert_eq!((o.list_ops(), o.watch_ops()), (7, 9));
    }

    #[test]
    fn run_ids_are_valid_dns_label_fragments() {
        let id = run_id();
        assert_eq!(id.len(), 6);
        assert!(
            id.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()),
            "{id}"
        );
        assert_ne!(run_id(), run_id());
    }

    /// A fake API server and a kubeconfig file for it (kept alive by the TempDir).
    async fn fake(alpn: &[u8], host: &str) -> (Arc<fake_api::FakeApi>, tempfile::TempDir, PathBuf) {
        let pki = testing::test_pki();
        let (api, port) = fake_api::FakeApi::start(&pki, vec![alpn.to_vec()]).await;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubeconfig");
        let server = format!("https://{host}:{port}");
        std::fs::write(&path, testing::kubeconfig_yaml(&pki, &server)).unwrap();
        (api, dir, path)
    }

    #[tokio::test]
    async fn full_run_over_http2_creates_and_removes_its_namespace() {
        let (api, _dir, path) = fake(b"h2", "127.0.0.1").await;
        let mut o = opts(24);
        o.concurrency = vec![1, 4];
        o.kubeconfig = Some(path);
        let run = run(&o).await.unwrap().api.unwrap();
        assert_eq!(run.protocol, "HTTP/2");
        let phases: Vec<(&str, usize)> = run
            .phases
            .iter()
            .map(|p| (p.phase.as_str(), p.concurrency))
            .collect();
        let order = ["create", "get", "list", "update", "watch", "delete"];
        let expected: Vec<(&str, usize)> = [1, 4]
            .iter()
            .flat_map(|&c| order.iter().map(move |&p| (p, c)))
            .collect();
        assert_eq!(phases, expected);
        for p in &run.phases {
            assert_eq!(p.errors, 0, "{p:?}");
            assert!(
                p.latency.p50_ms > 0.0 && p.latency.p99_ms >= p.latency.p50_ms,
                "{p:?}"
            );
        }
        let ops: Vec<usize> = run.phases[..6].iter().map(|p| p.ops).collect();
        assert_eq!(ops, [24, 24, 1, 24, 6, 24]);
        let state = api.state.lock().unwrap();
        assert!(state.configmaps.is_empty(), "objects left behind");
        assert_eq!(state.deleted_namespaces, vec![run.namespace.clone()]);
        assert!(run.namespace.starts_with("bench-"));
    }

    #[tokio::test]
    async fn custom_kind_runs_beside_configmaps_under_its_own_crd() {
        let (api, _dir, path) = fake(b"h2", "127.0.0.1").await;
        let mut o = opts(8);
        o.concurrency = vec![1, 2];
        o.kinds = vec![Kind::ConfigMap, Kind::Custom];
        o.kubeconfig = Some(path);
        let run = run(&o).await.unwrap().api.unwrap();
        let kinds: Vec<(&str, Kind, usize)> = run
            .phases
            .iter()
            .map(|p| (p.phase.as_str(), p.kind, p.concurrency))
            .collect();
        assert_eq!(kinds.len(), 24);
        assert_eq!(kinds[0], ("create", Kind::ConfigMap, 1));
        assert_eq!(kinds[6], ("create", Kind::Custom, 1));
        assert_eq!(kinds[11], ("delete", Kind::Custom, 1));
        assert_eq!(kinds[12], ("create", Kind::ConfigMap, 2));
        assert!(run.phases.iter().all(|p| p.errors == 0), "{:?}", run.phases);
        let ratios: Vec<(&str, usize)> = run
            .ratios
            .iter()
            .map(|r| (r.phase.as_str(), r.concurrency))
            .collect();
        assert_eq!(ratios.len(), 12);
        assert_eq!(ratios[..2], [("create", 1), ("get", 1)]);
        assert!(run.ratios.iter().all(|r| r.p50 > 0.0));
        let state = api.state.lock().unwrap();
        assert!(state.custom.is_empty() && state.configmaps.is_empty());
        assert_eq!(state.deleted_crds, ["benchobjects.bench.capstan.dev"]);
    }

    #[tokio::test]
    async fn full_run_over_http1_keeps_a_given_existing_namespace() {
        let (api, _dir, path) = fake(b"http/1.1", "localhost").await;
        api.state.lock().unwrap().namespaces.insert("perf".into());
        let mut o = opts(10);
        o.concurrency = vec![3];
        o.namespace = Some("perf".into());
        o.kubeconfig = Some(path);
        let run = run(&o).await.unwrap().api.unwrap();
        assert_eq!(
            (run.protocol.as_str(), run.namespace.as_str()),
            ("HTTP/1.1", "perf")
        );
        assert!(run.phases.iter().all(|p| p.errors == 0), "{:?}", run.phases);
        let state = api.state.lock().unwrap();
        assert!(state.deleted_namespaces.is_empty());
        assert!(state.configmaps.is_empty());
    }

    #[tokio::test]
    async fn server_errors_are_counted_per_phase_not_fatal() {
        let (api, _dir, path) = fake(b"h2", "127.0.0.1").await;
        let mut o = opts(6);
        o.kubeconfig = Some(path);
        o.namespace = Some("gone".into());
        let api2 = api.clone();
        // The namespace disappears right after the run created it: every create fails.
        tokio::spawn(async move {
            loop {
                api2.state.lock().unwrap().namespaces.clear();
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            }
        });
        let run = run(&o).await.unwrap().api.unwrap();
        let create = &run.phases[0];
        assert_eq!((create.phase.as_str(), create.errors), ("create", 6));
        let err = create.first_error.as_deref().unwrap();
        assert!(
            err.contains("404") && err.contains("namespaces \"gone\" not found"),
            "{err}"
        );
        let update = &run.phases[3];
        assert!(update
            .first_error
            .as_deref()
            .unwrap()
            .contains("no resourceVersion known"));
    }
}
