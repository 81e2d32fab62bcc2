//! The printers of APIServices (kube's printers.go, wide cells included).

use crate::table::access::{age, list, name, non_empty, text};
use crate::table::columns;
use crate::table::Column;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// APIServices.
pub(crate) fn api_service_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text(
            "Service",
            "The reference to the service that hosts this API endpoint.",
        ),
        columns::text("Available", "Whether this service is available."),
        columns::AGE,
    ]
}

/// kube-aggregator's APIService columns: the backing service (`Local`
/// without one) and the Available condition, with its reason when not True.
pub(crate) fn api_service_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let service = match non_empty(obj, "/spec/service/name") {
        Some(svc) => format!("{}/{svc}", text(obj, "/spec/service/namespace")),
        None => "Local".to_string(),
    };
    let available = list(obj, "/status/conditions")
        .iter()
        .find(|c| text(c, "/type") == "Available")
        .map_or("Unknown".to_string(), |c| {
            match (text(c, "/status"), text(c, "/reason")) {
                ("True", _) | (_, "") => text(c, "/status").to_string(),
                (status, reason) => format!("{status} ({reason})"),
            }
        });
    vec![
        name(obj),
        Value::from(service),
        Value::from(available),
        age(obj, now),
    ]
}
