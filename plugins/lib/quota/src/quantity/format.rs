//! kube's canonical text for a quantity (`Quantity.CanonicalizeBytes`):
//! - `BinarySI` stays binary only when the value is a whole number of at
//!   least 1024 in magnitude ("1Gi", "1536Mi", "1025"); otherwise it prints
//!   as `DecimalSI`.
//! - `DecimalSI` / `DecimalExponent` drop trailing zeros into the exponent,
//!   then lower the exponent to a multiple of three ("1500m", "2k", "1e3").

use super::{Format, NANO};

const DECIMAL_SUFFIXES: [(i32, &str); 10] = [
    (-9, "n"),
    (-6, "u"),
    (-3, "m"),
    (0, ""),
    (3, "k"),
    (6, "M"),
    (9, "G"),
    (12, "T"),
    (15, "P"),
    (18, "E"),
];

const BINARY_SUFFIXES: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/// The canonical text of `nanos` nano-units in `format`.
pub(super) fn canonical(nanos: i128, format: Format) -> String {
    if nanos == 0 {
        return "0".to_string();
    }
    match format {
        Format::BinarySI if binary_is_exact(nanos) => binary(nanos / NANO),
        Format::BinarySI | Format::DecimalSI => decimal(nanos, false),
        Format::DecimalExponent => decimal(nanos, true),
    }
}

fn binary_is_exact(nanos: i128) -> bool {
    nanos % NANO == 0 && nanos.abs() >= 1024 * NANO
}

/// Whole `units` as mantissa × 1024^k with the matching suffix.
fn binary(units: i128) -> String {
    let mut mantissa = units;
    let mut power = 0;
    while power + 1 < BINARY_SUFFIXES.len() && mantissa % 1024 == 0 {
        mantissa /= 1024;
        power += 1;
    }
    format!("{mantissa}{}", BINARY_SUFFIXES[power])
}

/// mantissa × 10^exponent with the exponent a multiple of 3, then the suffix.
fn decimal(nanos: i128, exponent_form: bool) -> String {
    let (mantissa, exponent) = canonical_decimal(nanos);
    if exponent_form {
        return match exponent {
            0 => mantissa.to_string(),
            e => format!("{mantissa}e{e}"),
        };
    }
    let (mantissa, exponent) = clamp_to_suffixes(mantissa, exponent);
    let suffix = DECIMAL_SUFFIXES
        .iter()
        .find(|(e, _)| *e == exponent)
        .map(|(_, s)| *s)
        .unwrap_or("");
    format!("{mantissa}{suffix}")
}

/// Trailing zeros removed, then the exponent lowered to a multiple of three.
fn canonical_decimal(nanos: i128) -> (i128, i32) {
    let mut mantissa = nanos;
    let mut exponent: i32 = -9;
    while mantissa % 10 == 0 {
        mantissa /= 10;
        exponent += 1;
    }
    let down = exponent.rem_euclid(3);
    (
        mantissa.saturating_mul(10i128.pow(down.unsigned_abs())),
        exponent - down,
    )
}

/// Exponents above "E" are folded into the mantissa.
fn clamp_to_suffixes(mantissa: i128, exponent: i32) -> (i128, i32) {
    if exponent <= 18 {
        return (mantissa, exponent);
    }
    let factor = 10i128.saturating_pow((exponent - 18).unsigned_abs());
    (mantissa.saturating_mul(factor), 18)
}
