//! PrepareForCreate and PrepareForUpdate: what the server sets on a write
//! before validating and storing it. The kind's conversion comes first,
//! then defaults, and defaults again last (kube defaults the decoded
//! request and the object read back from storage). On create: no client
//! status when status is a subresource, the initial status,
//! `metadata.generation` 1, each kind's own preparation. On update: each
//! kind's own preparation, then `metadata.generation` bumped when what the
//! kind's generation follows changed (see [`generation`]). What is the
//! kind's own is its rules' (`crate::kinds`); the files here hold the
//! preparations the rules name.

mod generation;

use capstan_plugin_sdk::strategy::StrategyResource;
use serde_json::Value;

use crate::{defaults, initial_status};

/// PrepareForCreate: status is the server's to set; generation starts at 1.
pub fn for_create(resource: &StrategyResource, object: &mut Value) {
    let rules = crate::kinds::rules(resource);
    rules.convert(object);
    defaults::apply(resource, object);
    if resource.has_status && !rules.keeps_created_status() {
        // The client's status is replaced by the one kube's strategy starts with.
        if let Some(fields) = object.as_object_mut() {
            fields.remove("status");
        }
        initial_status::set(resource, object);
    }
    generation::on_create(rules.generation(), object);
    if resource.subresource.is_empty() {
        rules.prepare_for_create(object);
    }
    defaults::apply(resource, object);
}

/// PrepareForUpdate over the stored `old`: defaults first (so an omitted
/// field that defaults to its stored value is no change), the kind's
/// preparation, then the generation bump. Otherwise `metadata.generation`
/// is left as the object carries it.
pub fn for_update(resource: &StrategyResource, object: &mut Value, old: &Value) {
    let rules = crate::kinds::rules(resource);
    rules.convert(object);
    defaults::apply(resource, object);
    if resource.subresource.is_empty() {
        rules.prepare_for_update(object, old);
    } else if crate::kinds::core::pod_resize::applies(resource) {
        crate::kinds::core::pod_resize::prepare(object, old);
    }

    generation::on_update(rules.generation(), object, old);
    defaults::apply(resource, object);
}

/// What kube's decoder does to a written object: conversion and defaults,
/// without the strategy's preparation.
pub fn defaults_only(resource: &StrategyResource, object: &mut Value) {
    if object.is_object() {
        crate::kinds::rules(resource).convert(object);
        defaults::apply(resource, object);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn res(group: &str, plural: &str, has_status: bool) -> StrategyResource {
        StrategyResource {
            group: group.into(),
            resource: plural.into(),
            has_status,
            ..Default::default()
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
