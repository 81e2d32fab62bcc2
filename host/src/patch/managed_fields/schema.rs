//! The OpenAPI schema as structured-merge-diff reads it (kube-openapi's
//! `schemaconv`): lists are atomic unless `x-kubernetes-list-type` (or,
//! without one, a `merge` patch strategy) makes them a set or a map keyed
//! by `x-kubernetes-list-map-keys`; objects are merged field by field
//! unless `x-kubernetes-map-type: atomic`; what the schema does not
//! describe is deduced from the value (maps merged, lists atomic).

use serde_json::Value;

use crate::patch::SchemaLookup;

/// How the items of a list are told apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListType {
    Atomic,
    Set,
    Map(Vec<String>),
}

/// A position in the schema: the property (its extensions) and the type
/// it resolves to. `None` for both: deduced from the value.
#[derive(Clone, Copy)]
pub struct Type<'a> {
    property: Option<&'a Value>,
    node: Option<&'a Value>,
    lookup: &'a dyn SchemaLookup,
}

impl<'a> Type<'a> {
    /// The component schema called `name` (deduced when unknown).
    pub fn root(name: &str, lookup: &'a dyn SchemaLookup) -> Self {
        let node = lookup.schema(name);
        Type::at(node, lookup)
    }

    fn at(property: Option<&'a Value>, lookup: &'a dyn SchemaLookup) -> Self {
        Type {
            property,
            node: property.map(|p| crate::patch::resolve_schema(p, lookup)),
            lookup,
        }
    }

    /// An extension, on the property or on the type it refers to.
    fn extension(&self, name: &str) -> Option<&'a Value> {
        self.property
            .and_then(|p| p.get(name))
            .or_else(|| self.node.and_then(|n| n.get(name)))
    }

    /// Whether the schema describes a map or struct (or nothing: deduced).
    pub fn is_object(&self) -> bool {
        match self.node {
            None => true,
            Some(n) => {
                n.get("type").and_then(Value::as_str) == Some("object")
                    || n.get("properties").is_some()
                    || n.get("additionalProperties").is_some()
            }
        }
    }

    /// The schema of field `key`, and whether it is a declared field (not
    /// an entry of a map).
    pub fn field(&self, key: &str) -> (Type<'a>, bool) {
        let Some(node) = self.node else {
            return (Type::at(None, self.lookup), false);
        };
        if let Some(prop) = node.get("properties").and_then(|p| p.get(key)) {
            return (Type::at(Some(prop), self.lookup), true);
        }
        let values = node.get("additionalProperties").filter(|v| v.is_object());
        (Type::at(values, self.lookup), false)
    }

    /// The schema of this list's items.
    pub fn items(&self) -> Type<'a> {
        Type::at(self.node.and_then(|n| n.get("items")), self.lookup)
    }

    /// Whether this map or struct is owned as a whole: declared atomic, or
    /// an object the schema says nothing about (a RawExtension) unless it
    /// keeps unknown fields.
    pub fn atomic_map(&self) -> bool {
        let declared = self.extension("x-kubernetes-map-type");
        if declared.and_then(Value::as_str) == Some("atomic") {
            return true;
        }
        let Some(node) = self.node else {
            return false;
        };
        let opaque = node.get("properties").is_none()
            && node.get("additionalProperties").is_none()
            && node.get("type").and_then(Value::as_str) == Some("object");
        opaque && node.get("x-kubernetes-preserve-unknown-fields") != Some(&Value::Bool(true))
    }

    /// How this list's items are told apart.
    pub fn list_type(&self) -> ListType {
        if self.node.is_none() {
            return ListType::Atomic;
        }
        if let Some(declared) = self.extension("x-kubernetes-list-type") {
            return match declared.as_str() {
                Some("set") => ListType::Set,
                Some("map") => ListType::Map(self.strings("x-kubernetes-list-map-keys")),
                _ => ListType::Atomic,
            };
        }
        let strategy = self.extension("x-kubernetes-patch-strategy");
        match strategy.and_then(Value::as_str) {
            Some("merge" | "merge,retainKeys") => {
                match self.extension("x-kubernetes-patch-merge-key") {
                    Some(Value::String(key)) => ListType::Map(vec![key.clone()]),
                    _ => ListType::Set,
                }
            }
            _ => ListType::Atomic,
        }
    }

    fn strings(&self, name: &str) -> Vec<String> {
        let values = self.extension(name).and_then(Value::as_array);
        values
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    }
}
