//! RBAC as a fresh kube-apiserver has it: the bootstrap ClusterRoles,
//! ClusterRoleBindings, Roles and RoleBindings created at first start
//! (missing ones only, so restarts and concurrent replicas are safe), and
//! kube-controller-manager's ClusterRole aggregation, which keeps the rules
//! of roles with an aggregationRule (admin, edit, view, …) the union of the
//! roles their selectors pick.

mod aggregation;

use crate::catalogue::ResourceInfo;
use crate::registry::{decode, keys, meta, WriteOptions};
use crate::state::AppState;
use crate::status::{ApiError, ApiResult};
use futures_util::StreamExt;
use serde_json::Value;
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

/// Creates the bootstrap objects that do not exist yet, several at a time
/// (the store commits writes that arrive together with one sync).
pub async fn bootstrap(state: &AppState) -> ApiResult<()> {
    let mut objects: Vec<Value> = serde_json::from_str(BOOTSTRAP_POLICY)
        .map_err(|e| ApiError::internal(format!("bootstrap policy: {e}")))?;
    objects.extend(crate::policy_reports::rbac::cluster_roles());
    let outcomes: Vec<ApiResult<bool>> = futures_util::stream::iter(objects)
        .map(|obj| create_missing(state, obj))
        .buffer_unordered(BOOTSTRAP_WRITERS)
        .collect()
        .await;
    let mut created = 0;
    for outcome in outcomes {
        created += usize::from(outcome?);
    }
    if created > 0 {
        tracing::info!(created, "created the bootstrap RBAC policy");
    }
    Ok(())
}

/// Bootstrap objects written at once.
const BOOTSTRAP_WRITERS: usize = 16;

/// Creates `obj` unless it exists: whether it was created.
async fn create_missing(state: &AppState, obj: Value) -> ApiResult<bool> {
    let kind = obj["kind"].as_str().unwrap_or_default().to_string();
    let res = resource(state, &kind)?;
    let ns = meta::meta_str(&obj, "namespace").map(String::from);
    match state
        .registry
        .create(
            res,
            ns.as_deref(),
            obj,
            super::bootstrap::as_apiserver(state),
        )
        .await
    {
        Ok(_) => Ok(true),
        Err(e) if e.code == 409 => Ok(false),
        Err(e) => Err(e),
    }
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

/// Writes the rules of every aggregating ClusterRole whose rules are stale.
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
        let name = meta::name(role).unwrap_or_default().to_string();
        let rules = updated["rules"].clone();
        state
            .registry
            .guaranteed_update(
                res,
                None,
                &name,
                WriteOptions::default(),
                &|mut current: Value| {
                    current["rules"] = rules.clone();
                    Ok(current)
                },
            )
            .await?;
        tracing::debug!(clusterrole = %name, "aggregated rules");
    }
    Ok(())
}
