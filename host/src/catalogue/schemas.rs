//! OpenAPI v3 component schemas of the built-in types: kube-apiserver 1.32's
//! own, as its served documents have them (`kube-schemas.json`, written by
//! `tools/openapi-schemas-from-golden.py`), with every extension kube puts
//! there (patch strategies, list and map types, group-version-kinds), the
//! List schemas and IntOrString/Quantity as kube's v3 documents describe them.

use super::Schemas;
use serde_json::{json, Map, Value};

use super::ResourceInfo;

/// Prefix of every `$ref` in the generated schemas.
pub(super) const REF_PREFIX: &str = "#/components/schemas/";

pub(super) const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
pub(super) const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
pub(super) const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
pub(super) const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

/// kube-apiserver 1.32's component schemas, one per line.
const KUBE_SCHEMAS: &str = include_str!("kube-schemas.json");

fn gvk(group: &str, version: &str, kind: &str) -> Value {
    json!({ "group": group, "kind": kind, "version": version })
}

/// The `<Kind>List` schema kube's CRD builder publishes next to a custom
/// resource's kind (the built-ins' are kube's own, in the data).
pub(super) fn list_schema(kind_schema: &Value, r: &ResourceInfo) -> Value {
    let prop = |name: &str| kind_schema["properties"][name].clone();
    json!({
        "description": format!("{} is a list of {}", r.list_kind, r.kind),
        "properties": {
            "apiVersion": prop("apiVersion"),
            "items": {
                "description": format!("List of {}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", r.plural),
                "items": { "$ref": format!("{REF_PREFIX}{}", r.schema_name) },
                "type": "array"
            },
            "kind": prop("kind"),
            "metadata": {
                "allOf": [{ "$ref": format!("{REF_PREFIX}{LIST_META}") }],
                "description": "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
            }
        },
        "required": ["items"],
        "type": "object",
        "x-kubernetes-group-version-kind": [gvk(&r.group, &r.version, &r.list_kind)]
    })
}

/// Every built-in component schema, ready to publish: kept as its text and
/// parsed on first use (a start needs a few dozen of the 600; all of them
/// parsed were 3.3 MiB of heap at ready).
pub(super) fn builtin_schemas() -> BuiltinSchemas {
    let mut schemas = BuiltinSchemas::default();
    // The file has one `"name":{...}` per line, between `{` and `}`.
    for line in KUBE_SCHEMAS.lines().filter(|l| l.starts_with('"')) {
        match split_entry(line) {
            Some((name, text)) => schemas.push(name, LazySchema::text(text)),
            None => tracing::error!("a built-in OpenAPI schema line does not parse: {line:.80}"),
        }
    }
    schemas
}

/// `"name":{...},` as the name and the schema's text.
fn split_entry(line: &'static str) -> Option<(String, &'static str)> {
    let line = line.strip_suffix(',').unwrap_or(line);
    let colon = line.find("\":")? + 1;
    let name: String = serde_json::from_str(&line[..colon]).ok()?;
    Some((name, &line[colon + 1..]))
}

/// The built-in schemas by name, in the order of kube's document.
#[derive(Clone, Default)]
pub(super) struct BuiltinSchemas {
    entries: Vec<(String, LazySchema)>,
    index: std::collections::HashMap<String, usize>,
}

impl std::fmt::Debug for BuiltinSchemas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BuiltinSchemas({} schemas)", self.entries.len())
    }
}

impl BuiltinSchemas {
    /// Adds `name`, unless it is there already.
    pub(super) fn push(&mut self, name: String, schema: LazySchema) {
        if !self.index.contains_key(&name) {
            self.index.insert(name.clone(), self.entries.len());
            self.entries.push((name, schema));
        }
    }

    pub(super) fn get(&self, name: &str) -> Option<&Value> {
        let &at = self.index.get(name)?;
        self.entries.get(at).map(|(_, schema)| schema.value())
    }

    pub(super) fn contains_key(&self, name: &str) -> bool {
        self.index.contains_key(name)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.entries
            .iter()
            .map(|(name, schema)| (name, schema.value()))
    }

    pub(super) fn entries(&self) -> impl Iterator<Item = (&String, &LazySchema)> {
        self.entries.iter().map(|(name, schema)| (name, schema))
    }
}

/// One schema: its JSON text, parsed once, on first use.
#[derive(Clone, Debug)]
pub(super) struct LazySchema {
    text: &'static str,
    parsed: std::sync::OnceLock<Value>,
}

impl LazySchema {
    fn text(text: &'static str) -> LazySchema {
        LazySchema {
            text,
            parsed: std::sync::OnceLock::new(),
        }
    }

    pub(super) fn parsed(value: Value) -> LazySchema {
        LazySchema {
            text: "",
            parsed: std::sync::OnceLock::from(value),
        }
    }

    fn value(&self) -> &Value {
        self.parsed.get_or_init(|| {
            serde_json::from_str(self.text).unwrap_or_else(|e| {
                tracing::error!("a built-in OpenAPI schema does not parse: {e}");
                Value::Null
            })
        })
    }
}

/// The schemas of the gated kinds (`gates.rs`; written by
/// `tools/gated-schemas-from-golden.py`), added only where they are served.
pub(super) fn gated_schemas() -> Map<String, Value> {
    match serde_json::from_str(include_str!("kube-schemas-gated.json")) {
        Ok(schemas) => schemas,
        Err(e) => {
            tracing::error!("the gated OpenAPI schemas do not parse: {e}");
            Map::new()
        }
    }
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
    fn the_schemas_read_line_by_line_are_the_documents_in_its_order() {
        let whole: Map<String, Value> = serde_json::from_str(KUBE_SCHEMAS).unwrap();
        let lazy = builtin_schemas();
        let names: Vec<&String> = lazy.iter().map(|(name, _)| name).collect();
        assert_eq!(names, whole.keys().collect::<Vec<_>>());
        for (name, schema) in lazy.iter() {
            assert_eq!(Some(schema), whole.get(name), "{name}");
        }
    }

    #[test]
    fn properties_named_like_keywords_stay_properties() {
        let cat = Catalogue::builtin();
        let name = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps";
        let props = &schema(&cat, name)["properties"];
        assert_eq!(props["$ref"], json!({"type": "string"}));
        assert_eq!(props["allOf"]["type"], "array");
        assert_eq!(
            props["allOf"]["items"]["allOf"][0]["$ref"],
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
        let ios = schema(&cat, "io.k8s.apimachinery.pkg.util.intstr.IntOrString");
        assert_eq!(ios["format"], "int-or-string");
        assert_eq!(
            ios["oneOf"],
            json!([{"type": "integer"}, {"type": "string"}])
        );
        assert!(schema(&cat, "io.k8s.apimachinery.pkg.api.resource.Quantity")["oneOf"].is_array());
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
        for name in [
            STATUS,
            DELETE_OPTIONS,
            "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
            PATCH,
        ] {
            assert!(cat.schemas().contains_key(name), "{name}");
        }
    }

    /// kube's structs of `+structType=atomic`: server-side apply owns them whole.
    #[test]
    fn atomic_structs_as_kube_marks_them() {
        let cat = Catalogue::builtin();
        for name in [
            "io.k8s.api.rbac.v1.RoleRef",
            "io.k8s.api.autoscaling.v1.CrossVersionObjectReference",
            "io.k8s.api.admissionregistration.v1.MatchResources",
            "io.k8s.api.networking.v1.ServiceBackendPort",
        ] {
            assert_eq!(
                schema(&cat, name)["x-kubernetes-map-type"],
                "atomic",
                "{name}"
            );
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
    fn every_builtin_kind_has_its_schema_and_listable_ones_a_list() {
        let cat = Catalogue::builtin();
        for r in cat.resources().iter().filter(|r| r.custom.is_none()) {
            assert!(
                cat.schemas().contains_key(&r.schema_name),
                "{}",
                r.schema_name
            );
            let list = format!("{}List", r.schema_name);
            assert_eq!(
                cat.schemas().contains_key(&list),
                r.has_verb("list"),
                "{list}"
            );
        }
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
