//! kube's validation of the core-group kinds without rules of their own
//! elsewhere (Endpoints, LimitRange, ResourceQuota, PersistentVolume(Claim),
//! PodTemplate, Node, Event) and of EndpointSlices, events.k8s.io Events and
//! Leases, with kube's messages and field paths: one function per kind,
//! which its rules (`crate::kinds`) name.

mod events;
mod ip;
mod network;
mod nodes;
mod quantities;
mod quota;
mod updates;
mod volumes;

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common;

pub use ip::parse as parse_ip;
pub use quantities::of as quantity_of;

/// `ValidateEndpoints`.
pub fn endpoints(object: &Value) -> Vec<Cause> {
    network::endpoints(object)
}

/// discovery's `ValidateEndpointSlice` (and, on update, its address type).
pub fn endpoint_slice(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = network::endpoint_slice(object);
    if let Some(old) = old {
        updates::endpoint_slice(object, old, &mut causes);
    }
    causes
}

/// `ValidateLimitRange`.
pub fn limit_range(object: &Value) -> Vec<Cause> {
    quota::limit_range(object)
}

/// `ValidateResourceQuota` (and, on update, its scopes).
pub fn resource_quota(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = quota::resource_quota(object);
    if let Some(old) = old {
        updates::quota(object, old, &mut causes);
    }
    causes
}

/// `ValidatePersistentVolume` (and, on update, its source and mode).
pub fn persistent_volume(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = volumes::persistent_volume(object);
    if let Some(old) = old {
        updates::volume(object, old, &mut causes);
    }
    causes
}

/// `ValidatePersistentVolumeClaim` (and, on update, its spec).
pub fn persistent_volume_claim(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = volumes::persistent_volume_claim(object);
    if let Some(old) = old {
        updates::claim(object, old, &mut causes);
    }
    causes
}

/// `ValidateNode` (and, on update, its pod CIDRs and provider).
pub fn node(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = nodes::node(object);
    if let Some(old) = old {
        updates::node(object, old, &mut causes);
    }
    causes
}

/// A core/v1 Event's `ValidateEventCreate`.
pub fn core_event(object: &Value) -> Vec<Cause> {
    events::event(object, events::Api::CoreV1)
}

/// An events.k8s.io/v1 Event's.
pub fn events_event(object: &Value) -> Vec<Cause> {
    events::event(object, events::Api::EventsV1)
}

/// `ValidatePodTemplate`: the template's labels and pod spec.
pub fn pod_template(object: &Value) -> Vec<Cause> {
    let template = &object["template"];
    let mut causes = Vec::new();
    if let Some(labels) = template.pointer("/metadata/labels") {
        causes.extend(crate::metadata::validate_labels(
            "template.metadata.labels",
            labels,
        ));
    }
    causes.extend(crate::kinds::core::pods::validate_spec(
        &template["spec"],
        "template.spec",
    ));
    causes
}

/// `ValidateLeaseSpec`.
pub fn lease(object: &Value) -> Vec<Cause> {
    let spec = &object["spec"];
    let mut causes = Vec::new();
    if let Some(seconds) = spec.get("leaseDurationSeconds").and_then(Value::as_i64) {
        if seconds <= 0 {
            let field = "spec.leaseDurationSeconds";
            causes.push(common::invalid(
                field,
                &seconds.to_string(),
                "must be greater than 0",
            ));
        }
    }
    if let Some(transitions) = spec.get("leaseTransitions").and_then(Value::as_i64) {
        if transitions < 0 {
            let (field, detail) = (
                "spec.leaseTransitions",
                "must be greater than or equal to 0",
            );
            causes.push(common::invalid(field, &transitions.to_string(), detail));
        }
    }
    let strategy = common::text(spec, "strategy");
    if !common::text(spec, "preferredHolder").is_empty() && strategy.is_empty() {
        let detail = "may only be specified if `strategy` is defined";
        causes.push(common::forbidden("spec.preferredHolder", detail));
    }
    causes
}
