//! `pods/<name>/eviction` (kube's EvictionREST): deletes the pod unless the
//! PodDisruptionBudget that selects it allows no disruption (429), taking one
//! disruption from the budget when it does.

use super::{check_body_name, created_success, decode_body, pod, Call};
use crate::admission::matcher::{labels_of, Selector};
use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
use crate::registry::{ListQuery, WriteOptions};
use axum::body::Body;
use axum::response::Response;
use serde_json::{json, Value};

const BLOCKED: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

/// kube's canIgnorePDB: terminal, pending or terminating pods go at once.
fn ignores_budgets(pod: &Value) -> bool {
    let phase = pod
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("Pending");
    matches!(phase, "Succeeded" | "Failed" | "Pending") || meta::is_terminating(pod)
}

fn is_ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

fn int(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// Whether the budget selects the pod (v1: an empty selector selects every
/// pod, a missing one none).
fn selects(pdb: &Value, pod: &Value) -> bool {
    match pdb.pointer("/spec/selector") {
        None | Some(Value::Null) => false,
        Some(sel) => Selector::parse(Some(sel)).is_ok_and(|s| s.matches(&labels_of(Some(pod)))),
    }
}

/// An unready pod may go without using the budget: always with
/// `AlwaysAllow`, otherwise while the budget is healthy (IfHealthyBudget).
fn unready_may_go(pdb: &Value, pod: &Value) -> bool {
    if is_ready(pod) {
        return false;
    }
    let policy = pdb
        .pointer("/spec/unhealthyPodEvictionPolicy")
        .and_then(Value::as_str);
    let desired = int(pdb, "/status/desiredHealthy");
    policy == Some("AlwaysAllow") || (desired > 0 && int(pdb, "/status/currentHealthy") >= desired)
}

/// kube's checkAndDecrement: the budget with one disruption taken for `pod`,
/// or the error that refuses the eviction.
pub fn take_disruption(mut pdb: Value, pod_name: &str) -> ApiResult<Value> {
    let name = meta::name(&pdb).unwrap_or_default().to_string();
    let cause = |message: String| vec![json!({"reason": "DisruptionBudget", "message": message})];
    if int(&pdb, "/status/observedGeneration") < int(&pdb, "/metadata/generation") {
        let why = format!("The disruption budget {name} is still being processed by the server.");
        return Err(ApiError::too_many_requests(BLOCKED, 10, cause(why)));
    }
    let allowed = int(&pdb, "/status/disruptionsAllowed");
    if allowed < 0 {
        return Err(forbidden(&name, "pdb disruptions allowed is negative"));
    }
    if pdb
        .pointer("/status/disruptedPods")
        .and_then(Value::as_object)
        .is_some_and(|m| m.len() > 2000)
    {
        return Err(forbidden(
            &name,
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        ));
    }
    if allowed == 0 {
        let why = format!(
            "The disruption budget {name} needs {} healthy pods and has {} currently",
            int(&pdb, "/status/desiredHealthy"),
            int(&pdb, "/status/currentHealthy")
        );
        return Err(ApiError::too_many_requests(BLOCKED, 0, cause(why)));
    }
    pdb["status"]["disruptionsAllowed"] = json!(allowed - 1);
    let disrupted = pdb["status"]
        .as_object_mut()
        .map(|s| s.entry("disruptedPods").or_insert_with(|| json!({})));
    if let Some(map) = disrupted.and_then(Value::as_object_mut) {
        map.insert(pod_name.to_string(), json!(meta::now()));
    }
    Ok(pdb)
}

fn forbidden(pdb: &str, why: &str) -> ApiError {
    ApiError::forbidden(format!(
        "poddisruptionbudget.policy \"{pdb}\" is forbidden: {why}"
    ))
}

fn pdbs<'a>(call: &Call<'a>) -> ApiResult<&'a ResourceInfo> {
    call.state
        .catalogue
        .builtin()
        .lookup("policy", "v1", "poddisruptionbudgets")
        .ok_or_else(|| ApiError::internal("poddisruptionbudgets are not served"))
}

pub async fn create(call: &Call<'_>, raw: Body) -> ApiResult<Response> {
    let eviction = decode_body(call, raw).await?;
    check_body_name(call, &eviction, "Eviction")?;
    let dry_run = call.query.write_options()?.dry_run
        || eviction
            .pointer("/deleteOptions/dryRun")
            .and_then(Value::as_array)
            .is_some_and(|d| !d.is_empty());
    let pod = pod(call).await?;
    if ignores_budgets(&pod) {
        return delete_pod(call, &eviction, dry_run).await;
    }
    let res = pdbs(call)?;
    let listed = call
        .state
        .registry
        .list(res, call.namespace(), &ListQuery::default())
        .await?;
    let matching: Vec<&Value> = listed.items.iter().filter(|p| selects(p, &pod)).collect();
    let pdb = match matching.as_slice() {
        [] => return delete_pod(call, &eviction, dry_run).await,
        [one] => *one,
        _ => {
            return Err(ApiError::unknown("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."))
        }
    };
    if !unready_may_go(pdb, &pod) {
        let taken = take_disruption(pdb.clone(), call.name())?;
        if !dry_run {
            let name = meta::name(pdb).unwrap_or_default();
            let change = |current: Value| {
                let mut out = current;
                out["status"] = taken["status"].clone();
                meta::metadata_mut(&mut out)
                    .insert("resourceVersion".into(), json!(meta::resource_version(pdb)));
                Ok(out)
            };
            call.state
                .registry
                .guaranteed_update(
                    res,
                    call.namespace(),
                    name,
                    WriteOptions::default(),
                    &change,
                )
                .await
                .map_err(|e| {
                    if e.code == 409 {
                        ApiError::too_many_requests(BLOCKED, 0, Vec::new())
                    } else {
                        e
                    }
                })?;
        }
    }
    delete_pod(call, &eviction, dry_run).await
}

/// Deletes the pod with the eviction's preconditions.
async fn delete_pod(call: &Call<'_>, eviction: &Value, dry_run: bool) -> ApiResult<Response> {
    let preconditions = eviction
        .pointer("/deleteOptions/preconditions")
        .cloned()
        .unwrap_or(json!({}));
    let opts = WriteOptions {
        dry_run,
        ..WriteOptions::default()
    };
    call.state
        .registry
        .delete(
            call.res,
            call.namespace(),
            call.name(),
            &preconditions,
            opts,
        )
        .await?;
    Ok(created_success())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pdb(generation: i64, observed: i64, allowed: i64) -> Value {
        json!({"metadata": {"name": "budget", "generation": generation},
               "spec": {"selector": {"matchLabels": {"app": "web"}}},
               "status": {"observedGeneration": observed, "disruptionsAllowed": allowed,
                          "desiredHealthy": 2, "currentHealthy": 2}})
    }

    #[test]
    fn a_budget_without_disruptions_left_refuses_with_429() {
        let e = take_disruption(pdb(1, 1, 0), "p").unwrap_err();
        assert_eq!(
            (e.code, e.reason, e.message.as_str()),
            (429, "TooManyRequests", BLOCKED)
        );
        let causes = &e.details.unwrap()["causes"];
        assert_eq!(
            causes[0]["message"],
            "The disruption budget budget needs 2 healthy pods and has 2 currently"
        );
        let e = take_disruption(pdb(2, 1, 5), "p").unwrap_err();
        assert_eq!(e.code, 429, "an unprocessed budget refuses too");
        assert_eq!(e.details.unwrap()["retryAfterSeconds"], 10);
    }

    #[test]
    fn an_allowed_disruption_is_taken() {
        let taken = take_disruption(pdb(1, 1, 1), "p").unwrap();
        assert_eq!(taken["status"]["disruptionsAllowed"], 0);
        assert!(taken["status"]["disruptedPods"]["p"].is_string());
    }

    #[test]
    fn pending_pods_and_unselected_pods_ignore_budgets() {
        let running =
            json!({"metadata": {"labels": {"app": "web"}}, "status": {"phase": "Running"}});
        assert!(!ignores_budgets(&running));
        assert!(ignores_budgets(&json!({"status": {"phase": "Pending"}})));
        assert!(selects(&pdb(1, 1, 0), &running));
        let other = json!({"metadata": {"labels": {"app": "db"}}});
        assert!(!selects(&pdb(1, 1, 0), &other));
        assert!(
            selects(&json!({"spec": {"selector": {}}}), &other),
            "empty selects all"
        );
        assert!(!selects(&json!({"spec": {}}), &other));
    }
}
