//! A pod's effective requests and limits (`component-helpers/resource`
//! `PodRequests` / `PodLimits`): the sum over containers, raised to the
//! largest init container's need (sidecars — restartable init containers —
//! add up and run alongside), overridden by pod-level resources when set,
//! plus the pod's overhead. Containers being resized count the larger of
//! their spec and what the kubelet reports or allocated.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::json;
use crate::resources::{self, add, add_into, max_into, ResourceList};

/// Requests or limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Requests,
    Limits,
}

impl Kind {
    fn field(self) -> &'static str {
        match self {
            Kind::Requests => "requests",
            Kind::Limits => "limits",
        }
    }
}

/// The pod's requests, including pod-level requests and overhead.
pub(super) fn pod_requests(pod: &Value) -> ResourceList {
    let mut requests = aggregate(pod, Kind::Requests);
    if pod_level_set(pod, Kind::Requests) {
        requests.extend(pod_level(pod, Kind::Requests));
    }
    add_into(&mut requests, &overhead(pod));
    requests
}

/// The pod's limits, including pod-level limits; overhead is added only to
/// limits that are set and non-zero.
pub(super) fn pod_limits(pod: &Value) -> ResourceList {
    let mut limits = aggregate(pod, Kind::Limits);
    if pod_level_resources_set(pod) {
        limits.extend(pod_level(pod, Kind::Limits));
    }
    for (name, extra) in overhead(pod) {
        if let Some(limit) = limits.get_mut(&name).filter(|l| !l.is_zero()) {
            *limit = *limit + extra;
        }
    }
    limits
}

/// True when `spec.resources` sets a pod-level request or limit kube supports.
pub(super) fn pod_level_resources_set(pod: &Value) -> bool {
    pod_level_set(pod, Kind::Requests) || pod_level_set(pod, Kind::Limits)
}

fn pod_level_set(pod: &Value, kind: Kind) -> bool {
    !pod_level(pod, kind).is_empty()
}

/// Pod-level cpu, memory and hugepages-* (`IsSupportedPodLevelResource`).
pub(super) fn pod_level(pod: &Value, kind: Kind) -> ResourceList {
    resources::from_json(json::get(pod, &["spec", "resources", kind.field()]))
        .into_iter()
        .filter(|(name, _)| name == "cpu" || name == "memory" || name.starts_with("hugepages-"))
        .collect()
}

fn overhead(pod: &Value) -> ResourceList {
    resources::from_json(json::get(pod, &["spec", "overhead"]))
}

/// Containers summed, then maxed with each init container's need.
fn aggregate(pod: &Value, kind: Kind) -> ResourceList {
    let statuses = Statuses::of(pod);
    let mut total = ResourceList::new();
    for container in json::array(pod, &["spec", "containers"]) {
        add_into(&mut total, &statuses.effective(container, kind));
    }
    let mut sidecars = ResourceList::new();
    let mut init_peak = ResourceList::new();
    for container in json::array(pod, &["spec", "initContainers"]) {
        let need = if is_sidecar(container) {
            let own = statuses.effective(container, kind);
            add_into(&mut total, &own);
            add_into(&mut sidecars, &own);
            sidecars.clone()
        } else {
            add(&declared(container, kind), &sidecars)
        };
        max_into(&mut init_peak, &need);
    }
    max_into(&mut total, &init_peak);
    total
}

/// A restartable init container (`restartPolicy: Always`).
fn is_sidecar(container: &Value) -> bool {
    json::get_str(container, &["restartPolicy"]) == Some("Always")
}

/// What the container's spec declares.
pub(super) fn declared(container: &Value, kind: Kind) -> ResourceList {
    resources::from_json(json::get(container, &["resources", kind.field()]))
}

/// Container statuses by name, and whether a resize was found infeasible.
struct Statuses<'a> {
    by_name: BTreeMap<&'a str, &'a Value>,
    resize_infeasible: bool,
}

impl<'a> Statuses<'a> {
    fn of(pod: &'a Value) -> Statuses<'a> {
        let by_name = ["containerStatuses", "initContainerStatuses"]
            .iter()
            .flat_map(|field| json::array(pod, &["status", field]))
            .map(|s| (json::str_or_empty(s, &["name"]), s))
            .collect();
        Statuses {
            by_name,
            resize_infeasible: resize_infeasible(pod),
        }
    }

    /// The container's resources, raised to what its status reports while
    /// it is resized (`determineContainerReqs` / `determineContainerLimits`).
    fn effective(&self, container: &Value, kind: Kind) -> ResourceList {
        let spec = declared(container, kind);
        let name = json::str_or_empty(container, &["name"]);
        let Some(status) = self
            .by_name
            .get(name)
            .filter(|s| json::present(s, &["resources"]))
        else {
            return spec;
        };
        let reported = resources::from_json(json::get(status, &["resources", kind.field()]));
        let mut result = if self.resize_infeasible {
            reported
        } else {
            let mut r = spec;
            max_into(&mut r, &reported);
            r
        };
        if kind == Kind::Requests {
            max_into(
                &mut result,
                &resources::from_json(json::get(status, &["allocatedResources"])),
            );
        }
        result
    }
}

/// The PodResizePending condition says Infeasible.
fn resize_infeasible(pod: &Value) -> bool {
    json::array(pod, &["status", "conditions"])
        .iter()
        .find(|c| json::get_str(c, &["type"]) == Some("PodResizePending"))
        .is_some_and(|c| json::get_str(c, &["reason"]) == Some("Infeasible"))
}
