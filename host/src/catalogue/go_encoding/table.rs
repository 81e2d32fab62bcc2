//! The Go type table: types.txt (written by generate.py from the Go API
//! types of the Kubernetes mirror) parsed once into each struct's JSON
//! fields in declaration order.

use std::collections::HashMap;
use std::sync::LazyLock;

/// What a field's Go type is, as far as its JSON encoding goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Ty {
    Str,
    Int,
    Bool,
    Float,
    /// `[]byte`: standard base64.
    Bytes,
    /// `resource.Quantity`.
    Quantity,
    /// core/v1 `ResourceList`: a map of quantities.
    ResourceList,
    /// `intstr.IntOrString`.
    IntStr,
    /// `metav1.Time`.
    Time,
    /// `metav1.MicroTime`.
    MicroTime,
    /// Kept as written (RawExtension, FieldsV1, apiextensions' JSON, ...).
    Raw,
    Ptr(Box<Ty>),
    Slice(Box<Ty>),
    Map(Box<Ty>),
    /// A struct, by its index in [`GoTypes::structs`].
    Struct(usize),
}

/// One JSON field of a struct.
#[derive(Clone, Debug)]
pub(super) struct Field {
    pub name: String,
    pub omitempty: bool,
    pub ty: Ty,
}

/// Every struct of the table.
#[derive(Debug, Default)]
pub(super) struct GoTypes {
    index: HashMap<String, usize>,
    pub structs: Vec<Vec<Field>>,
}

impl GoTypes {
    /// The struct an OpenAPI component name (`io.k8s.api.core.v1.Pod`) denotes.
    pub fn lookup(&self, component: &str) -> Option<usize> {
        self.index.get(component).copied()
    }
}

static TYPES: LazyLock<GoTypes> = LazyLock::new(|| parse(include_str!("types.txt")));

/// The table built from the embedded types.txt.
pub(super) fn types() -> &'static GoTypes {
    &TYPES
}

/// Parses types.txt: `type <name>` lines, each followed by its indented
/// `<json>[?] <type>` field lines. A struct named but not described is
/// kept as written ([`Ty::Raw`]).
pub(super) fn parse(text: &str) -> GoTypes {
    let mut types = GoTypes::default();
    for name in text.lines().filter_map(|l| l.strip_prefix("type ")) {
        let next = types.index.len();
        types.index.entry(name.trim().to_string()).or_insert(next);
    }
    types.structs = vec![Vec::new(); types.index.len()];
    let mut current = None;
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("type ") {
            current = types.lookup(name.trim());
        } else if let (Some(i), Some(field)) = (current, line.strip_prefix("  ")) {
            if let Some(f) = parse_field(&types, field) {
                types.structs[i].push(f);
            }
        }
    }
    types
}

fn parse_field(types: &GoTypes, line: &str) -> Option<Field> {
    let (name, ty) = line.split_once(' ')?;
    let (name, omitempty) = match name.strip_suffix('?') {
        Some(n) => (n, true),
        None => (name, false),
    };
    Some(Field {
        name: name.to_string(),
        omitempty,
        ty: parse_type(types, ty.trim()),
    })
}

fn parse_type(types: &GoTypes, text: &str) -> Ty {
    if let Some(inner) = text.strip_prefix('*') {
        return Ty::Ptr(Box::new(parse_type(types, inner)));
    }
    if let Some(inner) = text.strip_prefix("[]") {
        return Ty::Slice(Box::new(parse_type(types, inner)));
    }
    if let Some(inner) = text.strip_prefix("{}") {
        return Ty::Map(Box::new(parse_type(types, inner)));
    }
    if let Some(name) = text.strip_prefix('@') {
        return types.lookup(name).map_or(Ty::Raw, Ty::Struct);
    }
    match text {
        "string" => Ty::Str,
        "int" => Ty::Int,
        "bool" => Ty::Bool,
        "float" => Ty::Float,
        "bytes" => Ty::Bytes,
        "quantity" => Ty::Quantity,
        "resourcelist" => Ty::ResourceList,
        "intstr" => Ty::IntStr,
        "time" => Ty::Time,
        "microtime" => Ty::MicroTime,
        _ => Ty::Raw,
    }
}
