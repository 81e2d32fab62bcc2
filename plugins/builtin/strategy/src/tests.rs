//! Whole calls, as the host makes them: JSON in through the SDK's dispatcher,
//! JSON out, for every phase.

use capstan_plugin_sdk::testing::call_strategy;
use serde_json::{json, Value};

use super::Strategy;

/// `field: message` of each cause, as the causes of one Invalid read.
pub(crate) fn messages(causes: &[capstan_plugin_sdk::Cause]) -> Vec<String> {
    causes
        .iter()
        .map(|c| format!("{}: {}", c.field, c.message))
        .collect()
}

fn call(input: Value) -> Value {
    match call_strategy::<Strategy>(&input) {
        Ok(answer) => answer,
        Err(e) => panic!("call failed: {e}"),
    }
}

fn resource(api_version: &str, plural: &str, kind: &str, has_status: bool) -> Value {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    json!({"group": group, "version": version, "resource": plural, "kind": kind,
           "subresource": "", "hasStatus": has_status})
}

fn pods() -> Value {
    resource("v1", "pods", "Pod", true)
}

fn deployments() -> Value {
    resource("apps/v1", "deployments", "Deployment", true)
}

fn deployment(replicas: i64, generation: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "web", "namespace": "default", "generation": generation},
           "spec": {"replicas": replicas,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}})
}

/// A deployment as the store holds it after its create.
fn stored_deployment(replicas: i64, generation: i64) -> Value {
    let mut stored = call(
        json!({"phase": "prepare-for-create", "resource": deployments(),
                                 "object": deployment(replicas, generation)}),
    )["object"]
        .clone();
    stored["metadata"]["generation"] = json!(generation);
    stored
}

#[test]
fn create_answers_the_prepared_object_and_its_causes() {
    let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]},
                     "status": {"phase": "Running"}});
    let out = call(json!({"phase": "create", "resource": pods(), "object": pod}));
    assert_eq!(
        out["causes"],
        json!([{"type": "FieldValueRequired", "field": "spec.containers[0].image",
                "message": "Required value"}])
    );
    let object = &out["object"];
    assert_eq!(
        object["status"],
        json!({"phase": "Pending", "qosClass": "BestEffort"})
    );
    assert_eq!(object["spec"]["restartPolicy"], "Always");
    // No image: kube's ParseImageName fails, there is no tag, so IfNotPresent.
    assert_eq!(
        object["spec"]["containers"][0]["imagePullPolicy"],
        "IfNotPresent"
    );
    assert_eq!(out.as_object().map(|o| o.len()), Some(2));
}

#[test]
fn create_of_a_valid_pod_has_defaults_and_no_causes() {
    let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "a", "image": "nginx:1.27",
         "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}},
        {"name": "b", "image": "registry:5000/app",
         "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}});
    let out = call(json!({"phase": "create", "resource": pods(), "object": pod}));
    assert_eq!(out["causes"], json!([]));
    let spec = &out["object"]["spec"];
    assert_eq!(spec["restartPolicy"], "Always");
    assert_eq!(spec["dnsPolicy"], "ClusterFirst");
    assert_eq!(spec["terminationGracePeriodSeconds"], 30);
    assert_eq!(spec["schedulerName"], "default-scheduler");
    let a = &spec["containers"][0];
    assert_eq!(a["imagePullPolicy"], "IfNotPresent");
    assert_eq!(a["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(a["terminationMessagePolicy"], "File");
    assert_eq!(spec["containers"][1]["imagePullPolicy"], "Always");
    assert_eq!(out["object"]["status"]["qosClass"], "Guaranteed");
}

#[test]
fn create_drops_status_only_when_it_is_a_subresource() {
    let mut d = deployment(2, 9);
    d["status"] = json!({"replicas": 2});
    let out = call(json!({"phase": "create", "resource": deployments(), "object": d.clone()}));
    assert_eq!(
        out["object"]["status"],
        json!({}),
        "reset to kube's empty status"
    );
    assert_eq!(out["object"]["metadata"]["generation"], 1);
    let no_status = resource("apps/v1", "deployments", "Deployment", false);
    let out = call(json!({"phase": "create", "resource": no_status, "object": d}));
    assert_eq!(out["object"]["status"], json!({"replicas": 2}));
}

#[test]
fn create_defaults_a_deployment() {
    let mut d = deployment(1, 0);
    if let Some(spec) = d["spec"].as_object_mut() {
        spec.remove("replicas");
    }
    let out = call(json!({"phase": "create", "resource": deployments(), "object": d}));
    assert_eq!(out["causes"], json!([]));
    let spec = &out["object"]["spec"];
    assert_eq!(spec["replicas"], 1);
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate",
               "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    );
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Always");
}

#[test]
fn create_defaults_services_secrets_and_namespaces() {
    let svc = json!({"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}});
    let out = call(
        json!({"phase": "create", "resource": resource("v1", "services", "Service", true),
                          "object": svc}),
    );
    assert_eq!(out["causes"], json!([]));
    assert_eq!(out["object"]["spec"]["type"], "ClusterIP");
    assert_eq!(out["object"]["spec"]["sessionAffinity"], "None");
    assert_eq!(
        out["object"]["spec"]["ports"],
        json!([{"port": 80, "protocol": "TCP", "targetPort": 80}])
    );
    let secret = json!({"metadata": {"name": "s"}, "data": {}});
    let out = call(
        json!({"phase": "create", "resource": resource("v1", "secrets", "Secret", false),
                          "object": secret}),
    );
    assert_eq!(out["object"]["type"], "Opaque");
    assert_eq!(out["causes"], json!([]));
    let ns = json!({"metadata": {"name": "team"}, "status": {"phase": "Terminating"}});
    let out = call(json!({"phase": "create",
                          "resource": resource("v1", "namespaces", "Namespace", true),
                          "object": ns}));
    assert_eq!(
        out["object"]["metadata"]["labels"]["kubernetes.io/metadata.name"],
        "team"
    );
    assert_eq!(out["object"]["status"], json!({"phase": "Active"}));
}

#[test]
fn update_bumps_generation_only_when_the_spec_changes() {
    let old = stored_deployment(1, 3);
    let mut relabelled = deployment(1, 3);
    relabelled["metadata"]["labels"] = json!({"tier": "front"});
    let out = call(json!({"phase": "update", "resource": deployments(),
                          "object": relabelled, "oldObject": old.clone()}));
    assert_eq!(out["causes"], json!([]));
    assert_eq!(out["object"]["metadata"]["generation"], 3);
    assert_eq!(out["object"]["spec"], old["spec"]);
    let out = call(json!({"phase": "update", "resource": deployments(),
                          "object": deployment(4, 3), "oldObject": old}));
    assert_eq!(out["object"]["metadata"]["generation"], 4);
    assert_eq!(out["object"]["spec"]["replicas"], 4);
    assert_eq!(out["object"]["spec"]["revisionHistoryLimit"], 10);
}

#[test]
fn update_validates_against_the_stored_object() {
    let services = resource("v1", "services", "Service", true);
    let old = json!({"metadata": {"name": "s"}, "spec": {"clusterIP": "10.0.0.1",
                     "ports": [{"port": 80}]}});
    let new = json!({"metadata": {"name": "s"}, "spec": {"clusterIP": "10.0.0.2",
                     "ports": [{"port": 80}]}});
    let out = call(
        json!({"phase": "update", "resource": services, "object": new,
                          "oldObject": old}),
    );
    let fields: Vec<&str> = out["causes"]
        .as_array()
        .map(|c| c.iter().filter_map(|c| c["field"].as_str()).collect())
        .unwrap_or_default();
    assert!(fields.contains(&"spec.clusterIPs[0]"), "{fields:?}");
    assert_eq!(out["object"]["spec"]["ports"][0]["targetPort"], 80);
    assert!(out["object"]["metadata"].get("generation").is_none());
}

#[test]
fn update_keeps_status_and_skips_validation_of_subresources() {
    let mut status = pods();
    status["subresource"] = json!("status");
    let old = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}});
    let mut new = old.clone();
    new["status"] = json!({"phase": "Running"});
    let out = call(json!({"phase": "update", "resource": status, "object": new,
                          "oldObject": old}));
    assert_eq!(out["causes"], json!([]));
    assert_eq!(out["object"]["status"], json!({"phase": "Running"}));
}

#[test]
fn update_needs_an_old_object_and_an_object() {
    let err = call_strategy::<Strategy>(&json!({"phase": "update", "resource": pods(),
                                                "object": {"spec": {}}}));
    assert_eq!(
        err,
        Err("update of pods: an update needs oldObject".to_string())
    );
    let err = call_strategy::<Strategy>(&json!({"phase": "create", "resource": pods(),
                                                "object": [1]}));
    assert_eq!(
        err,
        Err("create of pods: the object is not a JSON object".to_string())
    );
}

#[test]
fn prepare_phases_answer_only_the_object() {
    let out = call(
        json!({"phase": "prepare-for-create", "resource": deployments(),
                          "object": deployment(2, 0)}),
    );
    assert_eq!(out.as_object().map(|o| o.len()), Some(1));
    assert_eq!(out["object"]["metadata"]["generation"], 1);
    let old = stored_deployment(2, 1);
    let out = call(
        json!({"phase": "prepare-for-update", "resource": deployments(),
                          "object": deployment(5, 1), "oldObject": old}),
    );
    assert_eq!(out.as_object().map(|o| o.len()), Some(1));
    assert_eq!(out["object"]["metadata"]["generation"], 2);
}

#[test]
fn validate_answers_with_kube_shaped_causes() {
    let out = call(json!({"phase": "validate", "resource": pods(),
        "object": {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}}));
    assert_eq!(
        out,
        json!({"causes": [{"type": "FieldValueRequired",
            "field": "spec.containers[0].image", "message": "Required value"}]})
    );
}

#[test]
fn subresources_other_kinds_and_valid_objects_get_no_causes() {
    let mut status = pods();
    status["subresource"] = json!("status");
    let empty = json!({"causes": []});
    assert_eq!(
        call(json!({"phase": "validate", "resource": status, "object": {"spec": {}}})),
        empty
    );
    let ns = resource("v1", "namespaces", "Namespace", true);
    assert_eq!(
        call(json!({"phase": "validate", "resource": ns, "object": {"metadata": {"name": "x"}}})),
        empty
    );
    let pod = json!({"spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    assert_eq!(
        call(json!({"phase": "validate", "resource": pods(), "object": pod})),
        empty
    );
}

#[test]
fn validate_with_old_object_checks_the_update() {
    let old = json!({"spec": {"containers": [{"name": "c", "image": "a"}]}});
    let new =
        json!({"spec": {"containers": [{"name": "c", "image": "a"}, {"name": "d", "image": "b"}]}});
    let out =
        call(json!({"phase": "validate", "resource": pods(), "object": new, "oldObject": old}));
    assert_eq!(
        out["causes"][0]["message"],
        "Forbidden: pod updates may not add or remove containers"
    );
    assert_eq!(out["causes"][0]["type"], "FieldValueForbidden");
}

#[test]
fn table_prints_the_objects_of_the_call() {
    let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}});
    let out = call(
        json!({"phase": "table", "resource": pods(), "now": "2024-01-01T00:00:00Z",
                          "objects": [pod]}),
    );
    assert_eq!(out["columnDefinitions"][2]["name"], "Status");
    assert_eq!(out["rows"][0]["cells"][0], "p");
    let out = call(
        json!({"phase": "table", "resource": resource("v1", "widgets", "Widget", false),
                          "now": "2024-01-01T00:00:00Z", "objects": [{}]}),
    );
    assert_eq!(out, json!({}));
}

#[test]
fn create_of_a_job_generates_its_selector_from_the_uid() {
    let job = json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default", "uid": "0b3c"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "pi", "image": "perl:5.34"}]}}},
        "status": {"succeeded": 1}});
    let out = call(json!({"phase": "create", "object": job,
                          "resource": resource("batch/v1", "jobs", "Job", true)}));
    let job = &out["object"];
    let labels = json!({"batch.kubernetes.io/controller-uid": "0b3c",
                        "batch.kubernetes.io/job-name": "pi",
                        "controller-uid": "0b3c", "job-name": "pi"});
    assert_eq!(job["metadata"]["labels"], labels);
    assert_eq!(job["metadata"]["generation"], 1);
    assert_eq!(job["status"], json!({}));
    let mut spec = job["spec"].clone();
    let template = spec.as_object_mut().and_then(|s| s.remove("template"));
    assert_eq!(
        spec,
        json!({"parallelism": 1, "completions": 1, "backoffLimit": 6,
               "completionMode": "NonIndexed", "suspend": false,
               "podReplacementPolicy": "TerminatingOrFailed", "manualSelector": false,
               "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "0b3c"}}})
    );
    assert_eq!(template.unwrap_or_default()["metadata"]["labels"], labels);
}

#[test]
fn create_of_a_namespace_adds_the_kubernetes_finalizer_and_update_keeps_it() {
    let namespaces = resource("v1", "namespaces", "Namespace", true);
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}});
    let created =
        call(json!({"phase": "create", "resource": namespaces, "object": ns}))["object"].clone();
    assert_eq!(created["spec"], json!({"finalizers": ["kubernetes"]}));
    assert_eq!(created["status"], json!({"phase": "Active"}));
    let mut changed = created.clone();
    changed["spec"]["finalizers"] = json!([]);
    let updated = call(json!({"phase": "update", "resource": namespaces,
                              "object": changed, "oldObject": created}));
    assert_eq!(
        updated["object"]["spec"]["finalizers"],
        json!(["kubernetes"])
    );
}

#[test]
fn create_of_a_persistent_volume_starts_pending_since_its_creation() {
    let pv = json!({"apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": "pv", "creationTimestamp": "2024-05-01T10:00:00Z"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "hostPath": {"path": "/data"}},
        "status": {"phase": "Bound"}});
    let out = call(json!({"phase": "prepare-for-create", "object": pv,
        "resource": resource("v1", "persistentvolumes", "PersistentVolume", true)}));
    let pv = &out["object"];
    assert_eq!(
        pv["status"],
        json!({"phase": "Pending", "lastPhaseTransitionTime": "2024-05-01T10:00:00Z"})
    );
    assert_eq!(pv["spec"]["persistentVolumeReclaimPolicy"], "Retain");
    assert_eq!(pv["spec"]["volumeMode"], "Filesystem");
    assert_eq!(pv["spec"]["hostPath"]["type"], "");
}
