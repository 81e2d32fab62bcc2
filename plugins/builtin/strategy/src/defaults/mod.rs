//! kube-apiserver's defaulting (`SetDefaults_*` and the generated
//! `SetObjectDefaults_*` of each group's `defaults.go`, with what its v1
//! conversion shows), one function per kind in a file per API group, found
//! through [`TABLE`]. Applied to every written object, create and update,
//! before and after the strategy's preparation (kube defaults a request's
//! object when decoding it and again when reading it back from storage).
//!
//! A new kind's defaults: a function in its group's file and one row here.

mod apps;
mod batch;
mod cluster;
mod core;
mod networking;
pub mod pod;

use capstan_plugin_sdk::strategy::StrategyResource;
use serde_json::Value;

pub use self::batch::labels_from_template as job_labels_from_template;

/// A kind's defaulter.
type Defaulter = fn(&mut Value);

/// Every kind with defaults: (group, plural, defaulter).
#[rustfmt::skip]
const TABLE: &[(&str, &str, Defaulter)] = &[
    ("", "pods", pod::pod),
    ("", "podtemplates", core::pod_template),
    ("", "replicationcontrollers", core::replication_controller),
    ("", "services", core::service),
    ("", "secrets", core::secret),
    ("", "namespaces", core::namespace),
    ("", "persistentvolumes", core::persistent_volume),
    ("", "persistentvolumeclaims", core::persistent_volume_claim),
    ("", "endpoints", core::endpoints),
    ("", "limitranges", core::limit_range),
    ("", "nodes", core::node),
    ("apps", "deployments", apps::deployment),
    ("apps", "replicasets", apps::replica_set),
    ("apps", "statefulsets", apps::stateful_set),
    ("apps", "daemonsets", apps::daemon_set),
    ("batch", "jobs", batch::job),
    ("batch", "cronjobs", batch::cron_job),
    ("networking.k8s.io", "networkpolicies", networking::network_policy),
    ("networking.k8s.io", "ingressclasses", networking::ingress_class),
    ("discovery.k8s.io", "endpointslices", networking::endpoint_slice),
    ("storage.k8s.io", "storageclasses", cluster::storage_class),
    ("scheduling.k8s.io", "priorityclasses", cluster::priority_class),
    ("rbac.authorization.k8s.io", "rolebindings", cluster::binding),
    ("rbac.authorization.k8s.io", "clusterrolebindings", cluster::binding),
    ("apiregistration.k8s.io", "apiservices", cluster::api_service),
    ("apiextensions.k8s.io", "customresourcedefinitions", crate::crd::defaults),
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations", mutating_webhooks),
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations", validating_webhooks),
];

/// Applies the defaults of `resource` to `object`.
pub fn apply(resource: &StrategyResource, object: &mut Value) {
    match defaulter(&resource.group, &resource.resource) {
        Some(defaulter) => defaulter(object),
        None => crate::added_kinds::defaults(resource, object),
    }
}

fn defaulter(group: &str, plural: &str) -> Option<Defaulter> {
    TABLE
        .iter()
        .find(|(g, p, _)| *g == group && *p == plural)
        .map(|(_, _, defaulter)| *defaulter)
}

fn mutating_webhooks(object: &mut Value) {
    crate::webhooks::defaults(object, true);
}

fn validating_webhooks(object: &mut Value) {
    crate::webhooks::defaults(object, false);
}

/// `object` after the defaulter `f` (the kinds' tests).
#[cfg(test)]
pub(crate) fn with(f: fn(&mut Value), mut object: Value) -> Value {
    f(&mut object);
    object
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn defaulted(group: &str, plural: &str, mut object: Value) -> Value {
        let resource = StrategyResource {
            group: group.into(),
            resource: plural.into(),
            ..Default::default()
        };
        apply(&resource, &mut object);
        object
    }

    #[test]
    fn every_row_is_unique() {
        for (i, (group, plural, _)) in TABLE.iter().enumerate() {
            let first = TABLE.iter().position(|(g, p, _)| g == group && p == plural);
            assert_eq!(first, Some(i), "{group}/{plural} listed twice");
        }
    }

    #[test]
    fn every_pod_template_is_defaulted() {
        let template =
            || json!({"metadata": {}, "spec": {"containers": [{"name": "c", "image": "x"}]}});
        let kinds = [
            ("apps", "deployments", "/spec/template"),
            ("apps", "replicasets", "/spec/template"),
            ("apps", "statefulsets", "/spec/template"),
            ("apps", "daemonsets", "/spec/template"),
            ("batch", "jobs", "/spec/template"),
            ("batch", "cronjobs", "/spec/jobTemplate/spec/template"),
            ("", "replicationcontrollers", "/spec/template"),
            ("", "podtemplates", "/template"),
        ];
        for (group, plural, at) in kinds {
            let mut object = json!({});
            let mut cursor = &mut object;
            for key in at.trim_start_matches('/').split('/') {
                cursor = &mut cursor[key];
            }
            *cursor = template();
            let object = defaulted(group, plural, object);
            let spec = object
                .pointer(&format!("{at}/spec"))
                .cloned()
                .unwrap_or_default();
            assert_eq!(spec["terminationGracePeriodSeconds"], 30, "{plural}");
            assert_eq!(
                spec["containers"][0]["imagePullPolicy"], "Always",
                "{plural}"
            );
            assert!(
                spec.get("enableServiceLinks").is_none(),
                "{plural}: a pod's only"
            );
        }
    }

    #[test]
    fn kinds_without_defaults_are_left_alone() {
        let cm = json!({"metadata": {"name": "c"}, "data": {"a": "b"}});
        assert_eq!(defaulted("", "configmaps", cm.clone()), cm);
        let role = json!({"rules": [{"verbs": ["get"]}]});
        assert_eq!(
            defaulted("rbac.authorization.k8s.io", "roles", role.clone()),
            role
        );
    }

    #[test]
    fn webhook_configurations_are_defaulted_by_mode() {
        let hooks = json!({"webhooks": [{"name": "w"}]});
        let mutating = defaulted(
            "admissionregistration.k8s.io",
            "mutatingwebhookconfigurations",
            hooks.clone(),
        );
        assert_eq!(mutating["webhooks"][0]["reinvocationPolicy"], "Never");
        let validating = defaulted(
            "admissionregistration.k8s.io",
            "validatingwebhookconfigurations",
            hooks,
        );
        assert!(validating["webhooks"][0]
            .get("reinvocationPolicy")
            .is_none());
        assert_eq!(validating["webhooks"][0]["timeoutSeconds"], 10);
    }
}
