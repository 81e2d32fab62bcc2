//! Assembles a `meta.k8s.io/v1` Table: column definitions, one row per
//! object (cells, pod row conditions, and the embedded object according to
//! `includeObject`), and the list metadata.

use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value};

use super::columns::{columns, printer_for, Printer};
use super::pods::pod_row_conditions;
use super::rows::cells;
use super::{Column, IncludeObject};
use crate::catalogue::ResourceInfo;
use crate::crd::CustomResource;

impl Column {
    /// The `TableColumnDefinition` JSON (all five fields always present).
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "type": self.type_,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        })
    }
}

/// `PartialObjectMetadata` wrapping the object's full metadata.
fn partial_object_metadata(obj: &Value) -> Value {
    let metadata = obj.get("metadata").cloned().unwrap_or_else(|| json!({}));
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
    })
}

fn embedded_object(obj: &Value, include: IncludeObject) -> Value {
    match include {
        IncludeObject::None => Value::Null,
        IncludeObject::Metadata => partial_object_metadata(obj),
        IncludeObject::Object => obj.clone(),
    }
}

fn builtin_rows(
    res: &ResourceInfo,
    objects: &[Value],
    include: IncludeObject,
    now: DateTime<Utc>,
) -> (Vec<Value>, Vec<Value>) {
    let p = printer_for(&res.group, &res.plural);
    let column_defs: Vec<Value> = columns(p).iter().map(Column::to_json).collect();
    let rows = objects.iter().map(|o| row(p, o, include, now)).collect();
    (column_defs, rows)
}

/// A custom resource's columns and rows, from its CRD version.
fn custom_rows(
    custom: &CustomResource,
    objects: &[Value],
    include: IncludeObject,
    now: DateTime<Utc>,
) -> (Vec<Value>, Vec<Value>) {
    let rows = objects
        .iter()
        .map(|o| {
            let cells = crate::crd::table::cells(custom, o, now);
            json!({"cells": cells, "object": embedded_object(o, include)})
        })
        .collect();
    (crate::crd::table::column_definitions(custom), rows)
}

fn row(p: Printer, obj: &Value, include: IncludeObject, now: DateTime<Utc>) -> Value {
    let mut row = Map::new();
    row.insert("cells".into(), Value::Array(cells(p, obj, now)));
    if p == Printer::Pod {
        if let Some(conditions) = pod_row_conditions(obj) {
            row.insert("conditions".into(), conditions);
        }
    }
    row.insert("object".into(), embedded_object(obj, include));
    Value::Object(row)
}

/// Keeps the ListMeta fields a Table carries, dropping empty ones.
fn table_metadata(list_meta: &Value) -> Value {
    let mut out = Map::new();
    for key in ["resourceVersion", "continue"] {
        if let Some(s) = list_meta.get(key).and_then(Value::as_str) {
            if !s.is_empty() {
                out.insert(key.into(), Value::from(s));
            }
        }
    }
    if let Some(n) = list_meta.get("remainingItemCount").and_then(Value::as_i64) {
        out.insert("remainingItemCount".into(), Value::from(n));
    }
    Value::Object(out)
}

/// Builds the Table for `objects` (served form) of a resource.
pub fn build_table(
    res: &ResourceInfo,
    objects: &[Value],
    include_object: IncludeObject,
    list_meta: Value,
    now: DateTime<Utc>,
) -> Value {
    let (column_defs, rows) = match &res.custom {
        Some(custom) => custom_rows(custom, objects, include_object, now),
        None => builtin_rows(res, objects, include_object, now),
    };
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": table_metadata(&list_meta),
        "columnDefinitions": column_defs,
        "rows": rows,
    })
}

/// Drops the headers, as kube does for every watch event after the first
/// one of a Table watch (`columnDefinitions` becomes null).
pub fn strip_column_definitions(table: &mut Value) {
    if let Some(t) = table.as_object_mut() {
        t.insert("columnDefinitions".into(), Value::Null);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod() -> Value {
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "p", "namespace": "d", "resourceVersion": "7"},
               "spec": {"containers": [{"name": "c"}]},
               "status": {"phase": "Succeeded"}})
    }

    fn served(group: &str, plural: &str) -> ResourceInfo {
        let cat = crate::catalogue::Catalogue::builtin();
        cat.resources()
            .iter()
            .find(|r| r.group == group && r.plural == plural)
            .cloned()
            .unwrap()
    }

    #[test]
    fn table_shape_with_metadata_objects() {
        let meta = json!({"resourceVersion": "42", "continue": "", "remainingItemCount": null});
        let t = build_table(
            &served("", "pods"),
            &[pod()],
            IncludeObject::Metadata,
            meta,
            Utc::now(),
        );
        assert_eq!(t["kind"], "Table");
        assert_eq!(t["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(t["metadata"], json!({"resourceVersion": "42"}));
        assert_eq!(t["columnDefinitions"][0]["name"], "Name");
        assert_eq!(t["columnDefinitions"][5]["priority"], 1);
        let row = &t["rows"][0];
        assert_eq!(row["cells"][0], "p");
        assert_eq!(row["conditions"][0]["type"], "Completed");
        assert_eq!(row["object"]["kind"], "PartialObjectMetadata");
        assert_eq!(row["object"]["metadata"]["resourceVersion"], "7");
        assert!(row["object"].get("spec").is_none());
    }

    #[test]
    fn include_object_variants() {
        let now = Utc::now();
        let t = build_table(
            &served("", "pods"),
            &[pod()],
            IncludeObject::None,
            json!({}),
            now,
        );
        assert!(t["rows"][0]["object"].is_null());
        let t = build_table(
            &served("", "pods"),
            &[pod()],
            IncludeObject::Object,
            json!({}),
            now,
        );
        assert_eq!(t["rows"][0]["object"]["kind"], "Pod");
        let t = build_table(
            &served("rbac.authorization.k8s.io", "roles"),
            &[],
            IncludeObject::Metadata,
            json!({}),
            now,
        );
        assert_eq!(t["rows"], json!([]));
        assert_eq!(t["columnDefinitions"][1]["name"], "Created At");
        let mut t = t;
        strip_column_definitions(&mut t);
        assert!(t["columnDefinitions"].is_null());
    }
}
