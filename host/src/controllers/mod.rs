//! Small built-in controllers that a cluster needs for the API to behave as
//! users expect without a kube-controller-manager.

pub mod bootstrap;
pub mod crd_names;
pub mod csr_signer;
pub mod garbage_collector;
pub mod leader;
pub mod local_api_services;
pub mod namespace;
pub mod rbac;
pub mod resource_quota;
pub mod root_ca;
pub mod service_account;

use crate::state::AppState;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// Starts the controllers that keep running (in the leader only, when
/// replicas elect one); returns their tasks.
pub fn spawn_all(state: Arc<AppState>) -> Vec<JoinHandle<()>> {
    vec![
        namespace::spawn_sweeper(state.clone(), Duration::from_secs(2)),
        service_account::spawn(state.clone()),
        root_ca::spawn(state.clone()),
        csr_signer::spawn(state.clone()),
        crd_names::spawn(state.clone()),
        rbac::spawn_aggregation(state.clone()),
        resource_quota::spawn(state.clone()),
        garbage_collector::spawn(state),
    ]
}
