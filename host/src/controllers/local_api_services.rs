//! The APIServices kube-apiserver registers for its own group-versions on
//! start (the aggregator's autoregister controller): `v1.`, `v1.apps`, ...,
//! with kube's group and version priorities, labelled as automanaged on
//! start and Available, as local APIServices always are. Safe to run on
//! every start and concurrently.

use crate::api::state::AppState;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
use crate::registry::WriteOptions;
use serde_json::{json, Value};

/// kube's groupPriorityMinimum and versionPriority of each built-in group-version.
/// The aggregator's own group (`apiregistration.k8s.io`) is not among them:
/// kube registers only the group-versions its delegate server lists.
const PRIORITIES: [(&str, &str, i64, i64); 20] = [
    ("", "v1", 18000, 1),
    ("apps", "v1", 17800, 15),
    ("events.k8s.io", "v1", 17750, 15),
    ("authentication.k8s.io", "v1", 17700, 15),
    ("authorization.k8s.io", "v1", 17600, 15),
    ("autoscaling", "v2", 17500, 30),
    ("autoscaling", "v1", 17500, 15),
    ("batch", "v1", 17400, 15),
    ("certificates.k8s.io", "v1", 17300, 15),
    ("networking.k8s.io", "v1", 17200, 15),
    ("policy", "v1", 17100, 15),
    ("rbac.authorization.k8s.io", "v1", 17000, 15),
    ("storage.k8s.io", "v1", 16800, 15),
    ("apiextensions.k8s.io", "v1", 16700, 15),
    ("admissionregistration.k8s.io", "v1", 16700, 15),
    ("scheduling.k8s.io", "v1", 16600, 15),
    ("coordination.k8s.io", "v1", 16500, 15),
    ("node.k8s.io", "v1", 16300, 15),
    ("discovery.k8s.io", "v1", 16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1", 16100, 21),
];

/// The APIService for a served built-in group-version, if kube registers one.
pub fn local_api_service(group: &str, version: &str) -> Option<Value> {
    let (_, _, group_priority, version_priority) = PRIORITIES
        .iter()
        .find(|(g, v, _, _)| *g == group && *v == version)?;
    Some(json!({
        "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": format!("{version}.{group}"),
                     "labels": {"kube-aggregator.kubernetes.io/automanaged": "onstart"}},
        "spec": {"group": group, "version": version,
                 "groupPriorityMinimum": group_priority, "versionPriority": version_priority},
    }))
}

fn available() -> Value {
    json!({"conditions": [{"type": "Available", "status": "True", "reason": "Local",
                            "message": "Local APIServices are always available",
                            "lastTransitionTime": crate::apimachinery::meta::now()}]})
}

/// Creates the APIService `obj` if missing, Available as a local one.
pub(crate) async fn ensure(state: &AppState, res: &ResourceInfo, obj: Value) -> ApiResult<()> {
    let name = crate::apimachinery::meta::name(&obj)
        .unwrap_or_default()
        .to_string();
    if state.registry.get(res, None, &name).await.is_ok() {
        return Ok(());
    }
    match state
        .registry
        .create(res, None, obj, super::bootstrap::as_apiserver(state))
        .await
    {
        Ok(_) => {}
        Err(e) if e.code == 409 => return Ok(()),
        Err(e) => return Err(e),
    }
    let change = |mut current: Value| {
        current["status"] = available();
        Ok(current)
    };
    state
        .registry
        .guaranteed_update(res, None, &name, WriteOptions::default(), &change)
        .await
        .map(|_| ())
}

/// The built-in APIService resource.
pub(crate) fn resource(state: &AppState) -> ApiResult<&ResourceInfo> {
    state
        .catalogue
        .builtin()
        .lookup("apiregistration.k8s.io", "v1", "apiservices")
        .ok_or_else(|| ApiError::internal("apiservices are not served"))
}

/// Registers the local APIServices that are missing.
pub async fn register(state: &AppState) -> ApiResult<()> {
    let res = resource(state)?;
    for (group, versions) in state.catalogue.builtin().groups() {
        for version in versions {
            if let Some(obj) = local_api_service(&group, &version) {
                ensure(state, res, obj).await?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_priorities_are_kubes() {
        let core = local_api_service("", "v1").unwrap();
        assert_eq!(core["metadata"]["name"], "v1.");
        assert_eq!(core["spec"]["groupPriorityMinimum"], 18000);
        let apps = local_api_service("apps", "v1").unwrap();
        assert_eq!(apps["metadata"]["name"], "v1.apps");
        assert_eq!(apps["spec"]["versionPriority"], 15);
        assert!(local_api_service("example.com", "v1").is_none());
        assert!(local_api_service("apiregistration.k8s.io", "v1").is_none());
        let hpa_v2 = local_api_service("autoscaling", "v2").unwrap();
        assert_eq!(hpa_v2["metadata"]["name"], "v2.autoscaling");
        assert_eq!(hpa_v2["spec"]["versionPriority"], 30);
        let flowcontrol = local_api_service("flowcontrol.apiserver.k8s.io", "v1").unwrap();
        assert_eq!(flowcontrol["spec"]["groupPriorityMinimum"], 16100);
    }
}
