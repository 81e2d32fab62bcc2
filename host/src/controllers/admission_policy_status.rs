//! kube-controller-manager's `validatingadmissionpolicy-status` controller:
//! every ValidatingAdmissionPolicy whose generation is newer than its
//! `status.observedGeneration` is type checked (`admission::cel_policy::
//! type_check`) against the schemas it matches, built-in or custom, and
//! its status applied (forced, as that manager): `observedGeneration` and
//! `typeChecking.expressionWarnings`. As in kube, a policy is checked again
//! only when its generation changes.

use std::sync::Arc;

use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio::task::JoinHandle;

use super::apply::{apply, Controller};
use crate::admission::cel_policy::type_check;
use crate::api::state::AppState;
use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::registry::{decode, keys};
use crate::storage::EventKind;

/// The field manager kube's controller applies the status as.
const MANAGER: &str = "validatingadmissionpolicy-status";

pub fn spawn(state: Arc<AppState>) -> JoinHandle<()> {
    super::restarting(
        "admission policy status controller",
        state,
        |s| async move { run(&s).await },
    )
}

async fn run(state: &AppState) -> ApiResult<()> {
    let res = state
        .catalogue
        .builtin()
        .lookup(
            "admissionregistration.k8s.io",
            "v1",
            "validatingadmissionpolicies",
        )
        .cloned()
        .ok_or_else(|| ApiError::internal("validatingadmissionpolicies are not served"))?;
    let prefix = keys::prefix(&res, None);
    let (kvs, mut events) = super::list_and_watch(state, &prefix).await?;
    for kv in &kvs {
        reconcile(state, &res, &decode(kv)?).await?;
    }
    while let Some(ev) = events.next().await {
        let ev = ev.map_err(|e| ApiError::internal(e.to_string()))?;
        if ev.kind == EventKind::Put {
            reconcile(state, &res, &decode(&ev.kv)?).await?;
        }
    }
    Ok(())
}

fn generation(policy: &Value, pointer: &str) -> i64 {
    policy.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

async fn reconcile(
    state: &AppState,
    res: &crate::catalogue::ResourceInfo,
    policy: &Value,
) -> ApiResult<()> {
    let current = generation(policy, "/metadata/generation");
    if current <= generation(policy, "/status/observedGeneration") {
        return Ok(());
    }
    let Some(name) = meta::name(policy) else {
        return Ok(());
    };
    let catalogue = state.catalogue.get();
    let warnings = crate::cpu::heavy(|| type_check::warnings(policy, &catalogue));
    let mut type_checking = json!({});
    if !warnings.is_empty() {
        type_checking["expressionWarnings"] = Value::Array(warnings);
    }
    let configuration = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "status": {"observedGeneration": current, "typeChecking": type_checking},
    });
    let by = Controller {
        manager: MANAGER,
        subresource: "status",
    };
    match apply(state, res, None, &configuration, by).await {
        Err(e) if e.code == 404 => Ok(()), // deleted meanwhile
        other => other.map(|_| ()),
    }
}
