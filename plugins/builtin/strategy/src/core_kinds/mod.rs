//! kube's validation of the core-group kinds without rules of their own
//! elsewhere (Endpoints, LimitRange, ResourceQuota, PersistentVolume(Claim),
//! PodTemplate, Node, Event) and of EndpointSlices, events.k8s.io Events and
//! Leases, with kube's messages and field paths.

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

/// The causes for `object` of `group`/`plural` (over `old` on update);
/// `None` for kinds not here.
pub fn validate(
    group: &str,
    plural: &str,
    object: &Value,
    old: Option<&Value>,
) -> Option<Vec<Cause>> {
    let mut causes = match (group, plural) {
        ("", "endpoints") => network::endpoints(object),
        ("discovery.k8s.io", "endpointslices") => network::endpoint_slice(object),
        ("", "limitranges") => quota::limit_range(object),
        ("", "resourcequotas") => quota::resource_quota(object),
        ("", "persistentvolumes") => volumes::persistent_volume(object),
        ("", "persistentvolumeclaims") => volumes::persistent_volume_claim(object),
        ("", "podtemplates") => pod_template(object),
        ("", "nodes") => nodes::node(object),
        ("", "events") => events::event(object, events::Api::CoreV1),
        ("events.k8s.io", "events") => events::event(object, events::Api::EventsV1),
        ("coordination.k8s.io", "leases") => lease(object),
        _ => return None,
    };
    if let Some(old) = old {
        causes.extend(updates::validate(group, plural, object, old));
    }
    Some(causes)
}

/// `ValidatePodTemplate`: the template's labels and pod spec.
fn pod_template(object: &Value) -> Vec<Cause> {
    let template = &object["template"];
    let mut causes = Vec::new();
    if let Some(labels) = template.pointer("/metadata/labels") {
        causes.extend(crate::metadata::validate_labels(
            "template.metadata.labels",
            labels,
        ));
    }
    causes.extend(crate::pods::validate_spec(
        &template["spec"],
        "template.spec",
    ));
    causes
}

/// `ValidateLeaseSpec`.
fn lease(object: &Value) -> Vec<Cause> {
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
