//! The printers of Leases (kube's printers.go, wide cells included).

use crate::table::access::{age, name, text};
use crate::table::columns;
use crate::table::Column;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// Leases.
pub(crate) fn lease_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Holder", "Identity of the lease holder."),
        columns::AGE,
    ]
}

pub(crate) fn lease_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(obj),
        Value::from(text(obj, "/spec/holderIdentity")),
        age(obj, now),
    ]
}
