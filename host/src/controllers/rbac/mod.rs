//! RBAC as a fresh kube-apiserver has it: the bootstrap ClusterRoles,
//! ClusterRoleBindings, Roles and RoleBindings created at first start
//! (missing ones only, so restarts and concurrent replicas are safe) and
//! reconciled at every start with what an older data directory holds, and
//! kube-controller-manager's ClusterRole aggregation, which keeps the rules
//! of roles with an aggregationRule (admin, edit, view, …) the union of the
//! roles their selectors pick.

mod aggregation;
mod reconcile;

use super::apply::{apply, Controller};
use crate::api::state::AppState;
use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
use crate::registry::{decode, keys};
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// kube-apiserver 1.32's bootstrap policy, written from its recorded answers by
/// `tools/bootstrap-rbac-from-golden.py`.
const BOOTSTRAP_POLICY: &str = include_str!("bootstrap-policy.json");

const GROUP: &str = "rbac.authorization.k8s.io";

fn resource<'a>(state: &'a AppState, kind: &str) -> ApiResult<&'a ResourceInfo> {
    let plural = format!("{}s", kind.to_ascii_lowercase());
    state
        .catalogue
        .builtin()
        .lookup(GROUP, "v1", &plural)
        .ok_or_else(|| ApiError::internal(format!("{plural} are not served")))
}

/// Creates the bootstrap objects that do not exist yet.
pub async fn bootstrap(state: &AppState) -> ApiResult<()> {
    let mut objects: Vec<Value> = serde_json::from_str(BOOTSTRAP_POLICY)
        .map_err(|e| ApiError::internal(format!("bootstrap policy: {e}")))?;
    objects.extend(crate::policy::reports::rbac::cluster_roles());
    let what = "the bootstrap RBAC policy";
    let manager = crate::patch::managed_fields::APISERVER;
    super::bootstrap::create_missing_objects(state, objects.clone(), what, manager).await?;
    for expected in &objects {
        reconcile_one(state, expected).await?;
    }
    Ok(())
}

/// Brings one stored bootstrap object up to the policy (see `reconcile`).
async fn reconcile_one(state: &AppState, expected: &Value) -> ApiResult<()> {
    let kind = expected["kind"].as_str().unwrap_or_default();
    let res = resource(state, kind)?;
    let name = meta::name(expected).unwrap_or_default();
    let ns = expected["metadata"]["namespace"].as_str();
    let decide = |stored: &Value| match kind {
        "ClusterRole" | "Role" => reconcile::role(stored, expected),
        _ => reconcile::binding(stored, expected),
    };
    let stored = match state.registry.get(res, ns, name).await {
        Ok(stored) => stored,
        Err(e) if e.code == 404 => return Ok(()),
        Err(e) => return Err(e),
    };
    let as_apiserver = || super::bootstrap::as_apiserver(state);
    match decide(&stored) {
        reconcile::Outcome::Unchanged => {}
        reconcile::Outcome::Protected => {
            tracing::warn!(
                kind,
                name,
                "skipped reconcile-protected bootstrap RBAC object"
            );
        }
        reconcile::Outcome::Update(_) => {
            let change = |current: Value| match decide(&current) {
                reconcile::Outcome::Update(updated) => Ok(updated),
                _ => Ok(current),
            };
            state
                .registry
                .guaranteed_update(res, ns, name, as_apiserver(), &change)
                .await?;
            tracing::info!(kind, name, "reconciled bootstrap RBAC object");
        }
        reconcile::Outcome::Recreate => {
            let none = Value::Null;
            match state
                .registry
                .delete(res, ns, name, &none, as_apiserver())
                .await
            {
                Ok(_) => {}
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
            let manager = crate::patch::managed_fields::APISERVER;
            super::bootstrap::create_missing_objects(state, vec![expected.clone()], kind, manager)
                .await?;
            tracing::info!(
                kind,
                name,
                "recreated bootstrap RBAC binding for its new roleRef"
            );
        }
    }
    Ok(())
}

/// Runs the aggregation controller until the server stops; restarts on errors.
pub fn spawn_aggregation(state: Arc<AppState>) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            if let Err(e) = aggregate(&state).await {
                tracing::warn!(error = %e, "clusterrole aggregation restarting");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    })
}

/// Reconciles every ClusterRole now and after each change of any of them.
async fn aggregate(state: &AppState) -> ApiResult<()> {
    let res = resource(state, "ClusterRole")?;
    let prefix = keys::prefix(res, None);
    let internal = |e: crate::storage::StorageError| ApiError::internal(e.to_string());
    let (_, mut events) = crate::controllers::list_and_watch(state, &prefix).await?;
    reconcile(state, res).await?;
    while let Some(ev) = events.next().await {
        ev.map_err(internal)?;
        reconcile(state, res).await?;
    }
    Ok(())
}

/// The manager kube's aggregation controller applies the rules as.
const AGGREGATION_MANAGER: &str = "clusterrole-aggregation-controller";

/// Applies the rules of every aggregating ClusterRole whose rules are stale,
/// as kube's controller does (forced, owning only `rules`).
async fn reconcile(state: &AppState, res: &ResourceInfo) -> ApiResult<()> {
    let roles = state
        .registry
        .read_all(res, &keys::prefix(res, None))
        .await?
        .iter()
        .map(decode)
        .collect::<ApiResult<Vec<Value>>>()?;
    for role in &roles {
        let Some(updated) = aggregation::needs_update(role, &roles) else {
            continue;
        };
        let name = meta::name(role).unwrap_or_default();
        let configuration = json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": name}, "rules": updated["rules"],
        });
        let by = Controller {
            manager: AGGREGATION_MANAGER,
            subresource: "",
        };
        match apply(state, res, None, &configuration, by).await {
            Err(e) if e.code == 404 => continue,
            other => other?,
        };
        tracing::debug!(clusterrole = %name, "aggregated rules");
    }
    Ok(())
}
