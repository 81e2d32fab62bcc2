//! Command-line interface (flags named as kube-apiserver names them).

pub mod audit;
pub mod kubeconfig;
pub mod plugin_componentize;
pub mod plugin_new;
pub mod plugin_run;
pub mod policy;
pub mod policy_registry;
pub mod serve;
pub mod simulated_nodes;

use clap::{Args, Parser, Subcommand};
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(
    name = "capstan",
    version,
    about = "A Kubernetes-compatible API server with WebAssembly policy plugins"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the API server.
    Serve(Box<ServeArgs>),
    /// Work with plugins outside a server.
    #[command(subcommand)]
    Plugin(PluginCommand),
    /// Print a kubeconfig for a user, with a client certificate signed by the server's CA.
    Kubeconfig(KubeconfigArgs),
    /// Build, inspect and test policy bundles (OCI artifacts of admission policies).
    #[command(subcommand)]
    Policy(crate::cli::policy::PolicyCommand),
    /// Nodes without kubelets, for clusters and tests with no machines behind them.
    #[command(subcommand)]
    Nodes(NodesCommand),
}

#[derive(Subcommand, Debug)]
pub enum NodesCommand {
    /// Register Nodes that report Ready, renew their Leases and run the Pods
    /// bound to them (as kwok does), against any API server, until stopped.
    Simulate(SimulateArgs),
}

#[derive(Args, Debug, Clone)]
pub struct SimulateArgs {
    /// The kubeconfig of the API server (its current context is used).
    #[arg(long)]
    pub kubeconfig: PathBuf,
    /// A context of the kubeconfig to use instead of its current one.
    #[arg(long)]
    pub context: Option<String>,
    /// How many Nodes to register.
    #[arg(long, default_value_t = 1)]
    pub count: u32,
    /// The Nodes' names: this prefix and their index from 0.
    #[arg(long = "name-prefix", default_value = "capstan-node-")]
    pub name_prefix: String,
    /// How long a Pod whose restartPolicy is not Always runs before it
    /// Succeeds (e.g. 2s, 500ms).
    #[arg(long = "pod-run-for", default_value = "1s", value_parser = parse_duration)]
    pub pod_run_for: Duration,
}

#[derive(Args, Debug, Clone)]
pub struct KubeconfigArgs {
    /// The data directory of the server the kubeconfig should reach.
    #[arg(long = "data-dir", default_value = "./capstan-data")]
    pub data_dir: PathBuf,
    /// The user name (the certificate's CommonName).
    #[arg(long)]
    pub user: String,
    /// A group (the certificate's Organization); repeatable.
    #[arg(long = "group")]
    pub groups: Vec<String>,
}

#[derive(Subcommand, Debug)]
pub enum PluginCommand {
    /// Call an admission plugin with an AdmissionReview and print its answer (like kwctl run).
    Run(PluginRunArgs),
    /// Turn a core wasm32-wasip1 module (C, Go) into a component of a Capstan
    /// world, with the WASI preview1 reactor adapter.
    Componentize(PluginComponentizeArgs),
    /// Start a policy project in a language, from its require-labels example.
    New(PluginNewArgs),
    /// Compile the modules on standard input into a plugin cache (the
    /// server runs this in a child process).
    #[command(hide = true)]
    Compile(PluginCompileArgs),
}

#[derive(Args, Debug, Clone)]
pub struct PluginCompileArgs {
    /// The plugin cache to fill.
    #[arg(long)]
    pub cache_dir: PathBuf,
    /// With Cranelift (else Winch, or Cranelift where Winch refuses).
    #[arg(long)]
    pub optimized: bool,
}

#[derive(Args, Debug, Clone)]
pub struct PluginNewArgs {
    /// The language: rust, ts (or js), python, c, go.
    #[arg(long)]
    pub lang: String,
    /// The policy's name (a lowercase DNS label); also the folder made.
    pub name: String,
    /// The folder to create (default: ./NAME).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// The plugin-sdk folder of a Capstan checkout (default: the one this binary was built from).
    #[arg(long)]
    pub sdk: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct PluginComponentizeArgs {
    /// The core module (e.g. built with clang --target=wasm32-wasi or GOOS=wasip1).
    #[arg(long)]
    pub module: PathBuf,
    /// The world it implements (admission, authenticator, authorizer, strategy, converter).
    #[arg(long, default_value = "admission")]
    pub world: String,
    /// Where to write the component.
    #[arg(long, short = 'o')]
    pub output: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct PluginRunArgs {
    /// `builtin:<name>` or a path to a .wasm component.
    #[arg(long)]
    pub module: String,
    /// A file holding the call: an AdmissionReview (admission.k8s.io/v1) with
    /// `request` set for an admission plugin; for the other worlds their
    /// input (TokenReview, SubjectAccessReview, strategy call, ConversionReview).
    #[arg(long)]
    pub request: std::path::PathBuf,
    /// The plugin's configuration as JSON text.
    #[arg(long, default_value = "{}")]
    pub config: String,
    /// Per-call deadline in milliseconds.
    #[arg(long = "timeout-ms", default_value_t = 300)]
    pub timeout_ms: u64,
    /// Memory cap in MiB.
    #[arg(long = "memory-mib", default_value_t = 64)]
    pub memory_mib: u64,
    /// Where compiled plugins are cached (default: the user's cache, as for
    /// `capstan serve`), so a JS or Python module compiles once, not every run.
    #[arg(long = "plugin-cache-dir")]
    pub plugin_cache_dir: Option<std::path::PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Directory for the store, certificates and the admin kubeconfig.
    #[arg(long = "data-dir", default_value = "./capstan-data")]
    pub data_dir: PathBuf,
    /// HTTPS port.
    #[arg(long = "secure-port", default_value_t = 6443)]
    pub secure_port: u16,
    /// Address to listen on.
    #[arg(long = "bind-address", default_value = "127.0.0.1")]
    pub bind_address: IpAddr,
    /// Keep at least this many revisions of history when compacting (beyond
    /// kube's one compaction interval of history, which is always kept).
    #[arg(long = "history-revisions", default_value_t = 0)]
    pub history_revisions: i64,
    /// Server configuration file (the ordered admission chain, webhook service URLs).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Where compiled plugins are cached (default: $XDG_CACHE_HOME/capstan/plugins or
    /// ~/.cache/capstan/plugins, shared by every data directory of this user; when that
    /// is not usable, <data-dir>/plugin-cache).
    #[arg(long = "plugin-cache-dir")]
    pub plugin_cache_dir: Option<PathBuf>,
    /// How often old history is compacted, in seconds (kube-apiserver's
    /// --etcd-compaction-interval): each time, to the revision of the time before.
    #[arg(long = "compaction-interval", default_value_t = 300)]
    pub compaction_interval_secs: u64,
    /// Serve LIST and WATCH from an in-memory cache of the store (as
    /// kube-apiserver's --watch-cache); `--watch-cache=false` reads the store.
    #[arg(long = "watch-cache", default_value_t = true, action = clap::ArgAction::Set)]
    pub watch_cache: bool,
    /// etcd endpoints (comma-separated, http:// or https://); without them the
    /// embedded SQLite store in the data directory is used.
    #[arg(long = "etcd-servers", value_delimiter = ',')]
    pub etcd_servers: Vec<String>,
    /// Where objects live in etcd (Capstan's keys are /registry/<group>/<resource>/...;
    /// another value is prepended to them).
    #[arg(long = "etcd-prefix", default_value = "/registry")]
    pub etcd_prefix: String,
    /// CA bundle to verify etcd's serving certificate.
    #[arg(long = "etcd-cafile")]
    pub etcd_cafile: Option<PathBuf>,
    /// Client certificate for etcd.
    #[arg(long = "etcd-certfile")]
    pub etcd_certfile: Option<PathBuf>,
    /// Client key for etcd.
    #[arg(long = "etcd-keyfile")]
    pub etcd_keyfile: Option<PathBuf>,
    /// Further host names or IP addresses the serving certificate must
    /// cover (a load balancer in front of replicas, another machine's
    /// address); repeat or separate with commas.
    #[arg(long = "tls-san", value_delimiter = ',')]
    pub tls_san: Vec<String>,
    /// Which of Capstan's controllers that do kube-controller-manager's work
    /// run, in its syntax: `*` all, `name` one, `-name` not that one (its
    /// names or aliases: namespace, serviceaccount, root-ca-cert-publisher,
    /// csrsigning, clusterrole-aggregation, resourcequota, pvc-protection,
    /// pv-protection, garbagecollector). Whatever is selected stands down
    /// while a kube-controller-manager holds its leader Lease.
    #[arg(long = "controllers", value_delimiter = ',', default_value = "*")]
    pub controllers: Vec<String>,
    /// On etcd, how long a replica waits for the controllers' leader to
    /// renew its Lease before taking over (e.g. 15s, 500ms).
    #[arg(long = "leader-elect-lease-duration", default_value = "15s", value_parser = parse_duration)]
    pub lease_duration: Duration,
    /// How long the leader keeps leading without renewing its Lease.
    #[arg(long = "leader-elect-renew-deadline", default_value = "10s", value_parser = parse_duration)]
    pub renew_deadline: Duration,
    /// Pause between attempts to acquire or renew the Lease.
    #[arg(long = "leader-elect-retry-period", default_value = "2s", value_parser = parse_duration)]
    pub retry_period: Duration,
    /// At most this many read-only requests are served at once; more get
    /// 429 TooManyRequests (watches are not counted; 0: no limit).
    #[arg(long = "max-requests-inflight", default_value_t = 400)]
    pub max_requests_inflight: usize,
    /// At most this many mutating requests are served at once (0: no limit).
    #[arg(long = "max-mutating-requests-inflight", default_value_t = 200)]
    pub max_mutating_requests_inflight: usize,
    /// How long a new connection may take for its TLS handshake, and then
    /// for its first request's headers (Go's ReadHeaderTimeout in kube-apiserver).
    #[arg(long = "read-header-timeout", default_value = "32s", value_parser = parse_duration)]
    pub read_header_timeout: Duration,
    /// How long a connection with no request in progress stays open.
    #[arg(long = "idle-timeout", default_value = "90s", value_parser = parse_duration)]
    pub idle_timeout: Duration,
    /// How long a request that is not long-running (not a watch, exec,
    /// attach, portforward, log or proxy) may take before it gets 504
    /// (kube-apiserver's --request-timeout; 0s: no bound).
    #[arg(long = "request-timeout", default_value = "1m", value_parser = parse_duration)]
    pub request_timeout: Duration,
    /// How often the background audit evaluates the stored objects against
    /// the PolicyBundles in Audit or Enforce mode and rewrites their
    /// PolicyReports (it also runs soon after a bundle changes; at least 1s).
    #[arg(long = "policy-audit-interval", default_value = "5m", value_parser = parse_duration)]
    pub policy_audit_interval: Duration,
    /// A registry `host:port` reached over plain HTTP for PolicyBundles' `registry://` bundles (repeatable).
    #[arg(long = "insecure-registry")]
    pub insecure_registries: Vec<String>,
    /// A cosign public key (PEM) every PolicyBundle's bundle must be signed with; with several, one of them (repeatable).
    #[arg(long = "policy-verification-key")]
    pub policy_verification_keys: Vec<PathBuf>,
    /// A directory PolicyBundles may name bundles in with an absolute path,
    /// besides `<data-dir>/bundles/` (repeatable). Any other path is refused
    /// (422 on write; on load, after resolving symlinks).
    #[arg(long = "policy-bundle-dir")]
    pub policy_bundle_dirs: Vec<PathBuf>,
    /// OpenTelemetry tracing (apiserver.config.k8s.io/v1 TracingConfiguration:
    /// the OTLP/gRPC collector's endpoint and samplingRatePerMillion).
    #[arg(long = "tracing-config-file")]
    pub tracing_config_file: Option<PathBuf>,
    /// The audit policy (audit.k8s.io/v1 Policy, YAML or JSON): which
    /// requests are recorded, at which level and stages.
    #[arg(long = "audit-policy-file")]
    pub audit_policy_file: Option<PathBuf>,
    /// Where audit events are written, one JSON Event a line (`-`: standard output).
    #[arg(long = "audit-log-path")]
    pub audit_log_path: Option<String>,
    /// Days rotated audit log files are kept (0: no bound).
    #[arg(long = "audit-log-maxage", default_value_t = 0)]
    pub audit_log_maxage: u64,
    /// Rotated audit log files kept (0: all).
    #[arg(long = "audit-log-maxbackup", default_value_t = 0)]
    pub audit_log_maxbackup: usize,
    /// Megabytes of audit log before it is rotated (0: never).
    #[arg(long = "audit-log-maxsize", default_value_t = 0)]
    pub audit_log_maxsize: u64,
    /// The audit log's format: json (an Event a line) or legacy (kube's one-line text).
    #[arg(long = "audit-log-format", default_value = "json")]
    pub audit_log_format: String,
    /// A kubeconfig naming the webhook audit events are POSTed to, in batches.
    #[arg(long = "audit-webhook-config-file")]
    pub audit_webhook_config_file: Option<PathBuf>,
    /// Events in one batch to the audit webhook.
    #[arg(long = "audit-webhook-batch-max-size", default_value_t = 400)]
    pub audit_webhook_batch_max_size: usize,
    /// How long an event waits for its batch to fill before it is sent.
    #[arg(long = "audit-webhook-batch-max-wait", default_value = "30s", value_parser = parse_duration)]
    pub audit_webhook_batch_max_wait: Duration,
    /// Log verbosity, as kube-apiserver's klog `-v` (up to 3: info, 4–5:
    /// debug, 6 and more: trace). RUST_LOG, when set, wins.
    #[arg(short = 'v', long = "v", default_value_t = 0)]
    pub verbosity: u8,
    /// Verbosity per module, `module=N` (comma-separated; e.g. admission=5).
    #[arg(long = "vmodule", value_delimiter = ',')]
    pub vmodule: Vec<String>,
    /// The log format: text, or json (kube's structured JSON lines).
    #[arg(long = "logging-format", default_value = "text")]
    pub logging_format: String,
    /// API Priority and Fairness: requests classified by the FlowSchemas and
    /// limited by their PriorityLevelConfigurations' shares of the two
    /// in-flight limits (`--enable-priority-and-fairness=false`: the two
    /// limits alone).
    #[arg(
        long = "enable-priority-and-fairness",
        default_value_t = true,
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        default_missing_value = "true"
    )]
    pub enable_priority_and_fairness: bool,
    /// After SIGTERM, how long the server keeps serving new requests while
    /// /readyz already fails (kube-apiserver's --shutdown-delay-duration),
    /// before it stops accepting and drains the requests in flight.
    #[arg(long = "shutdown-delay-duration", default_value = "0s", value_parser = parse_duration)]
    pub shutdown_delay: Duration,
    /// kube-apiserver's feature gates, `Name=true` (comma-separated). Capstan
    /// knows MutatingAdmissionPolicy (off by default, as in kube 1.34).
    #[arg(long = "feature-gates", value_delimiter = ',')]
    pub feature_gates: Vec<String>,
    /// API versions off by default to serve, `group/version=true`
    /// (comma-separated; also api/alpha, api/beta, api/all):
    /// admissionregistration.k8s.io/v1beta1 and /v1alpha1 serve
    /// MutatingAdmissionPolicies when their feature gate is on.
    #[arg(long = "runtime-config", value_delimiter = ',')]
    pub runtime_config: Vec<String>,
    /// How long pulling a PolicyBundle's bundle from a registry, or reading
    /// it from disk, may take before the load is refused (and retried).
    #[arg(long = "policy-bundle-fetch-timeout", default_value = "2m", value_parser = parse_duration)]
    pub policy_bundle_fetch_timeout: Duration,
}

/// A Go-style duration of one unit: `500ms`, `15s`, `2m`.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("{text:?} has no unit (ms, s, m)"))?;
    let (number, unit) = text.split_at(split);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} does not start with a number"))?;
    match unit {
        "ms" => Ok(Duration::from_millis(n)),
        "s" => Ok(Duration::from_secs(n)),
        "m" => Ok(Duration::from_secs(n * 60)),
        _ => Err(format!("{text:?}: unit must be ms, s or m")),
    }
}
