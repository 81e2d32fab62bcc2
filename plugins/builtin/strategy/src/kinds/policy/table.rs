//! The printers of PodDisruptionBudgets (kube's printers.go, wide cells included).

use crate::table::access::{age, int, name};
use crate::table::columns;
use crate::table::Column;
use chrono::{DateTime, Utc};
use serde_json::Value;

pub(crate) fn pod_disruption_budget_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text(
            "Min Available",
            "The minimum number of pods that must be available.",
        ),
        columns::text(
            "Max Unavailable",
            "The maximum number of pods that may be unavailable.",
        ),
        columns::int(
            "Allowed Disruptions",
            "Calculated number of pods that may be disrupted at this time.",
        ),
        columns::AGE,
    ]
}

/// An IntOrString rendered like kube, or `N/A` when unset.
fn int_or_string(v: Option<&Value>) -> String {
    match v {
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) => s.clone(),
        _ => "N/A".to_string(),
    }
}

pub(crate) fn pod_disruption_budget_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(obj),
        Value::from(int_or_string(obj.pointer("/spec/minAvailable"))),
        Value::from(int_or_string(obj.pointer("/spec/maxUnavailable"))),
        Value::from(int(obj, "/status/disruptionsAllowed")),
        age(obj, now),
    ]
}
