//! The `capstan` binary.

use capstan::cli::{Cli, Command, NodesCommand, PluginCommand};
use clap::Parser;

/// Each runtime thread's stack (reserved, committed only as it is used).
const WORKER_STACK: usize = 8 << 20;

fn main() -> anyhow::Result<()> {
    limit_malloc_arenas();
    let cli = Cli::parse();
    match &cli.command {
        Command::Serve(args) => {
            capstan::telemetry::logging::init(args.verbosity, &args.vmodule, &args.logging_format)?
        }
        _ => capstan::telemetry::logging::init(0, &[], "text")?,
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // CPU-heavy request steps run on the worker's own stack (block_in_place)
        // below the HTTP stack's frames: a body nested as deep as the parsers
        // allow (YAML 64, JSON 128 levels) needs more than tokio's 2 MiB.
        .thread_stack_size(WORKER_STACK)
        .build()?;
    match cli.command {
        Command::Serve(args) => {
            let served = runtime.block_on(capstan::cli::serve::run(*args));
            exit_without_joining(served)
        }
        Command::Kubeconfig(args) => {
            print!("{}", capstan::cli::kubeconfig::for_user(&args)?);
            Ok(())
        }
        Command::Plugin(PluginCommand::Run(args)) => {
            let out = runtime.block_on(capstan::cli::plugin_run::run(&args))?;
            eprintln!("{}", out.declared);
            println!("{}", out.answer);
            Ok(())
        }
        Command::Plugin(PluginCommand::New(args)) => {
            println!("{}", capstan::cli::plugin_new::run(&args)?);
            Ok(())
        }
        Command::Plugin(PluginCommand::Compile(args)) => {
            use capstan::wasm::compile_process::{serve_child, Tier};
            let tier = match args.optimized {
                true => Tier::Optimized,
                false => Tier::Baseline,
            };
            serve_child(&args.cache_dir, tier, &mut std::io::stdin().lock())
        }
        Command::Plugin(PluginCommand::Componentize(args)) => {
            eprintln!("{}", capstan::cli::plugin_componentize::run(&args)?);
            Ok(())
        }
        Command::Nodes(NodesCommand::Simulate(args)) => {
            runtime.block_on(capstan::cli::simulated_nodes::run(args))
        }
        Command::Policy(command) => {
            runtime.block_on(capstan::cli::policy::run(command, &mut std::io::stdout()))
        }
    }
}

/// The server has drained its requests and every acknowledged write is in
/// the store; its background loops (controllers, watches of the store) are
/// not joined, as kube-apiserver's goroutines are not. Dropping the runtime
/// under them cancelled their store tasks first, and a loop that then slept
/// before retrying panicked on the stopped timer.
fn exit_without_joining(served: anyhow::Result<()>) -> ! {
    let code = match served {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("Error: {e:?}");
            1
        }
    };
    std::process::exit(code)
}

/// glibc gives threads that allocate arenas of their own (up to 8 per core)
/// and memory freed in one arena is not reused by threads of another: with
/// the server's threads (runtime workers, blocking pool, plugin optimizer,
/// store writer) that kept 20 MiB more resident a few seconds after the
/// start (measured: 115 → 95 MiB). One arena per core, unless
/// `MALLOC_ARENA_MAX` says otherwise.
fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let arenas = libc::c_int::try_from(cores).unwrap_or(libc::c_int::MAX);
        // SAFETY: mallopt only tunes the allocator; called before any other
        // thread exists.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, arenas);
        }
    }
}
