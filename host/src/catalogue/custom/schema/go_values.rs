//! Decoded JSON values printed as Go prints them in kube's messages: `%v`
//! of a float64, a field error's bad value, `%#v` of maps and slices, and
//! encoding/json's output.

use crate::apimachinery::selectors::validation::go_quote;
use serde_json::{Number, Value};

/// Go's `%v` of a float64 (strconv's shortest `g`, exponent from 1e+06).
pub(super) fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    let (negative, digits, exp) = shortest(f);
    let sign = if negative { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{dot}e{esign}{:02}", exp.abs());
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

/// `digits` (d.ddd × 10^exp) written without an exponent.
fn place_point(digits: &str, exp: i32) -> String {
    if exp < 0 {
        return format!("0.{}{digits}", "0".repeat((-exp - 1) as usize));
    }
    let int_len = exp as usize + 1;
    if digits.len() <= int_len {
        return format!("{digits}{}", "0".repeat(int_len - digits.len()));
    }
    format!("{}.{}", &digits[..int_len], &digits[int_len..])
}

fn go_number(n: &Number) -> String {
    match n.as_i64() {
        Some(i) => i.to_string(),
        None => go_float(n.as_f64().unwrap_or(0.0)),
    }
}

/// A field.Error's bad value as its ErrorBody prints it: strings `%q`,
/// numbers and booleans `%v`, null as `"null"`, the rest `%#v`.
pub(super) fn bad_value(v: &Value) -> String {
    match v {
        Value::Null => "\"null\"".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_number(n),
        Value::String(s) => go_quote(s),
        _ => sharp_v(v),
    }
}

/// Go's `%#v` of a decoded JSON value: `map[string]interface {}{"a":1}`.
pub(super) fn sharp_v(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_number(n),
        Value::String(s) => go_quote(s),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(sharp_v).collect();
            format!("[]interface {{}}{{{}}}", parts.join(", "))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", go_quote(k), sharp_v(&map[k])))
                .collect();
            format!("map[string]interface {{}}{{{}}}", parts.join(", "))
        }
    }
}

/// encoding/json's `json.Marshal` of a decoded value: sorted keys, HTML
/// characters escaped, floats in Go's form.
pub(super) fn go_json(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => json_float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => json_string(s),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(go_json).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", json_string(k), go_json(&map[k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
    }
}

fn json_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let (negative, digits, exp) = shortest(f);
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let sign = if negative { "-" } else { "" };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{dot}e{esign}{}", exp.abs());
    }
    let (negative, digits, exp) = shortest(f);
    let sign = if negative && f != 0.0 { "-" } else { "" };
    format!("{sign}{}", place_point(&digits, exp))
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_print_as_go_percent_v() {
        assert_eq!(go_float(10.0), "10");
        assert_eq!(go_float(1.5), "1.5");
        assert_eq!(go_float(123456.0), "123456");
        assert_eq!(go_float(1234567.0), "1.234567e+06");
        assert_eq!(go_float(1e6), "1e+06");
        assert_eq!(go_float(0.0001), "0.0001");
        assert_eq!(go_float(0.00001), "1e-05");
        assert_eq!(go_float(-2.5), "-2.5");
    }

    #[test]
    fn maps_print_as_go_sharp_v() {
        assert_eq!(
            bad_value(&json!({"name": "a", "id": 1})),
            r#"map[string]interface {}{"id":1, "name":"a"}"#
        );
        assert_eq!(bad_value(&json!(["a", 1.5])), r#"[]interface {}{"a", 1.5}"#);
        assert_eq!(bad_value(&json!(null)), r#""null""#);
    }

    #[test]
    fn json_marshal_sorts_and_escapes_like_go() {
        assert_eq!(
            go_json(&json!({"b": "<x>", "a": 1.0})),
            r#"{"a":1,"b":"\u003cx\u003e"}"#
        );
        assert_eq!(go_json(&json!(1e21)), "1e+21");
    }
}
