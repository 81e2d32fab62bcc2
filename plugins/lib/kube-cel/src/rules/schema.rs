//! The schema tree the rules hang on: one [`Node`] per structural schema
//! node (properties, additionalProperties, items), with what typing `self`
//! and estimating sizes need. kube builds the same from
//! `schema.Structural` and `model.SchemaDeclType`.

use serde_json::Value;

use super::escape::escape;
use super::Rule;

/// Compiles the rules of a schema node: its schema, its node (children
/// built), and where it is.
pub(crate) type Compiler<'a> = dyn FnMut(&Value, &Node, &Place) -> Vec<Rule> + 'a;

/// Where a schema node is, for CRD-write problems.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    /// Its field path in the CRD (`….properties[spec].items`).
    pub path: String,
    /// How many times its rules may run per object (kube's MaxCardinality).
    pub cardinality: u64,
    /// The uncorrelatable schema above it, where oldSelf has no value.
    pub uncorrelatable: Option<String>,
}

/// kube's `maxRequestSizeBytes` (3 MiB), from which unbounded sizes derive.
pub(crate) const MAX_REQUEST_SIZE: u64 = 3 * 1024 * 1024;

/// What a schema node holds, as kube types `self` there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An object with declared properties (a CEL object).
    Object,
    /// An object with additionalProperties (a CEL map).
    Map,
    List,
    String,
    Integer,
    Number,
    Boolean,
    IntOrString,
    /// Preserve-unknown-fields without properties, or untyped: dynamic.
    Dynamic,
}

#[derive(Debug)]
pub(crate) struct Property {
    /// The property's JSON name.
    pub name: String,
    /// Its CEL name (`escape`d), if it has one.
    pub cel_name: Option<String>,
    pub node: Node,
}

#[derive(Debug)]
pub(crate) struct Node {
    pub kind: Kind,
    /// The schema's `type`, as kube reports it in errors.
    pub type_name: String,
    pub rules: Vec<Rule>,
    pub properties: Vec<Property>,
    pub additional: Option<Box<Node>>,
    pub items: Option<Box<Node>>,
    /// The root of a resource (the CR or an embedded resource): `self` has
    /// apiVersion, kind and metadata.name/generateName.
    pub resource_root: bool,
    /// `x-kubernetes-list-map-keys` of a `map` list, for correlating items.
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type: atomic`: old values do not correlate.
    pub atomic_map: bool,
    /// The most characters, items or entries a value here may have.
    pub max_elements: u64,
    /// Whether this node or one below has rules.
    pub has_rules: bool,
}

fn bound(schema: &Value, key: &str) -> Option<u64> {
    schema.get(key).and_then(Value::as_u64)
}

fn flag(schema: &Value, key: &str) -> bool {
    schema.get(key).and_then(Value::as_bool) == Some(true)
}

fn kind_of(schema: &Value) -> Kind {
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    match schema.get("type").and_then(Value::as_str).unwrap_or("") {
        "object"
            if schema
                .get("additionalProperties")
                .is_some_and(Value::is_object) =>
        {
            Kind::Map
        }
        "object" if properties || !flag(schema, "x-kubernetes-preserve-unknown-fields") => {
            Kind::Object
        }
        "array" => Kind::List,
        "string" => Kind::String,
        "integer" => Kind::Integer,
        "number" => Kind::Number,
        "boolean" => Kind::Boolean,
        _ if flag(schema, "x-kubernetes-int-or-string") => Kind::IntOrString,
        _ => Kind::Dynamic,
    }
}

impl Node {
    /// The tree for `schema`; `rules` compiles a node's rules.
    pub(crate) fn build(
        schema: &Value,
        resource_root: bool,
        at: &Place,
        rules: &mut Compiler<'_>,
    ) -> Node {
        let mut node = Node {
            kind: kind_of(schema),
            type_name: schema
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            rules: Vec::new(),
            properties: Vec::new(),
            additional: None,
            items: None,
            resource_root,
            list_map_keys: Vec::new(),
            atomic_map: schema.get("x-kubernetes-map-type").and_then(Value::as_str)
                == Some("atomic"),
            max_elements: max_elements(schema),
            has_rules: false,
        };
        if schema.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map") {
            node.list_map_keys = strings(schema.get("x-kubernetes-list-map-keys"));
        }
        node.children(schema, at, rules);
        node.rules = rules(schema, &node, at);
        node.has_rules = !node.rules.is_empty()
            || node.properties.iter().any(|p| p.node.has_rules)
            || node.additional.as_ref().is_some_and(|n| n.has_rules)
            || node.items.as_ref().is_some_and(|n| n.has_rules);
        node
    }

    fn children(&mut self, schema: &Value, at: &Place, rules: &mut Compiler<'_>) {
        let embedded = |s: &Value| flag(s, "x-kubernetes-embedded-resource");
        let (atomic, count) = (self.atomic_map, self.max_elements);
        let fields_at = |name: &str| Place {
            path: format!("{}.properties[{name}]", at.path),
            cardinality: at.cardinality,
            uncorrelatable: at
                .uncorrelatable
                .clone()
                .or_else(|| atomic.then(|| at.path.clone())),
        };
        let below = |key: &str, uncorrelatable: bool| Place {
            path: format!("{}.{key}", at.path),
            cardinality: at.cardinality.saturating_mul(count),
            uncorrelatable: at
                .uncorrelatable
                .clone()
                .or_else(|| uncorrelatable.then(|| at.path.clone())),
        };
        let additional_at = below("additionalProperties", atomic);
        let items_at = below("items", self.list_map_keys.is_empty());
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            let mut sorted: Vec<(&String, &Value)> = properties.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            for (name, child) in sorted {
                self.properties.push(Property {
                    name: name.clone(),
                    cel_name: escape(name),
                    node: Node::build(child, embedded(child), &fields_at(name), rules),
                });
            }
        }
        if let Some(child) = schema.get("additionalProperties").filter(|a| a.is_object()) {
            let node = Node::build(child, embedded(child), &additional_at, rules);
            self.additional = Some(Box::new(node));
        }
        if let Some(child) = schema.get("items").filter(|i| i.is_object()) {
            self.items = Some(Box::new(Node::build(
                child,
                embedded(child),
                &items_at,
                rules,
            )));
        }
    }

    /// The property called `cel_name` in CEL.
    pub(crate) fn field(&self, cel_name: &str) -> Option<&Node> {
        if self.resource_root && matches!(cel_name, "apiVersion" | "kind" | "metadata") {
            return None;
        }
        self.properties
            .iter()
            .find(|p| p.cel_name.as_deref() == Some(cel_name))
            .map(|p| &p.node)
    }

    /// The node of the property named `name` in JSON.
    pub(crate) fn property(&self, name: &str) -> Option<&Node> {
        self.properties
            .iter()
            .find(|p| p.name == name)
            .map(|p| &p.node)
    }
}

/// kube's `estimateMinSizeJSON`: the smallest JSON text of a value of
/// `schema`.
fn min_json_size(schema: &Value) -> u64 {
    match kind_of(schema) {
        Kind::Boolean => 4,
        Kind::String | Kind::List | Kind::Map => 2,
        Kind::Object => {
            let properties = schema.get("properties");
            let required = strings(schema.get("required"));
            let sizes = required.iter().filter_map(|name| {
                let property = properties?.get(name)?;
                if property.get("default").is_some() {
                    return Some(0);
                }
                Some(min_json_size(property) + name.len() as u64 + 4)
            });
            2 + sizes.sum::<u64>()
        }
        _ => 1,
    }
}

/// The most elements (characters, items, entries) a value of `schema` may
/// have: its bound, or kube's worst case within a request.
/// The longest string of an `enum`, which bounds the value as kube's
/// estimator takes it (`estimateMaxStringEnumLength`).
fn longest_enum_value(schema: &Value) -> Option<u64> {
    let values = schema.get("enum")?.as_array()?;
    values
        .iter()
        .map(|v| v.as_str().map(|s| s.chars().count() as u64))
        .collect::<Option<Vec<u64>>>()?
        .into_iter()
        .max()
}

fn max_elements(schema: &Value) -> u64 {
    let child = |key: &str| {
        schema
            .get(key)
            .filter(|c| c.is_object())
            .map_or(1, min_json_size)
    };
    match kind_of(schema) {
        Kind::String | Kind::IntOrString | Kind::Dynamic => bound(schema, "maxLength")
            .or_else(|| longest_enum_value(schema))
            .unwrap_or(MAX_REQUEST_SIZE - 2),
        Kind::List => bound(schema, "maxItems")
            .unwrap_or_else(|| (MAX_REQUEST_SIZE - 2) / (child("items") + 1)),
        Kind::Map => bound(schema, "maxProperties")
            .unwrap_or_else(|| (MAX_REQUEST_SIZE - 2) / (child("additionalProperties") + 6)),
        Kind::Object => bound(schema, "maxProperties").unwrap_or_else(|| {
            schema
                .get("properties")
                .and_then(Value::as_object)
                .map_or(0, |p| p.len() as u64)
        }),
        Kind::Integer | Kind::Number | Kind::Boolean => 1,
    }
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}
