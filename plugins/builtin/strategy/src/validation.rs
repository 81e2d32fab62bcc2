//! The Validate step: kube-apiserver's per-kind validation (`ValidatePod`,
//! `ValidateDeployment`, `ValidateService`, `ValidateConfigMap`, ...) of the
//! object to store, and on update the rules against the stored object.
//! A pod resize gets the pod's validation and the resize rules; other
//! subresource writes and other kinds get no causes.

use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::Value;

use std::collections::HashSet;

use crate::{
    apps, batch, config, crd, ingress, metadata, network_policy, pods, policy, rbac, scheduling,
    services, webhooks, workloads,
};

/// The causes for writing `object` (over `old` on update) to `resource`.
pub fn validate(resource: &StrategyResource, object: &Value, old: Option<&Value>) -> Vec<Cause> {
    if crate::pod_resize::applies(resource) {
        return pod_resize(object, old);
    }
    if !resource.subresource.is_empty() {
        return Vec::new();
    }
    let mut causes = metadata::validate(object);
    causes.extend(
        match (resource.group.as_str(), resource.resource.as_str()) {
            ("", "pods") => pods::validate(object, old),
            ("apps", plural @ ("deployments" | "replicasets"))
            | ("", plural @ "replicationcontrollers") => workloads::validate(plural, object, old),
            ("apps", "statefulsets") => apps::stateful_set(object, old),
            ("apps", "daemonsets") => apps::daemon_set(object, old),
            ("apps", "controllerrevisions") => apps::controller_revision(object, old),
            ("batch", "jobs") => batch::job(object, old),
            ("batch", "cronjobs") => batch::cron_job(object, old),
            ("networking.k8s.io", "ingresses") => ingress::ingress(object, old),
            ("networking.k8s.io", "ingressclasses") => ingress::ingress_class(object, old),
            ("networking.k8s.io", "networkpolicies") => network_policy::network_policy(object, old),
            ("policy", "poddisruptionbudgets") => policy::pod_disruption_budget(object, old),
            ("", "services") => services::validate(object, old),
            ("", "configmaps") => config::configmap(object, old),
            ("", "secrets") => config::secret(object, old),
            ("rbac.authorization.k8s.io", "roles") => rbac::role(object, true),
            ("rbac.authorization.k8s.io", "clusterroles") => rbac::role(object, false),
            ("rbac.authorization.k8s.io", "rolebindings") => rbac::binding(object, old, false),
            ("rbac.authorization.k8s.io", "clusterrolebindings") => {
                rbac::binding(object, old, true)
            }
            ("apiextensions.k8s.io", "customresourcedefinitions") => crd::validate(object, old),
            ("scheduling.k8s.io", "priorityclasses") => scheduling::validate(object, old),
            ("admissionregistration.k8s.io", plural) if webhooks::is_configuration(plural) => {
                webhooks::validate(object, old, plural.starts_with("mutating"))
            }
            (group, plural) => crate::core_kinds::validate(group, plural, object, old)
                .unwrap_or_else(|| crate::added_kinds::validate(resource, object, old)),
        },
    );
    deduplicated(causes)
}

/// kube's ValidatePodResize: the pod as any pod, then the resize itself.
fn pod_resize(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let Some(old) = old else {
        return Vec::new();
    };
    let mut causes = metadata::validate(object);
    let spec = object.get("spec").unwrap_or(&Value::Null);
    causes.extend(pods::validate_spec(spec, "spec"));
    causes.extend(crate::pod_resize::validate(object, old));
    deduplicated(causes)
}

/// kube's message lists each "field: message" once; so do the causes here.
fn deduplicated(causes: Vec<Cause>) -> Vec<Cause> {
    let mut seen: HashSet<(String, String)> = HashSet::with_capacity(causes.len());
    causes
        .into_iter()
        .filter(|c| seen.insert((c.field.clone(), c.message.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_causes_are_listed_once() {
        let cause = |field: &str, message: &str| Cause {
            cause_type: "FieldValueInvalid".into(),
            field: field.into(),
            message: message.into(),
        };
        let kept = deduplicated(vec![
            cause("spec.a", "Invalid value: 1"),
            cause("spec.b", "Invalid value: 1"),
            cause("spec.a", "Invalid value: 1"),
            cause("spec.a", "Invalid value: 2"),
        ]);
        let shown: Vec<String> = kept
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(
            shown,
            vec![
                "spec.a: Invalid value: 1",
                "spec.b: Invalid value: 1",
                "spec.a: Invalid value: 2"
            ]
        );
    }
}
