//! The values whose Go types have their own JSON encoding, as kube-apiserver
//! writes them back: `resource.Quantity` (apimachinery's quantity.go),
//! `metav1.Time` and `metav1.MicroTime` (time.go, micro_time.go) and
//! `[]byte` (standard base64). A value Go would not have decoded is left as
//! it is (the type check answers for it).

use base64::engine::{general_purpose, DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;
use capstan_quota::Quantity;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// Nano-units in one milli-unit.
const NANOS_PER_MILLI: i128 = 1_000_000;

/// A quantity's text as kube stores and serves it (`Quantity.MarshalJSON`
/// after its protobuf round trip): the text as written when Go's parser
/// keeps it (the canonical-looking texts of its fast path), else the
/// canonical form (`0.5` → `500m`, `1000m` → `1`, `1024Mi` → `1Gi`). With
/// `round_milli` (core/v1's `SetDefaults_ResourceList`), a value finer
/// than a milli-unit is first rounded away from zero to one (`RoundUp(-3)`).
/// `null` is the zero Quantity, `"0"`.
pub(super) fn quantity(v: Value, round_milli: bool) -> Value {
    let text = match &v {
        Value::Null => return Value::from("0"),
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) => n.to_string(),
        _ => return v,
    };
    if let Some(clamped) = beyond_int64(&text) {
        return Value::from(clamped);
    }
    let Ok(q) = Quantity::parse(&text) else {
        return v;
    };
    let nanos = q.nanos();
    if round_milli && nanos % NANOS_PER_MILLI != 0 {
        let toward_zero = nanos - nanos % NANOS_PER_MILLI;
        let away = toward_zero.saturating_add(NANOS_PER_MILLI * nanos.signum());
        return Value::from(Quantity::from_nanos(away, q.format()).to_string());
    }
    if go_keeps_text(&text) {
        return Value::from(text);
    }
    Value::from(q.to_string())
}

/// `ParseQuantity` caps a value beyond ±(2^63 - 1) units at that bound
/// (kube-apiserver 1.32 answers `99999999999999999999999999999Ei` as
/// `9223372036854775807`).
fn beyond_int64(text: &str) -> Option<String> {
    let (sign, unsigned) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text.strip_prefix('+').unwrap_or(text)),
    };
    let end = unsigned
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(unsigned.len());
    let (number, suffix) = unsigned.split_at(end);
    let (binary, exponent) = suffix_exponent(suffix)?;
    let base: f64 = if binary { 2.0 } else { 10.0 };
    let value = number.parse::<f64>().ok()? * base.powi(exponent);
    (value >= i64::MAX as f64).then(|| format!("{sign}9223372036854775807"))
}

/// Whether `ParseQuantity`'s fast path keeps the text it parsed (so
/// `String()` answers it unchanged): `0`; a decimal whose scale is a
/// multiple of three, at most 18 digits, no leading zero and no `000` at
/// the end (`1500m`, `2`, `1e3`, `007` → digits `7`); a whole binary
/// quantity whose number is not a multiple of 8 (`1Ki`, `100Mi`).
fn go_keeps_text(text: &str) -> bool {
    if text == "0" {
        return true;
    }
    let body = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (whole, rest) = split_digits(body);
    let num = match whole.trim_start_matches('0') {
        "" => "0",
        n => n,
    };
    let (denom, suffix) = match rest.strip_prefix('.') {
        Some(after) => split_digits(after),
        None => ("", rest),
    };
    let Some((binary, exponent)) = suffix_exponent(suffix) else {
        return false;
    };
    if binary {
        return denom.is_empty() && binary_keeps(num, exponent);
    }
    let scale = exponent - digits(denom);
    let shifted = format!("{num}{denom}");
    18 - digits(num) - digits(denom) >= 0
        && scale >= -9
        && scale % 3 == 0
        && !shifted.ends_with("000")
        && !shifted.starts_with('0')
}

/// The fast path of a binary quantity: within its precision estimate, no
/// int64 overflow, and a number that is not a multiple of 8.
fn binary_keeps(num: &str, exponent: i32) -> bool {
    // Go: 15 - len(num) - int32(float32(exponent)*3/10) - 1.
    let precision = 15 - digits(num) - exponent * 3 / 10 - 1;
    let Ok(value) = num.parse::<i64>() else {
        return false;
    };
    let fits = value.checked_mul(1i64 << exponent).is_some();
    precision >= 0 && fits && exponent % 10 == 0 && value & 0x07 != 0
}

fn digits(text: &str) -> i32 {
    i32::try_from(text.len()).unwrap_or(i32::MAX)
}

/// The leading ASCII digits of `text` and what follows them.
fn split_digits(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    text.split_at(end)
}

/// (binary?, exponent) of a suffix: `Ki` is 2^10, `m` 10^-3, `e3` 10^3.
fn suffix_exponent(suffix: &str) -> Option<(bool, i32)> {
    const BINARY: [&str; 6] = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    if let Some(i) = BINARY.iter().position(|s| *s == suffix) {
        return Some((true, 10 * (i32::try_from(i).ok()? + 1)));
    }
    let decimal = match suffix {
        "n" => -9,
        "u" => -6,
        "m" => -3,
        "" => 0,
        "k" => 3,
        "M" => 6,
        "G" => 9,
        "T" => 12,
        "P" => 15,
        "E" => 18,
        other => other.strip_prefix(['e', 'E'])?.parse().ok()?,
    };
    Some((false, decimal))
}

/// `metav1.Time`: RFC 3339 in UTC at second precision
/// (`2024-05-01T12:00:00.5+02:00` → `2024-05-01T10:00:00Z`); `null` is the
/// zero time.
pub(super) fn time(v: Value) -> Value {
    reformat(v, "%Y-%m-%dT%H:%M:%SZ")
}

/// `metav1.MicroTime`: RFC 3339 in UTC with six fractional digits.
pub(super) fn micro_time(v: Value) -> Value {
    reformat(v, "%Y-%m-%dT%H:%M:%S%.6fZ")
}

fn reformat(v: Value, layout: &str) -> Value {
    let parsed = match &v {
        Value::String(s) => DateTime::parse_from_rfc3339(s),
        _ => return v,
    };
    match parsed {
        Ok(t) => Value::from(t.with_timezone(&Utc).format(layout).to_string()),
        Err(_) => v,
    }
}

/// Go's `base64.StdEncoding` decoder: padding required, trailing bits
/// ignored (it is not `Strict`).
const GO_STD: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
);

/// `[]byte`: the bytes written again in standard base64 with padding (Go
/// skips `\r` and `\n` when decoding, and writes none).
pub(super) fn bytes(v: Value) -> Value {
    let Value::String(s) = &v else {
        return v;
    };
    if !s.contains(['\r', '\n']) && general_purpose::STANDARD.decode(s).is_ok() {
        return v;
    }
    let compact: String = s.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
    match GO_STD.decode(compact) {
        Ok(raw) => Value::from(general_purpose::STANDARD.encode(raw)),
        Err(_) => v,
    }
}
