//! Multi-tenancy policy `require-quota`: a pod, or a controller's pod
//! template (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob),
//! may only be created in a namespace that has at least one ResourceQuota,
//! so no tenant runs workloads without a bound. It lists the ResourceQuotas
//! of the request's namespace through the host import `list-objects` (the
//! server's watch cache). Its settings exempt namespaces:
//! `{"exemptNamespaces": ["kube-system"]}`. Updates are not checked: a
//! quota removed later does not block existing workloads.

use capstan_plugin_sdk::{host, AdmissionPlugin, AdmissionRequest, AdmissionResponse, Operation};
use pod_policy::pod_spec;
use serde::Deserialize;

/// The settings.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
struct Settings {
    /// Namespaces where workloads need no quota.
    exempt_namespaces: Vec<String>,
}

/// The plugin.
pub struct RequireQuota;

impl AdmissionPlugin for RequireQuota {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        if req.operation != Operation::Create || pod_spec(req).is_none() {
            return Ok(AdmissionResponse::allow());
        }
        let settings: Settings = host::config()?;
        let namespace = req.namespace.as_str();
        if settings.exempt_namespaces.iter().any(|n| n == namespace) {
            return Ok(AdmissionResponse::allow());
        }
        let quotas = host::list_objects("v1", "resourcequotas", Some(namespace), None, None)?;
        if !quotas.is_empty() {
            return Ok(AdmissionResponse::allow());
        }
        let message = format!(
            "namespace {namespace:?} has no ResourceQuota; workloads may only be created in a namespace with at least one"
        );
        Ok(AdmissionResponse::forbidden(req, &message))
    }
}

capstan_plugin_sdk::admission_plugin!(RequireQuota);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::{json, testing, Value};

    fn pod(namespace: &str) -> AdmissionRequest {
        let obj = json!({"metadata": {"name": "web", "namespace": namespace},
                         "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}});
        testing::request(Operation::Create, "v1", "pods", "Pod", namespace, obj)
    }

    fn deployment(namespace: &str) -> AdmissionRequest {
        let obj = json!({"metadata": {"name": "api", "namespace": namespace},
                         "spec": {"template": {"spec": {"containers": [{"name": "api"}]}}}});
        testing::request(
            Operation::Create,
            "apps/v1",
            "deployments",
            "Deployment",
            namespace,
            obj,
        )
    }

    fn quota(namespace: &str, name: &str) {
        let q: Value = json!({"apiVersion": "v1", "kind": "ResourceQuota",
                              "metadata": {"name": name, "namespace": namespace},
                              "spec": {"hard": {"pods": "10"}}});
        testing::put_object("v1", "resourcequotas", q);
    }

    fn setup() {
        testing::reset();
        testing::set_config(json!({"exemptNamespaces": ["kube-system"]}));
    }

    #[test]
    fn a_namespace_with_a_quota_admits_pods_and_templates() {
        setup();
        quota("team-a", "compute");
        assert!(RequireQuota::review(&pod("team-a")).unwrap().allowed);
        assert!(RequireQuota::review(&deployment("team-a")).unwrap().allowed);
    }

    #[test]
    fn a_namespace_without_one_refuses_them_even_when_another_has_one() {
        setup();
        quota("team-a", "compute");
        let r = RequireQuota::review(&pod("team-b")).unwrap();
        assert!(!r.allowed);
        assert_eq!(r.code(), 403);
        assert_eq!(
            r.message(),
            "pods \"web\" is forbidden: namespace \"team-b\" has no ResourceQuota; workloads may only be created in a namespace with at least one"
        );
        let r = RequireQuota::review(&deployment("team-b")).unwrap();
        assert!(
            r.message().starts_with(
                "deployments.apps \"api\" is forbidden: namespace \"team-b\" has no ResourceQuota"
            ),
            "{}",
            r.message()
        );
    }

    #[test]
    fn exempt_namespaces_updates_and_other_resources_read_nothing() {
        setup();
        testing::fail_reads(Some("must not be read"));
        assert!(RequireQuota::review(&pod("kube-system")).unwrap().allowed);
        let mut update = pod("team-b");
        update.operation = Operation::Update;
        assert!(RequireQuota::review(&update).unwrap().allowed);
        let cm = testing::request(
            Operation::Create,
            "v1",
            "configmaps",
            "ConfigMap",
            "team-b",
            json!({"metadata": {"name": "c"}}),
        );
        assert!(RequireQuota::review(&cm).unwrap().allowed);
    }

    #[test]
    fn without_settings_no_namespace_is_exempt() {
        testing::reset();
        assert!(!RequireQuota::review(&pod("kube-system")).unwrap().allowed);
    }

    #[test]
    fn a_failed_read_fails_the_call_so_the_failure_policy_decides() {
        setup();
        testing::fail_reads(Some("the cache is not ready"));
        let e = RequireQuota::review(&pod("team-b")).unwrap_err();
        assert_eq!(e, "the cache is not ready");
    }
}
