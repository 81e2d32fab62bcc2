//! The Pods bound to a simulated Node, moved through their lives as a
//! kubelet would move them, each step decided from the Pod alone.

use super::api::{Api, JSON, MERGE_PATCH};
use super::node::{digest_hex, now, SimNode};
use anyhow::Result;
use http::{Method, StatusCode};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::Duration;

/// The pod conditions a kubelet owns, in the order it writes them.
const KUBELET_CONDITIONS: [&str; 4] = [
    "PodReadyToStartContainers",
    "Initialized",
    "Ready",
    "ContainersReady",
];

/// What a Pod needs next.
#[derive(Debug, PartialEq)]
pub enum Step {
    Nothing,
    /// Start its containers: Running.
    Start,
    /// Its containers have exited 0: Succeeded.
    Finish,
    /// It is being deleted: remove it (a delete with grace 0).
    Remove,
}

/// Looks at every Pod bound to one of `nodes` (one list for them all) and
/// takes each one its next step; a failure is logged and tried again at the
/// next pass.
pub async fn attend(api: &Api, nodes: &[SimNode], run_for: Duration) -> Result<()> {
    let list = api
        .get("/api/v1/pods?fieldSelector=spec.nodeName%21%3D")
        .await?;
    let pods = list.unwrap_or_default()["items"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let now = chrono::Utc::now();
    for node in nodes {
        let on_node: Vec<&Value> = pods
            .iter()
            .filter(|p| p["spec"]["nodeName"] == node.name.as_str())
            .collect();
        let mut used: BTreeSet<String> = on_node
            .iter()
            .filter_map(|p| p["status"]["podIP"].as_str().map(str::to_string))
            .collect();
        for pod in on_node {
            let step = next_step(pod, now, run_for);
            if step == Step::Nothing {
                continue;
            }
            if let Err(e) = take(api, node, pod, step, &mut used).await {
                tracing::warn!(node = %node.name, error = %format!("{e:#}"), "simulated pod");
            }
        }
    }
    Ok(())
}

/// What `pod` needs next, `now`, when a finite Pod runs for `run_for`.
pub fn next_step(pod: &Value, now: chrono::DateTime<chrono::Utc>, run_for: Duration) -> Step {
    let meta = &pod["metadata"];
    if meta.get("deletionTimestamp").is_some_and(|t| !t.is_null()) {
        let requested = meta["deletionGracePeriodSeconds"].as_i64() == Some(0);
        return if requested {
            Step::Nothing
        } else {
            Step::Remove
        };
    }
    match pod["status"]["phase"].as_str() {
        Some("Succeeded" | "Failed") => Step::Nothing,
        Some("Running") if pod["spec"]["restartPolicy"] == "Always" => Step::Nothing,
        Some("Running") => {
            let started = pod["status"]["startTime"]
                .as_str()
                .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok());
            let ran = started.map(|s| now.signed_duration_since(s));
            let long_enough = ran
                .and_then(|r| r.to_std().ok())
                .is_some_and(|r| r >= run_for);
            if long_enough {
                Step::Finish
            } else {
                Step::Nothing
            }
        }
        _ => Step::Start,
    }
}

async fn take(
    api: &Api,
    node: &SimNode,
    pod: &Value,
    step: Step,
    used: &mut BTreeSet<String>,
) -> Result<()> {
    let meta = &pod["metadata"];
    let (ns, name) = (
        meta["namespace"].as_str().unwrap_or_default(),
        meta["name"].as_str().unwrap_or_default(),
    );
    let path = format!("/api/v1/namespaces/{ns}/pods/{name}");
    // The pod may have gone or changed since the list: skip it then.
    let gone = [StatusCode::NOT_FOUND, StatusCode::CONFLICT];
    let status = match step {
        Step::Remove => {
            let options = json!({
                "kind": "DeleteOptions", "apiVersion": "v1",
                "gracePeriodSeconds": 0,
                "preconditions": {"uid": meta["uid"]},
            });
            return api
                .send(Method::DELETE, &path, &options, JSON, &gone)
                .await
                .map(drop);
        }
        Step::Start => {
            let ip = pod_ip(pod, node, used);
            running(pod, node, &ip, &now())
        }
        Step::Finish => succeeded(pod, &now()),
        Step::Nothing => return Ok(()),
    };
    let patch = json!({"metadata": {"uid": meta["uid"]}, "status": status});
    let path = format!("{path}/status");
    api.send(Method::PATCH, &path, &patch, MERGE_PATCH, &gone)
        .await
        .map(drop)
}

/// The pod's IP: the node's own for host-network pods, else the lowest
/// free address of the node's /24.
fn pod_ip(pod: &Value, node: &SimNode, used: &mut BTreeSet<String>) -> String {
    if pod["spec"]["hostNetwork"] == true {
        return node.host_ip.clone();
    }
    let free = (2..255)
        .map(|i| format!("{}.{i}", node.pod_prefix))
        .find(|ip| !used.contains(ip));
    // A full /24 shares its last address, as an overcommitted node would fail.
    let ip = free.unwrap_or_else(|| format!("{}.254", node.pod_prefix));
    used.insert(ip.clone());
    ip
}

/// The status of a pod whose containers all started and are ready.
pub fn running(pod: &Value, node: &SimNode, ip: &str, now: &str) -> Value {
    let uid = pod["metadata"]["uid"].as_str().unwrap_or_default();
    let started = |c: &Value| container(c, uid, json!({"running": {"startedAt": now}}), true);
    let init = |c: &Value| {
        if c["restartPolicy"] == "Always" {
            return started(c);
        }
        let done = terminated(c, uid, now, now);
        container(c, uid, done, false)
    };
    json!({
        "phase": "Running",
        "conditions": conditions(pod, now, true),
        "hostIP": node.host_ip,
        "hostIPs": [{"ip": node.host_ip}],
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "startTime": now,
        "initContainerStatuses": each(pod, "initContainers", init),
        "containerStatuses": each(pod, "containers", started),
    })
}

/// The status of a pod whose containers all exited 0.
pub fn succeeded(pod: &Value, now: &str) -> Value {
    let uid = pod["metadata"]["uid"].as_str().unwrap_or_default();
    let start = pod["status"]["startTime"].as_str().unwrap_or(now);
    let finished = |c: &Value| container(c, uid, terminated(c, uid, start, now), false);
    json!({
        "phase": "Succeeded",
        "conditions": conditions(pod, now, false),
        "initContainerStatuses": each(pod, "initContainers", finished),
        "containerStatuses": each(pod, "containers", finished),
    })
}

/// The kubelet's conditions of a pod that runs (all True) or has
/// completed (only Initialized True, as kube's `PodCompleted`), followed by
/// every other condition the pod has.
fn conditions(pod: &Value, now: &str, running: bool) -> Vec<Value> {
    let mut out: Vec<Value> = KUBELET_CONDITIONS
        .iter()
        .map(|kind| {
            let on = running || *kind == "Initialized";
            let mut c = json!({
                "type": kind,
                "status": if on { "True" } else { "False" },
                "lastProbeTime": null,
                "lastTransitionTime": now,
            });
            if !running && *kind != "PodReadyToStartContainers" {
                c["reason"] = json!("PodCompleted");
            }
            c
        })
        .collect();
    let others = pod["status"]["conditions"].as_array().into_iter().flatten();
    let kubelets =
        |c: &&Value| KUBELET_CONDITIONS.contains(&c["type"].as_str().unwrap_or_default());
    out.extend(others.filter(|c| !kubelets(c)).cloned());
    out
}

fn each(pod: &Value, field: &str, status: impl Fn(&Value) -> Value) -> Vec<Value> {
    let list = pod["spec"][field].as_array().into_iter().flatten();
    list.map(status).collect()
}

fn container(c: &Value, pod_uid: &str, state: Value, ready: bool) -> Value {
    let image = c["image"].as_str().unwrap_or_default();
    json!({
        "name": c["name"],
        "state": state,
        "lastState": {},
        "ready": ready,
        "restartCount": 0,
        "image": image,
        "imageID": format!("{}@sha256:{}", repository(image), digest_hex(image, 64)),
        "containerID": container_id(pod_uid, c),
        "started": state.get("running").is_some(),
    })
}

fn terminated(c: &Value, pod_uid: &str, started: &str, finished: &str) -> Value {
    json!({"terminated": {
        "exitCode": 0,
        "reason": "Completed",
        "startedAt": started,
        "finishedAt": finished,
        "containerID": container_id(pod_uid, c),
    }})
}

fn container_id(pod_uid: &str, c: &Value) -> String {
    let name = c["name"].as_str().unwrap_or_default();
    format!(
        "simulated://{}",
        digest_hex(&format!("{pod_uid}/{name}"), 64)
    )
}

/// An image reference without its tag or digest.
fn repository(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    match image.rfind(':') {
        Some(colon) if !image[colon..].contains('/') => &image[..colon],
        _ => image,
    }
}

#[cfg(test)]
mod tests;
