//! Capstan's controllers that do kube-controller-manager's work stand down
//! while a real kube-controller-manager leads, so the two never fight over
//! the same objects (both deleting a namespace's contents, both writing a
//! quota's status). kube-controller-manager, elected as it is by default,
//! holds the Lease `kube-system/kube-controller-manager` and renews it every
//! two seconds; while that Lease has a holder that renewed it within its
//! lease duration (timed by this replica's clock from when it last saw the
//! Lease change), `AppState::no_kcm_leads` is false: the controllers are
//! stopped, and the namespace DELETE handler only marks the namespace, as
//! kube-apiserver's does. They start again once the Lease expires or is
//! released. (The ResourceQuota recount is not deferred: it also does
//! kube-apiserver's share, the usage its quota admission charges.) Every replica observes the Lease; the controllers themselves
//! run in the replica that leads Capstan's own election.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::task::JoinHandle;

use super::leader::{leases, supervise, Observed, LEASE_NAMESPACE};
use crate::api::state::AppState;

/// The Lease kube-controller-manager's leader election holds.
pub const KCM_LEASE: &str = "kube-controller-manager";
/// How often the Lease is read.
const CHECK_EVERY: Duration = Duration::from_secs(1);
/// kube-controller-manager's default `--leader-elect-lease-duration`.
const DEFAULT_LEASE_DURATION: Duration = Duration::from_secs(15);

/// Keeps `state.no_kcm_leads` current; runs until the server stops.
pub fn spawn_observer(state: Arc<AppState>) -> JoinHandle<()> {
    tokio::spawn(observe(state))
}

/// Runs what `start` spawns while no kube-controller-manager leads.
pub fn spawn_supervisor(
    state: Arc<AppState>,
    start: impl Fn(Arc<AppState>) -> Vec<JoinHandle<()>> + Send + 'static,
) -> JoinHandle<()> {
    let run = state.no_kcm_leads.subscribe();
    tokio::spawn(supervise(run, state, start))
}

async fn observe(state: Arc<AppState>) {
    let mut observed = Observed::default();
    let mut leading = false;
    loop {
        // When the Lease cannot be read, the last answer holds rather than flapping.
        leading = kcm_leads(&state, &mut observed).await.unwrap_or(leading);
        let changed = state
            .no_kcm_leads
            .send_if_modified(|free| std::mem::replace(free, !leading) == leading);
        if changed && leading {
            tracing::info!(
                lease = KCM_LEASE,
                "kube-controller-manager leads: its work is left to it"
            );
        } else if changed {
            tracing::info!(
                lease = KCM_LEASE,
                "no kube-controller-manager leads: Capstan's controllers run"
            );
        }
        tokio::time::sleep(CHECK_EVERY).await;
    }
}

/// Whether a kube-controller-manager leads now; None when unknown.
async fn kcm_leads(state: &AppState, observed: &mut Observed) -> Option<bool> {
    let res = leases(state).ok()?;
    let lease = match state
        .registry
        .get(res, Some(LEASE_NAMESPACE), KCM_LEASE)
        .await
    {
        Ok(lease) => lease,
        Err(e) if e.code == 404 => return Some(false),
        Err(e) => {
            tracing::debug!(error = %e, "could not read kube-controller-manager's lease");
            return None;
        }
    };
    observed.see(&lease);
    let spec = lease.get("spec").cloned().unwrap_or(Value::Null);
    let held = spec["holderIdentity"]
        .as_str()
        .is_some_and(|h| !h.is_empty());
    Some(held && !observed.expired(&spec, DEFAULT_LEASE_DURATION))
}
