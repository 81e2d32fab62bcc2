//! The type check of a decoded object against its schema, reproducing what
//! kube-apiserver's decoding into typed Go structs refuses: a value of the
//! wrong JSON kind (`json: cannot unmarshal array into Go struct field
//! ConfigMap.data of type map[string]string`), integers that are not
//! integral or overflow int32/int64, `[]byte` that is not base64, and the
//! custom decoders of IntOrString, Quantity and Time. `null` is accepted
//! anywhere (Go leaves the zero value). One walk over the object, linear in
//! its size; the first problem in document order is reported, as Go does.
//! An integer written `-0` is stored as 0. Unknown fields are field
//! validation's business (`field_validation.rs`).

use super::Schemas;
use serde_json::{Map, Value};

use super::go_decode::{self, IntKind};
use super::schemas::{ref_name, REF_PREFIX};
use super::{Catalogue, ResourceInfo};

/// The Go types with their own JSON decoders (errors without field context).
const CUSTOM_DECODERS: [&str; 4] = [
    "intstr.IntOrString",
    "resource.Quantity",
    "v1.Time",
    "v1.MicroTime",
];

/// The first value of an object its Go type refuses: Go's error text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeError(pub String);

impl std::fmt::Display for TypeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Checks (and normalises `-0`s in) an object of the resource.
pub fn check(cat: &Catalogue, res: &ResourceInfo, obj: &mut Value) -> Result<(), TypeError> {
    check_schema(cat.schemas(), &res.schema_name, obj)
}

/// Checks an object against the component schema `schema_name` (a kind's,
/// Scale's, or a CRD's).
pub fn check_schema(
    schemas: &Schemas,
    schema_name: &str,
    obj: &mut Value,
) -> Result<(), TypeError> {
    let root = serde_json::json!({ "$ref": format!("{REF_PREFIX}{schema_name}") });
    let mut checker = Checker {
        schemas,
        fields: Vec::new(),
        strukt: String::new(),
    };
    checker.value(&root, obj)
}

/// kube's 400 message: `ConfigMap in version "v1" cannot be handled as a
/// ConfigMap: json: cannot unmarshal ...`.
pub fn bad_request_message(kind: &str, version: &str, e: &TypeError) -> String {
    format!("{kind} in version \"{version}\" cannot be handled as a {kind}: {e}")
}

/// `v1.ObjectMeta` for `io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`:
/// Go's name of a type, its package then its name.
fn go_name(component: &str) -> String {
    let mut parts = component.rsplit('.');
    match (parts.next(), parts.next()) {
        (Some(name), Some(pkg)) => format!("{pkg}.{name}"),
        _ => component.to_string(),
    }
}

/// What a schema decodes into.
enum Shape<'a> {
    /// A Go struct: its name and properties.
    Struct(String, &'a Map<String, Value>),
    /// A named type with its own decoder.
    Custom(String),
    Map(&'a Value),
    Array(&'a Value),
    Int(IntKind),
    Float,
    Bool,
    Str,
    Bytes,
    /// Anything goes (RawExtension, FieldsV1, preserve-unknown-fields).
    Any,
}

struct Checker<'a> {
    schemas: &'a Schemas,
    /// The JSON names of the struct fields from the root (Go's FieldStack).
    fields: Vec<&'a str>,
    /// The innermost struct holding the current field.
    strukt: String,
}

impl<'a> Checker<'a> {
    /// Follows references, remembering the last component's name.
    fn resolve(&self, mut schema: &'a Value) -> (Option<&'a str>, Option<&'a Value>) {
        let mut name = None;
        for _ in 0..32 {
            match ref_name(schema) {
                Some(n) => {
                    name = Some(n);
                    match self.schemas.get(n) {
                        Some(s) => schema = s,
                        None => return (name, None),
                    }
                }
                None => return (name, Some(schema)),
            }
        }
        (name, None)
    }

    fn shape(&self, schema: &'a Value) -> Shape<'a> {
        let (name, resolved) = self.resolve(schema);
        let Some(s) = resolved else {
            return Shape::Any;
        };
        let go = name.map(go_name);
        if let Some(go) = go
            .as_ref()
            .filter(|g| CUSTOM_DECODERS.contains(&g.as_str()))
        {
            return Shape::Custom(go.clone());
        }
        if s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
            return Shape::Any;
        }
        if let Some(props) = s.get("properties").and_then(Value::as_object) {
            return Shape::Struct(go.unwrap_or_default(), props);
        }
        let format = s.get("format").and_then(Value::as_str);
        match s.get("type").and_then(Value::as_str) {
            Some("object") => match s.get("additionalProperties").filter(|a| a.is_object()) {
                Some(values) => Shape::Map(values),
                None => Shape::Any,
            },
            Some("array") => s.get("items").map_or(Shape::Any, Shape::Array),
            Some("integer") => Shape::Int(IntKind::from_format(format)),
            Some("number") => Shape::Float,
            Some("boolean") => Shape::Bool,
            Some("string") if format == Some("byte") => Shape::Bytes,
            Some("string") => Shape::Str,
            _ => Shape::Any,
        }
    }

    /// Go's `Type.String()` of what `schema` decodes into.
    fn go_type(&self, schema: &'a Value) -> String {
        match self.shape(schema) {
            Shape::Struct(name, _) | Shape::Custom(name) => name,
            Shape::Map(values) => format!("map[string]{}", self.go_type(values)),
            Shape::Array(items) => format!("[]{}", self.go_type(items)),
            Shape::Int(kind) => kind.go_name().to_string(),
            Shape::Float => "float64".into(),
            Shape::Bool => "bool".into(),
            Shape::Str => "string".into(),
            Shape::Bytes => "[]uint8".into(),
            Shape::Any => "interface {}".into(),
        }
    }

    /// `json: cannot unmarshal <what> into Go struct field <S>.<path> of type <T>`.
    fn mismatch(&self, what: &str, schema: &'a Value) -> TypeError {
        let ty = self.go_type(schema);
        if self.fields.is_empty() {
            return TypeError(format!(
                "json: cannot unmarshal {what} into Go value of type {ty}"
            ));
        }
        TypeError(format!(
            "json: cannot unmarshal {what} into Go struct field {}.{} of type {ty}",
            self.strukt,
            self.fields.join(".")
        ))
    }

    fn value(&mut self, schema: &'a Value, v: &mut Value) -> Result<(), TypeError> {
        if v.is_null() {
            return Ok(());
        }
        let shape = self.shape(schema);
        self.typed(&shape, schema, v)
    }

    /// Checks `v` against the shape of `schema` (computed once per list or map).
    fn typed(
        &mut self,
        shape: &Shape<'a>,
        schema: &'a Value,
        v: &mut Value,
    ) -> Result<(), TypeError> {
        let kind = go_decode::kind_name(v);
        match (shape, v) {
            (_, Value::Null) | (Shape::Any, _) => Ok(()),
            (Shape::Struct(name, props), Value::Object(obj)) => self.fields_of(name, props, obj),
            (Shape::Map(values), Value::Object(obj)) => {
                let inner = self.shape(values);
                obj.values_mut()
                    .try_for_each(|item| self.typed(&inner, values, item))
            }
            (Shape::Array(items), Value::Array(list)) => {
                let inner = self.shape(items);
                list.iter_mut()
                    .try_for_each(|item| self.typed(&inner, items, item))
            }
            (Shape::Custom(name), v) => match go_decode::custom_error(name, v) {
                Some(message) => Err(TypeError(message)),
                None => {
                    normalise_zero(v);
                    Ok(())
                }
            },
            (Shape::Int(int), v) => match go_decode::integer(v, *int) {
                Ok(Some(n)) => {
                    *v = Value::from(n);
                    Ok(())
                }
                Ok(None) => Ok(()),
                Err(what) => Err(self.mismatch(&what, schema)),
            },
            (Shape::Float, Value::Number(_))
            | (Shape::Bool, Value::Bool(_))
            | (Shape::Str, Value::String(_)) => Ok(()),
            (Shape::Bytes, Value::String(s)) => match go_decode::base64_error(s) {
                Some(message) => Err(TypeError(message)),
                None => Ok(()),
            },
            _ => Err(self.mismatch(kind, schema)),
        }
    }

    /// The fields of a struct, in document order; unknown ones are skipped.
    /// On an error the walk stops, leaving the context where it failed.
    fn fields_of(
        &mut self,
        name: &str,
        props: &'a Map<String, Value>,
        obj: &mut Map<String, Value>,
    ) -> Result<(), TypeError> {
        // Go names the struct by its bare name (`reflect.Type.Name()`).
        let bare = name.rsplit('.').next().unwrap_or(name);
        let outer = std::mem::replace(&mut self.strukt, bare.to_string());
        for (key, item) in obj.iter_mut() {
            let Some((field, schema)) = props.get_key_value(key.as_str()) else {
                continue;
            };
            self.fields.push(field.as_str());
            self.value(schema, item)?;
            self.fields.pop();
        }
        self.strukt = outer;
        Ok(())
    }
}

/// IntOrString's `-0` is the integer 0.
fn normalise_zero(v: &mut Value) {
    if let Value::Number(n) = v {
        if !n.is_i64() && !n.is_u64() && n.as_f64() == Some(0.0) {
            *v = Value::from(0);
        }
    }
}

#[cfg(test)]
mod tests;
