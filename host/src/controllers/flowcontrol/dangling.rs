//! FlowSchemas' `Dangling` condition, as kube-apiserver's APF config
//! consumer keeps it: `False` (reason `Found`) while the
//! PriorityLevelConfiguration a FlowSchema names exists, `True` (reason
//! `NotFound`) while it does not, each with kube's message. A condition
//! that differs is applied (forced) to the status subresource by the
//! consumer's manager; one already right is left alone, so a FlowSchema is
//! written only when its answer changes. Rechecked on every change of
//! FlowSchemas or PriorityLevelConfigurations.

use crate::api::state::AppState;
use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
use crate::controllers::apply::{apply, Controller};
use crate::registry::{decode, keys};
use crate::storage::StorageError;
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// The manager kube's config consumer applies FlowSchemas' status as.
const CONSUMER: &str = "api-priority-and-fairness-config-consumer-v1";

const GROUP: &str = "flowcontrol.apiserver.k8s.io";

/// The condition a FlowSchema should hold: (status, reason, message).
fn wanted(level: &str, exists: bool) -> (&'static str, &'static str, String) {
    if exists {
        let message = format!(
            "This FlowSchema references the PriorityLevelConfiguration object named {} and it exists",
            kube_rules::gofmt::quote(level)
        );
        ("False", "Found", message)
    } else {
        let message = format!(
            "This FlowSchema references the PriorityLevelConfiguration object named {} but there is no such object",
            kube_rules::gofmt::quote(level)
        );
        ("True", "NotFound", message)
    }
}

/// The status configuration to apply to `flow_schema`, when its Dangling
/// condition is not what `levels` (the existing priority levels' names) say.
pub fn status_update(flow_schema: &Value, levels: &HashSet<String>) -> Option<Value> {
    let name = meta::name(flow_schema)?;
    let level = flow_schema
        .pointer("/spec/priorityLevelConfiguration/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (status, reason, message) = wanted(level, levels.contains(level));
    let conditions = flow_schema
        .pointer("/status/conditions")
        .and_then(Value::as_array);
    let current = conditions
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Dangling");
    let text = |field: &str| current.and_then(|c| c[field].as_str()).unwrap_or_default();
    if text("status") == status && text("reason") == reason && text("message") == message {
        return None;
    }
    let condition = json!({
        "type": "Dangling", "status": status, "reason": reason,
        "lastTransitionTime": meta::now(), "message": message,
    });
    Some(json!({
        "apiVersion": format!("{GROUP}/v1"), "kind": "FlowSchema",
        "metadata": {"name": name},
        "status": {"conditions": [condition]},
    }))
}

/// Runs the condition keeper until the server stops; restarts on errors.
pub fn spawn(state: Arc<AppState>) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            if let Err(e) = run(&state).await {
                tracing::warn!(error = %e, "flowschema status restarting");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    })
}

fn resource<'a>(state: &'a AppState, plural: &str) -> ApiResult<&'a ResourceInfo> {
    state
        .catalogue
        .builtin()
        .lookup(GROUP, "v1", plural)
        .ok_or_else(|| ApiError::internal(format!("{plural} are not served")))
}

/// One pass now, and one after each change of either kind.
async fn run(state: &AppState) -> ApiResult<()> {
    let internal = |e: StorageError| ApiError::internal(e.to_string());
    let schemas = resource(state, "flowschemas")?;
    let levels = resource(state, "prioritylevelconfigurations")?;
    let (_, schema_events) =
        super::super::list_and_watch(state, &keys::prefix(schemas, None)).await?;
    let (_, level_events) =
        super::super::list_and_watch(state, &keys::prefix(levels, None)).await?;
    reconcile(state, schemas, levels).await?;
    let mut events = futures_util::stream::select(schema_events, level_events);
    while let Some(ev) = events.next().await {
        ev.map_err(internal)?;
        reconcile(state, schemas, levels).await?;
    }
    Ok(())
}

/// Applies the Dangling condition of every FlowSchema whose condition is stale.
async fn reconcile(
    state: &AppState,
    schemas: &ResourceInfo,
    levels: &ResourceInfo,
) -> ApiResult<()> {
    let names: HashSet<String> = read(state, levels)
        .await?
        .iter()
        .filter_map(|l| meta::name(l).map(str::to_string))
        .collect();
    let by = Controller {
        manager: CONSUMER,
        subresource: "status",
    };
    for flow_schema in read(state, schemas).await? {
        let Some(configuration) = status_update(&flow_schema, &names) else {
            continue;
        };
        match apply(state, schemas, None, &configuration, by).await {
            Err(e) if e.code == 404 => {}
            other => {
                other?;
            }
        }
    }
    Ok(())
}

/// Every stored object of `res`.
async fn read(state: &AppState, res: &ResourceInfo) -> ApiResult<Vec<Value>> {
    let kvs = state
        .registry
        .read_all(res, &keys::prefix(res, None))
        .await?;
    kvs.iter().map(decode).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow_schema(level: &str, conditions: Value) -> Value {
        json!({"metadata": {"name": "fs"}, "spec": {"priorityLevelConfiguration": {"name": level}},
               "status": {"conditions": conditions}})
    }

    fn levels(names: &[&str]) -> HashSet<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn a_flow_schema_naming_an_existing_level_is_not_dangling() {
        let update = status_update(
            &flow_schema("workload-low", json!([])),
            &levels(&["workload-low"]),
        )
        .expect("no condition yet");
        let condition = &update["status"]["conditions"][0];
        assert_eq!(condition["type"], "Dangling");
        assert_eq!(condition["status"], "False");
        assert_eq!(condition["reason"], "Found");
        assert_eq!(
            condition["message"],
            "This FlowSchema references the PriorityLevelConfiguration object named \"workload-low\" and it exists"
        );
        assert_eq!(update["metadata"]["name"], "fs");
        assert!(condition["lastTransitionTime"].is_string());
    }

    #[test]
    fn a_flow_schema_naming_a_missing_level_is_dangling() {
        let update =
            status_update(&flow_schema("gone", json!(null)), &levels(&["exempt"])).unwrap();
        let condition = &update["status"]["conditions"][0];
        assert_eq!(condition["status"], "True");
        assert_eq!(condition["reason"], "NotFound");
        assert_eq!(
            condition["message"],
            "This FlowSchema references the PriorityLevelConfiguration object named \"gone\" but there is no such object"
        );
    }

    #[test]
    fn a_condition_already_right_is_not_written_again() {
        let (status, reason, message) = wanted("gone", false);
        let right = json!([{"type": "Dangling", "status": status, "reason": reason, "message": message,
                            "lastTransitionTime": "2024-01-01T00:00:00Z"}]);
        assert!(status_update(&flow_schema("gone", right.clone()), &levels(&[])).is_none());
        let now_found = status_update(&flow_schema("gone", right), &levels(&["gone"])).unwrap();
        assert_eq!(now_found["status"]["conditions"][0]["status"], "False");
    }
}
