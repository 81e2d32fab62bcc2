//! JSON objects of built-in kinds written as kube's protobuf serializer
//! writes them, the inverse of `convert.rs`: the same field table and the
//! same JSON names, each JSON field written under its tag (proto2: repeated
//! scalars unpacked, map entries as {1 key, 2 value} in key order); the
//! well-known types in their message form (times as seconds and nanos,
//! Quantity and IntOrString, embedded JSON as raw bytes).

use base64::Engine;
use serde_json::Value;

use super::convert::Ctx;
use super::special::{self, Special};
use super::table::{table, Field, Kind};

/// Deepest nesting written (objects the server stores are far shallower).
const MAX_DEPTH: usize = 100;

const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const BYTES: u32 = 2;

/// A protobuf message being written.
#[derive(Default)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    fn key(&mut self, tag: u32, wire: u32) {
        self.varint(u64::from(tag << 3 | wire));
    }

    pub fn int(&mut self, tag: u32, v: i64) {
        self.key(tag, VARINT);
        self.varint(v as u64);
    }

    pub fn bytes(&mut self, tag: u32, b: &[u8]) {
        self.key(tag, BYTES);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
    }

    fn double(&mut self, tag: u32, f: f64) {
        self.key(tag, FIXED64);
        self.0.extend_from_slice(&f.to_bits().to_le_bytes());
    }
}

/// Writes `value` as the message `type_name`.
pub fn message(ctx: &Ctx, type_name: &str, value: &Value, depth: usize) -> Result<Vec<u8>, String> {
    if depth > MAX_DEPTH {
        return Err(format!("objects nested more than {MAX_DEPTH} deep"));
    }
    if let Some(kind) = special::kind_of(type_name) {
        return special_message(ctx, kind, value, depth);
    }
    let message = table()
        .messages
        .get(type_name)
        .ok_or_else(|| format!("no protobuf description of {type_name}"))?;
    let names = ctx.names(type_name, message);
    let obj = value.as_object();
    let mut w = Writer::default();
    for (field, (json, _)) in message.fields.iter().zip(names.fields.iter()) {
        if json.is_empty() {
            // An embedded struct: its fields are the parent's. (A field of
            // a newer release than the schemas is no embedded struct.)
            let type_name = field.type_name.as_deref().unwrap_or_default();
            if special::kind_of(type_name).is_none() {
                let inner = message_bytes(ctx, field, value, depth)?;
                if !inner.is_empty() {
                    w.bytes(field.tag, &inner);
                }
            }
            continue;
        }
        match obj.and_then(|o| o.get(json)) {
            None | Some(Value::Null) => {}
            Some(v) => write_field(ctx, &mut w, field, v, depth)
                .map_err(|e| super::convert::within(json, e))?,
        }
    }
    Ok(w.0)
}

fn message_bytes(ctx: &Ctx, field: &Field, v: &Value, depth: usize) -> Result<Vec<u8>, String> {
    let type_name = field.type_name.as_deref().unwrap_or_default();
    message(ctx, type_name, v, depth + 1)
}

fn write_field(
    ctx: &Ctx,
    w: &mut Writer,
    field: &Field,
    v: &Value,
    depth: usize,
) -> Result<(), String> {
    if field.kind == Kind::Map {
        let entries = v.as_object().ok_or("a map is not a JSON object")?;
        let mut keys: Vec<&String> = entries.keys().collect();
        keys.sort();
        for key in keys {
            let mut entry = Writer::default();
            entry.bytes(1, key.as_bytes());
            map_value(ctx, &mut entry, field, &entries[key], depth)?;
            w.bytes(field.tag, &entry.0);
        }
        return Ok(());
    }
    if field.repeated {
        let items = v.as_array().ok_or("a repeated field is not a JSON array")?;
        for item in items {
            single(ctx, w, field.tag, field.kind, field, item, depth)?;
        }
        return Ok(());
    }
    single(ctx, w, field.tag, field.kind, field, v, depth)
}

fn map_value(
    ctx: &Ctx,
    entry: &mut Writer,
    field: &Field,
    v: &Value,
    depth: usize,
) -> Result<(), String> {
    match field.map_value {
        Some(kind) => scalar(entry, 2, kind, v),
        None if v.is_null() => Ok(()),
        None => {
            let inner = message_bytes(ctx, field, v, depth)?;
            entry.bytes(2, &inner);
            Ok(())
        }
    }
}

fn single(
    ctx: &Ctx,
    w: &mut Writer,
    tag: u32,
    kind: Kind,
    field: &Field,
    v: &Value,
    depth: usize,
) -> Result<(), String> {
    if kind != Kind::Message {
        return scalar(w, tag, kind, v);
    }
    let inner = message_bytes(ctx, field, v, depth)?;
    w.bytes(tag, &inner);
    Ok(())
}

fn scalar(w: &mut Writer, tag: u32, kind: Kind, v: &Value) -> Result<(), String> {
    match (kind, v) {
        (Kind::String, Value::String(s)) => w.bytes(tag, s.as_bytes()),
        (Kind::Bytes, Value::String(s)) => {
            let b = base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|e| format!("bytes are not base64: {e}"))?;
            w.bytes(tag, &b);
        }
        (Kind::Int32 | Kind::Int64, Value::Number(n)) => {
            let i = n.as_i64().or_else(|| n.as_f64().map(|f| f as i64));
            w.int(tag, i.ok_or("an integer is out of range")?);
        }
        (Kind::Bool, Value::Bool(b)) => w.int(tag, i64::from(*b)),
        (Kind::Double, Value::Number(n)) => w.double(tag, n.as_f64().unwrap_or_default()),
        (kind, other) => return Err(format!("a {kind:?} field holds {other}")),
    }
    Ok(())
}

/// A well-known type in its message form.
fn special_message(ctx: &Ctx, kind: Special, v: &Value, depth: usize) -> Result<Vec<u8>, String> {
    let mut w = Writer::default();
    match (kind, v) {
        (Special::Time | Special::MicroTime, Value::String(t)) => {
            let t =
                chrono::DateTime::parse_from_rfc3339(t).map_err(|e| format!("time {t:?}: {e}"))?;
            w.int(1, t.timestamp());
            let nanos = t.timestamp_subsec_nanos();
            if kind == Special::MicroTime && nanos > 0 {
                w.int(2, i64::from(nanos));
            }
        }
        (Special::Duration, Value::String(d)) => w.int(1, parse_go_duration(d)?),
        (Special::Quantity, Value::String(q)) => w.bytes(1, q.as_bytes()),
        (Special::Quantity, Value::Number(n)) => w.bytes(1, n.to_string().as_bytes()),
        (Special::IntOrString, Value::String(s)) => {
            w.int(1, 1);
            w.bytes(3, s.as_bytes());
        }
        (Special::IntOrString, Value::Number(n)) => {
            w.int(1, 0);
            w.int(2, n.as_i64().ok_or("an int-or-string is out of range")?);
        }
        (Special::RawJson, v) => w.bytes(1, &serde_json::to_vec(v).map_err(|e| e.to_string())?),
        (Special::Unknown, v) => return super::encode_unknown(ctx, v, depth + 1),
        (Special::StringList, Value::Array(items)) => {
            for s in items {
                scalar(&mut w, 1, Kind::String, s)?;
            }
        }
        (Special::PropsOrArray, Value::Array(items)) => {
            for item in items {
                w.bytes(2, &props(ctx, item, depth)?);
            }
        }
        (Special::PropsOrBool, Value::Bool(b)) => w.int(1, i64::from(*b)),
        (Special::PropsOrBool, v) => {
            w.int(1, 1);
            w.bytes(2, &props(ctx, v, depth)?);
        }
        (Special::PropsOrStringArray, Value::Array(items)) => {
            for s in items {
                scalar(&mut w, 2, Kind::String, s)?;
            }
        }
        (Special::PropsOrArray | Special::PropsOrStringArray, v) => {
            w.bytes(1, &props(ctx, v, depth)?)
        }
        (kind, other) => return Err(format!("a {kind:?} holds {other}")),
    }
    Ok(w.0)
}

fn props(ctx: &Ctx, v: &Value, depth: usize) -> Result<Vec<u8>, String> {
    let name = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps";
    message(ctx, name, v, depth + 1)
}

/// A Go time.Duration string ("1h2m3.5s", "250ms", "-2s") in nanoseconds.
pub fn parse_go_duration(text: &str) -> Result<i64, String> {
    let bad = || format!("time: invalid duration {text:?}");
    let (sign, mut rest) = match text.strip_prefix('-') {
        Some(r) => (-1.0, r),
        None => (1.0, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest == "0" {
        return Ok(0);
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .ok_or_else(bad)?;
        let (number, after) = rest.split_at(number_end);
        let value: f64 = number.parse().map_err(|_| bad())?;
        let unit_end = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_end);
        let scale = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return Err(bad()),
        };
        total += value * scale;
        rest = next;
    }
    Ok((sign * total).round() as i64)
}
