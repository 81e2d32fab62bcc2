//! Command-line interface (flags named as kube-apiserver names them).

use clap::{Args, Parser, Subcommand};
use std::net::IpAddr;
use std::path::PathBuf;

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
    Serve(ServeArgs),
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
    /// Keep at least this many revisions of history before compacting.
    #[arg(long = "history-revisions", default_value_t = 10_000)]
    pub history_revisions: i64,
    /// How often old history is compacted, in seconds.
    #[arg(long = "compaction-interval", default_value_t = 300)]
    pub compaction_interval_secs: u64,
}
