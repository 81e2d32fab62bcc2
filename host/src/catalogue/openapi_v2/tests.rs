use serde_json::{json, Value};

use super::wire::{fields, Field};
use super::*;
use crate::catalogue::openapi::OpenApiCache;

fn doc() -> Value {
    v2_document(&Catalogue::builtin())
}

fn refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(obj) => {
            if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
                out.push(r.to_string());
            }
            obj.values().for_each(|v| refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[test]
fn document_has_kube_top_level_shape() {
    let d = doc();
    assert_eq!(d["swagger"], "2.0");
    assert_eq!(d["info"]["title"], "Kubernetes");
    assert_eq!(d["info"]["version"], "1.33");
    assert_eq!(d["security"], json!([{"BearerToken": []}]));
    assert_eq!(d["securityDefinitions"]["BearerToken"]["type"], "apiKey");
    assert_eq!(
        d["securityDefinitions"]["BearerToken"]["name"],
        "authorization"
    );
}

#[test]
fn paths_carry_kube_operations_for_every_group() {
    let d = doc();
    let paths = &d["paths"];
    let coll = &paths["/apis/apps/v1/namespaces/{namespace}/deployments"];
    assert_eq!(coll["get"]["operationId"], "listAppsV1NamespacedDeployment");
    assert_eq!(coll["get"]["x-kubernetes-action"], "list");
    assert_eq!(
        coll["get"]["responses"]["200"]["schema"]["$ref"],
        "#/definitions/io.k8s.api.apps.v1.DeploymentList"
    );
    assert_eq!(coll["get"]["consumes"], json!(["*/*"]));
    let post = &coll["post"];
    assert_eq!(
        post["parameters"][0],
        json!({"in": "body", "name": "body", "required": true,
               "schema": {"$ref": "#/definitions/io.k8s.api.apps.v1.Deployment"}})
    );
    assert_eq!(post["schemes"], json!(["https"]));
    let item = &paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"];
    let patch = &item["patch"];
    assert_eq!(patch["operationId"], "patchAppsV1NamespacedDeployment");
    assert!(patch["consumes"]
        .as_array()
        .unwrap()
        .contains(&json!("application/strategic-merge-patch+json")));
    let field_validation = patch["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "fieldValidation")
        .unwrap();
    assert_eq!(field_validation["in"], "query");
    assert_eq!(field_validation["type"], "string");
    assert!(field_validation.get("schema").is_none());
    assert_eq!(
        patch["x-kubernetes-group-version-kind"],
        json!({"group": "apps", "kind": "Deployment", "version": "v1"})
    );
    assert_eq!(item["parameters"][0]["in"], "path");
    assert_eq!(item["parameters"][0]["type"], "string");
    assert_eq!(
        paths["/api/v1/nodes"]["get"]["operationId"],
        "listCoreV1Node"
    );
    assert!(paths["/apis/batch/v1/namespaces/{namespace}/jobs/{name}/status"].is_object());
}

/// kubectl's model parser refuses a document whose definitions refer to
/// a missing definition; paths may only name the kinds the catalogue has
/// no schema for (the review kinds, answered but not described yet).
#[test]
fn every_ref_is_a_definition() {
    let cat = Catalogue::builtin();
    let d = v2_document(&cat);
    let defs = d["definitions"].as_object().unwrap();
    let missing = |value: &Value| -> std::collections::BTreeSet<String> {
        let mut all = Vec::new();
        refs(value, &mut all);
        assert!(!all.is_empty());
        all.iter()
            .filter_map(|r| r.strip_prefix("#/definitions/"))
            .map(str::to_string)
            .filter(|name| !defs.contains_key(name))
            .collect()
    };
    assert_eq!(missing(&d["definitions"]), Default::default());
    let shared = d["parameters"].as_object().unwrap();
    let mut all = Vec::new();
    refs(&d["paths"], &mut all);
    for name in all.iter().filter_map(|r| r.strip_prefix("#/parameters/")) {
        assert!(shared.contains_key(name), "{name}");
    }
    for name in missing(&d["paths"]) {
        let resource = cat.resources().iter().find(|r| r.schema_name == name);
        assert!(resource.is_some_and(|r| !r.has_verb("list")), "{name}");
    }
}

#[test]
fn definitions_are_kube_v2_shaped() {
    let d = doc();
    let defs = &d["definitions"];
    let deployment = &defs["io.k8s.api.apps.v1.Deployment"];
    assert_eq!(
        deployment["properties"]["spec"],
        json!({"$ref": "#/definitions/io.k8s.api.apps.v1.DeploymentSpec",
               "description": "Specification of the desired behavior of the Deployment."})
    );
    assert_eq!(
        deployment["x-kubernetes-group-version-kind"],
        json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
    );
    let replicas = &defs["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["replicas"];
    assert_eq!(replicas["type"], "integer");
    assert_eq!(replicas["format"], "int32");
    let int_or_string = &defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"];
    assert_eq!(int_or_string["type"], "string");
    assert_eq!(int_or_string["format"], "int-or-string");
    assert!(int_or_string.get("oneOf").is_none());
    assert_eq!(
        defs["io.k8s.apimachinery.pkg.api.resource.Quantity"]["type"],
        "string"
    );
    let containers = &defs["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
    assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
    assert_eq!(containers["x-kubernetes-patch-strategy"], "merge");
    assert_eq!(
        containers["items"]["$ref"],
        "#/definitions/io.k8s.api.core.v1.Container"
    );
    let text = serde_json::to_string(&d).unwrap();
    assert!(!text.contains("#/components/schemas/"));
    let pod = serde_json::to_string(&defs["io.k8s.api.core.v1.PodSpec"]).unwrap();
    assert!(!pod.contains("allOf"));
}

/// A custom resource's schema as the catalogue will hold it (v3 form):
/// what Swagger 2.0 cannot say goes the way kube's ToStructuralOpenAPIV2
/// takes it.
#[test]
fn structural_schema_constructs_follow_kube_v2_rules() {
    let mut cat = Catalogue::builtin();
    let widget = json!({
        "type": "object",
        "required": ["spec"],
        "properties": {
            "metadata": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}], "description": "meta"},
            "spec": {
                "type": "object",
                "required": ["size", "note"],
                "properties": {
                    "size": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}], "pattern": "^\\d+$"},
                    "note": {"type": "string", "nullable": true},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"a": {"type": "string"}}},
                    "embedded": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"kind": {"type": "string"}}},
                    "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set", "maxItems": 3},
                    "anything": {"type": "array", "x-kubernetes-preserve-unknown-fields": true, "items": {"type": "string"}},
                    "mode": {"type": "string", "enum": ["a", "b"], "default": "a", "oneOf": [{"pattern": "a"}], "not": {"pattern": "c"}},
                    "labels": {"type": "object", "additionalProperties": {"type": "string", "nullable": true}, "required": ["x"]}
                }
            }
        },
        "x-kubernetes-group-version-kind": [{"group": "example.com", "kind": "Widget", "version": "v1"}]
    });
    cat.insert_schema("com.example.v1.Widget", widget);
    cat.insert_schema(
        "com.example.v1.Blob",
        json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
               "description": "d", "properties": {"spec": {"type": "object"}},
               "x-kubernetes-group-version-kind": [{"group": "example.com", "kind": "Blob", "version": "v1"}]}),
    );
    let d = v2_document(&cat);
    let w = &d["definitions"]["com.example.v1.Widget"];
    assert_eq!(
        w["properties"]["metadata"],
        json!({"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "description": "meta"})
    );
    let spec = &w["properties"]["spec"];
    assert_eq!(spec["required"], json!(["size"]));
    let p = &spec["properties"];
    assert_eq!(
        p["size"],
        json!({"pattern": "^\\d+$", "x-kubernetes-int-or-string": true})
    );
    assert_eq!(p["note"], json!({}));
    assert_eq!(
        p["free"],
        json!({"x-kubernetes-preserve-unknown-fields": true})
    );
    assert_eq!(
        p["embedded"],
        json!({"properties": {"kind": {"type": "string"}}, "type": "object",
               "x-kubernetes-embedded-resource": true})
    );
    assert_eq!(p["tags"]["type"], "array");
    assert_eq!(p["tags"]["x-kubernetes-list-type"], "set");
    assert_eq!(
        p["anything"],
        json!({"x-kubernetes-preserve-unknown-fields": true})
    );
    assert_eq!(
        p["mode"],
        json!({"default": "a", "enum": ["a", "b"], "type": "string"})
    );
    assert!(p["labels"].get("required").is_none());
    assert_eq!(
        d["definitions"]["com.example.v1.Blob"],
        json!({"type": "object", "x-kubernetes-group-version-kind": [{"group": "example.com", "kind": "Blob", "version": "v1"}]})
    );
}

/// A field of a message by number; panics when absent.
fn field<'a>(msg: &'a [u8], number: u32) -> Field<'a> {
    all(msg, number)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no field {number}"))
}

fn all(msg: &[u8], number: u32) -> Vec<Field<'_>> {
    fields(msg)
        .into_iter()
        .filter(|(n, _)| *n == number)
        .map(|(_, f)| f)
        .collect()
}

/// The value of the `Named*` entry (name 1, value 2) called `name`.
fn named<'a>(entries: Vec<Field<'a>>, name: &str) -> &'a [u8] {
    entries
        .into_iter()
        .map(Field::bytes)
        .find(|e| field(e, 1).str() == name)
        .map(|e| field(e, 2).bytes())
        .unwrap_or_else(|| panic!("no entry {name}"))
}

fn extension(msg: &[u8], number: u32, name: &str) -> Value {
    let any = named(all(msg, number), name);
    serde_json::from_str(field(any, 2).str()).unwrap()
}

#[test]
fn protobuf_is_gnostics_document() {
    let prepared = V2Prepared::build(&Catalogue::builtin());
    let pb: &[u8] = &prepared.protobuf;
    assert_eq!(field(pb, 1).str(), "2.0");
    assert_eq!(field(field(pb, 2).bytes(), 1).str(), "Kubernetes");

    let definitions = field(pb, 9).bytes();
    let deployment = named(all(definitions, 1), "io.k8s.api.apps.v1.Deployment");
    assert_eq!(
        extension(deployment, 31, "x-kubernetes-group-version-kind"),
        json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
    );
    let props = all(field(deployment, 25).bytes(), 1);
    let spec = named(props, "spec");
    assert_eq!(
        field(spec, 1).str(),
        "#/definitions/io.k8s.api.apps.v1.DeploymentSpec"
    );
    let spec_def = named(all(definitions, 1), "io.k8s.api.apps.v1.DeploymentSpec");
    let replicas = named(all(field(spec_def, 25).bytes(), 1), "replicas");
    assert!(field(replicas, 4)
        .str()
        .starts_with("Number of desired pods"));
    assert_eq!(field(field(replicas, 22).bytes(), 1).str(), "integer");
    let pod_spec = named(all(definitions, 1), "io.k8s.api.core.v1.PodSpec");
    let containers = named(all(field(pod_spec, 25).bytes(), 1), "containers");
    assert_eq!(
        extension(containers, 31, "x-kubernetes-patch-merge-key"),
        json!("name")
    );
    let items = field(field(containers, 23).bytes(), 1).bytes();
    assert_eq!(
        field(items, 1).str(),
        "#/definitions/io.k8s.api.core.v1.Container"
    );

    let paths = field(pb, 8).bytes();
    let item = named(
        all(paths, 2),
        "/apis/apps/v1/namespaces/{namespace}/deployments/{name}",
    );
    let patch = field(item, 8).bytes();
    assert_eq!(field(patch, 5).str(), "patchAppsV1NamespacedDeployment");
    assert_eq!(
        extension(patch, 13, "x-kubernetes-group-version-kind"),
        json!({"group": "apps", "kind": "Deployment", "version": "v1"})
    );
    // ParametersItem → Parameter → NonBodyParameter → QueryParameterSubSchema;
    // a shared one is a ParametersItem's JsonReference.
    let items = all(patch, 8);
    let query_names: Vec<&str> = items
        .iter()
        .filter_map(|item| all(item.bytes(), 1).first().map(|p| p.bytes()))
        .filter_map(|param| all(param, 2).first().map(|nb| nb.bytes()))
        .map(|non_body| field(field(non_body, 3).bytes(), 4).str())
        .collect();
    assert!(query_names.contains(&"fieldValidation"), "{query_names:?}");
    let body_ref = field(field(items[0].bytes(), 2).bytes(), 1).str();
    let shared = body_ref.strip_prefix("#/parameters/").unwrap();
    let body = named(all(field(pb, 10).bytes(), 1), shared);
    assert_eq!(field(field(body, 1).bytes(), 3).str(), "body");
    let ok = named(all(field(patch, 9).bytes(), 1), "200");
    let response = field(ok, 1).bytes();
    let schema = field(field(response, 2).bytes(), 1).bytes();
    assert_eq!(
        field(schema, 1).str(),
        "#/definitions/io.k8s.api.apps.v1.Deployment"
    );
}

#[test]
fn additional_properties_false_is_encoded() {
    let mut cat = Catalogue::new();
    cat.insert_schema(
        "x.Closed",
        json!({"type": "object", "additionalProperties": false}),
    );
    let prepared = V2Prepared::build(&cat);
    let definitions = field(&prepared.protobuf, 9).bytes();
    let closed = named(all(definitions, 1), "x.Closed");
    let additional = field(closed, 21).bytes();
    assert_eq!(fields(additional), vec![(2, Field::Varint(0))]);
}

#[test]
fn cache_builds_v2_once() {
    let cache = OpenApiCache::new(&std::sync::Arc::new(Catalogue::builtin()));
    let first = cache.v2() as *const V2Prepared;
    let clone = cache.clone();
    assert_eq!(clone.v2() as *const V2Prepared, first);
    assert_eq!(cache.v2().etag.len(), 32);
    let json: Value = serde_json::from_slice(&cache.v2().json).unwrap();
    assert_eq!(json["swagger"], "2.0");
}
