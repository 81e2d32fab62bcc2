//! Parsing kube's quantity syntax, `^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$`,
//! as `resource.ParseQuantity` does: the suffix picks the format, and the
//! magnitude is rounded up to the nearest nano-unit.

use std::fmt;

use super::{Format, Quantity, NANO};

/// Why a text is not a quantity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseQuantityError {
    text: String,
    reason: &'static str,
}

impl fmt::Display for ParseQuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid quantity {:?}: {}", self.text, self.reason)
    }
}

impl std::error::Error for ParseQuantityError {}

/// Most decimal digits a mantissa may have (i128 holds 38).
const MAX_DIGITS: usize = 36;

/// The largest decimal exponent accepted after scaling to nano-units.
const MAX_EXPONENT: i32 = 38;

pub(super) fn parse(text: &str) -> Result<Quantity, ParseQuantityError> {
    let fail = |reason| ParseQuantityError {
        text: text.to_string(),
        reason,
    };
    let trimmed = text.trim();
    let (negative, rest) = split_sign(trimmed);
    let number_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(number_end);
    let (mantissa, fraction_digits) = parse_decimal(number).ok_or_else(|| fail("bad number"))?;
    let (binary_power, decimal_power, format) =
        parse_suffix(suffix).ok_or_else(|| fail("unknown suffix"))?;
    let nanos = scale(mantissa, binary_power, decimal_power + 9 - fraction_digits)
        .ok_or_else(|| fail("too large"))?;
    Ok(Quantity {
        nanos: if negative { -nanos } else { nanos },
        format: demote_small_binary(nanos, format),
    })
}

/// A binary quantity between 0 and 1 is written in decimal, as kube does.
fn demote_small_binary(nanos: i128, format: Format) -> Format {
    if format == Format::BinarySI && nanos > 0 && nanos < NANO {
        Format::DecimalSI
    } else {
        format
    }
}

fn split_sign(text: &str) -> (bool, &str) {
    match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    }
}

/// "12.50" → (125, 1): the digits as an integer and how many are fractional.
fn parse_decimal(number: &str) -> Option<(i128, i32)> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
        return None;
    }
    let fraction = fraction.trim_end_matches('0');
    let digits = format!("{whole}{fraction}");
    let digits = digits.trim_start_matches('0');
    if digits.len() > MAX_DIGITS {
        return None;
    }
    let mantissa = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    Some((mantissa, i32::try_from(fraction.len()).ok()?))
}

/// (power of two, power of ten, format) of a suffix, including `e<n>` / `E<n>`.
fn parse_suffix(suffix: &str) -> Option<(u32, i32, Format)> {
    const BINARY: [&str; 6] = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    if let Some(i) = BINARY.iter().position(|s| *s == suffix) {
        let power = 10 * (u32::try_from(i).ok()? + 1);
        return Some((power, 0, Format::BinarySI));
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
        other => return exponent(other).map(|e| (0, e, Format::DecimalExponent)),
    };
    Some((0, decimal, Format::DecimalSI))
}

/// "e3", "E-2", "e+6" → the exponent.
fn exponent(suffix: &str) -> Option<i32> {
    let digits = suffix.strip_prefix(['e', 'E'])?;
    let unsigned = digits.strip_prefix(['+', '-']).unwrap_or(digits);
    if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let value: i32 = digits.parse().ok()?;
    (value.abs() <= 1000).then_some(value)
}

/// mantissa × 2^binary × 10^decimal, the magnitude rounded up when decimal < 0.
fn scale(mantissa: i128, binary: u32, decimal: i32) -> Option<i128> {
    let n = mantissa.checked_mul(2i128.checked_pow(binary)?)?;
    if n == 0 {
        return Some(0);
    }
    if decimal >= 0 {
        if decimal > MAX_EXPONENT {
            return None;
        }
        return n.checked_mul(10i128.checked_pow(decimal.unsigned_abs())?);
    }
    if decimal < -MAX_EXPONENT {
        return Some(1);
    }
    let factor = 10i128.pow(decimal.unsigned_abs());
    Some((n + factor - 1) / factor)
}
