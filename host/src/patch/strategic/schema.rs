//! Patch metadata for strategic merge patch, read from OpenAPI v3 component
//! schemas: the `x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key`
//! of a field, and the schema of its value, following `$ref` and `allOf` wrappers.

use serde_json::Value;

use crate::patch::SchemaLookup;

/// Longest `$ref` chain followed before giving up (guards against cycles).
const MAX_REF_DEPTH: usize = 32;

/// How a field's value is patched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(in crate::patch) enum Strategy {
    /// No strategy declared: maps merge, lists are replaced.
    #[default]
    Default,
    /// `merge`: lists are merged (by merge key for lists of objects).
    Merge,
    /// `replace`: the value is replaced as a whole.
    Replace,
}

/// What the schema says about one field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(in crate::patch) struct PatchMeta {
    pub strategy: Strategy,
    /// The field of list items that identifies them, for lists of objects.
    pub merge_key: Option<String>,
}

/// A position in the schema tree; `node == None` means "type unknown".
#[derive(Clone, Copy)]
pub(in crate::patch) struct Schema<'a> {
    node: Option<&'a Value>,
    lookup: &'a dyn SchemaLookup,
    /// Server-side apply: a list without a patch strategy merges as its
    /// `x-kubernetes-list-type` says (`map` by its key, `set`), as kube's
    /// structured merge does; strategic merge patch ignores list types.
    list_types: bool,
}

impl<'a> Schema<'a> {
    /// The schema of the component called `name` (unknown when absent).
    pub fn root(name: Option<&str>, lookup: &'a dyn SchemaLookup) -> Self {
        let node = name
            .and_then(|n| lookup.schema(n))
            .map(|v| resolve(v, lookup));
        Schema {
            node,
            lookup,
            list_types: false,
        }
    }

    /// The root for server-side apply (list types count, see `list_types`).
    pub fn root_for_apply(name: Option<&str>, lookup: &'a dyn SchemaLookup) -> Self {
        Schema {
            list_types: true,
            ..Schema::root(name, lookup)
        }
    }

    /// Whether this is a server-side apply merge.
    pub fn for_apply(&self) -> bool {
        self.list_types
    }

    fn at(&self, node: Option<&'a Value>) -> Self {
        Schema {
            node: node.map(|v| resolve(v, self.lookup)),
            lookup: self.lookup,
            list_types: self.list_types,
        }
    }

    /// The schema of field `key` of this object, with its patch metadata. For
    /// a map type (`additionalProperties`) every key shares the value schema.
    pub fn field(&self, key: &str) -> (Schema<'a>, PatchMeta) {
        let Some(node) = self.node else {
            return (*self, PatchMeta::default());
        };
        if let Some(prop) = node.get("properties").and_then(|p| p.get(key)) {
            return (self.at(Some(prop)), patch_meta(prop, self.list_types));
        }
        let values = node.get("additionalProperties").filter(|v| v.is_object());
        (self.at(values), PatchMeta::default())
    }

    /// The schema of this array's items.
    pub fn items(&self) -> Schema<'a> {
        self.at(self.node.and_then(|n| n.get("items")))
    }

    /// A name for messages: the schema title/type, or `unknown`.
    pub fn name(&self) -> String {
        self.node
            .and_then(|n| n.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_string()
    }
}

/// Reads the patch extensions of a property schema (and, for server-side
/// apply, its list type when it declares no patch strategy).
fn patch_meta(prop: &Value, list_types: bool) -> PatchMeta {
    let declared = prop
        .get("x-kubernetes-patch-strategy")
        .and_then(Value::as_str);
    if let (None, true) = (declared, list_types) {
        if let Some(meta) = list_type_meta(prop) {
            return meta;
        }
    }
    let strategies = declared.unwrap_or_default();
    // `retainKeys` only matters to patch generation; the `$retainKeys`
    // directive is honoured whenever a patch carries it.
    let strategy = strategies
        .split(',')
        .map(str::trim)
        .find_map(|s| match s {
            "merge" => Some(Strategy::Merge),
            "replace" => Some(Strategy::Replace),
            _ => None,
        })
        .unwrap_or_default();
    let merge_key = prop
        .get("x-kubernetes-patch-merge-key")
        .and_then(Value::as_str)
        .map(str::to_string);
    PatchMeta {
        strategy,
        merge_key,
    }
}

/// `x-kubernetes-list-type: map` with one key merges by it; `set` merges
/// values; anything else (atomic, several keys) is replaced whole.
fn list_type_meta(prop: &Value) -> Option<PatchMeta> {
    let keys = prop
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array);
    match prop.get("x-kubernetes-list-type").and_then(Value::as_str)? {
        "set" => Some(PatchMeta {
            strategy: Strategy::Merge,
            merge_key: None,
        }),
        "map" => match keys.map(Vec::as_slice) {
            Some([key]) => Some(PatchMeta {
                strategy: Strategy::Merge,
                merge_key: key.as_str().map(str::to_string),
            }),
            _ => None,
        },
        _ => None,
    }
}

/// Follows `$ref` and single-reference `allOf` wrappers to the real schema
/// (also the field manager's, `crate::patch::resolve_schema`).
pub(crate) fn resolve<'a>(mut node: &'a Value, lookup: &'a dyn SchemaLookup) -> &'a Value {
    for _ in 0..MAX_REF_DEPTH {
        let next = match (node.get("$ref"), node.get("allOf")) {
            (Some(Value::String(reference)), _) => lookup.schema(component_name(reference)),
            (_, Some(Value::Array(parts))) => parts.iter().find(|p| p.get("$ref").is_some()),
            _ => None,
        };
        match next {
            Some(next) => node = next,
            None => return node,
        }
    }
    node
}

fn component_name(reference: &str) -> &str {
    reference
        .strip_prefix("#/components/schemas/")
        .or_else(|| reference.strip_prefix("#/definitions/"))
        .unwrap_or(reference)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};

    fn schemas() -> Map<String, Value> {
        let v = json!({
            "Pod": {"properties": {
                "spec": {"allOf": [{"$ref": "#/components/schemas/PodSpec"}], "default": {}}
            }},
            "PodSpec": {"properties": {
                "containers": {
                    "type": "array",
                    "items": {"allOf": [{"$ref": "#/components/schemas/Container"}]},
                    "x-kubernetes-patch-merge-key": "name",
                    "x-kubernetes-patch-strategy": "merge,retainKeys"
                },
                "nodeSelector": {"type": "object", "additionalProperties": {"type": "string"}}
            }},
            "Container": {"properties": {"image": {"type": "string"}}}
        });
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn reads_strategy_and_merge_key_through_refs() {
        let schemas = schemas();
        let pod = Schema::root(Some("Pod"), &schemas);
        let (spec, spec_meta) = pod.field("spec");
        assert_eq!(spec_meta, PatchMeta::default());
        let (containers, meta) = spec.field("containers");
        assert_eq!(meta.strategy, Strategy::Merge);
        assert_eq!(meta.merge_key.as_deref(), Some("name"));
        let (image, _) = containers.items().field("image");
        assert_eq!(image.name(), "string");
    }

    #[test]
    fn unknown_fields_and_types_have_no_metadata() {
        let schemas = schemas();
        let pod = Schema::root(Some("Pod"), &schemas);
        assert_eq!(pod.field("bogus").1, PatchMeta::default());
        assert_eq!(pod.field("bogus").0.field("x").1, PatchMeta::default());
        let missing = Schema::root(Some("NoSuchKind"), &schemas);
        assert_eq!(missing.field("spec").1, PatchMeta::default());
        let (selector, _) = pod.field("spec").0.field("nodeSelector");
        assert_eq!(selector.field("any-key").0.name(), "string");
    }
}
