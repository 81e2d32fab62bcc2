//! The `capstan` binary.

use capstan::cli::{Cli, Command, NodesCommand, PluginCommand};
use clap::Parser;

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "capstan=info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.command {
        Command::Serve(args) => runtime.block_on(capstan::serve::run(*args)),
        Command::Kubeconfig(args) => {
            print!("{}", capstan::kubeconfig::for_user(&args)?);
            Ok(())
        }
        Command::Plugin(PluginCommand::Run(args)) => {
            let out = runtime.block_on(capstan::plugin_run::run(&args))?;
            eprintln!("{}", out.declared);
            println!("{}", out.answer);
            Ok(())
        }
        Command::Plugin(PluginCommand::New(args)) => {
            println!("{}", capstan::plugin_new::run(&args)?);
            Ok(())
        }
        Command::Plugin(PluginCommand::Componentize(args)) => {
            eprintln!("{}", capstan::plugin_componentize::run(&args)?);
            Ok(())
        }
        Command::Nodes(NodesCommand::Simulate(args)) => {
            runtime.block_on(capstan::simulated_nodes::run(args))
        }
        Command::Policy(command) => {
            runtime.block_on(capstan::policy_cli::run(command, &mut std::io::stdout()))
        }
    }
}
