//! Small built-in controllers that a cluster needs for the API to behave as
//! users expect without a kube-controller-manager.

pub mod admission_policy_status;
pub mod apply;
pub mod bootstrap;
pub mod crd_api_services;
pub mod crd_cleanup;
pub mod crd_names;
pub mod csr_signer;
pub mod defer_to_kcm;
pub mod flowcontrol;
pub mod garbage_collector;
pub mod leader;
pub mod local_api_services;
pub mod namespace;
pub mod policy_audit;
pub mod rbac;
pub mod resource_quota;
pub mod root_ca;
pub mod service_account;
pub mod storage_protection;

use crate::api::state::AppState;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::registry::WriteOptions;
use crate::storage::{KeyValue, RangeRequest, WatchStream};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// The manager kube-controller-manager's controllers record their writes
/// under (their client's User-Agent).
pub const CONTROLLER_MANAGER: &str = "kube-controller-manager";

/// A controller's write, recorded in managedFields as the kube component
/// doing the same write records it: an Update entry of `manager` on
/// `subresource` ("" for the object itself).
pub fn written_by<'a>(
    state: &'a AppState,
    manager: &'a str,
    subresource: &'a str,
) -> WriteOptions<'a> {
    WriteOptions {
        tracking: Some(crate::patch::managed_fields::Tracking {
            manager,
            subresource,
            schemas: state.catalogue.builtin().schemas(),
        }),
        ..WriteOptions::default()
    }
}

/// A write of the object itself as kube-controller-manager's controllers
/// record theirs.
pub fn as_controller_manager(state: &AppState) -> WriteOptions<'_> {
    written_by(state, CONTROLLER_MANAGER, "")
}

/// Starts the controllers that keep running (in the leader only, when
/// replicas elect one); returns their tasks. Those kube-apiserver runs
/// itself always run; those doing kube-controller-manager's work run as
/// `--controllers` selects them, and only while no kube-controller-manager
/// leads (`defer_to_kcm`).
pub fn spawn_all(state: Arc<AppState>) -> Vec<JoinHandle<()>> {
    let mut tasks = vec![
        crd_names::spawn(state.clone()),
        crate::controllers::crd_cleanup::spawn(state.clone()),
        crate::controllers::crd_api_services::spawn(state.clone()),
        flowcontrol::dangling::spawn(state.clone()),
        crate::controllers::policy_audit::spawn(state.clone()),
    ];
    // Quota usage is also kube-apiserver's: its ResourceQuota admission
    // charges every create, which kube-controller-manager's quota controller
    // does not count. Capstan's recount does both, so it keeps running
    // beside a kube-controller-manager (both write the same usage).
    if state.controllers.is_enabled("resourcequota-controller") {
        tasks.push(resource_quota::spawn(state.clone()));
    }
    tasks.push(defer_to_kcm::spawn_supervisor(state, spawn_selected));
    tasks
}

/// kube-controller-manager's work, as `--controllers` selects it.
fn spawn_selected(state: Arc<AppState>) -> Vec<JoinHandle<()>> {
    let on = |name: &str| state.controllers.is_enabled(name);
    let protect = storage_protection::Protect {
        claims: on("persistentvolumeclaim-protection-controller"),
        volumes: on("persistentvolume-protection-controller"),
    };
    let mut tasks = Vec::new();
    let mut start = |name: &str, spawn: fn(Arc<AppState>) -> JoinHandle<()>| {
        if on(name) {
            tasks.push(spawn(state.clone()));
        }
    };
    start("namespace-controller", |s| {
        namespace::spawn_sweeper(s, Duration::from_secs(2))
    });
    start("serviceaccount-controller", service_account::spawn);
    start("root-ca-certificate-publisher-controller", root_ca::spawn);
    start(
        "certificatesigningrequest-signing-controller",
        csr_signer::spawn,
    );
    start(
        "clusterrole-aggregation-controller",
        rbac::spawn_aggregation,
    );
    start("garbage-collector-controller", garbage_collector::spawn);
    start(
        "validatingadmissionpolicy-status-controller",
        admission_policy_status::spawn,
    );
    if protect.claims || protect.volumes {
        tasks.push(storage_protection::spawn(state.clone(), protect));
    }
    tasks
}

/// Runs `run` until the server stops, again a second after each error
/// (logged as `what` restarting).
pub(crate) fn restarting<F, Fut>(what: &'static str, state: Arc<AppState>, run: F) -> JoinHandle<()>
where
    F: Fn(Arc<AppState>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ApiResult<()>> + Send,
{
    tokio::spawn(async move {
        loop {
            if let Err(e) = run(state.clone()).await {
                tracing::warn!(error = %e, "{what} restarting");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    })
}

/// How a controller starts: every object under `prefix` now, and a watch of
/// what changes after that list.
pub(crate) async fn list_and_watch(
    state: &AppState,
    prefix: &str,
) -> ApiResult<(Vec<KeyValue>, WatchStream)> {
    let internal = |e: crate::storage::StorageError| ApiError::internal(e.to_string());
    let page = state
        .storage
        .range(RangeRequest::prefix(prefix))
        .await
        .map_err(internal)?;
    let events = state
        .storage
        .watch(prefix, page.revision)
        .await
        .map_err(internal)?;
    Ok((page.kvs, events))
}
