use super::*;
use capstan_plugin_sdk::{json, testing};

fn runtime_class(class: Value) {
    testing::put_object("node.k8s.io/v1", "runtimeclasses", class);
}

fn create(pod: Value) -> (AdmissionResponse, Value) {
    let req = testing::request(Operation::Create, "v1", "pods", "Pod", "ns", pod.clone());
    let r = RuntimeClass::review(&req).unwrap();
    let out = testing::apply_patch(&pod, &r).unwrap();
    (r, out)
}

fn pod(spec: Value) -> Value {
    json!({"metadata": {"name": "web"}, "spec": spec})
}

#[test]
fn a_pod_gets_its_classs_overhead_and_scheduling() {
    testing::reset();
    runtime_class(json!({"metadata": {"name": "kata"}, "handler": "kata",
        "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
        "scheduling": {"nodeSelector": {"runtime": "kata"},
            "tolerations": [{"key": "kata", "operator": "Exists", "effect": "NoSchedule"}]}}));
    let (r, out) = create(pod(
        json!({"runtimeClassName": "kata", "nodeSelector": {"disk": "ssd"}}),
    ));
    assert!(r.allowed);
    assert_eq!(
        out["spec"]["overhead"],
        json!({"cpu": "250m", "memory": "120Mi"})
    );
    assert_eq!(
        out["spec"]["nodeSelector"],
        json!({"disk": "ssd", "runtime": "kata"})
    );
    assert_eq!(
        out["spec"]["tolerations"],
        json!([{"key": "kata", "operator": "Exists", "effect": "NoSchedule"}])
    );
}

#[test]
fn a_missing_class_is_refused_with_kubes_message() {
    testing::reset();
    let (r, _) = create(pod(json!({"runtimeClassName": "gvisor"})));
    assert_eq!(r.code(), 403);
    assert_eq!(
        r.message(),
        r#"pods "web" is forbidden: pod rejected: RuntimeClass "gvisor" not found"#
    );
}

#[test]
fn overheads_the_class_does_not_define_are_refused() {
    testing::reset();
    runtime_class(json!({"metadata": {"name": "plain"}, "handler": "runc"}));
    runtime_class(
        json!({"metadata": {"name": "kata"}, "handler": "kata", "overhead": {"podFixed": {"cpu": "250m"}}}),
    );
    let own = json!({"cpu": "1"});
    let (r, _) = create(pod(json!({"runtimeClassName": "kata", "overhead": own})));
    assert_eq!(
        r.message(),
        r#"pods "web" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"#
    );
    let (r, _) = create(pod(json!({"runtimeClassName": "plain", "overhead": own})));
    assert_eq!(
        r.message(),
        r#"pods "web" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"#
    );
    let (r, _) = create(pod(json!({"overhead": own})));
    assert_eq!(r.code(), 403);
    let (r, out) = create(pod(
        json!({"runtimeClassName": "kata", "overhead": {"cpu": "0.25"}}),
    ));
    assert!(r.allowed, "{}", r.message());
    assert_eq!(out["spec"]["overhead"], json!({"cpu": "250m"}));
}

#[test]
fn a_conflicting_node_selector_is_refused() {
    testing::reset();
    runtime_class(json!({"metadata": {"name": "kata"}, "handler": "kata",
        "scheduling": {"nodeSelector": {"runtime": "kata"}}}));
    let (r, _) = create(pod(
        json!({"runtimeClassName": "kata", "nodeSelector": {"runtime": "runc"}}),
    ));
    assert_eq!(
        r.message(),
        r#"pods "web" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[runtime] = kata; pod.spec.nodeSelector[runtime] = runc"#
    );
}

#[test]
fn pods_without_a_class_are_left_alone() {
    testing::reset();
    let plain = pod(json!({"containers": [], "tolerations": []}));
    let (r, out) = create(plain.clone());
    assert!(r.allowed);
    assert_eq!(out, plain);
}
