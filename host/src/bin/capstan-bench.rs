//! `capstan-bench`: load benchmark for any Kubernetes API server reachable through a
//! kubeconfig (Capstan or kube-apiserver, for side-by-side comparison), plus optional
//! startup-time measurement of a Capstan binary. Prints a table, or JSON with --json.

#[path = "capstan_bench/mod.rs"]
mod bench;

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "capstan-bench",
    about = "Benchmark a Kubernetes API server through a kubeconfig"
)]
struct Args {
    /// Kubeconfig of the server to benchmark (its current context is used).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Kubeconfig context to use instead of current-context.
    #[arg(long)]
    context: Option<String>,
    /// Open the watch-delivery phase's watch through this kubeconfig instead
    /// (another replica: measures delivery from a write on one to the event on the other).
    #[arg(long)]
    watch_kubeconfig: Option<PathBuf>,
    /// Namespace to work in (created if missing); default: a fresh bench-<random>
    /// namespace, deleted at the end.
    #[arg(long)]
    namespace: Option<String>,
    /// Operations per phase (create, get, update, delete).
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..))]
    ops: u64,
    /// List requests per level (default: ops/20).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    list_ops: Option<u64>,
    /// Watch-delivery creates per level (default: ops/4).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    watch_ops: Option<u64>,
    /// Concurrency levels, comma-separated; every phase runs at each.
    #[arg(long, value_delimiter = ',', default_value = "1,32", value_parser = clap::value_parser!(u64).range(1..=10_000))]
    concurrency: Vec<u64>,
    /// Kinds of object to run the phases on, side by side at every level: `configmap`,
    /// `custom` (a custom resource of the same body size, under a CRD the run installs
    /// and removes). With both, the table adds the custom/ConfigMap ratio per phase.
    #[arg(long, value_delimiter = ',', default_value = "configmap", value_enum)]
    kinds: Vec<bench::kinds::Kind>,
    /// Offer only HTTP/1.1 (default: HTTP/2 when the server supports it).
    #[arg(long)]
    http1: bool,
    /// Also measure startup of this binary (`<PATH> serve --data-dir .. --secure-port ..
    /// --plugin-cache-dir ..`): a fresh data directory with an empty plugin cache, a fresh
    /// one with a warm cache, and an existing one; time to /readyz and RSS at ready.
    #[arg(long)]
    startup_binary: Option<PathBuf>,
    /// Number of startup measurements (of each scenario).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    startup_runs: u64,
    /// With --startup-binary: also create this many ConfigMaps in a fresh server and
    /// report the RSS it grew by, per object (0: skip).
    #[arg(long, default_value_t = 0)]
    memory_objects: u64,
    /// Heavy-load phase: this many clients send the heaviest requests the
    /// limits allow while /readyz and a small GET are timed (0: skip).
    #[arg(long, default_value_t = 0)]
    heavy_clients: u64,
    /// Length of the heavy-load phase.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    heavy_seconds: u64,
    /// What the heavy clients send: `bodies` (at the size limits) or `cel`
    /// (custom objects at CEL's cost limits, under a CRD the run installs).
    #[arg(long, default_value = "bodies", value_enum)]
    heavy_load: bench::heavy::Load,
    /// Flip this PolicyBundle's mode between Warn and Enforce while every
    /// create phase runs (its policies must match and allow the created
    /// objects); the flips are reported as a `swap` phase.
    #[arg(long)]
    swap_policy_bundle: Option<String>,
    /// Milliseconds between two flips of --swap-policy-bundle.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    swap_every_ms: u64,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Run only an OTLP/gRPC trace sink on this port of 127.0.0.1 (accepts
    /// and drops every export), for tools/bench-operations.sh's traced runs.
    #[arg(long)]
    otlp_sink: Option<u16>,
}

impl Args {
    fn options(&self) -> bench::Options {
        let size = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        bench::Options {
            kubeconfig: self.kubeconfig.clone(),
            watch_kubeconfig: self.watch_kubeconfig.clone(),
            context: self.context.clone(),
            namespace: self.namespace.clone(),
            ops: size(self.ops),
            list_ops: self.list_ops.map(size),
            watch_ops: self.watch_ops.map(size),
            concurrency: self.concurrency.iter().copied().map(size).collect(),
            kinds: self.kinds.clone(),
            http1: self.http1,
            startup_binary: self.startup_binary.clone(),
            startup_runs: size(self.startup_runs),
            memory_objects: size(self.memory_objects),
            heavy_clients: size(self.heavy_clients),
            heavy_seconds: self.heavy_seconds,
            heavy_load: self.heavy_load,
            swap_policy_bundle: self.swap_policy_bundle.clone(),
            swap_every: std::time::Duration::from_millis(self.swap_every_ms),
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    init_logging();
    let args = Args::parse();
    if let Some(port) = args.otlp_sink {
        if let Err(e) = bench::otlp_sink::serve(port).await {
            eprintln!("capstan-bench: OTLP sink: {e:#}");
            return ExitCode::FAILURE;
        }
        return ExitCode::SUCCESS;
    }
    if args.kubeconfig.is_none() && args.startup_binary.is_none() {
        eprintln!(
            "capstan-bench: pass --kubeconfig FILE and/or --startup-binary PATH (see --help)"
        );
        return ExitCode::from(2);
    }
    match bench::run(&args.options()).await {
        Ok(report) if args.json => println!("{}", report.to_json()),
        Ok(report) => print!("{}", report.to_table()),
        Err(e) => {
            eprintln!("capstan-bench: {e:#}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// Progress goes to stderr through tracing (RUST_LOG overrides the `info` default), so
/// stdout carries only the table or the JSON.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_documented_command_line() {
        let args = Args::try_parse_from(["capstan-bench", "--kubeconfig", "k"]).unwrap();
        let o = args.options();
        assert_eq!(
            (o.ops, o.concurrency.clone(), o.startup_runs),
            (2000, vec![1, 32], 5)
        );
        assert!(!args.json && !o.http1 && o.namespace.is_none());
        assert_eq!(o.kinds, [bench::kinds::Kind::ConfigMap]);
    }

    #[test]
    fn parses_kinds_in_order_and_rejects_unknown_ones() {
        use bench::kinds::Kind;
        let parse = |kinds: &str| {
            Args::try_parse_from(["capstan-bench", "--kubeconfig", "k", "--kinds", kinds])
                .map(|a| a.options().kinds)
        };
        assert_eq!(
            parse("configmap,custom").unwrap(),
            [Kind::ConfigMap, Kind::Custom]
        );
        assert_eq!(parse("custom").unwrap(), [Kind::Custom]);
        assert!(parse("secret").is_err());
    }

    #[test]
    fn parses_concurrency_list_and_rejects_zero() {
        let args = Args::try_parse_from([
            "capstan-bench",
            "--kubeconfig",
            "k",
            "--concurrency",
            "1,8,64",
            "--ops",
            "50",
            "--namespace",
            "perf",
            "--json",
        ])
        .unwrap();
        let o = args.options();
        assert_eq!((o.ops, o.concurrency), (50, vec![1, 8, 64]));
        assert_eq!(o.namespace.as_deref(), Some("perf"));
        assert!(args.json);
        assert!(Args::try_parse_from(["capstan-bench", "--concurrency", "0"]).is_err());
        assert!(Args::try_parse_from(["capstan-bench", "--ops", "0"]).is_err());
    }
}
