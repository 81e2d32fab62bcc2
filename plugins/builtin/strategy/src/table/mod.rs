//! The "table" phase: kube-apiserver's printers (pkg/printers/internalversion,
//! 1.33) for the built-in kinds, so `kubectl get` (and `-o wide`) looks the
//! same against Capstan. The answer carries the column definitions and one
//! row of cells (plus a pod's row conditions) per object; the host adds each
//! row's embedded object and the list metadata, and prints kinds without a
//! printer (the answer `{}`) with kube's default NAME and CREATED AT.
//!
//! Cells are always computed in "wide" form, as kube-apiserver does; the
//! client hides priority-1 columns unless `-o wide` is asked for. Which
//! printer a kind has is its rules' (`crate::kinds`); the files here are
//! the printers' columns and row functions.

pub(crate) mod access;
pub(crate) mod columns;
mod descriptions;
pub(crate) mod network;
pub(crate) mod workloads;

use capstan_plugin_sdk::StrategyCall;
use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value};

use crate::kinds::{self, Printer};

/// A `TableColumnDefinition`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: &'static str,
    pub type_: &'static str,
    pub format: &'static str,
    pub description: &'static str,
    pub priority: i32,
}

impl Column {
    /// The `TableColumnDefinition` JSON (all five fields always present).
    fn to_json(self) -> Value {
        json!({
            "name": self.name,
            "type": self.type_,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        })
    }
}

/// The answer to a "table" call: `{"columnDefinitions", "rows"}`, or `{}`
/// for a kind without a printer.
pub fn answer(call: &StrategyCall) -> Result<Value, String> {
    let group = match call.resource.group.as_str() {
        "core" => "",
        group => group,
    };
    let Some(printer) = kinds::rules_for(group, &call.resource.resource).printer() else {
        return Ok(json!({}));
    };
    let now = now(call.now.as_deref())?;
    let mut column_defs: Vec<Value> = (printer.columns)()
        .into_iter()
        .map(Column::to_json)
        .collect();
    descriptions::apply(
        &call.resource.group,
        &call.resource.resource,
        &mut column_defs,
    );
    let rows: Vec<Value> = call.objects.iter().map(|o| row(printer, o, now)).collect();
    Ok(json!({"columnDefinitions": column_defs, "rows": rows}))
}

/// The call's `now`, which ages count to.
fn now(text: Option<&str>) -> Result<DateTime<Utc>, String> {
    let text = text.ok_or("a table call needs \"now\"")?;
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| format!("\"now\" is not an RFC 3339 time: {e}"))
}

/// A time from its RFC 3339 text (the printers' tests).
#[cfg(test)]
pub(crate) fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default()
}

fn row(printer: Printer, obj: &Value, now: DateTime<Utc>) -> Value {
    let mut row = Map::new();
    row.insert("cells".into(), Value::Array((printer.row)(obj, now)));
    if let Some(conditions) = printer.conditions.and_then(|f| f(obj)) {
        row.insert("conditions".into(), conditions);
    }
    Value::Object(row)
}

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::{Phase, StrategyResource};

    fn call(group: &str, resource: &str, objects: Vec<Value>) -> StrategyCall {
        StrategyCall {
            phase: Phase::Table,
            resource: StrategyResource {
                group: group.into(),
                resource: resource.into(),
                ..Default::default()
            },
            object: Value::Null,
            old_object: None,
            objects,
            now: Some("2024-01-01T00:00:00Z".into()),
        }
    }

    #[test]
    fn one_row_per_object_with_the_printers_columns() {
        let pod = json!({"metadata": {"name": "p", "creationTimestamp": "2023-12-31T23:59:00Z"},
                         "spec": {"containers": [{"name": "c"}]},
                         "status": {"phase": "Succeeded"}});
        let service = json!({"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}});
        let t = answer(&call("", "pods", vec![pod.clone(), pod])).unwrap();
        assert_eq!(t["columnDefinitions"][0]["name"], "Name");
        assert_eq!(t["columnDefinitions"][5]["priority"], 1);
        assert_eq!(t["rows"].as_array().map(Vec::len), Some(2));
        assert_eq!(t["rows"][0]["cells"][0], "p");
        assert_eq!(t["rows"][0]["cells"][4], "60s");
        assert_eq!(t["rows"][0]["conditions"][0]["type"], "Completed");
        let t = answer(&call("core", "services", vec![service.clone()])).unwrap();
        assert_eq!(
            t["rows"][0]["cells"][4], "80/TCP",
            "core is the legacy group"
        );
        let t = answer(&call("", "services", vec![service])).unwrap();
        assert_eq!(t["rows"][0]["cells"][4], "80/TCP");
        assert!(t["rows"][0].get("conditions").is_none());
    }

    #[test]
    fn kinds_without_a_printer_and_bad_calls() {
        let roles = call("rbac.authorization.k8s.io", "roles", vec![json!({})]);
        assert_eq!(answer(&roles).unwrap(), json!({}));
        let mut no_time = call("", "pods", vec![]);
        no_time.now = None;
        assert!(answer(&no_time).is_err());
        no_time.now = Some("yesterday".into());
        assert!(answer(&no_time).unwrap_err().contains("RFC 3339"));
    }
}
