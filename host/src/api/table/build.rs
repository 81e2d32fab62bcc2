//! Assembles a `meta.k8s.io/v1` Table: the printed column definitions and
//! rows, each row's embedded object according to `includeObject`, and the
//! list metadata.

use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value};

use super::{default, IncludeObject};
use crate::apimachinery::status::ApiResult;
use crate::catalogue::custom::CustomResource;
use crate::catalogue::ResourceInfo;
use crate::registry::strategy::{PrintedRows, Strategy};

/// `PartialObjectMetadata` wrapping the object's full metadata, as kube's
/// internal object holds it (kube prints rows from its internal objects).
fn partial_object_metadata(res: &ResourceInfo, obj: &Value) -> Value {
    let metadata = match obj.get("metadata") {
        Some(m) => crate::catalogue::conversion::internal_metadata(res, m),
        None => json!({}),
    };
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
    })
}

fn embedded_object(res: &ResourceInfo, obj: &Value, include: IncludeObject) -> Value {
    match include {
        IncludeObject::None => Value::Null,
        IncludeObject::Metadata => partial_object_metadata(res, obj),
        IncludeObject::Object => obj.clone(),
    }
}

/// A custom resource's rows, from its CRD version.
fn custom_rows(custom: &CustomResource, objects: &[Value], now: DateTime<Utc>) -> PrintedRows {
    let rows = objects
        .iter()
        .map(|o| cells_row(crate::api::table::custom::cells(custom, o, now)))
        .collect();
    PrintedRows {
        columns: crate::api::table::custom::column_definitions(custom),
        rows,
    }
}

/// kube's default rows, for a kind without a printer.
fn default_rows(objects: &[Value]) -> PrintedRows {
    PrintedRows {
        columns: default::columns(),
        rows: objects
            .iter()
            .map(|o| cells_row(default::cells(o)))
            .collect(),
    }
}

fn cells_row(cells: Vec<Value>) -> Map<String, Value> {
    Map::from_iter([("cells".to_string(), Value::Array(cells))])
}

/// The printed rows of a resource's objects, from where its printing rules live.
/// Also whether they are kube's default table's, whose rows are `null`
/// when there are none (its convertor leaves the slice nil).
async fn printed(
    strategy: &dyn Strategy,
    res: &ResourceInfo,
    objects: &[Value],
    now: DateTime<Utc>,
) -> ApiResult<(PrintedRows, bool)> {
    if let Some(custom) = &res.custom {
        return Ok((custom_rows(custom, objects, now), false));
    }
    Ok(match strategy.table(res, objects, now).await? {
        Some(rows) => (rows, false),
        None => (default_rows(objects), true),
    })
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
pub async fn build_table(
    strategy: &dyn Strategy,
    res: &ResourceInfo,
    objects: &[Value],
    include_object: IncludeObject,
    list_meta: Value,
    now: DateTime<Utc>,
) -> ApiResult<Value> {
    let (printed, by_default) = printed(strategy, res, objects, now).await?;
    let rows: Vec<Value> = printed
        .rows
        .into_iter()
        .zip(objects)
        .map(|(mut row, obj)| {
            row.insert("object".into(), embedded_object(res, obj, include_object));
            Value::Object(row)
        })
        .collect();
    Ok(json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": table_metadata(&list_meta),
        "columnDefinitions": printed.columns,
        "rows": if rows.is_empty() && by_default { Value::Null } else { Value::Array(rows) },
    }))
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
    use crate::registry::strategy::NoStrategy;

    fn pod() -> Value {
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "p", "namespace": "d", "resourceVersion": "7"},
               "spec": {"containers": [{"name": "c"}]}})
    }

    fn served(group: &str, plural: &str) -> ResourceInfo {
        let cat = crate::catalogue::Catalogue::builtin();
        cat.resources()
            .iter()
            .find(|r| r.group == group && r.plural == plural)
            .cloned()
            .unwrap()
    }

    async fn table(objects: &[Value], include: IncludeObject, meta: Value) -> Value {
        let res = served("", "pods");
        build_table(&NoStrategy, &res, objects, include, meta, Utc::now())
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn table_shape_with_metadata_objects() {
        let meta = json!({"resourceVersion": "42", "continue": "", "remainingItemCount": null});
        let t = table(&[pod()], IncludeObject::Metadata, meta).await;
        assert_eq!(t["kind"], "Table");
        assert_eq!(t["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(t["metadata"], json!({"resourceVersion": "42"}));
        assert_eq!(t["columnDefinitions"][0]["name"], "Name");
        let row = &t["rows"][0];
        assert_eq!(row["cells"][0], "p");
        assert_eq!(row["object"]["kind"], "PartialObjectMetadata");
        assert_eq!(row["object"]["metadata"]["resourceVersion"], "7");
        assert!(row["object"].get("spec").is_none());
    }

    #[tokio::test]
    async fn include_object_variants() {
        let t = table(&[pod()], IncludeObject::None, json!({})).await;
        assert!(t["rows"][0]["object"].is_null());
        let t = table(&[pod()], IncludeObject::Object, json!({})).await;
        assert_eq!(t["rows"][0]["object"]["kind"], "Pod");
        // kube's default convertor leaves no rows as null.
        let mut t = table(&[], IncludeObject::Metadata, json!({})).await;
        assert_eq!(t["rows"], Value::Null);
        assert_eq!(t["columnDefinitions"][1]["name"], "Created At");
        strip_column_definitions(&mut t);
        assert!(t["columnDefinitions"].is_null());
    }
}
