//! Table rows of custom resources (kube's CRD table convertor): a Name
//! column, then the version's `additionalPrinterColumns` (or Age), each
//! cell the first value its JSONPath selects, typed as the column says.

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::json_path::JsonPath;
use crate::api::table::{name_column, CREATION_DESCRIPTION};
use crate::catalogue::custom::resource::PrinterColumn;
use crate::catalogue::custom::CustomResource;
use kube_time::human_duration_of as human_duration;

/// The column definitions of a custom resource's Table.
pub fn column_definitions(custom: &CustomResource) -> Vec<Value> {
    let mut defs = vec![name_column()];
    defs.extend(custom.printer_columns.iter().map(|c| {
        let description = match (c.description.as_str(), c.json_path.as_str()) {
            ("", ".metadata.creationTimestamp") => CREATION_DESCRIPTION,
            (d, _) => d,
        };
        json!({"name": c.name, "type": c.type_, "format": c.format,
               "description": description, "priority": c.priority})
    }));
    defs
}

/// One object's cells, one per column definition.
pub fn cells(custom: &CustomResource, obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let name = obj.pointer("/metadata/name").cloned().unwrap_or(json!(""));
    let mut cells = vec![name];
    cells.extend(custom.printer_columns.iter().map(|c| cell(c, obj, now)));
    cells
}

fn cell(column: &PrinterColumn, obj: &Value, now: DateTime<Utc>) -> Value {
    let Ok(path) = JsonPath::parse(&column.json_path) else {
        return Value::Null;
    };
    let Some(value) = path.find(obj).first().copied() else {
        return Value::Null;
    };
    match column.type_.as_str() {
        "string" => match value {
            Value::String(s) => json!(s),
            Value::Null => Value::Null,
            other => json!(other.to_string()),
        },
        "integer" => value
            .as_i64()
            .or_else(|| value.as_f64().map(|f| f as i64))
            .map_or(Value::Null, |i| json!(i)),
        "number" => value.as_f64().map_or(Value::Null, |f| json!(f)),
        "boolean" => value.as_bool().map_or(Value::Null, |b| json!(b)),
        "date" => value.as_str().map_or(Value::Null, |s| json!(age(s, now))),
        _ => Value::Null,
    }
}

/// kube's human-readable age of an RFC 3339 time, `<invalid>` if unparsable.
fn age(text: &str, now: DateTime<Utc>) -> String {
    match DateTime::parse_from_rfc3339(text) {
        Ok(t) => human_duration(now - t.with_timezone(&Utc)),
        Err(_) => "<invalid>".to_string(),
    }
}
