//! The printers of PriorityClasses (kube's printers.go, wide cells included).

use crate::table::access::{age, flag, int, name, text};
use crate::table::columns;
use crate::table::Column;
use chrono::{DateTime, Utc};
use serde_json::Value;

pub(crate) fn priority_class_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::int("Value", "Priority value."),
        columns::col(
            "Global-Default",
            "boolean",
            "Whether this is the default class.",
            0,
        ),
        columns::AGE,
        columns::text(
            "PreemptionPolicy",
            "Policy for preempting lower-priority pods.",
        ),
    ]
}

pub(crate) fn priority_class_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(obj),
        Value::from(int(obj, "/value")),
        Value::from(flag(obj, "/globalDefault")),
        age(obj, now),
        Value::from(text(obj, "/preemptionPolicy")),
    ]
}
