//! OpenAPI v3 component schemas of the built-in types, generated from
//! k8s-openapi's `schemars` support and reshaped the way kube-apiserver
//! publishes them: `$ref`s with siblings wrapped in `allOf`, List schemas,
//! `x-kubernetes-group-version-kind`, IntOrString/Quantity as kube's v3
//! documents have them, and the list/map/patch extensions of patch_meta.rs.

use super::Schemas;
use k8s_openapi::api::{
    admissionregistration::v1 as admissionregistration, apps::v1 as apps,
    autoscaling::v1 as autoscaling, autoscaling::v2 as autoscaling_v2, batch::v1 as batch,
    certificates::v1 as certificates, coordination::v1 as coordination, core::v1 as core,
    discovery::v1 as discovery, events::v1 as events, flowcontrol::v1 as flowcontrol,
    networking::v1 as networking, node::v1 as node, policy::v1 as policy, rbac::v1 as rbac,
    scheduling::v1 as scheduling, storage::v1 as storage,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1 as apiregistration;
use schemars::gen::{SchemaGenerator, SchemaSettings};
use serde_json::{json, Map, Value};

use super::{patch_meta, ResourceInfo};

/// Prefix of every `$ref` in the generated schemas.
pub(super) const REF_PREFIX: &str = "#/components/schemas/";

pub(super) const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
pub(super) const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
pub(super) const WATCH_EVENT: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent";
pub(super) const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
pub(super) const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";
const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

macro_rules! register {
    ($gen:expr; $($t:ty),* $(,)?) => { $( $gen.subschema_for::<$t>(); )* };
}

/// Runs schemars over every built-in kind and the meta types the API uses.
fn generate() -> Map<String, Value> {
    let mut gen: SchemaGenerator = SchemaSettings::openapi3().into_generator();
    register!(gen;
        core::Namespace, core::ConfigMap, core::Secret, core::ServiceAccount, core::Service,
        core::Endpoints, core::Pod, core::Event, core::LimitRange, core::ResourceQuota,
        core::Node, core::PersistentVolume, core::PersistentVolumeClaim, core::PodTemplate,
        core::ReplicationController, core::ComponentStatus,
        apps::Deployment, apps::ReplicaSet, apps::StatefulSet, apps::DaemonSet,
        apps::ControllerRevision, batch::Job, batch::CronJob,
        rbac::Role, rbac::RoleBinding, rbac::ClusterRole, rbac::ClusterRoleBinding,
        coordination::Lease, networking::Ingress, networking::IngressClass,
        networking::NetworkPolicy, policy::PodDisruptionBudget, storage::StorageClass,
        scheduling::PriorityClass, events::Event, discovery::EndpointSlice,
        admissionregistration::ValidatingWebhookConfiguration,
        admissionregistration::MutatingWebhookConfiguration,
        autoscaling::Scale, autoscaling::HorizontalPodAutoscaler,
        autoscaling_v2::HorizontalPodAutoscaler, core::Binding,
        storage::CSIDriver, storage::CSINode, storage::CSIStorageCapacity,
        storage::VolumeAttachment, node::RuntimeClass,
        flowcontrol::FlowSchema, flowcontrol::PriorityLevelConfiguration,
        admissionregistration::ValidatingAdmissionPolicy,
        admissionregistration::ValidatingAdmissionPolicyBinding,
        apiregistration::APIService, certificates::CertificateSigningRequest,
        apiextensions::CustomResourceDefinition,
        meta::Status, meta::DeleteOptions, meta::WatchEvent<core::Pod>, meta::Patch,
        meta::APIResourceList, meta::APIGroupList, meta::APIGroup, meta::APIVersions,
        meta::ListMeta, meta::ObjectMeta,
    );
    gen.take_definitions()
        .into_iter()
        .filter_map(|(name, schema)| Some((name, serde_json::to_value(schema).ok()?)))
        .collect()
}

/// Rewrites one schema tree the way kube's v3 documents look: a `$ref` with
/// siblings becomes `{"allOf":[{"$ref":..}], ...siblings}`, boolean schemas
/// become objects, and the `metadata` k8s-openapi marks required is not.
/// Only schema positions are rewritten: a property may be named `$ref`
/// (JSONSchemaProps has one), and a `properties` map is not a schema.
fn reshape(value: &mut Value) {
    let Value::Object(obj) = value else {
        return;
    };
    if obj.len() > 1 {
        if let Some(r) = obj.remove("$ref") {
            obj.insert("allOf".into(), json!([{ "$ref": r }]));
        }
    }
    if let Some(Value::Array(req)) = obj.get_mut("required") {
        req.retain(|v| v != "metadata");
        if req.is_empty() {
            obj.remove("required");
        }
    }
    for (key, child) in obj.iter_mut() {
        match (key.as_str(), child) {
            ("additionalProperties", Value::Bool(_)) => {}
            ("properties" | "patternProperties" | "definitions", Value::Object(map)) => {
                map.values_mut().for_each(reshape_schema)
            }
            ("allOf" | "anyOf" | "oneOf", Value::Array(list)) => {
                list.iter_mut().for_each(reshape_schema)
            }
            ("items" | "additionalProperties" | "additionalItems" | "not", child) => {
                reshape_schema(child)
            }
            _ => {}
        }
    }
}

/// A schema in a schema position: `true`/`false` become `{}`.
fn reshape_schema(child: &mut Value) {
    if child.is_boolean() {
        *child = json!({});
    }
    reshape(child);
}

/// IntOrString and Quantity as kube's OpenAPI v3 documents describe them.
fn fix_scalars(schemas: &mut Map<String, Value>) {
    if let Some(Value::Object(s)) = schemas.get_mut(INT_OR_STRING) {
        s.remove("x-kubernetes-int-or-string");
        s.insert("format".into(), json!("int-or-string"));
        s.insert(
            "oneOf".into(),
            json!([{"type": "integer"}, {"type": "string"}]),
        );
    }
    if let Some(Value::Object(s)) = schemas.get_mut(QUANTITY) {
        s.remove("type");
        s.insert(
            "oneOf".into(),
            json!([{"type": "string"}, {"type": "number"}]),
        );
    }
}

fn gvk(group: &str, version: &str, kind: &str) -> Value {
    json!({ "group": group, "kind": kind, "version": version })
}

fn set_gvks(schemas: &mut Map<String, Value>, name: &str, gvks: Vec<Value>) {
    if let Some(Value::Object(s)) = schemas.get_mut(name) {
        s.insert("x-kubernetes-group-version-kind".into(), Value::Array(gvks));
    }
}

/// The `<Kind>List` schema kube publishes next to each kind.
pub(super) fn list_schema(kind_schema: &Value, r: &ResourceInfo) -> Value {
    let prop = |name: &str| kind_schema["properties"][name].clone();
    json!({
        "description": format!("{} is a list of {} objects.", r.list_kind, r.kind),
        "properties": {
            "apiVersion": prop("apiVersion"),
            "items": {
                "description": format!("List of {}.", r.plural),
                "items": { "allOf": [{ "$ref": format!("{REF_PREFIX}{}", r.schema_name) }] },
                "type": "array"
            },
            "kind": prop("kind"),
            "metadata": {
                "allOf": [{ "$ref": format!("{REF_PREFIX}{LIST_META}") }],
                "description": "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
            }
        },
        "required": ["items"],
        "type": "object",
        "x-kubernetes-group-version-kind": [gvk(&r.group, &r.version, &r.list_kind)]
    })
}

/// Adds List schemas and group-version-kind extensions for the resources.
fn add_kinds(schemas: &mut Map<String, Value>, resources: &[ResourceInfo]) {
    let mut gvs: Vec<(String, String)> = Vec::new();
    for r in resources {
        set_gvks(
            schemas,
            &r.schema_name,
            vec![gvk(&r.group, &r.version, &r.kind)],
        );
        if let Some(kind_schema) = schemas.get(&r.schema_name) {
            let list = list_schema(kind_schema, r);
            schemas.insert(format!("{}List", r.schema_name), list);
        }
        if !gvs.contains(&(r.group.clone(), r.version.clone())) {
            gvs.push((r.group.clone(), r.version.clone()));
        }
    }
    set_gvks(schemas, STATUS, vec![gvk("", "v1", "Status")]);
    set_gvks(schemas, SCALE, vec![gvk("autoscaling", "v1", "Scale")]);
    for (name, kind) in [
        (DELETE_OPTIONS, "DeleteOptions"),
        (WATCH_EVENT, "WatchEvent"),
    ] {
        let all = gvs.iter().map(|(g, v)| gvk(g, v, kind)).collect();
        set_gvks(schemas, name, all);
    }
}

/// Every built-in component schema, ready to publish.
pub(super) fn builtin_schemas(resources: &[ResourceInfo]) -> Map<String, Value> {
    let mut schemas = generate();
    for schema in schemas.values_mut() {
        reshape(schema);
    }
    fix_scalars(&mut schemas);
    add_kinds(&mut schemas, resources);
    patch_meta::apply(&mut schemas);
    schemas
}

/// The component name a `$ref` points at, if `schema` is a reference or a
/// single-element `allOf` around one.
pub(super) fn ref_name(schema: &Value) -> Option<&str> {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        return r.strip_prefix(REF_PREFIX);
    }
    match schema.get("allOf").and_then(Value::as_array) {
        Some(all) if all.len() == 1 => ref_name(&all[0]),
        _ => None,
    }
}

/// Follows `$ref`/`allOf` until reaching a schema with its own content.
/// Unknown references resolve to `None`.
pub(super) fn resolve<'a>(schemas: &'a Schemas, schema: &'a Value) -> Option<&'a Value> {
    let mut current = schema;
    for _ in 0..32 {
        match ref_name(current) {
            Some(name) => current = schemas.get(name)?,
            None => return Some(current),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::Catalogue;
    use super::*;

    fn schema<'a>(cat: &'a Catalogue, name: &str) -> &'a Value {
        cat.schemas().get(name).unwrap()
    }

    #[test]
    fn properties_named_like_keywords_stay_properties() {
        let cat = Catalogue::builtin();
        let name = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps";
        let props = &schema(&cat, name)["properties"];
        assert_eq!(props["$ref"], json!({"type": "string"}));
        assert_eq!(props["allOf"]["type"], "array");
        assert_eq!(
            props["allOf"]["items"]["$ref"],
            format!("{REF_PREFIX}{name}")
        );
    }

    #[test]
    fn deployment_has_gvk_and_wrapped_refs() {
        let cat = Catalogue::builtin();
        let d = schema(&cat, "io.k8s.api.apps.v1.Deployment");
        assert_eq!(
            d["x-kubernetes-group-version-kind"],
            json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
        );
        let spec = &d["properties"]["spec"];
        assert_eq!(
            spec["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"
        );
        assert!(spec["description"]
            .as_str()
            .unwrap()
            .contains("desired behavior"));
        assert!(
            d.get("required").is_none(),
            "metadata is not required in kube"
        );
        let list = schema(&cat, "io.k8s.api.apps.v1.DeploymentList");
        assert_eq!(
            list["x-kubernetes-group-version-kind"][0]["kind"],
            "DeploymentList"
        );
    }

    #[test]
    fn replicas_has_description_and_int32() {
        let cat = Catalogue::builtin();
        let spec = schema(&cat, "io.k8s.api.apps.v1.DeploymentSpec");
        let replicas = &spec["properties"]["replicas"];
        assert_eq!(replicas["type"], "integer");
        assert_eq!(replicas["format"], "int32");
        assert!(replicas["description"]
            .as_str()
            .unwrap()
            .contains("Number of desired pods"));
    }

    #[test]
    fn containers_carry_merge_key_name() {
        let cat = Catalogue::builtin();
        let containers = &schema(&cat, "io.k8s.api.core.v1.PodSpec")["properties"]["containers"];
        assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
        assert_eq!(containers["x-kubernetes-patch-strategy"], "merge");
        assert_eq!(containers["x-kubernetes-list-type"], "map");
        assert_eq!(containers["x-kubernetes-list-map-keys"], json!(["name"]));
        let sel = schema(&cat, "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector");
        assert_eq!(sel["x-kubernetes-map-type"], "atomic");
    }

    #[test]
    fn scalars_and_meta_look_like_kube() {
        let cat = Catalogue::builtin();
        let ios = schema(&cat, INT_OR_STRING);
        assert_eq!(ios["format"], "int-or-string");
        assert_eq!(
            ios["oneOf"],
            json!([{"type": "integer"}, {"type": "string"}])
        );
        assert!(schema(&cat, QUANTITY)["oneOf"].is_array());
        let time = schema(&cat, "io.k8s.apimachinery.pkg.apis.meta.v1.Time");
        assert_eq!(
            (time["type"].as_str(), time["format"].as_str()),
            (Some("string"), Some("date-time"))
        );
        let meta = &schema(&cat, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")["properties"];
        for p in [
            "name",
            "namespace",
            "labels",
            "annotations",
            "ownerReferences",
            "managedFields",
        ] {
            assert!(meta.get(p).is_some(), "{p}");
        }
        assert_eq!(
            schema(&cat, SCALE)["x-kubernetes-group-version-kind"][0]["group"],
            "autoscaling"
        );
        for name in [STATUS, DELETE_OPTIONS, WATCH_EVENT, PATCH] {
            assert!(cat.schemas().contains_key(name), "{name}");
        }
    }

    #[test]
    fn patch_meta_rows_name_real_properties() {
        let cat = Catalogue::builtin();
        for m in patch_meta::table() {
            if let Some(s) = cat.schemas().get(m.schema) {
                let prop = &s["properties"][m.property];
                assert!(prop.is_object(), "{}.{}", m.schema, m.property);
                if !m.list_type.is_empty() {
                    assert_eq!(prop["x-kubernetes-list-type"], m.list_type);
                }
            }
        }
        let ports = &schema(&cat, "io.k8s.api.core.v1.ServiceSpec")["properties"]["ports"];
        assert_eq!(
            ports["x-kubernetes-list-map-keys"],
            json!(["port", "protocol"])
        );
        let volumes = &schema(&cat, "io.k8s.api.core.v1.PodSpec")["properties"]["volumes"];
        assert_eq!(volumes["x-kubernetes-patch-strategy"], "merge,retainKeys");
    }

    #[test]
    fn every_reference_resolves() {
        let cat = Catalogue::builtin();
        let all: Map<String, Value> = cat
            .schemas()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let text = serde_json::to_string(&all).unwrap();
        for piece in text.split("\"$ref\":\"").skip(1) {
            let target = piece.split('"').next().unwrap();
            let name = target.strip_prefix(REF_PREFIX).unwrap();
            assert!(cat.schemas().contains_key(name), "dangling {target}");
        }
    }
}
