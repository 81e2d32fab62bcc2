//! Server-side Table output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`):
//! the columns and cells kube-apiserver's printers produce for each built-in
//! resource, so `kubectl get` (and `-o wide`) looks the same against Capstan.
//!
//! Cells are always computed in "wide" form, like kube-apiserver does; the
//! client hides priority-1 columns unless `-o wide` is asked for.

mod access;
mod build;
mod cluster;
mod columns;
mod config;
mod duration;
mod network;
mod pods;
mod rows;
mod storage;
mod workloads;

use chrono::{DateTime, Utc};
use serde_json::Value;

pub use build::{build_table, strip_column_definitions};
pub use duration::human_duration;

/// A `TableColumnDefinition`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: &'static str,
    pub type_: &'static str,
    pub format: &'static str,
    pub description: &'static str,
    pub priority: i32,
}

/// The `includeObject` table option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IncludeObject {
    /// `object` is null in every row.
    None,
    /// `object` is a `PartialObjectMetadata` (kube's default).
    #[default]
    Metadata,
    /// `object` is the full object.
    Object,
}

/// Parses `includeObject`; kube's 400 message for an unknown value.
pub fn try_parse_include_object(q: Option<&str>) -> Result<IncludeObject, String> {
    match q.unwrap_or("") {
        "" | "Metadata" => Ok(IncludeObject::Metadata),
        "None" => Ok(IncludeObject::None),
        "Object" => Ok(IncludeObject::Object),
        other => Err(format!("unrecognized includeObject value: \"{other}\"")),
    }
}

/// Parses `includeObject`, falling back to `Metadata` for unknown values.
pub fn parse_include_object(q: Option<&str>) -> IncludeObject {
    try_parse_include_object(q).unwrap_or_default()
}

/// Column definitions for a group and plural resource (NAME, CREATED AT for
/// resources without a kube printer).
pub fn columns_for(group: &str, resource: &str) -> Vec<Column> {
    columns::columns(columns::printer_for(group, resource))
}

/// The cells of one object's row, one per column of [`columns_for`].
pub fn row_cells(group: &str, resource: &str, obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    rows::cells(columns::printer_for(group, resource), obj, now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn include_object_values() {
        assert_eq!(parse_include_object(None), IncludeObject::Metadata);
        assert_eq!(parse_include_object(Some("None")), IncludeObject::None);
        assert_eq!(parse_include_object(Some("Object")), IncludeObject::Object);
        assert_eq!(
            try_parse_include_object(Some("all")).unwrap_err(),
            "unrecognized includeObject value: \"all\""
        );
    }

    #[test]
    fn public_api_agrees_on_width() {
        let obj = json!({"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}});
        let cols = columns_for("", "services");
        let cells = row_cells("", "services", &obj, Utc::now());
        assert_eq!(cols.len(), cells.len());
        assert_eq!(cells[4], json!("80/TCP"));
        assert_eq!(columns_for("apps", "deployments")[1].name, "Ready");
    }
}
