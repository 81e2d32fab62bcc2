//! The defaults step: kube-apiserver's defaulting (`SetDefaults_*` and the
//! generated `SetObjectDefaults_*` of each group's `defaults.go`, with what
//! its v1 conversion shows) is each kind's (`KindRules::defaults`, kept in
//! `kinds/<group>/`). Applied to every written object, create and update,
//! before and after the strategy's preparation (kube defaults a request's
//! object when decoding it and again when reading it back from storage).

use capstan_plugin_sdk::strategy::StrategyResource;
use serde_json::Value;

/// Applies the defaults of `resource`'s kind to `object`.
pub fn apply(resource: &StrategyResource, object: &mut Value) {
    crate::kinds::rules(resource).defaults(resource, object);
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
