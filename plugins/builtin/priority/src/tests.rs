use super::*;
use capstan_plugin_sdk::{json, testing, Operation, Value};

fn class(name: &str, value: i64, global_default: bool, policy: Option<&str>) {
    let mut class =
        json!({"metadata": {"name": name}, "value": value, "globalDefault": global_default});
    if let Some(policy) = policy {
        class["preemptionPolicy"] = json!(policy);
    }
    testing::put_object("scheduling.k8s.io/v1", "priorityclasses", class);
}

fn create_pod(pod: Value) -> (AdmissionResponse, Value) {
    let req = testing::request(Operation::Create, "v1", "pods", "Pod", "ns", pod.clone());
    let r = Priority::review(&req).unwrap();
    let out = testing::apply_patch(&pod, &r).unwrap();
    (r, out)
}

fn pod(spec: Value) -> Value {
    json!({"metadata": {"name": "web"}, "spec": spec})
}

#[test]
fn without_classes_a_pod_gets_zero_and_preempt_lower_priority() {
    testing::reset();
    let (r, out) = create_pod(pod(json!({"containers": []})));
    assert!(r.allowed);
    assert_eq!(out["spec"]["priority"], 0);
    assert_eq!(out["spec"]["preemptionPolicy"], "PreemptLowerPriority");
    assert_eq!(out["spec"]["priorityClassName"], Value::Null);
    let (_, bare) = create_pod(json!({"metadata": {"name": "bare"}}));
    assert_eq!(bare["spec"]["priority"], 0);
}

#[test]
fn a_named_class_gives_its_value_and_policy() {
    testing::reset();
    class("high", 1000, false, Some("Never"));
    let (_, out) = create_pod(pod(json!({"priorityClassName": "high"})));
    assert_eq!(out["spec"]["priority"], 1000);
    assert_eq!(out["spec"]["preemptionPolicy"], "Never");
    class("plain", 5, false, None);
    let (_, out) = create_pod(pod(json!({"priorityClassName": "plain"})));
    assert_eq!(out["spec"]["priority"], 5);
    assert_eq!(out["spec"]["preemptionPolicy"], Value::Null);
}

#[test]
fn the_global_default_of_lowest_value_is_taken_by_name() {
    testing::reset();
    class("a-default", 300, true, Some("PreemptLowerPriority"));
    class("b-default", 200, true, Some("Never"));
    class("other", 100, false, None);
    let (_, out) = create_pod(pod(json!({})));
    assert_eq!(out["spec"]["priorityClassName"], "b-default");
    assert_eq!(out["spec"]["priority"], 200);
    assert_eq!(out["spec"]["preemptionPolicy"], "Never");
}

#[test]
fn an_unknown_class_is_refused_with_kubes_message() {
    testing::reset();
    let (r, _) = create_pod(pod(json!({"priorityClassName": "gold"})));
    assert_eq!(r.code(), 403);
    assert_eq!(
        r.message(),
        r#"pods "web" is forbidden: no PriorityClass with name gold was found"#
    );
}

#[test]
fn a_priority_or_policy_differing_from_the_class_is_refused() {
    testing::reset();
    class("high", 1000, false, Some("PreemptLowerPriority"));
    let (r, _) = create_pod(pod(json!({"priorityClassName": "high", "priority": 7})));
    assert_eq!(
        r.message(),
        r#"pods "web" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name"#
    );
    let (r, _) = create_pod(pod(
        json!({"priorityClassName": "high", "preemptionPolicy": "Never"}),
    ));
    assert_eq!(
        r.message(),
        r#"pods "web" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name"#
    );
    let (r, out) = create_pod(pod(json!({"priorityClassName": "high", "priority": 1000})));
    assert!(r.allowed);
    assert_eq!(out["spec"]["priority"], 1000);
}

#[test]
fn an_update_keeps_the_priority_it_leaves_out() {
    testing::reset();
    let old = pod(json!({"priority": 10, "preemptionPolicy": "Never"}));
    let new = pod(json!({"containers": []}));
    let mut req = testing::request(Operation::Update, "v1", "pods", "Pod", "ns", new.clone());
    req.old_object = Some(old);
    let r = Priority::review(&req).unwrap();
    let out = testing::apply_patch(&new, &r).unwrap();
    assert_eq!(out["spec"]["priority"], 10);
    assert_eq!(out["spec"]["preemptionPolicy"], "Never");
}

#[test]
fn only_one_priority_class_may_be_the_global_default() {
    testing::reset();
    class("first", 100, true, None);
    let second = json!({"metadata": {"name": "second"}, "value": 5, "globalDefault": true});
    let req = |op, obj: &Value| {
        testing::request(
            op,
            "scheduling.k8s.io/v1",
            "priorityclasses",
            "PriorityClass",
            "",
            obj.clone(),
        )
    };
    let r = Priority::review(&req(Operation::Create, &second)).unwrap();
    assert_eq!(r.code(), 403);
    assert_eq!(
        r.message(),
        r#"priorityclasses.scheduling.k8s.io "second" is forbidden: PriorityClass first is already marked as default. Only one default can exist"#
    );
    assert!(
        !Priority::review(&req(Operation::Update, &second))
            .unwrap()
            .allowed
    );
    let first = json!({"metadata": {"name": "first"}, "value": 100, "globalDefault": true});
    assert!(
        Priority::review(&req(Operation::Update, &first))
            .unwrap()
            .allowed
    );
    let plain = json!({"metadata": {"name": "third"}, "value": 1});
    assert!(
        Priority::review(&req(Operation::Create, &plain))
            .unwrap()
            .allowed
    );
}
