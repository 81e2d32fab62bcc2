//! Leader election among replicas, as kube-controller-manager does it: the
//! built-in controllers run in one replica at a time, the holder of the
//! coordination.k8s.io/v1 Lease `kube-system/capstan-controllers`.
//!
//! Every retry period each replica reads the Lease: its holder renews it; a
//! follower takes it over once the holder has not renewed it for a whole
//! lease duration, timed by the follower's own clock from when it last saw
//! the Lease change (so clock skew between machines does not matter); a
//! holder that could not renew within the renew deadline stops its
//! controllers, before a follower may take over. Every write is guarded by
//! the Lease's resourceVersion. A replica shutting down releases the Lease,
//! so another takes over at once.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::api::state::AppState;
use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
use crate::registry::WriteOptions;

pub const LEASE_NAMESPACE: &str = "kube-system";
pub const LEASE_NAME: &str = "capstan-controllers";

/// Timing of the election (kube-controller-manager's flags and defaults).
#[derive(Clone, Debug)]
pub struct Timing {
    /// How long a follower waits after the last renewal it saw.
    pub lease_duration: Duration,
    /// How long a holder keeps leading without a successful renewal.
    pub renew_deadline: Duration,
    /// Pause between attempts to acquire or renew.
    pub retry_period: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

/// This replica's part in the election.
pub struct Election {
    state: Arc<AppState>,
    identity: String,
    timing: Timing,
    leading: watch::Sender<bool>,
}

/// A Lease as last seen, and when this replica saw it change: whether its
/// holder still holds it is timed by this replica's own clock.
#[derive(Default)]
pub(super) struct Observed {
    resource_version: String,
    at: Option<Instant>,
}

impl Observed {
    /// Notes the Lease read now.
    pub(super) fn see(&mut self, lease: &Value) {
        let rv = meta::resource_version(lease).unwrap_or_default();
        if rv != self.resource_version || self.at.is_none() {
            self.resource_version = rv.to_string();
            self.at = Some(Instant::now());
        }
    }

    /// Whether the holder has not renewed for a lease duration (its own
    /// `leaseDurationSeconds`, else `default`), as seen here.
    pub(super) fn expired(&self, spec: &Value, default: Duration) -> bool {
        let duration = spec["leaseDurationSeconds"]
            .as_u64()
            .map(Duration::from_secs)
            .unwrap_or(default);
        self.at.is_some_and(|at| at.elapsed() > duration)
    }
}

impl Election {
    /// Starts campaigning for the Lease as `identity`; `start` spawns the
    /// controllers each time this replica becomes the leader (they are
    /// aborted when it stops leading).
    pub fn spawn(
        state: Arc<AppState>,
        identity: String,
        timing: Timing,
        start: fn(Arc<AppState>) -> Vec<JoinHandle<()>>,
    ) -> Arc<Election> {
        let election = Arc::new(Election {
            state,
            identity,
            timing,
            leading: watch::Sender::new(false),
        });
        tokio::spawn(election.clone().campaign());
        tokio::spawn(supervise(
            election.leading.subscribe(),
            election.state.clone(),
            start,
        ));
        election
    }

    pub fn identity(&self) -> &str {
        &self.identity
    }

    pub fn is_leader(&self) -> bool {
        *self.leading.borrow()
    }

    async fn campaign(self: Arc<Self>) {
        let mut observed = Observed::default();
        let mut renewed: Option<Instant> = None;
        loop {
            match self.try_acquire_or_renew(&mut observed).await {
                Ok(true) => renewed = Some(Instant::now()),
                Ok(false) => renewed = None,
                Err(e) => {
                    tracing::warn!(error = %e, "leader election: could not read or renew the lease");
                    if renewed.is_some_and(|at| at.elapsed() > self.timing.renew_deadline) {
                        renewed = None;
                    }
                }
            }
            self.set_leading(renewed.is_some());
            tokio::time::sleep(self.timing.retry_period).await;
        }
    }

    fn set_leading(&self, leading: bool) {
        let changed = self
            .leading
            .send_if_modified(|current| std::mem::replace(current, leading) != leading);
        if changed && leading {
            tracing::info!(identity = %self.identity, lease = LEASE_NAME, "became leader; running the controllers");
        } else if changed {
            tracing::warn!(identity = %self.identity, lease = LEASE_NAME, "stopped leading; controllers stopped");
        }
    }

    /// True when this replica holds the Lease after the attempt.
    async fn try_acquire_or_renew(&self, observed: &mut Observed) -> ApiResult<bool> {
        let res = leases(&self.state)?;
        let current = match self
            .state
            .registry
            .get(res, Some(LEASE_NAMESPACE), LEASE_NAME)
            .await
        {
            Ok(lease) => lease,
            Err(e) if e.code == 404 => return self.create(res).await,
            Err(e) => return Err(e),
        };
        observed.see(&current);
        let rv = meta::resource_version(&current)
            .unwrap_or_default()
            .to_string();
        let spec = current.get("spec").cloned().unwrap_or(json!({}));
        let holder = spec["holderIdentity"].as_str().unwrap_or_default();
        let expired = observed.expired(&spec, self.timing.lease_duration);
        if holder != self.identity && !holder.is_empty() && !expired {
            return Ok(false);
        }
        let renewed = self.renewed_spec(&spec, holder == self.identity);
        self.write(res, rv, renewed).await
    }

    fn renewed_spec(&self, spec: &Value, holding: bool) -> Value {
        let now = micro_time();
        let transitions = spec["leaseTransitions"].as_i64().unwrap_or(0);
        json!({
            "holderIdentity": self.identity,
            "leaseDurationSeconds": self.timing.lease_duration.as_secs(),
            "acquireTime": if holding { spec["acquireTime"].clone() } else { json!(now) },
            "renewTime": now,
            "leaseTransitions": if holding { transitions } else { transitions + 1 },
        })
    }

    async fn create(&self, res: &ResourceInfo) -> ApiResult<bool> {
        let now = micro_time();
        let lease = json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": LEASE_NAME, "namespace": LEASE_NAMESPACE},
            "spec": {"holderIdentity": self.identity,
                     "leaseDurationSeconds": self.timing.lease_duration.as_secs(),
                     "acquireTime": now, "renewTime": now, "leaseTransitions": 0},
        });
        let created = self
            .state
            .registry
            .create(res, Some(LEASE_NAMESPACE), lease, WriteOptions::default())
            .await;
        match created {
            Ok(_) => Ok(true),
            Err(e) if e.code == 409 => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Writes `spec` if the Lease is still at `rv`; false if it moved.
    async fn write(&self, res: &ResourceInfo, rv: String, spec: Value) -> ApiResult<bool> {
        let change = |mut lease: Value| {
            lease["metadata"]["resourceVersion"] = json!(rv);
            lease["spec"] = spec.clone();
            Ok(lease)
        };
        let written = self
            .state
            .registry
            .guaranteed_update(
                res,
                Some(LEASE_NAMESPACE),
                LEASE_NAME,
                WriteOptions::default(),
                &change,
            )
            .await;
        match written {
            Ok(_) => Ok(true),
            Err(e) if e.code == 409 || e.code == 404 => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Gives the Lease up (on shutdown) so another replica takes over at once.
    pub async fn release(&self) {
        if !self.is_leader() {
            return;
        }
        self.set_leading(false);
        let Ok(res) = leases(&self.state) else { return };
        let identity = self.identity.clone();
        let release = |mut lease: Value| {
            if lease["spec"]["holderIdentity"] != json!(identity) {
                return Err(ApiError::conflict(
                    "coordination.k8s.io",
                    "leases",
                    LEASE_NAME,
                    "the lease is held by another replica",
                ));
            }
            lease["spec"]["holderIdentity"] = json!("");
            lease["spec"]["leaseDurationSeconds"] = json!(1);
            Ok(lease)
        };
        let registry = &self.state.registry;
        match registry
            .guaranteed_update(
                res,
                Some(LEASE_NAMESPACE),
                LEASE_NAME,
                WriteOptions::default(),
                &release,
            )
            .await
        {
            Ok(_) => tracing::info!(identity = %self.identity, "released the controllers' lease"),
            Err(e) => tracing::debug!(error = %e, "lease not released"),
        }
    }
}

/// Runs what `start` spawns while `run` is true; its tasks are aborted
/// when `run` turns false, and when this supervisor itself is aborted.
pub(super) async fn supervise(
    mut run: watch::Receiver<bool>,
    state: Arc<AppState>,
    start: impl Fn(Arc<AppState>) -> Vec<JoinHandle<()>>,
) {
    let mut running = AbortOnDrop(Vec::new());
    loop {
        let on = *run.borrow_and_update();
        if on && running.0.is_empty() {
            running.0 = start(state.clone());
        } else if !on {
            running.0.drain(..).for_each(|task| task.abort());
        }
        if run.changed().await.is_err() {
            return;
        }
    }
}

/// Tasks that end with their owner (a JoinHandle dropped only detaches).
struct AbortOnDrop(Vec<JoinHandle<()>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.iter().for_each(JoinHandle::abort);
    }
}

pub(super) fn leases(state: &AppState) -> ApiResult<&ResourceInfo> {
    state
        .catalogue
        .builtin()
        .lookup("coordination.k8s.io", "v1", "leases")
        .ok_or_else(|| ApiError::internal("leases are not served"))
}

/// metav1.MicroTime: RFC 3339 with microseconds, UTC.
fn micro_time() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}
