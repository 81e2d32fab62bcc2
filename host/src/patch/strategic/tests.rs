//! Strategic merge patch tests with the bodies kubectl sends (`apply`,
//! `set image`, `edit`, `label`, `annotate`, `patch`) against a small set of
//! OpenAPI v3 schemas shaped like kube's.

use serde_json::{json, Map, Value};

use super::strategic_merge;
use crate::patch::{apply_patch, PatchError, PatchType};

fn schemas() -> Map<String, Value> {
    let refer = |name: &str| json!({"allOf": [{"$ref": format!("#/components/schemas/{name}")}], "default": {}});
    let merge_list = |item: Value, key: &str| {
        json!({"type": "array", "items": item,
               "x-kubernetes-patch-merge-key": key, "x-kubernetes-patch-strategy": "merge"})
    };
    let string_map =
        json!({"type": "object", "additionalProperties": {"type": "string", "default": ""}});
    let v = json!({
        "Pod": {"type": "object", "properties": {"metadata": refer("ObjectMeta"), "spec": refer("PodSpec")}},
        "Deployment": {"type": "object", "properties": {"metadata": refer("ObjectMeta"), "spec": refer("DeploymentSpec")}},
        "DeploymentSpec": {"type": "object", "properties": {
            "replicas": {"type": "integer"},
            "template": refer("PodTemplateSpec"),
            "strategy": {"allOf": [{"$ref": "#/components/schemas/DeploymentStrategy"}],
                         "x-kubernetes-patch-strategy": "retainKeys"}
        }},
        "DeploymentStrategy": {"type": "object", "properties": {
            "type": {"type": "string"}, "rollingUpdate": {"type": "object"}
        }},
        "PodTemplateSpec": {"type": "object", "properties": {"metadata": refer("ObjectMeta"), "spec": refer("PodSpec")}},
        "PodSpec": {"type": "object", "properties": {
            "containers": merge_list(refer("Container"), "name"),
            "volumes": {"type": "array", "items": refer("Volume"),
                        "x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge,retainKeys"},
            "tolerations": {"type": "array", "items": refer("Toleration")},
            "nodeSelector": string_map
        }},
        "Container": {"type": "object", "properties": {
            "name": {"type": "string"}, "image": {"type": "string"},
            "args": {"type": "array", "items": {"type": "string"}},
            "ports": merge_list(refer("ContainerPort"), "containerPort"),
            "env": merge_list(refer("EnvVar"), "name")
        }},
        "ContainerPort": {"type": "object", "properties": {"containerPort": {"type": "integer"}}},
        "EnvVar": {"type": "object", "properties": {"name": {"type": "string"}, "value": {"type": "string"}}},
        "Volume": {"type": "object", "properties": {"name": {"type": "string"}}},
        "Toleration": {"type": "object", "properties": {"key": {"type": "string"}}},
        "ObjectMeta": {"type": "object", "properties": {
            "name": {"type": "string"},
            "labels": string_map, "annotations": string_map,
            "finalizers": {"type": "array", "items": {"type": "string"}, "x-kubernetes-patch-strategy": "merge"},
            "ownerReferences": merge_list(refer("OwnerReference"), "uid")
        }},
        "OwnerReference": {"type": "object", "properties": {"uid": {"type": "string"}}}
    });
    v.as_object().cloned().unwrap()
}

fn pod() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": "web", "labels": {"app": "web", "tier": "front"},
            "finalizers": ["example.com/a", "example.com/b"],
            "ownerReferences": [{"uid": "u1", "name": "rs-1"}, {"uid": "u2", "name": "rs-2"}]
        },
        "spec": {
            "containers": [
                {"name": "web", "image": "nginx:1.25",
                 "ports": [{"containerPort": 80, "name": "http"}, {"containerPort": 443}],
                 "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
                {"name": "sidecar", "image": "busybox", "args": ["sleep", "3600"]}
            ],
            "tolerations": [{"key": "a"}, {"key": "b"}],
            "nodeSelector": {"disk": "ssd"}
        }
    })
}

fn smp(original: &Value, patch: Value) -> Result<Value, PatchError> {
    strategic_merge(original, &patch, Some("Pod"), &schemas())
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect()
}

#[test]
fn set_image_changes_one_container_and_keeps_the_others() {
    let out = smp(
        &pod(),
        json!({"spec": {"$setElementOrder/containers": [{"name": "web"}, {"name": "sidecar"}],
                        "containers": [{"image": "nginx:1.27", "name": "web"}]}}),
    )
    .unwrap();
    let containers = &out["spec"]["containers"];
    assert_eq!(names(containers), ["web", "sidecar"]);
    assert_eq!(containers[0]["image"], "nginx:1.27");
    assert_eq!(
        containers[0]["ports"],
        pod()["spec"]["containers"][0]["ports"]
    );
    assert_eq!(containers[1], pod()["spec"]["containers"][1]);
}

#[test]
fn edit_deleting_a_container_uses_patch_delete() {
    let out = smp(
        &pod(),
        json!({"spec": {"$setElementOrder/containers": [{"name": "web"}],
                        "containers": [{"$patch": "delete", "name": "sidecar"}]}}),
    )
    .unwrap();
    assert_eq!(names(&out["spec"]["containers"]), ["web"]);
    assert_eq!(out["spec"]["containers"][0], pod()["spec"]["containers"][0]);
}

#[test]
fn set_element_order_reorders_and_places_new_items() {
    let out = smp(
        &pod(),
        json!({"spec": {"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "init"}, {"name": "web"}],
                        "containers": [{"name": "init", "image": "alpine"}]}}),
    )
    .unwrap();
    assert_eq!(
        names(&out["spec"]["containers"]),
        ["sidecar", "init", "web"]
    );
    assert_eq!(
        out["spec"]["containers"][1],
        json!({"name": "init", "image": "alpine"})
    );
}

#[test]
fn set_element_order_must_agree_with_the_patch_list() {
    let err = smp(
        &pod(),
        json!({"spec": {"$setElementOrder/containers": [{"name": "web"}],
                        "containers": [{"name": "other", "image": "x"}]}}),
    )
    .unwrap_err();
    assert_eq!(err.status_code(), 500);
    assert!(
        err.to_string().starts_with("the order in patch list:"),
        "{err}"
    );
}

#[test]
fn new_container_without_order_directive_goes_first() {
    // kube's mergeSortedSlice places a patch item that is not on the server
    // before the remaining server-only items.
    let out = smp(
        &pod(),
        json!({"spec": {"containers": [{"name": "init", "image": "alpine"}]}}),
    )
    .unwrap();
    assert_eq!(
        names(&out["spec"]["containers"]),
        ["init", "web", "sidecar"]
    );
}

#[test]
fn nested_merge_lists_merge_by_their_own_keys() {
    let out = smp(
        &pod(),
        json!({"spec": {"containers": [{"name": "web",
            "ports": [{"containerPort": 80, "protocol": "TCP"}],
            "env": [{"name": "B", "value": "changed"}, {"name": "A", "$patch": "delete"}]}]}}),
    )
    .unwrap();
    let web = &out["spec"]["containers"][0];
    assert_eq!(
        web["ports"],
        json!([{"containerPort": 80, "name": "http", "protocol": "TCP"}, {"containerPort": 443}])
    );
    assert_eq!(web["env"], json!([{"name": "B", "value": "changed"}]));
}

#[test]
fn lists_without_strategy_are_replaced() {
    let out = smp(
        &pod(),
        json!({"spec": {"tolerations": [{"key": "c"}], "containers": [{"name": "sidecar", "args": ["true"]}]}}),
    )
    .unwrap();
    assert_eq!(out["spec"]["tolerations"], json!([{"key": "c"}]));
    assert_eq!(out["spec"]["containers"][1]["args"], json!(["true"]));
}

#[test]
fn null_removes_a_label_and_others_merge() {
    let out = smp(
        &pod(),
        json!({"metadata": {"labels": {"tier": null, "env": "prod"}}}),
    )
    .unwrap();
    assert_eq!(
        out["metadata"]["labels"],
        json!({"app": "web", "env": "prod"})
    );
    assert_eq!(out["metadata"]["name"], "web");
}

#[test]
fn null_for_a_missing_field_is_not_stored() {
    let out = smp(
        &pod(),
        json!({"metadata": {"annotations": {"a": "1", "b": null}}, "status": null}),
    )
    .unwrap();
    assert_eq!(out["metadata"]["annotations"], json!({"a": "1"}));
    assert!(out.get("status").is_none());
}

#[test]
fn finalizers_union_and_delete_from_primitive_list() {
    let out = smp(
        &pod(),
        json!({"metadata": {"finalizers": ["example.com/c", "example.com/a"],
                            "$deleteFromPrimitiveList/finalizers": ["example.com/b"]}}),
    )
    .unwrap();
    assert_eq!(
        out["metadata"]["finalizers"],
        json!(["example.com/c", "example.com/a"])
    );

    let out = smp(
        &pod(),
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/a"]}}),
    )
    .unwrap();
    assert_eq!(out["metadata"]["finalizers"], json!(["example.com/b"]));
}

#[test]
fn owner_references_merge_by_uid() {
    let out = smp(
        &pod(),
        json!({"metadata": {"ownerReferences": [{"uid": "u2", "controller": true}, {"$patch": "delete", "uid": "u1"}]}}),
    )
    .unwrap();
    assert_eq!(
        out["metadata"]["ownerReferences"],
        json!([{"uid": "u2", "name": "rs-2", "controller": true}])
    );
}

#[test]
fn retain_keys_clears_fields_of_the_old_strategy() {
    let deployment = json!({"spec": {"replicas": 2, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
    let out = strategic_merge(
        &deployment,
        &json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
        Some("Deployment"),
        &schemas(),
    )
    .unwrap();
    assert_eq!(
        out["spec"],
        json!({"replicas": 2, "strategy": {"type": "Recreate"}})
    );
}

#[test]
fn retain_keys_not_covering_the_patch_is_a_bad_request() {
    let err = smp(
        &pod(),
        json!({"spec": {"nodeSelector": {"$retainKeys": ["disk"], "zone": "a"}}}),
    )
    .unwrap_err();
    assert_eq!(
        err,
        PatchError::BadRequest("invalid patch format of retainKeys".into())
    );
}

#[test]
fn replace_directive_on_a_map_replaces_it() {
    let out = smp(
        &pod(),
        json!({"metadata": {"labels": {"$patch": "replace", "only": "this"}}}),
    )
    .unwrap();
    assert_eq!(out["metadata"]["labels"], json!({"only": "this"}));
}

#[test]
fn delete_directive_on_a_map_empties_it_and_merge_is_the_default() {
    let out = smp(
        &pod(),
        json!({"spec": {"nodeSelector": {"$patch": "delete"}}}),
    )
    .unwrap();
    assert_eq!(out["spec"]["nodeSelector"], json!({}));
    let out = smp(
        &pod(),
        json!({"spec": {"nodeSelector": {"$patch": "merge", "zone": "a"}}}),
    )
    .unwrap();
    assert_eq!(
        out["spec"]["nodeSelector"],
        json!({"disk": "ssd", "zone": "a"})
    );
}

#[test]
fn replace_directive_in_a_merge_list_replaces_the_list() {
    let out = smp(
        &pod(),
        json!({"spec": {"containers": [{"$patch": "replace"}, {"name": "only", "image": "x"}]}}),
    )
    .unwrap();
    assert_eq!(
        out["spec"]["containers"],
        json!([{"name": "only", "image": "x"}])
    );
}

#[test]
fn kubectl_apply_patch_with_deployment_template() {
    let deployment = json!({
        "metadata": {"name": "web", "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
        "spec": {"replicas": 1, "template": {"metadata": {"labels": {"app": "web"}},
                 "spec": {"containers": [{"name": "web", "image": "nginx:1.25", "env": [{"name": "A", "value": "1"}]}]}}}
    });
    let body = br#"{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"new\":1}"}},
        "spec":{"replicas":3,"template":{"spec":{"$setElementOrder/containers":[{"name":"web"},{"name":"log"}],
        "containers":[{"$setElementOrder/env":[{"name":"B"},{"name":"A"}],"env":[{"name":"B","value":"2"}],"name":"web"},
                      {"image":"busybox","name":"log"}]}}}}"#;
    let out = apply_patch(
        PatchType::Strategic,
        &deployment,
        body,
        Some("Deployment"),
        &schemas(),
    )
    .unwrap();
    assert_eq!(out["spec"]["replicas"], 3);
    let containers = &out["spec"]["template"]["spec"]["containers"];
    assert_eq!(names(containers), ["web", "log"]);
    assert_eq!(names(&containers[0]["env"]), ["B", "A"]);
    assert_eq!(containers[0]["image"], "nginx:1.25");
    assert_eq!(
        out["spec"]["template"]["metadata"],
        json!({"labels": {"app": "web"}})
    );
    assert!(!out.to_string().contains("$setElementOrder"));
}

#[test]
fn new_fields_from_the_patch_carry_no_directives() {
    let original = json!({"spec": {}});
    let out = smp(
        &original,
        json!({"spec": {"containers": [{"name": "a", "image": "x", "env": [{"name": "E", "$patch": "delete"}]}],
                        "$setElementOrder/containers": [{"name": "a"}]}}),
    )
    .unwrap();
    assert_eq!(
        out["spec"]["containers"],
        json!([{"name": "a", "image": "x", "env": []}])
    );
}

#[test]
fn without_schema_maps_merge_and_lists_replace() {
    let original = json!({"spec": {"items": [1, 2], "config": {"a": 1, "b": 2}}});
    let out = strategic_merge(
        &original,
        &json!({"spec": {"items": [3], "config": {"b": null, "c": 3}}}),
        None,
        &Map::new(),
    )
    .unwrap();
    assert_eq!(
        out,
        json!({"spec": {"items": [3], "config": {"a": 1, "c": 3}}})
    );
}

#[test]
fn malformed_patch_bodies_are_bad_requests() {
    let err = apply_patch(
        PatchType::Strategic,
        &pod(),
        b"[1,2]",
        Some("Pod"),
        &schemas(),
    )
    .unwrap_err();
    assert_eq!(
        err,
        PatchError::BadRequest(
            "json: cannot unmarshal array into Go value of type map[string]interface {}".into()
        )
    );
    assert!(matches!(
        apply_patch(
            PatchType::Strategic,
            &pod(),
            b"{oops",
            Some("Pod"),
            &schemas()
        ),
        Err(PatchError::BadRequest(_))
    ));
    assert_eq!(
        smp(
            &pod(),
            json!({"metadata": {"$deleteFromPrimitiveListfinalizers": ["a"]}})
        ),
        Err(PatchError::BadRequest(
            "invalid patch format of primitive list".into()
        ))
    );
    assert_eq!(
        smp(
            &pod(),
            json!({"spec": {"$setElementOrder": [{"name": "web"}]}})
        ),
        Err(PatchError::BadRequest(
            "invalid patch format of setElementOrder list".into()
        ))
    );
}

#[test]
fn null_patch_changes_nothing() {
    let out = apply_patch(
        PatchType::Strategic,
        &pod(),
        b"null",
        Some("Pod"),
        &schemas(),
    )
    .unwrap();
    assert_eq!(out, pod());
}

#[test]
fn merge_list_items_missing_their_key_fail_like_kube() {
    let err = smp(&pod(), json!({"spec": {"containers": [{"image": "x"}]}})).unwrap_err();
    assert_eq!(
        err,
        PatchError::Internal("map: map[image:x] does not contain declared merge key: name".into())
    );
}
