//! `intstr.IntOrString` fields that hold a count or a percentage
//! (rolling-update budgets, PodDisruptionBudgets): apps validation's
//! `ValidatePositiveIntOrPercent`, `IsNotMoreThan100Percent` and
//! `getIntOrPercentValue`, and the value as Go's `%#v` prints it.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common;
use kube_rules::gofmt;

/// `intstr.IntOrString` as `%#v`.
pub fn render(value: &Value) -> String {
    match value {
        Value::String(s) => format!(
            "intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}",
            gofmt::quote(s)
        ),
        other => format!(
            "intstr.IntOrString{{Type:0, IntVal:{}, StrVal:\"\"}}",
            other.as_i64().unwrap_or_default()
        ),
    }
}

/// A percentage's number when `value` is a valid percent string.
fn percent_value(value: &Value) -> Option<i64> {
    let s = value.as_str()?;
    if kube_rules::percent(s).is_some() {
        return None;
    }
    s.trim_end_matches('%').parse().ok()
}

/// `getIntOrPercentValue`: the percentage or the integer (0 otherwise).
pub fn amount(value: &Value) -> i64 {
    percent_value(value).unwrap_or_else(|| value.as_i64().unwrap_or_default())
}

/// `ValidatePositiveIntOrPercent` at `field`.
pub fn positive(value: &Value, field: &str) -> Vec<Cause> {
    match value {
        Value::String(s) => kube_rules::percent(s)
            .map(|msg| common::invalid(field, &render(value), &msg))
            .into_iter()
            .collect(),
        other => common::non_negative(field, other.as_i64().unwrap_or_default())
            .into_iter()
            .collect(),
    }
}

/// `IsNotMoreThan100Percent` at `field`.
pub fn at_most_100_percent(value: &Value, field: &str) -> Option<Cause> {
    let over = percent_value(value).is_some_and(|p| p > 100);
    over.then(|| common::invalid(field, &render(value), "must not be greater than 100%"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn percentages_and_counts() {
        assert_eq!(amount(&json!("25%")), 25);
        assert_eq!(amount(&json!(3)), 3);
        assert_eq!(amount(&json!("x")), 0);
        assert_eq!(
            at_most_100_percent(&json!("150%"), "spec.minAvailable")
                .map(|c| c.message)
                .as_deref(),
            Some(
                "Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"150%\"}: \
                 must not be greater than 100%"
            )
        );
        assert_eq!(
            positive(&json!(-1), "spec.maxUnavailable")[0].message,
            "Invalid value: -1: must be greater than or equal to 0"
        );
    }
}
