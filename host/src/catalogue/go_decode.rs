//! What Go's `encoding/json` (as `sigs.k8s.io/json` runs it for
//! kube-apiserver) accepts for one scalar, and its error wording: integers
//! parsed from their literal and range-checked, `[]byte` as standard base64,
//! and the custom decoders of IntOrString, Quantity and Time.

use serde_json::Value;

/// The JSON kind Go names in `cannot unmarshal <kind> into ...`.
pub(super) use kube_rules::gofmt::json_kind as kind_name;

/// Go's integer types of the schema formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum IntKind {
    Int32,
    Int64,
}

impl IntKind {
    pub(super) fn from_format(format: Option<&str>) -> IntKind {
        match format {
            Some("int32") => IntKind::Int32,
            _ => IntKind::Int64,
        }
    }

    pub(super) fn go_name(self) -> &'static str {
        match self {
            IntKind::Int32 => "int32",
            IntKind::Int64 => "int64",
        }
    }

    fn fits(self, n: i64) -> bool {
        match self {
            IntKind::Int32 => i32::try_from(n).is_ok(),
            IntKind::Int64 => true,
        }
    }
}

/// How a number decodes into an integer of `kind`: `Ok(Some(0))` when it
/// must be stored as 0 (Go reads `-0` as 0), `Ok(None)` when it is fine as
/// it is, `Err` with the literal Go reports (`number 1.5`) otherwise.
pub(super) fn integer(value: &Value, kind: IntKind) -> Result<Option<i64>, String> {
    let Value::Number(n) = value else {
        return Err(kind_name(value).to_string());
    };
    if let Some(i) = n.as_i64() {
        return if kind.fits(i) {
            Ok(None)
        } else {
            Err(format!("number {n}"))
        };
    }
    match n.as_f64() {
        // serde_json reads the literal `-0` as the float -0.0.
        Some(f) if f == 0.0 && f.is_sign_negative() => Ok(Some(0)),
        _ => Err(format!("number {n}")),
    }
}

/// Go's `base64.StdEncoding.Decode` error (`illegal base64 data at input
/// byte N`), or None when the text decodes. Like Go, `\r` and `\n` are skipped.
pub(super) fn base64_error(text: &str) -> Option<String> {
    let src = text.as_bytes();
    let mut si = 0;
    while si < src.len() {
        match quantum(src, si) {
            Ok(Some(next)) => si = next,
            Ok(None) => return None,
            Err(at) => return Some(format!("illegal base64 data at input byte {at}")),
        }
    }
    None
}

fn is_newline(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

fn is_base64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'/'
}

/// One 4-character quantum from `si` (Go's `decodeQuantum`): where the next
/// starts (None at the end of the input), or the offset of the corruption.
fn quantum(src: &[u8], mut si: usize) -> Result<Option<usize>, usize> {
    let mut j = 0;
    while j < 4 {
        let Some(&c) = src.get(si) else {
            return match j {
                0 => Ok(None),
                _ => Err(si - j),
            };
        };
        si += 1;
        if is_base64(c) {
            j += 1;
            continue;
        }
        if is_newline(c) {
            continue;
        }
        if c != b'=' || j < 2 {
            return Err(si - 1);
        }
        return padding(src, si, j);
    }
    Ok(Some(si))
}

/// After the first `=` of a quantum holding `j` characters.
fn padding(src: &[u8], mut si: usize, j: usize) -> Result<Option<usize>, usize> {
    if j == 2 {
        while si < src.len() && is_newline(src[si]) {
            si += 1;
        }
        match src.get(si) {
            None => return Err(src.len()),
            Some(b'=') => si += 1,
            Some(_) => return Err(si - 1),
        }
    }
    while si < src.len() && is_newline(src[si]) {
        si += 1;
    }
    if si < src.len() {
        return Err(si);
    }
    Ok(None)
}

/// `resource.ErrFormatWrong`, what Quantity's decoder answers for anything
/// but a string or a number.
pub(super) const QUANTITY_FORMAT: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/// The error of a custom decoder (IntOrString, Quantity, Time), which Go
/// reports without the struct field context.
pub(super) fn custom_error(go_type: &str, value: &Value) -> Option<String> {
    match (go_type, value) {
        (_, Value::Null) => None,
        ("intstr.IntOrString", Value::String(_)) => None,
        ("intstr.IntOrString", v) => match integer(v, IntKind::Int32) {
            Ok(_) => None,
            Err(what) => Some(format!(
                "json: cannot unmarshal {what} into Go value of type int32"
            )),
        },
        ("resource.Quantity", Value::String(_) | Value::Number(_)) => None,
        ("resource.Quantity", _) => Some(QUANTITY_FORMAT.to_string()),
        (_, Value::String(_)) => None,
        (_, v) => Some(format!(
            "json: cannot unmarshal {} into Go value of type string",
            kind_name(v)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integers_follow_go_parse_int() {
        assert_eq!(integer(&json!(3), IntKind::Int32), Ok(None));
        assert_eq!(
            integer(&json!(2147483648i64), IntKind::Int32),
            Err("number 2147483648".into())
        );
        assert_eq!(integer(&json!(2147483648i64), IntKind::Int64), Ok(None));
        assert_eq!(
            integer(&json!(1.5), IntKind::Int64),
            Err("number 1.5".into())
        );
        assert_eq!(
            integer(&json!(u64::MAX), IntKind::Int64),
            Err("number 18446744073709551615".into())
        );
        let minus_zero: Value = serde_json::from_str("-0").unwrap();
        assert_eq!(integer(&minus_zero, IntKind::Int32), Ok(Some(0)));
        assert_eq!(integer(&json!("3"), IntKind::Int32), Err("string".into()));
    }

    #[test]
    fn base64_errors_name_go_offsets() {
        for ok in ["", "YQ==", "YWI=", "YWJj", "YW\nJj", "YQ=\n="] {
            assert_eq!(base64_error(ok), None, "{ok:?}");
        }
        let at = |s: &str| base64_error(s).map(|m| m.rsplit(' ').next().unwrap().to_string());
        assert_eq!(
            base64_error("a b").as_deref(),
            Some("illegal base64 data at input byte 1")
        );
        assert_eq!(at("YQ").as_deref(), Some("0"));
        assert_eq!(at("YWJjZ").as_deref(), Some("4"));
        assert_eq!(at("YQ=").as_deref(), Some("3"));
        assert_eq!(at("YQ==YQ==").as_deref(), Some("4"));
        assert_eq!(at("Y===").as_deref(), Some("1"));
        assert_eq!(at("not base64!").as_deref(), Some("3"));
    }

    #[test]
    fn custom_decoders() {
        assert_eq!(custom_error("intstr.IntOrString", &json!("http")), None);
        assert_eq!(custom_error("intstr.IntOrString", &json!(80)), None);
        assert_eq!(
            custom_error("intstr.IntOrString", &json!(1.5)).as_deref(),
            Some("json: cannot unmarshal number 1.5 into Go value of type int32")
        );
        assert_eq!(
            custom_error("resource.Quantity", &json!([1])).as_deref(),
            Some(QUANTITY_FORMAT)
        );
        assert_eq!(
            custom_error("v1.Time", &json!(5)).as_deref(),
            Some("json: cannot unmarshal number into Go value of type string")
        );
    }
}
