//! The walk that writes a value as Go's `encoding/json` writes the typed
//! struct kube decoded it into, after kube's protobuf storage round trip:
//! - struct fields in declaration order; a field absent or `null` takes its
//!   type's zero value; `omitempty` drops zero strings, numbers and bools,
//!   nil pointers, slices and maps (never a struct, nor a pointer to a zero
//!   value);
//! - an empty slice or map is nil once stored as protobuf, so it is
//!   dropped with `omitempty` and written `null` without (an object never
//!   stored, decoded from JSON, keeps it: `[]`, `{}`);
//! - map keys sorted (Go sorts them); a `null` element of a slice or map of
//!   non-pointers is the element's zero value;
//! - quantities, times and `[]byte` in their Go form (`scalars.rs`).
//!
//! Fields the table does not know are kept after the known ones. One pass,
//! linear in the object.

use super::scalars;
use super::table::{Field, GoTypes, Ty};
use serde_json::{Map, Value};

pub(super) struct Encoder<'a> {
    pub types: &'a GoTypes,
    /// core/v1's `SetDefaults_ResourceList` applies to this object.
    pub round_milli: bool,
    /// The object is as decoded from JSON, never stored: empty slices and
    /// maps stay empty rather than nil.
    pub decoded: bool,
}

impl Encoder<'_> {
    /// `v` (`null` when absent) as Go encodes a value of type `ty`.
    pub fn value(&self, ty: &Ty, v: Value) -> Value {
        match ty {
            Ty::Ptr(_) if v.is_null() => Value::Null,
            Ty::Ptr(inner) => self.value(inner, v),
            Ty::Slice(inner) => self.slice(inner, v),
            Ty::Map(inner) => self.map(v, |item| self.value(inner, item)),
            Ty::ResourceList => self.map(v, |q| scalars::quantity(q, self.round_milli)),
            Ty::Struct(i) => self.strukt(*i, v),
            Ty::Str if v.is_null() => Value::from(""),
            Ty::Int | Ty::Float | Ty::IntStr if v.is_null() => Value::from(0),
            Ty::Bool if v.is_null() => Value::Bool(false),
            Ty::Bytes => scalars::bytes(v),
            Ty::Quantity => scalars::quantity(v, false),
            Ty::Time => scalars::time(v),
            Ty::MicroTime => scalars::micro_time(v),
            _ => v,
        }
    }

    fn slice(&self, inner: &Ty, v: Value) -> Value {
        match v {
            Value::Array(items) if items.is_empty() && !self.decoded => Value::Null,
            Value::Array(items) => items
                .into_iter()
                .map(|item| self.value(inner, item))
                .collect(),
            other => other,
        }
    }

    /// A map with its values encoded and its keys sorted.
    fn map(&self, v: Value, encode: impl Fn(Value) -> Value) -> Value {
        match v {
            Value::Object(entries) if entries.is_empty() && !self.decoded => Value::Null,
            Value::Object(entries) => {
                let mut sorted: Vec<(String, Value)> = entries.into_iter().collect();
                sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                Value::Object(sorted.into_iter().map(|(k, v)| (k, encode(v))).collect())
            }
            other => other,
        }
    }

    /// The struct `index` in Go's field order; `null` is the zero struct.
    fn strukt(&self, index: usize, v: Value) -> Value {
        let mut given = match v {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => return other,
        };
        let Some(fields) = self.types.structs.get(index) else {
            return Value::Object(given);
        };
        let mut out = Map::with_capacity(fields.len().min(given.len() + 4));
        for field in fields {
            let value = given.remove(&field.name).unwrap_or(Value::Null);
            if let Some(encoded) = self.field(field, value) {
                out.insert(field.name.clone(), encoded);
            }
        }
        out.extend(given);
        Value::Object(out)
    }

    /// A field's encoding, or None when `omitempty` drops it.
    fn field(&self, field: &Field, v: Value) -> Option<Value> {
        let encoded = self.value(&field.ty, v);
        (!(field.omitempty && is_empty(&field.ty, &encoded))).then_some(encoded)
    }
}

/// Go's `isEmptyValue` of an encoded value: false for structs (Quantity,
/// Time, IntOrString and RawExtension are structs too).
fn is_empty(ty: &Ty, v: &Value) -> bool {
    match ty {
        Ty::Str => v.as_str() == Some(""),
        Ty::Int | Ty::Float => v.as_f64() == Some(0.0),
        Ty::Bool => v == &Value::Bool(false),
        Ty::Bytes => v.is_null() || v.as_str() == Some(""),
        Ty::Ptr(_) | Ty::Slice(_) | Ty::Map(_) | Ty::ResourceList => v.is_null(),
        Ty::Quantity | Ty::IntStr | Ty::Time | Ty::MicroTime | Ty::Raw | Ty::Struct(_) => false,
    }
}
