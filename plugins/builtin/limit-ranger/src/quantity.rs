//! Kubernetes resource quantities ("100m", "1.5Gi", "2e3", "64Mi") parsed to
//! milli-units, the precision kube's LimitRanger compares at.

/// A quantity as written, with its value in milli-units (rounded up, as
/// `resource.Quantity.MilliValue` does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quantity {
    pub text: String,
    pub milli: i128,
}

impl Quantity {
    /// Parses a quantity; `None` when it is not one.
    pub fn parse(text: &str) -> Option<Quantity> {
        let milli = milli_value(text.trim())?;
        Some(Quantity {
            text: text.trim().to_string(),
            milli,
        })
    }

    /// Builds a quantity from milli-units (used for sums), written canonically.
    pub fn from_milli(milli: i128) -> Quantity {
        let text = if milli % 1000 == 0 {
            (milli / 1000).to_string()
        } else {
            format!("{milli}m")
        };
        Quantity { text, milli }
    }
}

fn milli_value(text: &str) -> Option<i128> {
    let (sign, rest) = match text.strip_prefix('-') {
        Some(r) => (-1, r),
        None => (1, text.strip_prefix('+').unwrap_or(text)),
    };
    let number_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(number_end);
    let (mantissa, fraction_digits) = parse_decimal(number)?;
    let (binary_power, decimal_power) = suffix_powers(suffix)?;
    let numerator = mantissa.checked_mul(2i128.checked_pow(binary_power)?)?;
    let scale = decimal_power + 3 - fraction_digits;
    Some(sign * scale_by_ten(numerator, scale)?)
}

/// "12.50" → (1250, 2).
fn parse_decimal(number: &str) -> Option<(i128, i32)> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let digits = format!("{whole}{fraction}");
    let mantissa = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    Some((mantissa, i32::try_from(fraction.len()).ok()?))
}

/// (power of two, power of ten) of a suffix, including `e<n>` exponents.
fn suffix_powers(suffix: &str) -> Option<(u32, i32)> {
    let binary = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    if let Some(i) = binary.iter().position(|s| *s == suffix) {
        return Some((10 * (i as u32 + 1), 0));
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
        other => {
            let exp = other
                .strip_prefix('e')
                .or_else(|| other.strip_prefix('E'))?;
            exp.parse().ok()?
        }
    };
    Some((0, decimal))
}

/// n × 10^scale, rounding up when scale is negative.
fn scale_by_ten(n: i128, scale: i32) -> Option<i128> {
    let factor = 10i128.checked_pow(scale.unsigned_abs())?;
    if scale >= 0 {
        n.checked_mul(factor)
    } else {
        Some((n + factor - 1).div_euclid(factor))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(text: &str) -> i128 {
        Quantity::parse(text).unwrap().milli
    }

    #[test]
    fn parses_kubernetes_quantities() {
        assert_eq!(m("100m"), 100);
        assert_eq!(m("1"), 1000);
        assert_eq!(m("0.5"), 500);
        assert_eq!(m("1.5Gi"), 1536 * 1024 * 1024 * 1000);
        assert_eq!(m("64Mi"), 64 * 1024 * 1024 * 1000);
        assert_eq!(m("2k"), 2_000_000);
        assert_eq!(m("1e3"), 1_000_000);
        assert_eq!(m("1n"), 1, "rounded up to one milli");
        assert_eq!(m("-2"), -2000);
    }

    #[test]
    fn rejects_garbage() {
        for bad in ["", "abc", "1.2.3", "5Xi", "."] {
            assert!(Quantity::parse(bad).is_none(), "{bad}");
        }
    }
}
