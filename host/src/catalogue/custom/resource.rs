//! A CustomResourceDefinition read as catalogue entries: one `ResourceInfo`
//! per served version, carrying the version's schema, printer columns,
//! selectable fields and subresources as data (`CustomResource`), and the
//! OpenAPI component schema kube publishes for it.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::conversion::ConversionSetup;
use crate::catalogue::live::CustomEntry;
use crate::catalogue::{ResourceInfo, Subresource};

/// Verbs every custom resource has.
const VERBS: [&str; 8] = [
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
];

/// One column of `additionalPrinterColumns`.
#[derive(Clone, Debug)]
pub struct PrinterColumn {
    pub name: String,
    pub type_: String,
    pub format: String,
    pub description: String,
    pub priority: i64,
    pub json_path: String,
}

/// Where the scale subresource reads and writes replicas (JSON paths as in
/// the CRD, e.g. `.spec.replicas`).
#[derive(Clone, Debug)]
pub struct ScalePaths {
    pub spec_replicas: String,
    pub status_replicas: String,
    pub label_selector: Option<String>,
}

/// What one served version of a CRD says about its resource.
#[derive(Debug)]
pub struct CustomResource {
    pub storage_version: String,
    /// The schema compiled for validation, pruning and defaulting (`None`
    /// if it cannot be: then objects are stored as written, and a warning
    /// is logged).
    pub compiled: Option<super::schema::CompiledSchema>,
    /// Whether the schema has defaults (applied on read from storage too).
    pub has_defaults: bool,
    /// Its `x-kubernetes-validations`, compiled (`None` when it has none).
    pub rules: Option<kube_cel::ValidationRules>,
    pub printer_columns: Vec<PrinterColumn>,
    /// Field selector labels besides metadata.name/namespace (`spec.color`).
    pub selectable_fields: Vec<String>,
    pub scale: Option<ScalePaths>,
    /// The CRD is being deleted: no creates.
    pub terminating: bool,
    pub deprecation_warning: Option<String>,
    /// How objects move between versions (`None` if the CRD's conversion
    /// cannot be set up: then only apiVersion changes, and a warning is logged).
    pub converter: Option<super::conversion::Converter>,
    /// Checks beyond the schema a built-in served as a CRD adds (the
    /// PolicyBundle's verification keys), run with the schema's: the
    /// object and, on update, the stored one.
    pub checks: Option<Checks>,
}

/// A built-in's own checks of an object (over the stored one on update).
pub type Checks = fn(&Value, Option<&Value>) -> Vec<crate::apimachinery::status::Cause>;

impl CustomResource {
    pub fn storage_api_version(&self, group: &str) -> String {
        format!("{group}/{}", self.storage_version)
    }
}

fn text(v: &Value, pointer: &str) -> String {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// Is the named condition True in the CRD's status?
pub fn condition_true(crd: &Value, kind: &str) -> bool {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == kind && c["status"] == "True")
}

/// The catalogue entries of a CRD: one per served version, once it is
/// Established (its names accepted); none before.
pub fn entries(crd: &Value, setup: &ConversionSetup) -> Vec<CustomEntry> {
    if !condition_true(crd, "Established") {
        return Vec::new();
    }
    let versions: Vec<&Value> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|v| v.iter().collect())
        .unwrap_or_default();
    let storage = versions
        .iter()
        .find(|v| v["storage"] == true)
        .map(|v| text(v, "/name"))
        .unwrap_or_default();
    let source_version = text(crd, "/metadata/resourceVersion");
    versions
        .iter()
        .filter(|v| v["served"] == true)
        .map(|v| {
            let shared = Shared {
                crd,
                storage: &storage,
                setup,
            };
            let info = info(&shared, v);
            let schema = component_schema(&info, v);
            CustomEntry {
                info,
                schema,
                source_version: source_version.clone(),
            }
        })
        .collect()
}

struct Shared<'a> {
    crd: &'a Value,
    storage: &'a str,
    setup: &'a ConversionSetup,
}

fn info(shared: &Shared<'_>, version: &Value) -> ResourceInfo {
    let crd = shared.crd;
    let names = crd
        .pointer("/status/acceptedNames")
        .filter(|n| n.get("plural").is_some())
        .or_else(|| crd.pointer("/spec/names"))
        .cloned()
        .unwrap_or_default();
    let group = text(crd, "/spec/group");
    let name = text(version, "/name");
    let kind = text(&names, "/kind");
    let singular = match text(&names, "/singular") {
        s if s.is_empty() => kind.to_ascii_lowercase(),
        s => s,
    };
    let list_kind = match text(&names, "/listKind") {
        s if s.is_empty() => format!("{kind}List"),
        s => s,
    };
    ResourceInfo {
        schema_name: schema_name(&group, &name, &kind),
        subresources: subresources(&group, &name, &kind, version),
        group,
        version: name,
        kind,
        list_kind,
        plural: text(&names, "/plural"),
        singular,
        short_names: strings(names.get("shortNames")),
        categories: strings(names.get("categories")),
        namespaced: text(crd, "/spec/scope") != "Cluster",
        verbs: VERBS.iter().map(|v| v.to_string()).collect(),
        returns_deleted_object: true,
        custom: Some(Arc::new(custom(shared, version))),
        // kube's CRD names are DNS subdomains; their field selectors are
        // `metadata.*` and the CRD's selectableFields.
        name_rule: crate::apimachinery::names::NameRule::Subdomain,
        field_labels: &crate::apimachinery::selectors::field_rules::DEFAULT,
    }
}

fn custom(shared: &Shared<'_>, version: &Value) -> CustomResource {
    let schema = version
        .pointer("/schema/openAPIV3Schema")
        .cloned()
        .unwrap_or(json!({}));
    CustomResource {
        storage_version: shared.storage.to_string(),
        rules: super::rules::compile(&schema),
        compiled: compile(shared, &schema),
        has_defaults: has_key(&schema, "default"),
        printer_columns: printer_columns(version),
        selectable_fields: version
            .get("selectableFields")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|f| text(f, "/jsonPath").trim_start_matches('.').to_string())
            .collect(),
        scale: version.pointer("/subresources/scale").map(|s| ScalePaths {
            spec_replicas: text(s, "/specReplicasPath"),
            status_replicas: text(s, "/statusReplicasPath"),
            label_selector: s
                .get("labelSelectorPath")
                .and_then(Value::as_str)
                .map(String::from),
        }),
        terminating: shared.crd.pointer("/metadata/deletionTimestamp").is_some(),
        deprecation_warning: deprecation_warning(shared.crd, version),
        converter: converter(shared),
        checks: None,
    }
}

fn compile(shared: &Shared<'_>, schema: &Value) -> Option<super::schema::CompiledSchema> {
    super::schema::CompiledSchema::new(schema)
        .map_err(|e| tracing::warn!(crd = %text(shared.crd, "/metadata/name"), error = %e, "schema not compiled"))
        .ok()
}

/// Does any schema node have `key` (e.g. `default`)? Iterative: schemas nest deep.
fn has_key(schema: &Value, key: &str) -> bool {
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) if m.contains_key(key) => return true,
            Value::Object(m) => stack.extend(m.values()),
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    false
}

fn converter(shared: &Shared<'_>) -> Option<super::conversion::Converter> {
    super::conversion::Converter::from_crd(shared.crd, shared.setup)
        .map_err(|e| tracing::warn!(crd = %text(shared.crd, "/metadata/name"), error = %e, "conversion not set up"))
        .ok()
}

/// kube's warning for a deprecated version: the CRD's own text, or
/// `<group>/<version> <Kind> is deprecated`.
fn deprecation_warning(crd: &Value, version: &Value) -> Option<String> {
    if version["deprecated"] != true {
        return None;
    }
    Some(
        match version.get("deprecationWarning").and_then(Value::as_str) {
            Some(w) => w.to_string(),
            None => format!(
                "{}/{} {} is deprecated",
                text(crd, "/spec/group"),
                text(version, "/name"),
                text(crd, "/spec/names/kind")
            ),
        },
    )
}

fn printer_columns(version: &Value) -> Vec<PrinterColumn> {
    let columns = version
        .get("additionalPrinterColumns")
        .and_then(Value::as_array);
    let Some(columns) = columns else {
        // kube's default when a version declares none: the object's age.
        return vec![PrinterColumn {
            name: "Age".into(),
            type_: "date".into(),
            format: String::new(),
            description: String::new(),
            priority: 0,
            json_path: ".metadata.creationTimestamp".into(),
        }];
    };
    columns
        .iter()
        .map(|c| PrinterColumn {
            name: text(c, "/name"),
            type_: text(c, "/type"),
            format: text(c, "/format"),
            description: text(c, "/description"),
            priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0),
            json_path: text(c, "/jsonPath"),
        })
        .collect()
}

fn subresources(group: &str, version: &str, kind: &str, v: &Value) -> Vec<Subresource> {
    let mut out = Vec::new();
    let verbs = || vec!["get".to_string(), "patch".into(), "update".into()];
    if v.pointer("/subresources/status").is_some() {
        out.push(Subresource {
            name: "status".into(),
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            verbs: verbs(),
        });
    }
    if v.pointer("/subresources/scale").is_some() {
        out.push(Subresource {
            name: "scale".into(),
            group: "autoscaling".into(),
            version: "v1".into(),
            kind: "Scale".into(),
            verbs: verbs(),
        });
    }
    out
}

/// kube's component name: the group reversed, then version and kind
/// (`com.example.v1.Widget` for example.com/v1 Widget).
fn schema_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

const API_VERSION_DESCRIPTION: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const KIND_DESCRIPTION: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
const METADATA_DESCRIPTION: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const OBJECT_META: &str = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// The published schema: the version's schema with kube's apiVersion, kind
/// and metadata properties and the group-version-kind extension.
fn component_schema(info: &ResourceInfo, version: &Value) -> Value {
    let mut schema = version
        .pointer("/schema/openAPIV3Schema")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_else(|| {
            let mut m = Map::new();
            m.insert("type".into(), json!("object"));
            m.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
            m
        });
    let mut properties = schema
        .remove("properties")
        .and_then(|p| p.as_object().cloned())
        .unwrap_or_default();
    properties.insert(
        "apiVersion".into(),
        json!({"description": API_VERSION_DESCRIPTION, "type": "string"}),
    );
    properties.insert(
        "kind".into(),
        json!({"description": KIND_DESCRIPTION, "type": "string"}),
    );
    properties.insert(
        "metadata".into(),
        json!({"allOf": [{"$ref": OBJECT_META}], "description": METADATA_DESCRIPTION}),
    );
    let mut sorted: Vec<(String, Value)> = properties.into_iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    schema.insert(
        "properties".into(),
        Value::Object(sorted.into_iter().collect()),
    );
    schema.insert(
        "x-kubernetes-group-version-kind".into(),
        json!([{"group": info.group, "kind": info.kind, "version": info.version}]),
    );
    Value::Object(schema)
}

#[cfg(test)]
mod tests;
