//! Types whose JSON form is not "an object of their fields": times and
//! durations, Quantity, IntOrString, embedded raw JSON (RawExtension,
//! FieldsV1, apiextensions JSON), nested runtime.Unknown, string-list
//! wrappers (ExtraValue, Verbs) and the JSONSchemaPropsOr* unions.

use chrono::DateTime;
use serde_json::Value;

use super::convert::{self, string, wrong_type, Ctx};
use super::wire::{self, WireValue};

const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.";
const EXT: &str = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.";
const PROPS: &str = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps";

/// Go's zero time.Time as Unix seconds (0001-01-01T00:00:00Z).
const GO_ZERO_TIME: i64 = -62135596800;

/// The well-known types handled here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    Time,
    MicroTime,
    Duration,
    Quantity,
    IntOrString,
    RawJson,
    Unknown,
    StringList,
    PropsOrArray,
    PropsOrBool,
    PropsOrStringArray,
}

/// Which special type `type_name` is, if any.
pub fn kind_of(type_name: &str) -> Option<Special> {
    if let Some(short) = type_name.strip_prefix(META) {
        return match short {
            "Time" => Some(Special::Time),
            "MicroTime" => Some(Special::MicroTime),
            "Duration" => Some(Special::Duration),
            "FieldsV1" => Some(Special::RawJson),
            "Verbs" => Some(Special::StringList),
            _ => None,
        };
    }
    if let Some(short) = type_name.strip_prefix(EXT) {
        return match short {
            "Json" => Some(Special::RawJson),
            "JsonSchemaPropsOrArray" => Some(Special::PropsOrArray),
            "JsonSchemaPropsOrBool" => Some(Special::PropsOrBool),
            "JsonSchemaPropsOrStringArray" => Some(Special::PropsOrStringArray),
            _ => None,
        };
    }
    match type_name {
        "io.k8s.apimachinery.pkg.api.resource.Quantity" => Some(Special::Quantity),
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => Some(Special::IntOrString),
        "io.k8s.apimachinery.pkg.runtime.RawExtension" => Some(Special::RawJson),
        "io.k8s.apimachinery.pkg.runtime.Unknown" => Some(Special::Unknown),
        n if n.starts_with("io.k8s.api.") && n.ends_with(".v1.ExtraValue") => {
            Some(Special::StringList)
        }
        _ => None,
    }
}

/// The fields of a small message, by tag (repeated tags keep every value).
struct Fields<'a>(Vec<(u32, WireValue<'a>)>);

impl<'a> Fields<'a> {
    fn read(buf: &'a [u8]) -> Result<Fields<'a>, String> {
        wire::fields(buf).map(Fields)
    }

    fn last(&self, tag: u32) -> Option<WireValue<'a>> {
        self.0
            .iter()
            .rev()
            .find(|(t, _)| *t == tag)
            .map(|(_, v)| *v)
    }

    fn all(&self, tag: u32) -> impl Iterator<Item = WireValue<'a>> + '_ {
        self.0
            .iter()
            .filter(move |(t, _)| *t == tag)
            .map(|(_, v)| *v)
    }

    fn int(&self, tag: u32) -> Result<i64, String> {
        match self.last(tag) {
            None => Ok(0),
            Some(WireValue::Varint(n)) => Ok(n as i64),
            Some(other) => Err(wrong_type("varint", &other)),
        }
    }

    fn string(&self, tag: u32) -> Result<String, String> {
        self.last(tag)
            .map(string)
            .unwrap_or_else(|| Ok(String::new()))
    }

    fn bytes(&self, tag: u32) -> Result<&'a [u8], String> {
        match self.last(tag) {
            None => Ok(&[]),
            Some(WireValue::Bytes(b)) => Ok(b),
            Some(other) => Err(wrong_type("bytes", &other)),
        }
    }

    fn strings(&self, tag: u32) -> Result<Vec<Value>, String> {
        self.all(tag)
            .map(|v| string(v).map(Value::String))
            .collect()
    }
}

/// Decodes a special type; None means the field is left out.
pub fn decode(ctx: &Ctx, kind: Special, buf: &[u8], depth: usize) -> Result<Option<Value>, String> {
    let f = Fields::read(buf)?;
    match kind {
        Special::Time => time(&f, false),
        Special::MicroTime => time(&f, true),
        Special::Duration => Ok(Some(Value::String(go_duration(f.int(1)?)))),
        Special::Quantity => quantity(&f),
        Special::IntOrString => int_or_string(&f),
        Special::RawJson => raw_json(ctx, f.bytes(1)?, depth),
        Special::Unknown => super::unknown(ctx, buf, depth).map(Some),
        Special::StringList => Ok(Some(Value::Array(f.strings(1)?))),
        Special::PropsOrArray => props_or_array(ctx, &f, depth),
        Special::PropsOrBool => props_or_bool(ctx, &f, depth),
        Special::PropsOrStringArray => props_or_strings(ctx, &f, depth),
    }
}

/// metav1.Time as RFC 3339 seconds, MicroTime with six fractional digits.
/// An empty message or Go's zero time is left out (JSON would say null).
fn time(f: &Fields, micro: bool) -> Result<Option<Value>, String> {
    let seconds = f.int(1)?;
    let nanos = f.int(2)? as i32;
    if f.0.is_empty() || (seconds == GO_ZERO_TIME && nanos == 0) {
        return Ok(None);
    }
    let nanos = if micro {
        u32::try_from(nanos).unwrap_or(0)
    } else {
        0
    };
    let t = DateTime::from_timestamp(seconds, nanos)
        .ok_or_else(|| format!("time {seconds} is out of range"))?;
    let format = if micro {
        "%Y-%m-%dT%H:%M:%S%.6fZ"
    } else {
        "%Y-%m-%dT%H:%M:%SZ"
    };
    Ok(Some(Value::String(t.format(format).to_string())))
}

/// A Go time.Duration string: "1h0m0s", "30s", "1.5s", "250ms", "0s".
pub fn go_duration(ns: i64) -> String {
    if ns == 0 {
        return "0s".to_string();
    }
    let sign = if ns < 0 { "-" } else { "" };
    let u = ns.unsigned_abs();
    if u < 1_000_000_000 {
        let (unit, div) = match u {
            0..=999 => ("ns", 1),
            1_000..=999_999 => ("µs", 1_000),
            _ => ("ms", 1_000_000),
        };
        return format!("{sign}{}{unit}", fraction(u, div));
    }
    let (h, m, s) = (
        u / 3_600_000_000_000,
        (u / 60_000_000_000) % 60,
        u % 60_000_000_000,
    );
    let secs = format!("{}s", fraction(s, 1_000_000_000));
    match (h, m) {
        (0, 0) => format!("{sign}{secs}"),
        (0, m) => format!("{sign}{m}m{secs}"),
        (h, m) => format!("{sign}{h}h{m}m{secs}"),
    }
}

/// `value / div` with the fraction's trailing zeros trimmed.
fn fraction(value: u64, div: u64) -> String {
    let (whole, rest) = (value / div, value % div);
    if rest == 0 {
        return whole.to_string();
    }
    let width = div.to_string().len() - 1;
    let digits = format!("{rest:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// Go marshals a zero Quantity as "0".
fn quantity(f: &Fields) -> Result<Option<Value>, String> {
    let s = f.string(1)?;
    Ok(Some(Value::String(if s.is_empty() {
        "0".into()
    } else {
        s
    })))
}

/// type 1 → strVal, otherwise intVal.
fn int_or_string(f: &Fields) -> Result<Option<Value>, String> {
    if f.int(1)? == 1 {
        return Ok(Some(Value::String(f.string(3)?)));
    }
    Ok(Some(Value::from(f.int(2)? as i32)))
}

/// Embedded JSON (or an embedded protobuf object); empty means absent.
fn raw_json(ctx: &Ctx, raw: &[u8], depth: usize) -> Result<Option<Value>, String> {
    if raw.is_empty() {
        return Ok(None);
    }
    if let Some(inner) = raw.strip_prefix(super::MAGIC) {
        return super::unknown(ctx, inner, depth + 1).map(Some);
    }
    serde_json::from_slice(raw)
        .map(Some)
        .map_err(|e| format!("embedded raw object is not JSON: {e}"))
}

fn props(ctx: &Ctx, v: WireValue, depth: usize) -> Result<Option<Value>, String> {
    match v {
        WireValue::Bytes(b) => convert::message(ctx, PROPS, b, depth + 1),
        other => Err(wrong_type("message", &other)),
    }
}

/// A schema (field 1) or a list of schemas (field 2).
fn props_or_array(ctx: &Ctx, f: &Fields, depth: usize) -> Result<Option<Value>, String> {
    let list: Vec<Value> = f
        .all(2)
        .map(|v| props(ctx, v, depth).map(|p| p.unwrap_or(Value::Null)))
        .collect::<Result<_, _>>()?;
    if !list.is_empty() {
        return Ok(Some(Value::Array(list)));
    }
    f.last(1).map(|v| props(ctx, v, depth)).unwrap_or(Ok(None))
}

/// A schema (field 2) or a boolean (field 1).
fn props_or_bool(ctx: &Ctx, f: &Fields, depth: usize) -> Result<Option<Value>, String> {
    match f.last(2) {
        Some(v) => props(ctx, v, depth),
        None => Ok(Some(Value::Bool(f.int(1)? != 0))),
    }
}

/// A schema (field 1) or a list of property names (field 2).
fn props_or_strings(ctx: &Ctx, f: &Fields, depth: usize) -> Result<Option<Value>, String> {
    let names = f.strings(2)?;
    if !names.is_empty() {
        return Ok(Some(Value::Array(names)));
    }
    f.last(1).map(|v| props(ctx, v, depth)).unwrap_or(Ok(None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn varint_field(tag: u8, v: u64) -> Vec<u8> {
        let mut out = vec![tag << 3];
        let mut v = v;
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
        out
    }

    fn run(kind: Special, buf: &[u8]) -> Option<Value> {
        let schemas = crate::catalogue::Schemas::default();
        decode(&Ctx::new(&schemas), kind, buf, 0).unwrap()
    }

    #[test]
    fn times_like_go() {
        let t = varint_field(1, 1_700_000_000);
        assert_eq!(run(Special::Time, &t), Some(json!("2023-11-14T22:13:20Z")));
        let mut micro = t.clone();
        micro.extend(varint_field(2, 123_456_789));
        assert_eq!(
            run(Special::MicroTime, &micro),
            Some(json!("2023-11-14T22:13:20.123456Z"))
        );
        assert_eq!(run(Special::Time, &[]), None);
        assert_eq!(
            run(Special::Time, &varint_field(1, GO_ZERO_TIME as u64)),
            None
        );
    }

    #[test]
    fn durations_like_go() {
        assert_eq!(go_duration(3_600_000_000_000), "1h0m0s");
        assert_eq!(go_duration(30_000_000_000), "30s");
        assert_eq!(go_duration(90_500_000_000), "1m30.5s");
        assert_eq!(go_duration(250_000_000), "250ms");
        assert_eq!(go_duration(1_500), "1.5µs");
        assert_eq!(go_duration(0), "0s");
        assert_eq!(go_duration(-2_000_000_000), "-2s");
        assert_eq!(
            run(Special::Duration, &varint_field(1, 300_000_000_000)),
            Some(json!("5m0s"))
        );
    }

    #[test]
    fn int_or_string_and_quantity() {
        assert_eq!(
            run(Special::IntOrString, &varint_field(2, 8080)),
            Some(json!(8080))
        );
        let mut s = varint_field(1, 1);
        s.extend([0x1a, 3, b'5', b'0', b'%']);
        assert_eq!(run(Special::IntOrString, &s), Some(json!("50%")));
        assert_eq!(
            run(Special::Quantity, &[0x0a, 4, b'1', b'0', b'0', b'm']),
            Some(json!("100m"))
        );
        assert_eq!(run(Special::Quantity, &[]), Some(json!("0")));
    }

    #[test]
    fn raw_json_and_string_lists() {
        let raw = br#"{"a":1}"#;
        let mut buf = vec![0x0a, raw.len() as u8];
        buf.extend(raw);
        assert_eq!(run(Special::RawJson, &buf), Some(json!({"a": 1})));
        assert_eq!(run(Special::RawJson, &[]), None);
        let schemas = crate::catalogue::Schemas::default();
        let err = decode(&Ctx::new(&schemas), Special::RawJson, &[0x0a, 1, b'{'], 0).unwrap_err();
        assert!(err.contains("not JSON"), "{err}");
        let list = [0x0a, 1, b'a', 0x0a, 1, b'b'];
        assert_eq!(run(Special::StringList, &list), Some(json!(["a", "b"])));
        assert_eq!(
            run(Special::PropsOrBool, &varint_field(1, 0)),
            Some(json!(false))
        );
        assert_eq!(
            run(Special::PropsOrStringArray, &[0x12, 1, b'x']),
            Some(json!(["x"]))
        );
    }
}
