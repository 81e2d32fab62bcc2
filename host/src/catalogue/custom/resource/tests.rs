use serde_json::json;

use super::*;

fn crd(established: bool) -> Value {
    let status = if established { "True" } else { "False" };
    json!({
        "metadata": {"name": "widgets.example.com", "resourceVersion": "7"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"], "categories": ["all"]},
            "versions": [
                {"name": "v1", "served": true, "storage": true,
                 "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "description": "the spec"}}}},
                 "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
                 "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size", "priority": 1}],
                 "selectableFields": [{"jsonPath": ".spec.color"}]},
                {"name": "v1beta1", "served": true, "storage": false, "deprecated": true},
                {"name": "v1alpha1", "served": false, "storage": false}
            ]
        },
        "status": {
            "acceptedNames": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList", "shortNames": ["wd"], "categories": ["all"]},
            "conditions": [{"type": "Established", "status": status}]
        }
    })
}

#[test]
fn a_crd_is_served_once_established_in_each_served_version() {
    assert!(entries(&crd(false), &Default::default()).is_empty());
    let served = entries(&crd(true), &Default::default());
    let versions: Vec<&str> = served.iter().map(|e| e.info.version.as_str()).collect();
    assert_eq!(versions, ["v1", "v1beta1"]);
    let v1 = &served[0].info;
    assert_eq!(v1.schema_name, "com.example.v1.Widget");
    assert_eq!(
        (v1.kind.as_str(), v1.list_kind.as_str()),
        ("Widget", "WidgetList")
    );
    assert_eq!(v1.short_names, ["wd"]);
    assert!(v1.namespaced && v1.has_subresource("status") && v1.has_subresource("scale"));
    let custom = v1.custom.as_ref().unwrap();
    assert_eq!(custom.storage_version, "v1");
    assert_eq!(custom.selectable_fields, ["spec.color"]);
    assert_eq!(custom.printer_columns[0].priority, 1);
    assert_eq!(
        custom.scale.as_ref().unwrap().spec_replicas,
        ".spec.replicas"
    );
}

#[test]
fn a_version_without_columns_prints_age_and_a_deprecated_one_warns() {
    let served = entries(&crd(true), &Default::default());
    let beta = served[1].info.custom.as_ref().unwrap();
    assert_eq!(beta.printer_columns[0].name, "Age");
    assert_eq!(
        beta.deprecation_warning.as_deref(),
        Some("example.com/v1beta1 Widget is deprecated")
    );
}

#[test]
fn the_published_schema_has_kube_metadata_and_gvk() {
    let served = entries(&crd(true), &Default::default());
    let schema = &served[0].schema;
    assert_eq!(schema["properties"]["spec"]["description"], "the spec");
    assert!(schema["properties"]["metadata"]["allOf"][0]["$ref"]
        .as_str()
        .unwrap()
        .ends_with("ObjectMeta"));
    assert_eq!(
        schema["x-kubernetes-group-version-kind"],
        json!([{"group": "example.com", "kind": "Widget", "version": "v1"}])
    );
}
