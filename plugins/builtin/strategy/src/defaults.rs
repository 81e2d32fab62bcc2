//! The defaults users read back from a real cluster for the common kinds:
//! deployments (replicas, history, progress deadline, RollingUpdate
//! 25%/25%), replicas of replicasets, statefulsets and replication
//! controllers, pods and the pod templates of workloads (see
//! [`pod_defaults`]), services (ClusterIP, no session affinity, TCP ports
//! aimed at themselves), secrets (Opaque) and namespaces (their name label).
//! Applied on create and on every update.

use capstan_plugin_sdk::strategy::StrategyResource;
use serde_json::{json, Value};

use crate::json::{metadata_mut, name, object_at, set_default};
use crate::pod_defaults;

/// The label every namespace carries, with its own name as the value.
pub const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// Applies the defaults of `resource` to `object`.
pub fn apply(resource: &StrategyResource, object: &mut Value) {
    match (resource.group.as_str(), resource.resource.as_str()) {
        ("apps", "deployments") => deployment(object),
        ("apps", "replicasets" | "statefulsets") | ("", "replicationcontrollers") => {
            set_default(object, "/spec/replicas", json!(1))
        }
        ("", "pods") => pod_defaults::apply(object, "/spec"),
        ("", "services") => service(object),
        ("", "secrets") => set_default(object, "/type", json!("Opaque")),
        ("", "namespaces") => label_namespace(object),
        ("apiextensions.k8s.io", "customresourcedefinitions") => crate::crd::defaults(object),
        ("admissionregistration.k8s.io", plural) if crate::webhooks::is_configuration(plural) => {
            crate::webhooks::defaults(object, plural.starts_with("mutating"))
        }
        _ => crate::added_kinds::defaults(resource, object),
    }
    if let Some(at) = pod_template_spec(resource) {
        pod_defaults::apply(object, at);
    }
}

/// Where the pod template's spec is, for the kinds that have one: every
/// apps and batch kind and replication controllers.
fn pod_template_spec(resource: &StrategyResource) -> Option<&'static str> {
    let (group, plural) = (resource.group.as_str(), resource.resource.as_str());
    let has_template = group == "apps" || group == "batch" || plural == "replicationcontrollers";
    match (has_template, plural) {
        (false, _) => None,
        (true, "cronjobs") => Some("/spec/jobTemplate/spec/template/spec"),
        (true, _) => Some("/spec/template/spec"),
    }
}

fn deployment(object: &mut Value) {
    set_default(object, "/spec/replicas", json!(1));
    set_default(object, "/spec/revisionHistoryLimit", json!(10));
    set_default(object, "/spec/progressDeadlineSeconds", json!(600));
    set_default(object, "/spec/strategy", json!({}));
    set_default(object, "/spec/strategy/type", json!("RollingUpdate"));
    let strategy = object
        .pointer("/spec/strategy/type")
        .and_then(Value::as_str);
    if strategy == Some("RollingUpdate") {
        set_default(object, "/spec/strategy/rollingUpdate", json!({}));
        let rolling = "/spec/strategy/rollingUpdate";
        set_default(object, &format!("{rolling}/maxUnavailable"), json!("25%"));
        set_default(object, &format!("{rolling}/maxSurge"), json!("25%"));
    }
}

fn service(object: &mut Value) {
    set_default(object, "/spec/type", json!("ClusterIP"));
    set_default(object, "/spec/sessionAffinity", json!("None"));
    let Some(ports) = object
        .pointer_mut("/spec/ports")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for port in ports {
        set_default(port, "/protocol", json!("TCP"));
        if let Some(number) = port.get("port").cloned() {
            set_default(port, "/targetPort", number);
        }
    }
}

/// Namespaces carry their own name as the `kubernetes.io/metadata.name` label
/// (set even over a client's value; nothing when the name is not known yet).
fn label_namespace(object: &mut Value) {
    let Some(ns) = name(object).map(String::from) else {
        return;
    };
    let labels = metadata_mut(object).and_then(|m| object_at(m, "labels"));
    if let Some(labels) = labels {
        labels.insert(NAMESPACE_NAME_LABEL.into(), json!(ns));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(group: &str, plural: &str) -> StrategyResource {
        StrategyResource {
            group: group.into(),
            resource: plural.into(),
            ..Default::default()
        }
    }

    fn defaulted(group: &str, plural: &str, mut object: Value) -> Value {
        apply(&res(group, plural), &mut object);
        object
    }

    #[test]
    fn deployment_defaults() {
        let d = defaulted("apps", "deployments", json!({"spec": {}}));
        assert_eq!(
            d["spec"],
            json!({"replicas": 1, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
                   "strategy": {"type": "RollingUpdate",
                                "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}})
        );
    }

    #[test]
    fn deployment_keeps_its_values_and_recreate_gets_no_rolling_update() {
        let spec = json!({"replicas": 3, "strategy": {"type": "Recreate"},
                          "template": {"spec": {"containers": [{"image": "a:1"}]}}});
        let d = defaulted("apps", "deployments", json!({ "spec": spec }));
        assert_eq!(d["spec"]["replicas"], 3);
        assert_eq!(d["spec"]["strategy"], json!({"type": "Recreate"}));
        let template = &d["spec"]["template"]["spec"];
        assert_eq!(template["restartPolicy"], "Always");
        assert_eq!(template["containers"][0]["imagePullPolicy"], "IfNotPresent");
    }

    #[test]
    fn replicas_and_pod_templates_of_workloads() {
        for (group, plural) in [
            ("apps", "replicasets"),
            ("apps", "statefulsets"),
            ("", "replicationcontrollers"),
        ] {
            let w = defaulted(group, plural, json!({"spec": {"template": {"spec": {}}}}));
            assert_eq!(w["spec"]["replicas"], 1, "{plural}");
            assert_eq!(w["spec"]["template"]["spec"]["dnsPolicy"], "ClusterFirst");
        }
        let ds = defaulted(
            "apps",
            "daemonsets",
            json!({"spec": {"template": {"spec": {}}}}),
        );
        assert!(ds["spec"].get("replicas").is_none());
        assert_eq!(ds["spec"]["template"]["spec"]["restartPolicy"], "Always");
        let job = defaulted("batch", "jobs", json!({"spec": {"template": {"spec": {}}}}));
        assert_eq!(
            job["spec"]["template"]["spec"]["schedulerName"],
            "default-scheduler"
        );
    }

    #[test]
    fn cronjobs_default_their_job_template() {
        let cj = json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "OnFailure", "containers": [{"image": "busybox"}]}}}}}});
        let cj = defaulted("batch", "cronjobs", cj);
        let spec = &cj["spec"]["jobTemplate"]["spec"]["template"]["spec"];
        assert_eq!(spec["restartPolicy"], "OnFailure");
        assert_eq!(spec["containers"][0]["imagePullPolicy"], "Always");
        assert_eq!(spec["containers"][0]["terminationMessagePolicy"], "File");
    }

    #[test]
    fn service_defaults() {
        let svc = json!({"spec": {"ports": [{"port": 80}, {"port": 443, "targetPort": "https",
                                                            "protocol": "UDP"}]}});
        let svc = defaulted("", "services", svc);
        assert_eq!(svc["spec"]["type"], "ClusterIP");
        assert_eq!(svc["spec"]["sessionAffinity"], "None");
        assert_eq!(
            svc["spec"]["ports"],
            json!([{"port": 80, "protocol": "TCP", "targetPort": 80},
                   {"port": 443, "targetPort": "https", "protocol": "UDP"}])
        );
        let external = defaulted("", "services", json!({"spec": {"type": "ExternalName"}}));
        assert_eq!(external["spec"]["type"], "ExternalName");
    }

    #[test]
    fn secrets_are_opaque_by_default() {
        assert_eq!(defaulted("", "secrets", json!({}))["type"], "Opaque");
        let tls = defaulted("", "secrets", json!({"type": "kubernetes.io/tls"}));
        assert_eq!(tls["type"], "kubernetes.io/tls");
    }

    #[test]
    fn namespaces_are_labelled_with_their_name() {
        let ns = json!({"metadata": {"name": "team", "labels": {"a": "b",
                        NAMESPACE_NAME_LABEL: "other"}}});
        let ns = defaulted("", "namespaces", ns);
        assert_eq!(
            ns["metadata"]["labels"],
            json!({"a": "b", NAMESPACE_NAME_LABEL: "team"})
        );
        let bad_labels = defaulted(
            "",
            "namespaces",
            json!({"metadata": {"name": "x", "labels": 1}}),
        );
        assert_eq!(
            bad_labels["metadata"]["labels"],
            json!({NAMESPACE_NAME_LABEL: "x"})
        );
        let unnamed = defaulted(
            "",
            "namespaces",
            json!({"metadata": {"generateName": "x-"}}),
        );
        assert_eq!(unnamed, json!({"metadata": {"generateName": "x-"}}));
    }

    #[test]
    fn other_kinds_are_left_alone() {
        let cm = json!({"metadata": {"name": "c"}, "data": {"a": "b"}});
        assert_eq!(defaulted("", "configmaps", cm.clone()), cm);
        let pod_in_apps = json!({"spec": {}});
        assert_eq!(
            defaulted("", "podtemplates", pod_in_apps.clone()),
            pod_in_apps
        );
    }
}
