//! API priority and fairness' bootstrap configuration, as kube-apiserver's
//! config producer writes it at start: the mandatory and suggested
//! PriorityLevelConfigurations and FlowSchemas (`exempt`, `catch-all`,
//! `system`, `workload-low`, …), each marked with the
//! `apf.kubernetes.io/autoupdate-spec` annotation. Created when missing
//! (restarts and concurrent replicas are safe); a user's change to one is
//! kept. The objects and their status (`dangling.rs`); the server
//! enforces them (`crate::api::flowcontrol`).

pub mod dangling;

use crate::api::state::AppState;
use crate::apimachinery::status::{ApiError, ApiResult};
use serde_json::Value;

/// The objects of a fresh kube-apiserver 1.32 (see `bootstrap-configuration.json`'s
/// provenance in ARCHITECTURE.md).
const CONFIGURATION: &str = include_str!("flowcontrol/bootstrap-configuration.json");

/// The bootstrap objects, priority levels first (the schemas name them).
pub fn objects() -> ApiResult<Vec<Value>> {
    serde_json::from_str(CONFIGURATION)
        .map_err(|e| ApiError::internal(format!("flowcontrol bootstrap configuration: {e}")))
}

/// The manager kube's config producer (its bootstrap configuration
/// ensurer) records its writes under.
pub const PRODUCER: &str = "api-priority-and-fairness-config-producer-v1";

/// Creates the bootstrap objects that do not exist yet.
pub async fn bootstrap(state: &AppState) -> ApiResult<()> {
    let what = "the flowcontrol bootstrap configuration";
    super::bootstrap::create_missing_objects(state, objects()?, what, PRODUCER).await
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
