//! Expected values follow Go's `encoding/json` of kube's typed objects after
//! the protobuf storage round trip, and apimachinery's quantity.go.

use super::scalars::{bytes, micro_time, quantity, time};
use super::*;
use serde_json::json;

fn encoded(component: &str, mut obj: Value) -> Value {
    encode_as(component, &mut obj);
    obj
}

const CONFIG_MAP: &str = "io.k8s.api.core.v1.ConfigMap";

#[test]
fn omitempty_drops_zero_values_but_keeps_pointers_to_them() {
    let cm = encoded(
        CONFIG_MAP,
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "a", "labels": {}, "annotations": {"x": "1"}, "namespace": ""},
               "data": {}, "binaryData": null, "immutable": false}),
    );
    // data (map, omitempty) and labels go; immutable is a *bool: false stays.
    assert_eq!(
        cm,
        json!({"kind": "ConfigMap", "apiVersion": "v1",
               "metadata": {"name": "a", "creationTimestamp": null, "annotations": {"x": "1"}},
               "immutable": false})
    );
}

#[test]
fn fields_come_in_go_order_and_map_keys_sorted() {
    let cm = encoded(
        CONFIG_MAP,
        json!({"data": {"b": "2", "a": "1"}, "metadata": {"name": "a"}, "kind": "ConfigMap"}),
    );
    let keys: Vec<&String> = cm.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["kind", "metadata", "data"]);
    let data: Vec<&String> = cm["data"].as_object().unwrap().keys().collect();
    assert_eq!(data, ["a", "b"]);
}

#[test]
fn absent_structs_are_empty_objects_and_nil_slices_null() {
    let deploy = encoded(
        "io.k8s.api.apps.v1.Deployment",
        json!({"metadata": {"name": "d"}, "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}}),
    );
    // DeploymentStatus is a struct value (omitempty never drops a struct).
    assert_eq!(deploy["status"], json!({}));
    // selector is a *LabelSelector without omitempty: nil is written null;
    // revisionHistoryLimit (*int32, omitempty) stays absent.
    assert_eq!(deploy["spec"].get("selector"), Some(&Value::Null));
    assert!(deploy["spec"].get("revisionHistoryLimit").is_none());
    // DeploymentStrategy is a struct value.
    assert_eq!(deploy["spec"]["strategy"], json!({}));
    // ObjectMeta.creationTimestamp is a metav1.Time struct: zero is null.
    assert_eq!(
        deploy["spec"]["template"]["metadata"],
        json!({"creationTimestamp": null})
    );
    // Container.resources is a struct value; PodSpec.containers has no omitempty.
    assert_eq!(
        deploy["spec"]["template"]["spec"]["containers"][0]["resources"],
        json!({})
    );
    let role = encoded(
        "io.k8s.api.rbac.v1.Role",
        json!({"metadata": {"name": "r"}}),
    );
    // Role.rules has no omitempty: a nil slice encodes as null.
    assert_eq!(role["rules"], Value::Null);
    assert!(role.as_object().unwrap().contains_key("rules"));
    // An empty slice is nil after the protobuf round trip.
    let role = encoded("io.k8s.api.rbac.v1.Role", json!({"rules": []}));
    assert_eq!(role["rules"], Value::Null);
}

#[test]
fn null_becomes_the_zero_value_of_non_pointers() {
    let svc = encoded(
        "io.k8s.api.core.v1.Service",
        json!({"spec": {"ports": [{"port": null, "name": null, "targetPort": null}], "type": null}}),
    );
    // port (int32, no omitempty) is 0; name (omitempty) is dropped;
    // targetPort is an IntOrString struct: its zero encodes as 0.
    assert_eq!(svc["spec"]["ports"], json!([{"port": 0, "targetPort": 0}]));
    assert!(svc["spec"].get("type").is_none());
    let rs = encoded(
        "io.k8s.api.apps.v1.ReplicaSet",
        json!({"spec": {"replicas": 0, "minReadySeconds": 0}, "status": null}),
    );
    // replicas is *int32: 0 stays; minReadySeconds is int32 omitempty: dropped;
    // ReplicaSetStatus.replicas has no omitempty.
    assert_eq!(
        rs["spec"],
        json!({"replicas": 0, "selector": null, "template": {"metadata": {"creationTimestamp": null}, "spec": {"containers": null}}})
    );
    assert_eq!(rs["status"], json!({"replicas": 0}));
}

#[test]
fn pod_quantities_are_canonical_and_rounded_to_milli() {
    let pod = encoded(
        "io.k8s.api.core.v1.Pod",
        json!({"spec": {"containers": [{"name": "c", "resources": {
            "limits": {"cpu": "0.5", "memory": "1024Mi"},
            "requests": {"cpu": "100u", "memory": 1000}}}]}}),
    );
    let res = &pod["spec"]["containers"][0]["resources"];
    assert_eq!(res["limits"], json!({"cpu": "500m", "memory": "1Gi"}));
    // SetDefaults_ResourceList: 100u rounds up to 1m; 1000 is 1k.
    assert_eq!(res["requests"], json!({"cpu": "1m", "memory": "1k"}));
}

#[test]
fn quantities_follow_go_parse_and_string() {
    let q = |s: &str| quantity(json!(s), false);
    // Not kept by ParseQuantity's fast path: canonicalised.
    assert_eq!(q("0.5"), json!("500m"));
    assert_eq!(q("1000m"), json!("1"));
    assert_eq!(q("1024Mi"), json!("1Gi"));
    assert_eq!(q("1.5Gi"), json!("1536Mi"));
    assert_eq!(q("2000"), json!("2k"));
    assert_eq!(q("0Gi"), json!("0"));
    // apimachinery's TestQuantityParseEmit.
    for (given, want) in [
        ("1Ki", "1Ki"),
        ("1000M", "1G"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000000001Ki", "2n"),
        ("-1024Mi", "-1Gi"),
    ] {
        assert_eq!(q(given), json!(want), "{given}");
    }
    // DecimalExponent keeps its form: String() of 1e3 is "1e3".
    assert_eq!(q("1e3"), json!("1e3"));
    assert_eq!(q("1000e0"), json!("1e3"));
    // Kept as written by the fast path (scale a multiple of 3, no 000 tail).
    assert_eq!(q("1500m"), json!("1500m"));
    assert_eq!(q("+1"), json!("+1"));
    assert_eq!(q("100Ki"), json!("100Ki"));
    assert_eq!(q(" 2 "), json!("2"));
    // Zero Quantity; numbers decode like their text; garbage is left alone.
    assert_eq!(quantity(Value::Null, false), json!("0"));
    assert_eq!(quantity(json!(0.25), false), json!("250m"));
    assert_eq!(q("lots"), json!("lots"));
    // RoundUp(-3), away from zero, keeping the format.
    assert_eq!(quantity(json!("1n"), true), json!("1m"));
    assert_eq!(quantity(json!("-1500u"), true), json!("-2m"));
    assert_eq!(quantity(json!("1.0001Ki"), true), json!("1024103m"));
    assert_eq!(quantity(json!("1500m"), true), json!("1500m"));
}

#[test]
fn times_are_utc_at_their_precision() {
    assert_eq!(
        time(json!("2024-05-01T12:00:00.5+02:00")),
        json!("2024-05-01T10:00:00Z")
    );
    assert_eq!(
        time(json!("2024-05-01T10:00:00Z")),
        json!("2024-05-01T10:00:00Z")
    );
    assert_eq!(time(Value::Null), Value::Null);
    assert_eq!(time(json!("yesterday")), json!("yesterday"));
    assert_eq!(
        micro_time(json!("2024-05-01T10:00:00.1234567-01:00")),
        json!("2024-05-01T11:00:00.123456Z")
    );
    assert_eq!(
        micro_time(json!("2024-05-01T10:00:00Z")),
        json!("2024-05-01T10:00:00.000000Z")
    );
}

#[test]
fn bytes_are_standard_base64() {
    assert_eq!(bytes(json!("YWJj")), json!("YWJj"));
    // Go skips newlines and ignores trailing bits when decoding.
    assert_eq!(bytes(json!("YW\nJj")), json!("YWJj"));
    assert_eq!(bytes(json!("YR==")), json!("YQ=="));
    let secret = encoded(
        "io.k8s.api.core.v1.Secret",
        json!({"data": {"k": "YR=="}, "type": ""}),
    );
    assert_eq!(secret["data"], json!({"k": "YQ=="}));
    assert!(secret.get("type").is_none());
}

#[test]
fn unknown_components_and_fields_are_kept() {
    let obj = json!({"spec": {"x": [], "y": ""}});
    assert_eq!(encoded("io.example.v1.Widget", obj.clone()), obj);
    let cm = encoded(CONFIG_MAP, json!({"extra": []}));
    assert_eq!(cm["extra"], json!([]));
}

#[test]
fn every_struct_reference_resolves() {
    let text = include_str!("types.txt");
    let types = table::parse(text);
    for line in text.lines().filter(|l| l.starts_with("  ")) {
        if let Some(name) = line.split('@').nth(1) {
            assert!(types.lookup(name).is_some(), "{name} is not described");
        }
    }
    assert!(types.lookup("io.k8s.api.core.v1.Pod").is_some());
    assert!(types
        .lookup("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition")
        .is_some());
    assert!(types
        .lookup("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService")
        .is_some());
}

/// kube-apiserver 1.32's answer for a LimitRange with such a `max`
/// (checked against the real server).
#[test]
fn quantities_beyond_int64_are_capped_as_go_caps_them() {
    let huge = json!("99999999999999999999999999999Ei");
    assert_eq!(quantity(huge, false), json!("9223372036854775807"));
    assert_eq!(
        quantity(json!("-1e30"), false),
        json!("-9223372036854775807")
    );
    assert_eq!(quantity(json!("7Ei"), false), json!("7Ei"));
}
