//! PrepareForCreate and PrepareForUpdate: what the server sets on a write
//! before validating and storing it. On create: no client status when status
//! is a subresource, `metadata.generation` 1, the initial status and the
//! defaults. On update: the defaults, then `metadata.generation` = old + 1
//! when the desired state changed.

use capstan_plugin_sdk::strategy::StrategyResource;
use serde_json::{json, Map, Value};

use crate::json::metadata_mut;
use crate::{config, crd, defaults, initial_status};

/// The top-level fields that are not the desired state (see [`desired_state`]).
const NOT_DESIRED_STATE: [&str; 4] = ["metadata", "status", "apiVersion", "kind"];

/// Does this resource keep `metadata.generation`? (those whose kube-apiserver
/// strategy sets it: kinds with a desired state that controllers observe)
pub fn tracks_generation(resource: &StrategyResource) -> bool {
    matches!(
        (resource.group.as_str(), resource.resource.as_str()),
        (
            "apps",
            "deployments" | "replicasets" | "statefulsets" | "daemonsets"
        ) | ("", "replicationcontrollers")
            | ("batch", "jobs" | "cronjobs")
            | ("policy", "poddisruptionbudgets")
            | ("networking.k8s.io", "networkpolicies" | "ingresses")
            | ("admissionregistration.k8s.io", _)
            | ("flowcontrol.apiserver.k8s.io", _)
            | ("apiextensions.k8s.io", "customresourcedefinitions")
    )
}

/// PrepareForCreate: status is the server's to set; generation starts at 1.
pub fn for_create(resource: &StrategyResource, object: &mut Value) {
    convert(resource, object);
    if resource.has_status {
        // The client's status is replaced by the one kube's strategy starts with.
        if let Some(fields) = object.as_object_mut() {
            fields.remove("status");
        }
        initial_status::set(resource, object);
    }
    if tracks_generation(resource) {
        set_generation(object, 1);
    }
    defaults::apply(resource, object);
}

/// PrepareForUpdate over the stored `old`: defaults first (so an omitted
/// field that defaults to its stored value is no change), then the generation
/// bump. Otherwise `metadata.generation` is left as the object carries it.
pub fn for_update(resource: &StrategyResource, object: &mut Value, old: &Value) {
    convert(resource, object);
    defaults::apply(resource, object);
    if is_crd(resource) && resource.subresource.is_empty() {
        crd::record_storage_version(object);
    }
    let counts = tracks_generation(resource) || crate::added_kinds::counts_spec_changes(resource);
    if counts && desired_state(old) != desired_state(object) {
        set_generation(object, generation(old) + 1);
    }
}

fn is_crd(resource: &StrategyResource) -> bool {
    resource.group == "apiextensions.k8s.io" && resource.resource == "customresourcedefinitions"
}

/// What kube's conversion to the internal version does to a written object:
/// a Secret's `stringData` becomes `data`.
fn convert(resource: &StrategyResource, object: &mut Value) {
    if resource.group.is_empty() && resource.resource == "secrets" {
        config::merge_string_data(object);
    }
}

/// Everything but metadata, status, apiVersion and kind: `spec`, and the
/// top-level lists of kinds without one (a webhook configuration's `webhooks`).
fn desired_state(object: &Value) -> Map<String, Value> {
    let mut fields = object.as_object().cloned().unwrap_or_default();
    for field in NOT_DESIRED_STATE {
        fields.remove(field);
    }
    fields
}

/// `metadata.generation`, 0 when absent.
fn generation(object: &Value) -> i64 {
    object
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

fn set_generation(object: &mut Value, generation: i64) {
    if let Some(metadata) = metadata_mut(object) {
        metadata.insert("generation".into(), json!(generation));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(group: &str, plural: &str, has_status: bool) -> StrategyResource {
        StrategyResource {
            group: group.into(),
            resource: plural.into(),
            has_status,
            ..Default::default()
        }
    }

    #[test]
    fn generation_table() {
        let tracked = [
            ("apps", "deployments"),
            ("apps", "daemonsets"),
            ("", "replicationcontrollers"),
            ("batch", "cronjobs"),
            ("policy", "poddisruptionbudgets"),
            ("networking.k8s.io", "ingresses"),
            (
                "admissionregistration.k8s.io",
                "validatingwebhookconfigurations",
            ),
        ];
        for (group, plural) in tracked {
            assert!(tracks_generation(&res(group, plural, true)), "{plural}");
        }
        for (group, plural) in [
            ("", "pods"),
            ("", "services"),
            ("apps", "controllerrevisions"),
        ] {
            assert!(!tracks_generation(&res(group, plural, true)), "{plural}");
        }
    }

    #[test]
    fn create_resets_status_and_starts_generation() {
        let mut d = json!({"metadata": {"name": "d", "generation": 7}, "spec": {},
                           "status": {"replicas": 5}});
        for_create(&res("apps", "deployments", true), &mut d);
        assert_eq!(d["status"], json!({}), "kube's empty DeploymentStatus");
        assert_eq!(d["metadata"]["generation"], 1);
        assert_eq!(d["spec"]["replicas"], 1);
    }

    #[test]
    fn create_keeps_status_without_status_subresource() {
        let mut cm = json!({"metadata": {"name": "c"}, "status": {"x": 1}});
        for_create(&res("", "configmaps", false), &mut cm);
        assert_eq!(cm, json!({"metadata": {"name": "c"}, "status": {"x": 1}}));
    }

    #[test]
    fn create_of_untracked_kind_has_no_generation() {
        let mut svc = json!({"metadata": {"name": "s"}, "spec": {}});
        for_create(&res("", "services", true), &mut svc);
        assert!(svc["metadata"].get("generation").is_none());
    }

    #[test]
    fn update_bumps_generation_when_desired_state_changes() {
        let old = json!({"metadata": {"generation": 4}, "spec": {"replicas": 1}});
        let mut new = json!({"metadata": {"generation": 4}, "spec": {"replicas": 2}});
        for_update(&res("apps", "replicasets", true), &mut new, &old);
        assert_eq!(new["metadata"]["generation"], 5);
    }

    #[test]
    fn update_leaves_generation_when_only_metadata_or_status_change() {
        let old = json!({"metadata": {"generation": 4}, "spec": {"replicas": 1}});
        let mut new = json!({"metadata": {"generation": 4, "labels": {"a": "b"}},
                             "spec": {"replicas": 1}, "status": {"replicas": 1}});
        for_update(&res("apps", "replicasets", true), &mut new, &old);
        assert_eq!(new["metadata"]["generation"], 4);
    }

    #[test]
    fn update_compares_after_defaults() {
        let mut stored = json!({"metadata": {"generation": 2}, "spec": {}});
        defaults::apply(&res("apps", "deployments", true), &mut stored);
        let mut new = json!({"metadata": {"generation": 2}, "spec": {}});
        for_update(&res("apps", "deployments", true), &mut new, &stored);
        assert_eq!(new["metadata"]["generation"], 2);
        assert_eq!(new["spec"], stored["spec"]);
    }

    #[test]
    fn update_counts_webhooks_and_starts_from_zero() {
        let resource = res(
            "admissionregistration.k8s.io",
            "mutatingwebhookconfigurations",
            false,
        );
        let old = json!({"metadata": {}, "webhooks": []});
        let mut new = json!({"metadata": {}, "webhooks": [{"name": "w"}]});
        for_update(&resource, &mut new, &old);
        assert_eq!(new["metadata"]["generation"], 1);
    }

    #[test]
    fn update_of_untracked_kind_leaves_generation() {
        let old = json!({"metadata": {"generation": 3}, "spec": {"type": "ClusterIP"}});
        let mut new = json!({"metadata": {"generation": 3}, "spec": {"type": "NodePort"}});
        for_update(&res("", "services", true), &mut new, &old);
        assert_eq!(new["metadata"]["generation"], 3);
        assert_eq!(new["spec"]["sessionAffinity"], "None");
    }
}
