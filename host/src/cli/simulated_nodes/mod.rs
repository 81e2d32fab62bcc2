//! `capstan nodes simulate`: Nodes without kubelets, as kwok makes them, for
//! tests and for clusters that have no machines behind them. Against any API
//! server reachable through a kubeconfig (Capstan or kube-apiserver), it
//! registers N Nodes that report Ready, renews their Leases in
//! `kube-node-lease` as kubelets do, and moves the Pods bound to them through
//! their lives: Running (containers started and ready, pod IPs from the
//! node's range), then, for a Pod whose `restartPolicy` is not `Always`,
//! Succeeded after `--pod-run-for`; a Pod being deleted is removed as a
//! kubelet removes it once its containers stopped (a delete with grace 0).
//!
//! It keeps no state a restart would lose: what a Pod needs next is read
//! from the Pod itself (its phase, `startTime`, `deletionTimestamp`).

mod api;
mod node;
mod pods;

use crate::cli::SimulateArgs;
use anyhow::Result;
use api::Api;
use node::SimNode;
use std::time::Duration;

/// How often a kubelet renews its Lease (kubelet: a quarter of 40 s).
const LEASE_RENEW_EVERY: Duration = Duration::from_secs(10);
/// How often the Nodes' status heartbeats are written.
const STATUS_EVERY: Duration = Duration::from_secs(60);
/// How often the Pods bound to the Nodes are looked at.
const PODS_EVERY: Duration = Duration::from_millis(500);
/// How long a failed registration waits before it is tried again.
const REGISTER_RETRY: Duration = Duration::from_secs(2);
/// The most Nodes one simulator registers (each has a /24 of pod IPs).
pub const MAX_NODES: u32 = 2816;

/// Runs until the process is stopped.
pub async fn run(args: SimulateArgs) -> Result<()> {
    anyhow::ensure!(
        (1..=MAX_NODES).contains(&args.count),
        "--count must be between 1 and {MAX_NODES}"
    );
    let kc = crate::kube_client::kubeconfig::load(&args.kubeconfig, args.context.as_deref())?;
    let api = Api::new(kc);
    let nodes: Vec<SimNode> = (0..args.count).map(|i| SimNode::new(&args, i)).collect();
    for node in &nodes {
        // A server not up yet (or refusing for a while) is waited for.
        while let Err(e) = node.register(&api).await {
            let e = e.context(format!("registering node {}", node.name));
            tracing::warn!(error = %format!("{e:#}"), "retrying in 2s");
            tokio::time::sleep(REGISTER_RETRY).await;
        }
    }
    tracing::info!(count = nodes.len(), "simulated nodes registered and Ready");
    let mut lease = tokio::time::interval(LEASE_RENEW_EVERY);
    let mut status = tokio::time::interval(STATUS_EVERY);
    let mut pods = tokio::time::interval(PODS_EVERY);
    loop {
        tokio::select! {
            _ = lease.tick() => for_each(&nodes, |n| n.renew_lease(&api)).await,
            _ = status.tick() => for_each(&nodes, |n| n.heartbeat(&api)).await,
            _ = pods.tick() => {
                if let Err(e) = pods::attend(&api, &nodes, args.pod_run_for).await {
                    tracing::warn!(error = %format!("{e:#}"), "simulated pods");
                }
            }
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
    }
}

/// Runs `step` for every node; a failure is logged and tried again next time.
async fn for_each<'a, F, Fut>(nodes: &'a [SimNode], step: F)
where
    F: Fn(&'a SimNode) -> Fut,
    Fut: std::future::Future<Output = Result<()>>,
{
    for node in nodes {
        if let Err(e) = step(node).await {
            tracing::warn!(node = %node.name, error = %format!("{e:#}"), "simulated node");
        }
    }
}
