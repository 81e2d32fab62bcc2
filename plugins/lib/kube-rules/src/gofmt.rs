//! The bits of Go's `fmt` (and `encoding/json`) kube-apiserver's messages
//! print values with, so ours read byte for byte like kube's:
//!
//! - [`quote`]: `%q` of a string (`strconv.Quote`); [`quote_list`]: `%q`
//!   of a `[]string`.
//! - [`v`], [`sharp_v`]: `%v` and `%#v` of a decoded JSON value (an
//!   `interface{}`); [`float`]: `%v` of a float64; [`type_of`]: `%s` of
//!   `reflect.TypeOf`.
//! - [`bad_value`], [`scalar`]: a `field.Error`'s bad value as its
//!   `ErrorBody` prints it.
//! - [`string_map`], [`string_slice`], [`strings`], [`label_selector`]:
//!   `%#v` of the typed Go values kube prints (`map[string]string`,
//!   `[]string`, `*metav1.LabelSelector`).
//! - [`aggregate`]: the text of `utilerrors.NewAggregate`.
//! - [`json`]: `json.Marshal` of a decoded value; [`json_kind`]: the kind
//!   names of its `UnmarshalTypeError`.

use serde_json::{Number, Value};
use std::fmt::Write as _;

/// Go's `%q` of a string (`strconv.Quote`): double-quoted, with Go's escapes;
/// characters Go does not print (controls, format characters, spaces other
/// than ' ', private use) as `\x`, `\u` or `\U` escapes.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        push_escaped(&mut out, c);
    }
    out.push('"');
    out
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{b}' => out.push_str("\\v"),
        c if (c as u32) < 0x20 || c == '\u{7f}' => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c if !is_print(c) && (c as u32) < 0x10000 => {
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        c if !is_print(c) => {
            let _ = write!(out, "\\U{:08x}", c as u32);
        }
        c => out.push(c),
    }
}

/// The characters Go's `strconv.IsPrint` refuses beyond ASCII's controls:
/// C1 controls, format characters (Cf), spaces other than ' ' (Zs, Zl, Zp),
/// private use and noncharacters. (Unassigned code points, which Go also
/// refuses, are printed as they are.)
const NOT_PRINTED: &[(u32, u32)] = &[
    (0x80, 0xa0),
    (0xad, 0xad),
    (0x600, 0x605),
    (0x61c, 0x61c),
    (0x6dd, 0x6dd),
    (0x70f, 0x70f),
    (0x890, 0x891),
    (0x8e2, 0x8e2),
    (0x1680, 0x1680),
    (0x180e, 0x180e),
    (0x2000, 0x200f),
    (0x2028, 0x202f),
    (0x205f, 0x2064),
    (0x2066, 0x206f),
    (0x3000, 0x3000),
    (0xe000, 0xf8ff),
    (0xfdd0, 0xfdef),
    (0xfeff, 0xfeff),
    (0xfff9, 0xfffb),
    (0x110bd, 0x110bd),
    (0x110cd, 0x110cd),
    (0x13430, 0x1343f),
    (0x1bca0, 0x1bca3),
    (0x1d173, 0x1d17a),
    (0xe0001, 0xe0001),
    (0xe0020, 0xe007f),
    (0xf0000, 0x10ffff),
];

fn is_print(c: char) -> bool {
    let code = c as u32;
    if code & 0xfffe == 0xfffe {
        return false;
    }
    !NOT_PRINTED
        .iter()
        .any(|(lo, hi)| (*lo..=*hi).contains(&code))
}

/// Go's `%q` of a `[]string`: `["a" "b"]`, `[]` when empty.
pub fn quote_list<S: AsRef<str>>(items: &[S]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| quote(s.as_ref())).collect();
    format!("[{}]", quoted.join(" "))
}

/// The text of `utilerrors.NewAggregate(errors)`: "" for none, the message
/// itself for one, else `[a, b]` with repeated messages dropped (and no
/// brackets when only one distinct message is left).
pub fn aggregate<S: AsRef<str>>(messages: &[S]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for message in messages {
        let message = message.as_ref();
        if !seen.contains(&message) {
            seen.push(message);
        }
    }
    match seen.as_slice() {
        [] => String::new(),
        [only] => (*only).to_string(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// Go's `%v` of a float64 (strconv's shortest `%g`: exponent form from
/// 1e+06 and below 1e-04, `NaN`, `+Inf`).
pub fn float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    let (negative, digits, exp) = shortest(f);
    let sign = if negative { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        return format!("{sign}{}", exponent_form(&digits, exp, 2));
    }
    format!("{sign}{}", place_point(&digits, exp))
}

/// The shortest round-tripping digits of `f` and its decimal exponent.
fn shortest(f: f64) -> (bool, String, i32) {
    let text = format!("{:e}", f.abs());
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    (f.is_sign_negative(), digits, exp.parse().unwrap_or(0))
}

/// `d.ddde±XX`, the exponent at least `width` digits.
fn exponent_form(digits: &str, exp: i32, width: usize) -> String {
    let (first, rest) = digits.split_at(1);
    let dot = if rest.is_empty() {
        String::new()
    } else {
        format!(".{rest}")
    };
    let esign = if exp < 0 { '-' } else { '+' };
    format!("{first}{dot}e{esign}{:0width$}", exp.abs())
}

/// `digits` (d.ddd × 10^exp) written without an exponent.
fn place_point(digits: &str, exp: i32) -> String {
    if exp < 0 {
        let zeros = "0".repeat(exp.unsigned_abs() as usize - 1);
        return format!("0.{zeros}{digits}");
    }
    let int_len = exp as usize + 1;
    if digits.len() <= int_len {
        return format!("{digits}{}", "0".repeat(int_len - digits.len()));
    }
    format!("{}.{}", &digits[..int_len], &digits[int_len..])
}

/// A decoded JSON number as Go holds it: an int64 when it is one, else a
/// float64.
fn number(n: &Number) -> String {
    match n.as_i64() {
        Some(i) => i.to_string(),
        None => float(n.as_f64().unwrap_or(0.0)),
    }
}

/// Go's `%v` of a decoded JSON value: `map[a:1 b:[x y]]`, `<nil>`.
pub fn v(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(v).collect();
            format!("[{}]", parts.join(" "))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", v(&map[k])))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

/// Go's `%#v` of a decoded JSON value: `map[string]interface {}{"a":1}`,
/// `[]interface {}{"a", 1.5}`, `interface {}(nil)`.
pub fn sharp_v(value: &Value) -> String {
    match value {
        Value::Null => "interface {}(nil)".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => quote(s),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(sharp_v).collect();
            format!("[]interface {{}}{{{}}}", parts.join(", "))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", quote(k), sharp_v(&map[k])))
                .collect();
            format!("map[string]interface {{}}{{{}}}", parts.join(", "))
        }
    }
}

/// A `field.Error`'s bad value as its `ErrorBody` prints it: strings `%q`,
/// numbers and booleans `%v`, null as `"null"`, the rest `%#v`.
pub fn bad_value(value: &Value) -> String {
    match value {
        Value::Null => quote("null"),
        Value::Array(_) | Value::Object(_) => sharp_v(value),
        Value::String(s) => quote(s),
        other => v(other),
    }
}

/// [`bad_value`] of an optional value (a missing one as `"null"`).
pub fn scalar(value: Option<&Value>) -> String {
    value.map_or_else(|| quote("null"), bad_value)
}

/// Go's `%s` of `reflect.TypeOf(v)` for a decoded JSON value.
pub fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "%!s(<nil>)",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.as_i64().is_none() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// `encoding/json`'s name of a JSON value's kind, as its `UnmarshalTypeError`
/// prints it (`json: cannot unmarshal array into Go value of type ...`).
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A `map[string]string` as `%#v`: keys sorted, `(nil)` when absent.
pub fn string_map(value: Option<&Value>) -> String {
    let Some(map) = value.and_then(Value::as_object) else {
        return "map[string]string(nil)".to_string();
    };
    let mut pairs: Vec<(&String, &str)> = map
        .iter()
        .map(|(k, v)| (k, v.as_str().unwrap_or_default()))
        .collect();
    pairs.sort();
    let body: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}:{}", quote(k), quote(v)))
        .collect();
    format!("map[string]string{{{}}}", body.join(", "))
}

/// A `[]string` as `%#v`, `(nil)` when absent.
pub fn string_slice(value: Option<&Value>) -> String {
    let Some(items) = value.and_then(Value::as_array) else {
        return "[]string(nil)".to_string();
    };
    let body: Vec<String> = items
        .iter()
        .map(|v| quote(v.as_str().unwrap_or_default()))
        .collect();
    format!("[]string{{{}}}", body.join(", "))
}

/// A `[]string` of plain strings as `%#v`.
pub fn strings<S: AsRef<str>>(items: &[S]) -> String {
    let body: Vec<String> = items.iter().map(|s| quote(s.as_ref())).collect();
    format!("[]string{{{}}}", body.join(", "))
}

/// A `metav1.LabelSelector` as `%#v` (the pointer dereferenced first).
pub fn label_selector(selector: &Value) -> String {
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{}}}",
        string_map(selector.get("matchLabels")),
        requirements(selector.get("matchExpressions"))
    )
}

fn requirements(value: Option<&Value>) -> String {
    let Some(items) = value.and_then(Value::as_array) else {
        return "[]v1.LabelSelectorRequirement(nil)".to_string();
    };
    let body: Vec<String> = items.iter().map(requirement).collect();
    format!("[]v1.LabelSelectorRequirement{{{}}}", body.join(", "))
}

fn requirement(req: &Value) -> String {
    let text = |key: &str| req.get(key).and_then(Value::as_str).unwrap_or_default();
    format!(
        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{}}}",
        quote(text("key")),
        quote(text("operator")),
        string_slice(req.get("values"))
    )
}

/// `encoding/json`'s `json.Marshal` of a decoded value (Go 1.22 and
/// later): keys sorted, HTML characters escaped, `\b` and `\f` short,
/// floats in Go's form.
pub fn json(value: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, value);
    out
}

fn write_json(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match n.as_i64() {
            Some(i) => out.push_str(&i.to_string()),
            None => out.push_str(&json_float(n.as_f64().unwrap_or(0.0))),
        },
        Value::String(s) => json_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(out, key);
                out.push(':');
                write_json(out, &map[key]);
            }
            out.push('}');
        }
    }
}

/// encoding/json's float64: `f` form, `e` form below 1e-6 and from 1e21
/// (a negative exponent's leading zero dropped: `1e-07` → `1e-7`).
fn json_float(f: f64) -> String {
    let (negative, digits, exp) = shortest(f);
    let abs = f.abs();
    let sign = if negative && f != 0.0 { "-" } else { "" };
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        return format!("{sign}{}", exponent_form(&digits, exp, 1));
    }
    format!("{sign}{}", place_point(&digits, exp))
}

fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quotes_like_go() {
        assert_eq!(quote("Foo"), "\"Foo\"");
        assert_eq!(quote("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
        assert_eq!(quote("\u{1}é\u{7f}"), "\"\\x01é\\x7f\"");
        assert_eq!(quote("\u{85}\u{a0}\u{200b}"), "\"\\u0085\\u00a0\\u200b\"");
        assert_eq!(quote("\u{f0000}日本"), "\"\\U000f0000日本\"");
    }

    #[test]
    fn quotes_lists_like_go() {
        assert_eq!(quote_list::<&str>(&[]), "[]");
        assert_eq!(
            quote_list(&["system:authenticated", "dev"]),
            "[\"system:authenticated\" \"dev\"]"
        );
    }

    #[test]
    fn aggregates_like_utilerrors() {
        assert_eq!(aggregate::<&str>(&[]), "");
        assert_eq!(aggregate(&["a"]), "a");
        assert_eq!(aggregate(&["a", "b", "a"]), "[a, b]");
        assert_eq!(aggregate(&["a", "a"]), "a");
    }

    #[test]
    fn floats_print_as_go_percent_v() {
        assert_eq!(float(10.0), "10");
        assert_eq!(float(1.5), "1.5");
        assert_eq!(float(123456.0), "123456");
        assert_eq!(float(1234567.0), "1.234567e+06");
        assert_eq!(float(1e6), "1e+06");
        assert_eq!(float(0.0001), "0.0001");
        assert_eq!(float(0.00001), "1e-05");
        assert_eq!(float(-2.5), "-2.5");
        assert_eq!(float(f64::NAN), "NaN");
    }

    #[test]
    fn values_print_as_go_percent_v() {
        let value = json!({"name": "web", "image": "nginx", "ports": [80, 443], "x": null});
        assert_eq!(
            v(&value),
            "map[image:nginx name:web ports:[80 443] x:<nil>]"
        );
        assert_eq!(v(&json!(1.5)), "1.5");
        assert_eq!(type_of(&json!([1])), "[]interface {}");
        assert_eq!(type_of(&json!(1)), "int64");
        assert_eq!(type_of(&json!(1.5)), "float64");
        assert_eq!(json_kind(&json!({})), "object");
        assert_eq!(json_kind(&json!(null)), "null");
    }

    #[test]
    fn values_print_as_go_sharp_v() {
        assert_eq!(
            bad_value(&json!({"name": "a", "id": 1})),
            r#"map[string]interface {}{"id":1, "name":"a"}"#
        );
        assert_eq!(bad_value(&json!(["a", 1.5])), r#"[]interface {}{"a", 1.5}"#);
        assert_eq!(bad_value(&json!(null)), r#""null""#);
        assert_eq!(scalar(Some(&json!(70000))), "70000");
        assert_eq!(scalar(None), "\"null\"");
        assert_eq!(scalar(Some(&json!(false))), "false");
    }

    #[test]
    fn maps_are_sorted_and_nil_when_absent() {
        let labels = json!({"tier": "web", "app": "x"});
        assert_eq!(
            string_map(Some(&labels)),
            r#"map[string]string{"app":"x", "tier":"web"}"#
        );
        assert_eq!(string_map(None), "map[string]string(nil)");
        assert_eq!(string_map(Some(&json!({}))), "map[string]string{}");
        assert_eq!(string_slice(None), "[]string(nil)");
        assert_eq!(
            strings(&["10.0.0.1", "fd00::1"]),
            r#"[]string{"10.0.0.1", "fd00::1"}"#
        );
    }

    #[test]
    fn selectors_print_like_the_famous_immutable_error() {
        let sel = json!({"matchLabels": {"app": "nginx"}});
        assert_eq!(
            label_selector(&sel),
            "v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"nginx\"}, \
             MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
        );
        let sel = json!({"matchExpressions": [{"key": "a", "operator": "In", "values": ["x"]}]});
        assert_eq!(
            label_selector(&sel),
            "v1.LabelSelector{MatchLabels:map[string]string(nil), \
             MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement\
             {Key:\"a\", Operator:\"In\", Values:[]string{\"x\"}}}}"
        );
    }

    #[test]
    fn json_marshal_sorts_and_escapes_like_go() {
        assert_eq!(
            json(&json!({"b": "<x>", "a": 1.0, "c": [true, null]})),
            r#"{"a":1,"b":"\u003cx\u003e","c":[true,null]}"#
        );
        assert_eq!(json(&json!(1e21)), "1e+21");
        assert_eq!(json(&json!(1e-7)), "1e-7");
        assert_eq!(json(&json!(0.5)), "0.5");
        assert_eq!(json(&json!("\u{8}\u{c}\u{1}")), r#""\b\f\u0001""#);
    }
}
