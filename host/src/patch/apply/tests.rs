//! Server-side apply: ownership, removal of dropped fields, conflicts, force.

use serde_json::{json, Value};

use super::{conflict_message, server_side_apply, Applier, ApplyError};
use crate::catalogue::Catalogue;

const CM: &str = "io.k8s.api.core.v1.ConfigMap";
const DEPLOY: &str = "io.k8s.api.apps.v1.Deployment";

fn by(manager: &str, force: bool) -> Applier<'_> {
    Applier {
        manager,
        force,
        api_version: "v1",
        skip_status: true,
        subresource: "",
    }
}

fn apply(
    current: Option<&Value>,
    applied: Value,
    who: &Applier<'_>,
    schema: &str,
) -> Result<Value, ApplyError> {
    let catalogue = Catalogue::builtin();
    server_side_apply(current, &applied, who, Some(schema), catalogue.schemas())
}

fn cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data})
}

#[test]
fn fields_a_manager_stops_applying_are_removed() {
    let first = apply(None, cm(json!({"a": "1", "b": "2"})), &by("mgr", false), CM).unwrap();
    let entry = &first["metadata"]["managedFields"][0];
    assert_eq!(entry["manager"], "mgr");
    assert_eq!(entry["operation"], "Apply");
    assert_eq!(entry["fieldsV1"], json!({"f:data": {"f:a": {}, "f:b": {}}}));
    let second = apply(
        Some(&first),
        cm(json!({"b": "2", "c": "3"})),
        &by("mgr", false),
        CM,
    )
    .unwrap();
    assert_eq!(second["data"], json!({"b": "2", "c": "3"}));
}

#[test]
fn a_field_another_applier_owns_with_another_value_conflicts() {
    let first = apply(None, cm(json!({"a": "1"})), &by("alice", false), CM).unwrap();
    let err = apply(Some(&first), cm(json!({"a": "2"})), &by("bob", false), CM).unwrap_err();
    let ApplyError::Conflicts(conflicts) = err else {
        panic!("conflicts expected")
    };
    assert_eq!(
        conflict_message(&conflicts),
        r#"Apply failed with 1 conflict: conflict with "alice" using v1: .data.a"#
    );
    let forced = apply(Some(&first), cm(json!({"a": "2"})), &by("bob", true), CM).unwrap();
    assert_eq!(forced["data"]["a"], "2");
    let managers: Vec<&str> = forced["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["manager"].as_str().unwrap())
        .collect();
    assert_eq!(managers, ["bob"], "alice lost her only field");
}

#[test]
fn shared_fields_stay_while_one_owner_still_applies_them() {
    let first = apply(None, cm(json!({"a": "1"})), &by("alice", false), CM).unwrap();
    let shared = apply(
        Some(&first),
        cm(json!({"a": "1", "b": "x"})),
        &by("bob", false),
        CM,
    )
    .unwrap();
    let bob_done = apply(Some(&shared), cm(json!({"b": "x"})), &by("bob", false), CM).unwrap();
    assert_eq!(bob_done["data"]["a"], "1", "alice still owns a");
    let nothing = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let alice_done = apply(Some(&bob_done), nothing, &by("alice", false), CM).unwrap();
    assert_eq!(alice_done["data"], json!({"b": "x"}));
}

#[test]
fn containers_are_owned_by_name() {
    let d = |containers: Value| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
               "spec": {"template": {"spec": {"containers": containers}}}})
    };
    let first = apply(
        None,
        d(json!([{"name": "web", "image": "nginx:1"}, {"name": "side", "image": "busybox"}])),
        &by("mgr", false),
        DEPLOY,
    )
    .unwrap();
    let fields = &first["metadata"]["managedFields"][0]["fieldsV1"];
    assert!(
        fields["f:spec"]["f:template"]["f:spec"]["f:containers"]
            .get(r#"k:{"name":"web"}"#)
            .is_some(),
        "{fields}"
    );
    let second = apply(
        Some(&first),
        d(json!([{"name": "web", "image": "nginx:2"}])),
        &by("mgr", false),
        DEPLOY,
    )
    .unwrap();
    let containers = &second["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers.as_array().unwrap().len(), 1, "{containers}");
    assert_eq!(containers[0]["image"], "nginx:2");
}

#[test]
fn several_conflicts_are_listed_per_manager() {
    let conflicts = vec![
        (
            "kubectl-edit".to_string(),
            "v1".to_string(),
            ".data.a".to_string(),
        ),
        (
            "kubectl-edit".to_string(),
            "v1".to_string(),
            ".data.b".to_string(),
        ),
    ];
    assert_eq!(
        conflict_message(&conflicts),
        "Apply failed with 2 conflicts: conflicts with \"kubectl-edit\" using v1:\n- .data.a\n- .data.b"
    );
}

#[test]
fn an_apply_to_status_is_its_own_entry_listed_before_updates() {
    let fs = "io.k8s.api.flowcontrol.v1.FlowSchema";
    let update = json!({"manager": "producer", "operation": "Update", "apiVersion": "v1",
                        "time": "2024-01-01T00:00:00Z", "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:spec": {"f:matchingPrecedence": {}}}});
    let current = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
                         "metadata": {"name": "f", "managedFields": [update]},
                         "spec": {"matchingPrecedence": 10}});
    let condition =
        json!({"type": "Dangling", "status": "False", "reason": "Found", "message": "m"});
    let status = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
                        "metadata": {"name": "f"}, "status": {"conditions": [condition]}});
    let who = Applier {
        skip_status: false,
        subresource: "status",
        ..by("consumer", true)
    };
    let first = apply(Some(&current), status.clone(), &who, fs).unwrap();
    let entries = first["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(
        entries[0]["manager"], "consumer",
        "Apply entries come first"
    );
    assert_eq!(entries[0]["subresource"], "status");
    assert_eq!(
        entries[0]["fieldsV1"]["f:status"]["f:conditions"]["k:{\"type\":\"Dangling\"}"]["f:reason"],
        json!({})
    );
    assert_eq!(entries[1]["manager"], "producer");
    assert_eq!(first["spec"]["matchingPrecedence"], 10);
    let main = apply(Some(&first), cm(json!({})), &by("consumer", true), CM).unwrap();
    let kept = main["metadata"]["managedFields"].as_array().unwrap();
    assert!(
        kept.iter().any(|e| e["subresource"] == "status"),
        "the same manager's apply of the object is another entry: {kept:?}"
    );
}
