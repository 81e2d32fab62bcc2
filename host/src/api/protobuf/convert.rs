//! Turns one protobuf message into the JSON value a client would have sent:
//! fields are looked up in the generated table, named as in the OpenAPI
//! schema, and zero scalars that Go's JSON encoding would have omitted
//! (omitempty) are dropped. Well-known types are delegated to special.rs.

use crate::catalogue::Schemas;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use base64::Engine;
use serde_json::{Map, Number, Value};

use super::names::{self, Names};
use super::special;
use super::table::{table, Field, Kind, Message};
use super::wire::{self, WireValue};

/// Deepest message nesting accepted (JSONSchemaProps nests, attackers too).
const MAX_DEPTH: usize = 100;

/// Per-request state: the schemas and the field names resolved so far.
pub struct Ctx<'a> {
    schemas: &'a Schemas,
    names: RefCell<HashMap<String, Rc<Names>>>,
}

impl<'a> Ctx<'a> {
    pub fn new(schemas: &'a Schemas) -> Ctx<'a> {
        Ctx {
            schemas,
            names: RefCell::new(HashMap::new()),
        }
    }

    pub(super) fn names(&self, type_name: &str, message: &Message) -> Rc<Names> {
        if let Some(found) = self.names.borrow().get(type_name) {
            return found.clone();
        }
        let built = Rc::new(names::resolve(type_name, message, self.schemas));
        self.names
            .borrow_mut()
            .insert(type_name.to_string(), built.clone());
        built
    }
}

/// Adds `field` to the location of an error: "msg (at a.b)".
pub fn within(field: &str, err: String) -> String {
    match err.split_once(" (at ") {
        Some((msg, path)) => format!("{msg} (at {field}.{path}"),
        None => format!("{err} (at {field})"),
    }
}

/// What has been read for one field so far.
enum Slot {
    Unset,
    Single(Option<Value>),
    List(Vec<Value>),
    Map(Map<String, Value>),
}

/// Decodes a message of type `type_name`; None means "leave the field out"
/// (a zero Time, for instance).
pub fn message(
    ctx: &Ctx,
    type_name: &str,
    buf: &[u8],
    depth: usize,
) -> Result<Option<Value>, String> {
    if depth > MAX_DEPTH {
        return Err(format!("objects nested more than {MAX_DEPTH} deep"));
    }
    if let Some(kind) = special::kind_of(type_name) {
        return special::decode(ctx, kind, buf, depth);
    }
    let message = table()
        .messages
        .get(type_name)
        .ok_or_else(|| format!("no protobuf description of {type_name}"))?;
    let names = ctx.names(type_name, message);
    let mut slots: Vec<Slot> = message.fields.iter().map(|_| Slot::Unset).collect();
    for (tag, value) in wire::fields(buf)? {
        let Some((i, field)) = message.field(tag) else {
            continue;
        };
        read_field(ctx, field, value, &mut slots[i], depth)
            .map_err(|e| within(&names.fields[i].0, e))?;
    }
    let mut obj = Map::new();
    for ((field, slot), (json, keep)) in message.fields.iter().zip(slots).zip(names.fields.iter()) {
        match finish(field, slot, *keep) {
            Some(Value::Object(inner)) if json.is_empty() => obj.extend(inner),
            Some(v) if !json.is_empty() => {
                obj.insert(json.clone(), v);
            }
            _ => {}
        }
    }
    Ok(Some(Value::Object(obj)))
}

fn read_field(
    ctx: &Ctx,
    field: &Field,
    value: WireValue,
    slot: &mut Slot,
    depth: usize,
) -> Result<(), String> {
    if field.kind == Kind::Map {
        let WireValue::Bytes(entry) = value else {
            return Err(wrong_type("map entry", &value));
        };
        let (key, val) = map_entry(ctx, field, entry, depth)?;
        if !matches!(slot, Slot::Map(_)) {
            *slot = Slot::Map(Map::new());
        }
        if let Slot::Map(m) = slot {
            m.insert(key, val);
        }
        return Ok(());
    }
    if field.repeated {
        let items = repeated_values(ctx, field, value, depth)?;
        match slot {
            Slot::List(list) => list.extend(items),
            _ => *slot = Slot::List(items),
        }
        return Ok(());
    }
    *slot = Slot::Single(single_value(
        ctx,
        field.kind,
        field.type_name.as_deref(),
        value,
        depth,
    )?);
    Ok(())
}

fn single_value(
    ctx: &Ctx,
    kind: Kind,
    type_name: Option<&str>,
    value: WireValue,
    depth: usize,
) -> Result<Option<Value>, String> {
    if kind != Kind::Message {
        return scalar(kind, value).map(Some);
    }
    let WireValue::Bytes(buf) = value else {
        return Err(wrong_type("message", &value));
    };
    message(ctx, type_name.unwrap_or_default(), buf, depth + 1)
}

fn repeated_values(
    ctx: &Ctx,
    field: &Field,
    value: WireValue,
    depth: usize,
) -> Result<Vec<Value>, String> {
    match (field.kind, value) {
        (Kind::Int32 | Kind::Int64 | Kind::Bool, WireValue::Bytes(buf)) => {
            wire::packed_varints(buf)?
                .into_iter()
                .map(|v| scalar(field.kind, WireValue::Varint(v)))
                .collect()
        }
        (Kind::Double, WireValue::Bytes(buf)) => wire::packed_fixed64(buf)?
            .into_iter()
            .map(|v| scalar(field.kind, WireValue::Fixed64(v)))
            .collect(),
        _ => {
            let v = single_value(ctx, field.kind, field.type_name.as_deref(), value, depth)?;
            Ok(vec![v.unwrap_or(Value::Null)])
        }
    }
}

/// One `map<string, V>` entry: key is field 1, value field 2.
fn map_entry(
    ctx: &Ctx,
    field: &Field,
    entry: &[u8],
    depth: usize,
) -> Result<(String, Value), String> {
    let mut key = String::new();
    let mut value = None;
    for (tag, v) in wire::fields(entry)? {
        match tag {
            1 => key = string(v)?,
            2 => value = Some(v),
            _ => {}
        }
    }
    let decoded = match (field.map_value, value) {
        (Some(kind), Some(v)) => scalar(kind, v)?,
        (Some(kind), None) => zero_of(kind),
        (None, v) => {
            let buf = match v {
                Some(WireValue::Bytes(b)) => b,
                Some(other) => return Err(wrong_type("message", &other)),
                None => &[],
            };
            let type_name = field.type_name.as_deref().unwrap_or_default();
            message(ctx, type_name, buf, depth + 1)?.unwrap_or(Value::Null)
        }
    };
    Ok((key, decoded))
}

fn finish(field: &Field, slot: Slot, keep: bool) -> Option<Value> {
    match slot {
        Slot::Unset | Slot::Single(None) => None,
        Slot::List(items) if items.is_empty() => None,
        Slot::List(items) => Some(Value::Array(items)),
        Slot::Map(m) => Some(Value::Object(m)),
        Slot::Single(Some(v)) if field.kind != Kind::Message && !keep && is_zero(&v) => None,
        Slot::Single(Some(v)) => Some(v),
    }
}

/// The scalars Go's `omitempty` leaves out.
fn is_zero(v: &Value) -> bool {
    match v {
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Null => true,
        _ => false,
    }
}

fn zero_of(kind: Kind) -> Value {
    match kind {
        Kind::String | Kind::Bytes => Value::String(String::new()),
        Kind::Bool => Value::Bool(false),
        _ => Value::from(0),
    }
}

pub fn wrong_type(expected: &str, got: &WireValue) -> String {
    format!(
        "expected a {expected} but found the {} wire type",
        got.type_name()
    )
}

pub fn string(v: WireValue) -> Result<String, String> {
    match v {
        WireValue::Bytes(b) => {
            String::from_utf8(b.to_vec()).map_err(|_| "string is not valid UTF-8".to_string())
        }
        other => Err(wrong_type("string", &other)),
    }
}

/// A scalar field's JSON value.
pub fn scalar(kind: Kind, v: WireValue) -> Result<Value, String> {
    Ok(match (kind, v) {
        (Kind::String, v) => Value::String(string(v)?),
        (Kind::Bytes, WireValue::Bytes(b)) => {
            Value::String(base64::engine::general_purpose::STANDARD.encode(b))
        }
        (Kind::Int32, WireValue::Varint(n)) => Value::from(n as i64 as i32),
        (Kind::Int64, WireValue::Varint(n)) => Value::from(n as i64),
        (Kind::Bool, WireValue::Varint(n)) => Value::Bool(n != 0),
        (Kind::Double, WireValue::Fixed64(bits)) => double(f64::from_bits(bits))?,
        (kind, other) => return Err(wrong_type(&format!("{kind:?}").to_lowercase(), &other)),
    })
}

/// Go's JSON writes whole floats without a fraction (1, not 1.0).
fn double(f: f64) -> Result<Value, String> {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15 {
        return Ok(Value::from(f as i64));
    }
    Number::from_f64(f)
        .map(Value::Number)
        .ok_or_else(|| "a double is NaN or infinite".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_convert_like_go_json() {
        assert_eq!(
            scalar(Kind::Int32, WireValue::Varint(u64::MAX)).unwrap(),
            Value::from(-1)
        );
        assert_eq!(
            scalar(Kind::Int64, WireValue::Varint(1 << 40)).unwrap(),
            Value::from(1i64 << 40)
        );
        assert_eq!(
            scalar(Kind::Bytes, WireValue::Bytes(b"\x00\xff")).unwrap(),
            Value::from("AP8=")
        );
        assert_eq!(
            scalar(Kind::Double, WireValue::Fixed64(2.0f64.to_bits())).unwrap(),
            Value::from(2)
        );
        assert_eq!(
            scalar(Kind::Double, WireValue::Fixed64(0.5f64.to_bits())).unwrap(),
            Value::from(0.5)
        );
        let err = scalar(Kind::String, WireValue::Varint(1)).unwrap_err();
        assert!(err.contains("expected a string"), "{err}");
        assert!(scalar(Kind::String, WireValue::Bytes(b"\xff")).is_err());
    }

    #[test]
    fn error_locations_nest() {
        let e = within("spec", within("template", "truncated varint".into()));
        assert_eq!(e, "truncated varint (at spec.template)");
    }
}
