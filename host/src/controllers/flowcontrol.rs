//! API priority and fairness' bootstrap configuration, as kube-apiserver's
//! config producer writes it at start: the mandatory and suggested
//! PriorityLevelConfigurations and FlowSchemas (`exempt`, `catch-all`,
//! `system`, `workload-low`, …), each marked with the
//! `apf.kubernetes.io/autoupdate-spec` annotation. Created when missing
//! (restarts and concurrent replicas are safe); a user's change to one is
//! kept. Only the objects: Capstan does not enforce priority and fairness.

use crate::catalogue::ResourceInfo;
use crate::registry::{meta, WriteOptions};
use crate::state::AppState;
use crate::status::{ApiError, ApiResult};
use futures_util::StreamExt;
use serde_json::Value;

/// The objects of a fresh kube-apiserver 1.32 (see `bootstrap-configuration.json`'s
/// provenance in ARCHITECTURE.md).
const CONFIGURATION: &str = include_str!("flowcontrol/bootstrap-configuration.json");

const GROUP: &str = "flowcontrol.apiserver.k8s.io";

/// Objects written at once.
const WRITERS: usize = 8;

fn resource<'a>(state: &'a AppState, kind: &str) -> ApiResult<&'a ResourceInfo> {
    let plural = format!("{}s", kind.to_ascii_lowercase());
    state
        .catalogue
        .builtin()
        .lookup(GROUP, "v1", &plural)
        .ok_or_else(|| ApiError::internal(format!("{plural} are not served")))
}

/// The bootstrap objects, priority levels first (the schemas name them).
pub fn objects() -> ApiResult<Vec<Value>> {
    serde_json::from_str(CONFIGURATION)
        .map_err(|e| ApiError::internal(format!("flowcontrol bootstrap configuration: {e}")))
}

/// Creates the bootstrap objects that do not exist yet.
pub async fn bootstrap(state: &AppState) -> ApiResult<()> {
    let outcomes: Vec<ApiResult<bool>> = futures_util::stream::iter(objects()?)
        .map(|obj| create_missing(state, obj))
        .buffer_unordered(WRITERS)
        .collect()
        .await;
    let mut created = 0;
    for outcome in outcomes {
        created += usize::from(outcome?);
    }
    if created > 0 {
        tracing::info!(created, "created the flowcontrol bootstrap configuration");
    }
    Ok(())
}

/// Creates `obj` unless it exists: whether it was created.
async fn create_missing(state: &AppState, obj: Value) -> ApiResult<bool> {
    let kind = obj["kind"].as_str().unwrap_or_default().to_string();
    let res = resource(state, &kind)?;
    let name = meta::name(&obj).unwrap_or_default().to_string();
    if state.registry.get(res, None, &name).await.is_ok() {
        return Ok(false);
    }
    match state
        .registry
        .create(res, None, obj, WriteOptions::default())
        .await
    {
        Ok(_) => Ok(true),
        Err(e) if e.code == 409 => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubes_mandatory_and_suggested_objects_are_annotated() {
        let all = objects().unwrap();
        let named = |kind: &str, name: &str| {
            all.iter()
                .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
                .cloned()
        };
        for name in [
            "exempt",
            "catch-all",
            "system",
            "workload-low",
            "leader-election",
        ] {
            assert!(
                named("PriorityLevelConfiguration", name).is_some(),
                "{name}"
            );
        }
        let exempt = named("FlowSchema", "exempt").unwrap();
        assert_eq!(exempt["spec"]["matchingPrecedence"], 1);
        for obj in &all {
            let annotation = &obj["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"];
            assert_eq!(annotation, "true", "{}", obj["metadata"]["name"]);
            assert!(obj.get("status").is_none() && obj["metadata"].get("uid").is_none());
        }
    }
}
