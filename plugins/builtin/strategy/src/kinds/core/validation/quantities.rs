//! Resource names and quantities as kube's core validation checks them
//! (`validateResourceName`, `ValidateResourceQuotaResourceName`,
//! `validateContainerResourceName`, `ValidateResourceQuantityValue`), and a
//! quantity printed as Go's `%#v` prints a `resource.Quantity` in a message.

use capstan_plugin_sdk::Cause;
use capstan_quota::Quantity;
use serde_json::Value;

use crate::common;
use kube_rules::qualified_name;

const STANDARD: [&str; 20] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];
const INTEGER: [&str; 9] = [
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];
const CONTAINER: [&str; 3] = ["cpu", "memory", "ephemeral-storage"];

fn quota_huge_pages(name: &str) -> bool {
    name.starts_with("hugepages-") || name.starts_with("requests.hugepages-")
}

fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

fn is_extended(name: &str) -> bool {
    !is_native(name)
        && !name.starts_with("requests.")
        && qualified_name(&format!("requests.{name}")).is_empty()
}

/// `validateResourceName`.
pub fn resource_name(field: &str, name: &str) -> Vec<Cause> {
    let invalid = |detail: &str| common::invalid(field, name, detail);
    let problems: Vec<Cause> = qualified_name(name).iter().map(|m| invalid(m)).collect();
    if !problems.is_empty() {
        return problems;
    }
    if !name.contains('/') && !STANDARD.contains(&name) && !quota_huge_pages(name) {
        return vec![invalid(
            "must be a standard resource type or fully qualified",
        )];
    }
    Vec::new()
}

/// `ValidateResourceQuotaResourceName`.
pub fn quota_resource_name(field: &str, name: &str) -> Vec<Cause> {
    let mut causes = resource_name(field, name);
    let standard = STANDARD.contains(&name) && name != "storage";
    if !name.contains('/') && !standard && !quota_huge_pages(name) {
        causes.push(common::invalid(
            field,
            name,
            "must be a standard resource for quota",
        ));
    }
    causes
}

/// `validateContainerResourceName`.
pub fn container_resource_name(field: &str, name: &str) -> Vec<Cause> {
    let mut causes = resource_name(field, name);
    if !name.contains('/') {
        if !CONTAINER.contains(&name) && !name.starts_with("hugepages-") {
            causes.push(common::invalid(
                field,
                name,
                "must be a standard resource for containers",
            ));
        }
    } else if !is_native(name) && !is_extended(name) {
        causes.push(common::invalid(
            field,
            name,
            "doesn't follow extended resource name standard",
        ));
    }
    causes
}

/// A quantity of an object (already parsed by the decoder, so valid).
pub fn parse(text: &str) -> Quantity {
    Quantity::parse(text).unwrap_or(Quantity::ZERO)
}

/// A quantity's text as written: a string, or a JSON number (`cpu: 0.5`).
pub fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    }
}

/// The quantity at `value` (a string or a number).
pub fn of(value: &Value) -> Quantity {
    parse(&text(value))
}

/// `ValidateResourceQuantityValue`: not negative, whole for counted resources.
pub fn value(field: &str, name: &str, text: &str) -> Vec<Cause> {
    let q = parse(text);
    let mut causes = Vec::new();
    if q.is_negative() {
        causes.push(common::invalid_str(
            field,
            &q.to_string(),
            "must be greater than or equal to 0",
        ));
    }
    let integer = INTEGER.contains(&name) || is_extended(name);
    if integer && q.milli_value() % 1000 != 0 {
        causes.push(common::invalid(field, &go_dump(text), "must be an integer"));
    }
    causes
}

/// Go's `%#v` of the `resource.Quantity` that `ParseQuantity(text)` returns,
/// for quantities held as an int64 amount (every common one; kube prints a
/// pointer address for the others, which no one can reproduce).
pub fn go_dump(text: &str) -> String {
    let (value, scale, cached) = int64_amount(text).unwrap_or((0, 0, false));
    let format = match parse(text).format() {
        capstan_quota::Format::DecimalSI => "DecimalSI",
        capstan_quota::Format::BinarySI => "BinarySI",
        capstan_quota::Format::DecimalExponent => "DecimalExponent",
    };
    let s = if cached { text } else { "" };
    format!(
        "resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, \
         d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:{}, Format:\"{format}\"}}",
        kube_rules::gofmt::quote(s)
    )
}

/// `ParseQuantity`'s fast path: (value, scale, whether the text is kept).
fn int64_amount(text: &str) -> Option<(i64, i32, bool)> {
    if text == "0" {
        return Some((0, 0, true));
    }
    let (positive, rest) = match text.as_bytes().first() {
        Some(b'-') => (false, &text[1..]),
        Some(b'+') => (true, &text[1..]),
        _ => (true, text),
    };
    let digits_end = rest
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(digits_end);
    let (num, denom) = number.split_once('.').unwrap_or((number, ""));
    let num = match num.trim_start_matches('0') {
        "" => "0",
        n => n,
    };
    let (binary, exponent) = suffix_exponent(suffix)?;
    let (mut scale, mantissa, precision) = if binary {
        if exponent < 0 || !denom.is_empty() {
            return None;
        }
        let precision = 15 - num.len() as i32 - (exponent as f32 * 3.0 / 10.0) as i32 - 1;
        (0, 1i64.checked_shl(exponent as u32)?, precision)
    } else {
        (exponent, 1, 18 - (num.len() + denom.len()) as i32)
    };
    if precision < 0 {
        return None;
    }
    scale -= denom.len() as i32;
    if scale < -9 {
        return None;
    }
    let shifted = format!("{num}{denom}");
    let value: i64 = shifted.parse().ok()?;
    let mut result = value.checked_mul(mantissa)?;
    if !positive {
        result = -result;
    }
    let cached = if binary {
        exponent % 10 == 0 && value & 0x07 != 0
    } else {
        scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0')
    };
    Some((result, scale, cached))
}

/// (binary, exponent) of a quantity suffix.
fn suffix_exponent(suffix: &str) -> Option<(bool, i32)> {
    let decimal = |e: i32| Some((false, e));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => Some((true, 10)),
        "Mi" => Some((true, 20)),
        "Gi" => Some((true, 30)),
        "Ti" => Some((true, 40)),
        "Pi" => Some((true, 50)),
        "Ei" => Some((true, 60)),
        exp => {
            let digits = exp.strip_prefix(['e', 'E'])?;
            digits.parse().ok().map(|e| (false, e))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_print_as_go_prints_them() {
        let dump = |t: &str| go_dump(t);
        assert_eq!(dump("2"), "resource.Quantity{i:resource.int64Amount{value:2, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"2\", Format:\"DecimalSI\"}");
        assert!(
            dump("100m").contains("value:100, scale:-3}") && dump("100m").contains("s:\"100m\"")
        );
        assert!(
            dump("1Gi").contains("value:1073741824, scale:0}")
                && dump("1Gi").contains("s:\"1Gi\", Format:\"BinarySI\"")
        );
        assert!(dump("1000").contains("value:1000, scale:0}") && dump("1000").contains("s:\"\""));
        assert!(dump("1.5").contains("value:15, scale:-1}"));
    }

    #[test]
    fn resource_names_are_checked_as_kube_checks_them() {
        let messages =
            |causes: Vec<Cause>| -> Vec<String> { causes.into_iter().map(|c| c.message).collect() };
        assert_eq!(
            messages(quota_resource_name("spec.hard[foo]", "foo")),
            [
                "Invalid value: foo: must be a standard resource type or fully qualified",
                "Invalid value: foo: must be a standard resource for quota"
            ]
        );
        assert!(quota_resource_name("f", "example.com/gpu").is_empty());
        assert!(quota_resource_name("f", "requests.cpu").is_empty());
        assert_eq!(
            messages(value("spec.hard[pods]", "pods", "-1")),
            ["Invalid value: \"-1\": must be greater than or equal to 0"]
        );
        assert_eq!(messages(value("f", "pods", "1500m")).len(), 1);
    }
}
