//! `capstan serve`: certificates, store, catalogue, bootstrap, then HTTPS.

use crate::admission::cel_policy::AdmissionPolicies;
use crate::admission::config::Phase;
use crate::admission::{assemble, config, Chain};
use crate::api::flowcontrol::FlowControl;
use crate::api::inflight::InFlight;
use crate::api::state::AppState;
use crate::auth::config::AuthConfig;
use crate::auth::service_account::TokenIssuer;
use crate::auth::{self, Auth};
use crate::catalogue::custom::conversion::ConversionSetup;
use crate::catalogue::gates::ApiGates;
use crate::catalogue::Catalogue;
use crate::cli::ServeArgs;
use crate::controllers::leader::{Election, Timing};
use crate::policy::resources::paths::BundleRoots;
use crate::policy::resources::strategy::BundlePaths;
use crate::policy::resources::{Controller as PolicyController, PolicySet};
use crate::registry::wasm_strategy::{WasmStrategy, STRATEGY_PLUGIN};
use crate::server::connection::Timeouts;
use crate::storage::sqlite::SqliteStorage;
use crate::storage::{
    compactor, instrumented, instrumented::Instrumented, watermarks, CachedStorage, EtcdOptions,
    EtcdStorage, EtcdTls, Storage,
};
use crate::wasm::{cache_dir, embedded, PluginRuntime};
use crate::{certificates::pki, cli::kubeconfig, controllers, server};
use anyhow::{Context, Result};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// The host clients should use to reach a server bound to `bind`.
fn client_host(bind: IpAddr) -> String {
    match bind {
        IpAddr::V4(v4) if v4.is_unspecified() => "127.0.0.1".to_string(),
        IpAddr::V6(v6) if v6.is_unspecified() => "127.0.0.1".to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
        IpAddr::V4(v4) => v4.to_string(),
    }
}

/// The configured admission entries, or kube-apiserver's default order of the built-ins.
fn chain_entries(config: &crate::config::ServerConfig) -> Result<Vec<config::EntryConfig>> {
    match &config.admission {
        Some(entries) => Ok(entries.clone()),
        None => config::default_chain(&crate::wasm::embedded::public_builtins())
            .map_err(anyhow::Error::msg),
    }
}

/// The admission chain of `entries`, loaded into the runtime.
fn admission_chain(
    state: &AppState,
    entries: &[config::EntryConfig],
    config: &crate::config::ServerConfig,
    runtime: &PluginRuntime,
) -> Result<Chain> {
    let chain = assemble::assemble(entries, runtime, state.reader()).map_err(anyhow::Error::msg)?;
    Ok(Chain::new(
        chain,
        state.registry.clone(),
        &state.catalogue.get(),
        config.webhook_services.clone(),
    ))
}

/// The authentication and authorization chains, loaded into the runtime.
fn auth_chains(state: &AppState, config: &AuthConfig, runtime: &PluginRuntime) -> Result<Auth> {
    let mut injected = auth::Injected::new();
    let mut audiences = Vec::new();
    if let Some(tokens) = &state.tokens {
        injected.insert(
            "builtin:service-account-token".into(),
            tokens.plugin_config(),
        );
        audiences = tokens.settings.audiences.clone();
    }
    let auth = auth::build(config, runtime, state.reader(), &injected, audiences)
        .map_err(anyhow::Error::msg)?;
    tracing::info!(
        authenticators = ?auth.authenticator.names(),
        anonymous = config.anonymous,
        authorizers = ?auth.authorizer.names(),
        "authentication and authorization chains"
    );
    Ok(auth)
}

/// Compiles every module the start will load, in parallel, into the cache.
fn precompile(runtime: &PluginRuntime, entries: &[config::EntryConfig], auth: &AuthConfig) {
    let mut modules: Vec<std::borrow::Cow<'static, [u8]>> = entries
        .iter()
        .filter_map(|e| match e {
            config::EntryConfig::Plugin(p) => crate::wasm::embedded::module_bytes(&p.module).ok(),
            config::EntryConfig::Webhooks(_)
            | config::EntryConfig::Policies(_)
            | config::EntryConfig::AdmissionPolicies(_) => None,
        })
        .collect();
    modules.extend(
        auth::modules(auth)
            .iter()
            .filter_map(|m| crate::wasm::embedded::module_bytes(m).ok()),
    );
    modules.extend(embedded::builtin(STRATEGY_PLUGIN).map(std::borrow::Cow::Borrowed));
    let refs: Vec<&[u8]> = modules.iter().map(|m| m.as_ref()).collect();
    runtime.precompile(&refs);
}

/// The store: etcd when `--etcd-servers` is given, else SQLite in the data
/// directory.
async fn open_storage(args: &ServeArgs) -> Result<Arc<dyn Storage>> {
    if args.etcd_servers.is_empty() {
        let sqlite = Arc::new(
            SqliteStorage::open(&args.data_dir.join("capstan.db")).context("opening the store")?,
        );
        return Ok(sqlite);
    }
    let mut options = EtcdOptions::new(args.etcd_servers.clone());
    options.key_prefix = match args.etcd_prefix.trim_end_matches('/') {
        "/registry" => String::new(),
        other => other.to_string(),
    };
    if args.etcd_cafile.is_some() || args.etcd_certfile.is_some() {
        let tls = EtcdTls::from_files(
            args.etcd_cafile.as_deref(),
            args.etcd_certfile.as_deref(),
            args.etcd_keyfile.as_deref(),
        );
        options.tls = Some(tls.context("etcd TLS files")?);
    }
    let etcd: Arc<dyn Storage> = Arc::new(
        EtcdStorage::connect(options)
            .await
            .with_context(|| format!("connecting to etcd at {}", args.etcd_servers.join(",")))?,
    );
    tracing::info!(servers = ?args.etcd_servers, "using etcd");
    Ok(etcd)
}

pub async fn run(args: ServeArgs) -> Result<()> {
    let started = std::time::Instant::now();
    let config = match &args.config {
        Some(path) => crate::config::load(path)?,
        None => crate::config::ServerConfig::default(),
    };
    let gates =
        ApiGates::parse(&args.feature_gates, &args.runtime_config).map_err(anyhow::Error::msg)?;
    let ignored = gates.without_effect();
    if !ignored.is_empty() {
        tracing::warn!(gates = ?ignored, "feature gates of kube-apiserver that Capstan accepts but does not implement");
    }
    server::ensure_dir(&args.data_dir)?;
    let mut extra = args.tls_san.clone();
    if !args.bind_address.is_unspecified() {
        extra.push(args.bind_address.to_string());
    }
    let pki = pki::ensure(&args.data_dir, &extra).context("preparing certificates")?;
    let exporter = tracing_exporter(&args, &gates)?;
    let backend = if args.etcd_servers.is_empty() {
        "sqlite"
    } else {
        "etcd3"
    };
    let instrumented = Arc::new(Instrumented::new(open_storage(&args).await?, backend));
    let mut storage: Arc<dyn Storage> = instrumented.clone();
    let mut cache_metrics = None;
    if args.watch_cache {
        let cache = CachedStorage::start(storage);
        if !cache.wait_synced(Duration::from_secs(30)).await {
            tracing::warn!("the watch cache is not synced yet; reads go to the store meanwhile");
        }
        cache_metrics = Some(cache.metrics());
        storage = Arc::new(cache);
    }
    // Through the cache, so it knows the compaction point at once.
    let interval = Duration::from_secs(args.compaction_interval_secs.max(1));
    compactor::spawn(storage.clone(), interval, args.history_revisions);
    let listener =
        tokio::net::TcpListener::bind(SocketAddr::new(args.bind_address, args.secure_port))
            .await
            .with_context(|| format!("binding {}:{}", args.bind_address, args.secure_port))?;
    let port = listener.local_addr()?.port();
    let address = format!("{}:{port}", client_host(args.bind_address));
    let mut catalogue = Catalogue::builtin();
    catalogue.enable_gated(&gates);
    let mut state = AppState::new(catalogue, storage.clone(), address.clone());
    let auditor = Arc::new(super::audit::auditor(&args)?);
    state.metrics.push(auditor.metrics());
    state.metrics.push(instrumented.metrics.clone());
    if let Some(cache) = cache_metrics {
        state.metrics.push(cache);
    }
    let apiservices = crate::catalogue::live::ApiServiceAvailability(state.catalogue.clone());
    state.metrics.push(Arc::new(apiservices));
    state.audit = auditor;
    watermarks::follow(storage, state.watermarks.clone());
    let cache = cache_dir::resolve(args.plugin_cache_dir.as_deref(), &args.data_dir);
    crate::wasm::compile_process::compile_in_child_processes();
    let runtime = PluginRuntime::new(Some(cache)).context("starting the plugin runtime")?;
    // Cranelift waits until the server serves: the start has the cores.
    let optimizer_held = runtime.hold_optimizer();
    let entries = chain_entries(&config)?;
    precompile(&runtime, &entries, &config.auth);
    if let Some(v) = WasmStrategy::builtin(&runtime, state.reader())? {
        state.registry.strategy =
            Arc::new(crate::crd::strategy::CustomAware { inner: Arc::new(v) });
    }
    let bundle_roots = BundleRoots::new(&args.data_dir, &args.policy_bundle_dirs);
    state.registry.strategy = Arc::new(BundlePaths {
        inner: state.registry.strategy.clone(),
        roots: bundle_roots.clone(),
    });
    let policies = Arc::new(PolicySet::default());
    state.metrics.push(policies.metrics.clone());
    let mut chain = admission_chain(&state, &entries, &config, &runtime)?;
    chain.policies = Some(policies.clone());
    let conversion = ConversionSetup::load(
        &config.conversion,
        &config.webhook_services,
        &runtime,
        state.reader(),
    );
    state.conversion = Arc::new(conversion.map_err(anyhow::Error::msg)?);
    let key_file = args.data_dir.join("pki").join("service-account.key");
    let tokens = TokenIssuer::load_or_create(&key_file).context("service account signing key")?;
    state.tokens = Some(Arc::new(tokens));
    state.auth = Arc::new(auth_chains(&state, &config.auth, &runtime)?);
    let policies_of = |phase| AdmissionPolicies::new(state.reader(), state.auth.clone(), phase);
    chain.admission_policies = policies_of(Phase::Validating).map(Arc::new);
    chain.mutating_policies = policies_of(Phase::Mutating).map(Arc::new);
    chain.auth = Some(state.auth.clone());
    state.metrics.push(chain.metrics.clone());
    state.admission = Arc::new(chain);
    tracing::info!(chain = ?state.admission.names(), "admission chain");
    state.inflight = InFlight::new(
        args.max_requests_inflight,
        args.max_mutating_requests_inflight,
    )
    .with_request_timeout(args.request_timeout);
    let seats = args.max_requests_inflight + args.max_mutating_requests_inflight;
    // Both limits 0: no limit, nothing to share.
    if args.enable_priority_and_fairness && seats > 0 {
        let timeout = (!args.request_timeout.is_zero()).then_some(args.request_timeout);
        let catalogue = state.catalogue.get();
        let fc = FlowControl::new(&state.registry, &catalogue, seats, timeout).map(Arc::new);
        if let Some(fc) = &fc {
            state.metrics.push(fc.clone());
        }
        state.flow_control = fc;
    }
    state.pki = Some(pki.clone());
    state.on_etcd = !args.etcd_servers.is_empty();
    state.policies = policies.clone();
    state.policy_audit_interval = args.policy_audit_interval;
    state.controllers = crate::api::state::selection::Selection::parse(&args.controllers)
        .map_err(|e| anyhow::anyhow!("--controllers: {e}"))?;
    let state = Arc::new(state);
    crate::crd::served::spawn(
        state.storage.clone(),
        state.catalogue.clone(),
        state.conversion.clone(),
    );
    controllers::bootstrap::bootstrap(&state)
        .await
        .map_err(|e| anyhow::anyhow!("bootstrap: {e}"))?;
    controllers::rbac::bootstrap(&state)
        .await
        .map_err(|e| anyhow::anyhow!("bootstrap RBAC policy: {e}"))?;
    controllers::flowcontrol::bootstrap(&state)
        .await
        .map_err(|e| anyhow::anyhow!("flowcontrol bootstrap configuration: {e}"))?;
    controllers::local_api_services::register(&state)
        .await
        .map_err(|e| anyhow::anyhow!("local APIServices: {e}"))?;
    // Counted once the bootstrap objects are in, then every minute.
    let catalogue = state.catalogue.clone();
    instrumented::count_objects(instrumented, move || {
        let resources = catalogue.get();
        let stored = resources.resources().iter().filter(|r| r.is_stored());
        stored
            .map(|r| crate::registry::keys::prefix(r, None))
            .collect()
    });
    // Serve the stored CRDs' resources from the first request on.
    if !state.catalogue.caught_up(0, Duration::from_secs(5)).await {
        tracing::warn!("the stored CustomResourceDefinitions are not served yet");
    }
    // In every replica: each loads the PolicyBundles into its own chain.
    let bundles = PolicyController::new(
        state.registry.clone(),
        &state.catalogue.get(),
        args.data_dir.clone(),
        runtime.clone(),
        state.reader(),
        policies,
    );
    let access = crate::policy::bundles::registry::Access {
        insecure: args.insecure_registries.clone(),
        docker_config: false,
    };
    let keys = crate::policy::resources::source::read_server_keys(&args.policy_verification_keys)?;
    bundles
        .map(|c| c.with_registry(access, keys))
        .map(|c| c.with_sources(bundle_roots, args.policy_bundle_fetch_timeout))
        .map(|c| {
            c.with_admission_policies(crate::policy::resources::loaded::CelContext {
                lookups: state.reader(),
                auth: Some(state.auth.clone()),
            })
        })
        .map(PolicyController::spawn);
    let election = start_controllers(&args, &state);
    let kubeconfig_path = args.data_dir.join(kubeconfig::ADMIN_FILE);
    kubeconfig::write_admin(&kubeconfig_path, &format!("https://{address}"), &pki)?;
    let kubeconfig_path = std::fs::canonicalize(&kubeconfig_path).unwrap_or(kubeconfig_path);
    let tls = server::tls_config(&pki)?;
    tracing::info!(
        address = %format!("https://{address}"),
        kubeconfig = %kubeconfig_path.display(),
        startup_ms = started.elapsed().as_millis() as u64,
        "capstan is serving; use: kubectl --kubeconfig {}", kubeconfig_path.display()
    );
    let limits = (timeouts(&args), state.shutdown.clone());
    let mut serving = Box::pin(server::serve(
        listener,
        tls,
        server::router(state.clone()),
        limits,
    ));
    drop(optimizer_held);
    tokio::select! {
        served = &mut serving => return served,
        () = shutdown_signal() => {}
    }
    shut_down(&state, &args, serving).await;
    if let Some(exporter) = exporter {
        // The spans still queued, flushed (blocking) within a bound.
        let flushed = tokio::task::spawn_blocking(move || exporter.shutdown());
        let _ = tokio::time::timeout(Duration::from_secs(5), flushed).await;
    }
    if let Some(election) = election {
        election.release().await;
    }
    Ok(())
}

/// `--tracing-config-file`: spans exported from now on.
fn tracing_exporter(
    args: &ServeArgs,
    gates: &ApiGates,
) -> Result<Option<crate::telemetry::otel::Exporter>> {
    let Some(path) = &args.tracing_config_file else {
        return Ok(None);
    };
    if !gates.feature("APIServerTracing") {
        anyhow::bail!(
            "APIServerTracing feature is not enabled, but tracing config file was provided"
        );
    }
    let config = crate::telemetry::otel::config::TracingConfiguration::load(path)
        .map_err(anyhow::Error::msg)?;
    let instance = format!("apiserver-{}", uuid::Uuid::new_v4());
    let exporter = crate::telemetry::otel::init(&config, &instance).map_err(anyhow::Error::msg)?;
    tracing::info!(endpoint = %config.url().unwrap_or_default(), rate_per_million = config.sampling_rate_per_million.unwrap_or(0), "exporting traces");
    Ok(Some(exporter))
}

/// kube's graceful shutdown (`shutdown.rs`): unready and watches ended at
/// once, new requests served for `--shutdown-delay-duration`, then the
/// listener closed and the requests in flight drained.
async fn shut_down(
    state: &AppState,
    args: &ServeArgs,
    mut serving: std::pin::Pin<Box<impl std::future::Future<Output = Result<()>>>>,
) {
    tracing::info!(delay = ?args.shutdown_delay, "shutting down: /readyz fails, watches end");
    state.shutdown.begin();
    let _ = tokio::time::timeout(args.shutdown_delay, &mut serving).await;
    // No more connections; the open ones close after their requests.
    drop(serving);
    state.shutdown.close();
    let drained = tokio::time::timeout(crate::api::shutdown::DRAIN, async {
        while state.requests.in_flight() > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    match drained.await {
        Ok(()) => tracing::info!("requests in flight drained; exiting"),
        Err(_) => tracing::warn!("requests still in flight after the drain period; exiting"),
    }
}

fn timeouts(args: &ServeArgs) -> Timeouts {
    Timeouts {
        read_header: args.read_header_timeout,
        idle: args.idle_timeout,
    }
}

/// Runs the built-in controllers: directly on the embedded store (one
/// process), in the elected leader only on etcd, where replicas share it.
/// Every replica watches for a kube-controller-manager that leads.
fn start_controllers(args: &ServeArgs, state: &Arc<AppState>) -> Option<Arc<Election>> {
    controllers::defer_to_kcm::spawn_observer(state.clone());
    if args.etcd_servers.is_empty() {
        controllers::spawn_all(state.clone());
        return None;
    }
    // Host and address: unique among live replicas, and the same after a
    // restart, so a replica killed and started again resumes its lease at
    // once instead of waiting for it to expire.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let identity = format!("{}_{}", host.trim(), state.server_address);
    let timing = Timing {
        lease_duration: args.lease_duration,
        renew_deadline: args.renew_deadline,
        retry_period: args.retry_period,
    };
    tracing::info!(%identity, "campaigning to run the controllers");
    Some(Election::spawn(
        state.clone(),
        identity,
        timing,
        controllers::spawn_all,
    ))
}

/// SIGTERM or SIGINT (Ctrl-C).
async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let Ok(mut term) = signal(SignalKind::terminate()) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
