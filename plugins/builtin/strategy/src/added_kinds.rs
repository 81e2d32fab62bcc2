//! The rules of the kinds served since the first strategies were written
//! (HorizontalPodAutoscaler, the storage kinds, RuntimeClass, validating and
//! mutating admission policies, flowcontrol, APIService), dispatched here so the shared tables (defaults,
//! validation, initial status) each name this file once.

use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use crate::{
    admission_policies, apiregistration, autoscaling, flowcontrol, mutating_policies, storage,
    storage_csi,
};

fn key(resource: &StrategyResource) -> (&str, &str) {
    (resource.group.as_str(), resource.resource.as_str())
}

/// The kind's defaults.
pub fn defaults(resource: &StrategyResource, object: &mut Value) {
    match key(resource) {
        ("autoscaling", "horizontalpodautoscalers") => autoscaling::defaults(resource, object),
        ("storage.k8s.io", "csidrivers") => storage_csi::csi_driver_defaults(object),
        ("admissionregistration.k8s.io", "validatingadmissionpolicies") => {
            admission_policies::policy_defaults(object)
        }
        ("admissionregistration.k8s.io", "validatingadmissionpolicybindings") => {
            admission_policies::binding_defaults(object)
        }
        ("admissionregistration.k8s.io", "mutatingadmissionpolicies") => {
            mutating_policies::policy_defaults(object)
        }
        ("admissionregistration.k8s.io", "mutatingadmissionpolicybindings") => {
            mutating_policies::binding_defaults(object)
        }
        ("flowcontrol.apiserver.k8s.io", "flowschemas") => {
            flowcontrol::flow_schema_defaults(object)
        }
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations") => {
            flowcontrol::priority_level_defaults(object)
        }
        _ => {}
    }
}

/// The kind's validation (`old` on update).
pub fn validate(resource: &StrategyResource, object: &Value, old: Option<&Value>) -> Vec<Cause> {
    match key(resource) {
        ("autoscaling", "horizontalpodautoscalers") => autoscaling::validate(object, old),
        ("storage.k8s.io", "csidrivers") => storage_csi::validate_csi_driver(object, old),
        ("storage.k8s.io", "storageclasses") => storage::storage_class(object, old),
        ("storage.k8s.io", "csinodes") => storage::csi_node(object, old),
        ("storage.k8s.io", "volumeattachments") => {
            storage_csi::validate_volume_attachment(object, old)
        }
        ("storage.k8s.io", "csistoragecapacities") => {
            storage_csi::validate_csi_storage_capacity(object, old)
        }
        ("node.k8s.io", "runtimeclasses") => storage_csi::validate_runtime_class(object, old),
        ("apiregistration.k8s.io", "apiservices") => apiregistration::api_service(object),
        ("admissionregistration.k8s.io", "validatingadmissionpolicies") => {
            admission_policies::validate_policy(object)
        }
        ("admissionregistration.k8s.io", "validatingadmissionpolicybindings") => {
            admission_policies::validate_binding(object)
        }
        ("admissionregistration.k8s.io", "mutatingadmissionpolicies") => {
            mutating_policies::validate_policy(object)
        }
        ("admissionregistration.k8s.io", "mutatingadmissionpolicybindings") => {
            mutating_policies::validate_binding(object)
        }
        ("flowcontrol.apiserver.k8s.io", "flowschemas") => {
            flowcontrol::validate_flow_schema(object)
        }
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations") => {
            flowcontrol::validate_priority_level(object)
        }
        _ => Vec::new(),
    }
}

/// The status a new object starts with (kube's empty status, encoded).
pub fn initial_status(resource: &StrategyResource) -> Option<Value> {
    match key(resource) {
        ("autoscaling", "horizontalpodautoscalers") if resource.version == "v1" => {
            Some(json!({"currentReplicas": 0, "desiredReplicas": 0}))
        }
        ("autoscaling", "horizontalpodautoscalers") => Some(json!({"desiredReplicas": 0})),
        ("storage.k8s.io", "volumeattachments") => Some(json!({"attached": false})),
        ("admissionregistration.k8s.io", "validatingadmissionpolicies")
        | ("flowcontrol.apiserver.k8s.io", _) => Some(json!({})),
        _ => None,
    }
}
