//! Pods (kube's `pods.go`): every pod counts under `count/pods`; pods that
//! have not finished (phase not Succeeded/Failed, not stuck past their
//! deletion grace period) also count under `pods` and charge their compute
//! resources (`cpu`/`requests.cpu`, `limits.cpu`, memory and
//! ephemeral-storage alike, hugepages and extended resources). Pods are the
//! only resource with quota scopes.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::pod_resources::{
    declared, pod_level, pod_level_resources_set, pod_limits, pod_requests, Kind,
};
use super::Operation;
use crate::json;
use crate::messages;
use crate::quantity::Quantity;
use crate::resources::{self, ResourceList};
use crate::spec::{Operator, ScopeRequirement};
use crate::time;

/// The fixed pod resources (`podResources`).
const POD_RESOURCES: [&str; 11] = [
    "count/pods",
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
];

/// Resources every container must specify when a quota tracks them
/// (`validationSet`: kube's backward-compatibility rule for cpu and memory).
const MUST_SPECIFY: [&str; 6] = [
    "cpu",
    "memory",
    "requests.cpu",
    "requests.memory",
    "limits.cpu",
    "limits.memory",
];

/// Whether a quota key is a pod resource (fixed names, hugepages, extended resources).
pub(super) fn tracks(name: &str) -> bool {
    POD_RESOURCES.contains(&name)
        || name.starts_with("hugepages-")
        || name.starts_with("requests.hugepages-")
        || is_extended_for_quota(name)
}

/// kube's native resources: no domain, or a kubernetes.io domain.
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// `requests.<extended resource>` (`isExtendedResourceNameForQuota`).
fn is_extended_for_quota(name: &str) -> bool {
    let device_class = name.starts_with("requests.deviceclass.resource.kubernetes.io/");
    (!is_native(name) || device_class) && name.starts_with("requests.")
}

/// An extended resource a container may request (`IsDRAExtendedResourceName`).
fn is_extended(name: &str) -> bool {
    let plain = !is_native(name) && !name.starts_with("requests.");
    plain || name.starts_with("deviceclass.resource.kubernetes.io/")
}

/// The usage of one pod at time `now` (Unix seconds; None skips the
/// stuck-terminating check).
pub(super) fn usage(pod: &Value, now: Option<i64>) -> ResourceList {
    let mut usage = ResourceList::new();
    usage.insert("count/pods".to_string(), Quantity::from_units(1));
    if counts_compute(pod, now) {
        resources::add_into(
            &mut usage,
            &compute_usage(&pod_requests(pod), &pod_limits(pod)),
        );
    }
    usage
}

/// `QuotaV1Pod`: not in a terminal phase, and not past its deletion grace period.
fn counts_compute(pod: &Value, now: Option<i64>) -> bool {
    let phase = json::str_or_empty(pod, &["status", "phase"]);
    if phase == "Succeeded" || phase == "Failed" {
        return false;
    }
    let deleted =
        json::get_str(pod, &["metadata", "deletionTimestamp"]).and_then(time::parse_rfc3339);
    let grace = json::get(pod, &["metadata", "deletionGracePeriodSeconds"]).and_then(Value::as_i64);
    match (deleted, grace, now) {
        (Some(at), Some(grace), Some(now)) => now <= at.saturating_add(grace),
        _ => true,
    }
}

/// Quota names for given requests and limits (`podComputeUsageHelper`).
fn compute_usage(requests: &ResourceList, limits: &ResourceList) -> ResourceList {
    let mut usage = ResourceList::new();
    usage.insert("pods".to_string(), Quantity::from_units(1));
    for resource in ["cpu", "memory", "ephemeral-storage"] {
        if let Some(q) = requests.get(resource) {
            usage.insert(resource.to_string(), *q);
            usage.insert(format!("requests.{resource}"), *q);
        }
        if let Some(q) = limits.get(resource) {
            usage.insert(format!("limits.{resource}"), *q);
        }
    }
    for (name, q) in requests {
        if name.starts_with("hugepages-") {
            usage.insert(name.clone(), *q);
            usage.insert(format!("requests.{name}"), *q);
        }
        if is_extended(name) {
            usage.insert(format!("requests.{name}"), *q);
        }
    }
    usage
}

/// Every container must declare the cpu/memory values a quota tracks,
/// unless the pod sets pod-level resources (`Constraints`).
pub(super) fn constraints(required: &BTreeSet<String>, pod: &Value) -> Result<(), String> {
    if pod_level_resources_set(pod) {
        return Ok(());
    }
    let required: BTreeSet<&str> = required
        .iter()
        .map(String::as_str)
        .filter(|r| MUST_SPECIFY.contains(r))
        .collect();
    let mut missing: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let containers = ["containers", "initContainers"]
        .iter()
        .flat_map(|field| json::array(pod, &["spec", field]));
    for container in containers {
        let specified = compute_usage(
            &declared(container, Kind::Requests),
            &declared(container, Kind::Limits),
        );
        let name = json::str_or_empty(container, &["name"]);
        for resource in required.iter().filter(|r| !specified.contains_key(**r)) {
            missing
                .entry(resource.to_string())
                .or_default()
                .insert(name.to_string());
        }
    }
    match missing.is_empty() {
        true => Ok(()),
        false => Err(messages::must_specify(&missing)),
    }
}

/// Creates; updates that change the Terminating scope; the `resize`
/// subresource (`Handles`).
pub(super) fn handles(
    operation: Operation,
    subresource: &str,
    pod: &Value,
    old: Option<&Value>,
) -> bool {
    match subresource {
        "" => match operation {
            Operation::Create => true,
            Operation::Update => old.is_some_and(|old| is_terminating(old) != is_terminating(pod)),
        },
        "resize" => operation == Operation::Update,
        _ => false,
    }
}

/// Whether the pod is in one scope requirement (`podMatchesScopeFunc`).
pub(super) fn matches_scope(requirement: &ScopeRequirement, pod: &Value) -> bool {
    let flag = match requirement.scope.as_str() {
        "Terminating" => is_terminating(pod),
        "NotTerminating" => !is_terminating(pod),
        "BestEffort" => is_best_effort(pod),
        "NotBestEffort" => !is_best_effort(pod),
        "CrossNamespacePodAffinity" => uses_cross_namespace_affinity(pod),
        "PriorityClass" => return priority_class_matches(requirement, pod),
        _ => return false,
    };
    match requirement.operator {
        Operator::Exists => flag,
        Operator::DoesNotExist => !flag,
        _ => false,
    }
}

/// Label-selector semantics over `{PriorityClass: spec.priorityClassName}`.
fn priority_class_matches(requirement: &ScopeRequirement, pod: &Value) -> bool {
    let class = json::get_str(pod, &["spec", "priorityClassName"]).filter(|c| !c.is_empty());
    let listed = |c: &str| requirement.values.iter().any(|v| v == c);
    match requirement.operator {
        Operator::In => class.is_some_and(listed),
        Operator::NotIn => !class.is_some_and(listed),
        Operator::Exists => class.is_some(),
        Operator::DoesNotExist => class.is_none(),
        Operator::Unknown => false,
    }
}

/// `spec.activeDeadlineSeconds >= 0`.
fn is_terminating(pod: &Value) -> bool {
    json::get(pod, &["spec", "activeDeadlineSeconds"])
        .and_then(Value::as_i64)
        .is_some_and(|s| s >= 0)
}

/// QoS class BestEffort: `status.qosClass` when set, else no cpu or memory
/// request or limit above zero (pod-level resources when set, else containers).
fn is_best_effort(pod: &Value) -> bool {
    let class = json::str_or_empty(pod, &["status", "qosClass"]);
    if !class.is_empty() {
        return class == "BestEffort";
    }
    let lists: Vec<ResourceList> = if pod_level_resources_set(pod) {
        vec![pod_level(pod, Kind::Requests), pod_level(pod, Kind::Limits)]
    } else {
        ["containers", "initContainers"]
            .iter()
            .flat_map(|field| json::array(pod, &["spec", field]))
            .flat_map(|c| [declared(c, Kind::Requests), declared(c, Kind::Limits)])
            .collect()
    };
    !lists.iter().any(|list| {
        ["cpu", "memory"]
            .iter()
            .any(|r| list.get(*r).is_some_and(|q| q > &Quantity::ZERO))
    })
}

/// Pod (anti-)affinity terms that name namespaces or a namespace selector.
fn uses_cross_namespace_affinity(pod: &Value) -> bool {
    ["podAffinity", "podAntiAffinity"].iter().any(|kind| {
        let affinity = json::get(pod, &["spec", "affinity", kind]).unwrap_or(&Value::Null);
        let required = json::array(
            affinity,
            &["requiredDuringSchedulingIgnoredDuringExecution"],
        );
        let preferred = json::array(
            affinity,
            &["preferredDuringSchedulingIgnoredDuringExecution"],
        );
        required.iter().any(cross_namespace_term)
            || preferred
                .iter()
                .filter_map(|w| w.get("podAffinityTerm"))
                .any(cross_namespace_term)
    })
}

fn cross_namespace_term(term: &Value) -> bool {
    !json::array(term, &["namespaces"]).is_empty() || json::present(term, &["namespaceSelector"])
}
