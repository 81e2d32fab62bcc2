//! The registry's `Strategy` hook over the Wasm strategy plugin: one call
//! per write (phase "create" or "update") returns the prepared, defaulted
//! object and the validation causes, which become kube-apiserver's 422 Invalid;
//! "table" calls print objects (a long list in calls of about a mebibyte).

use crate::apimachinery::status::{ApiError, ApiResult, Cause};
use crate::catalogue::ResourceInfo;
use crate::registry::strategy::{PrintedRows, Strategy};
use crate::wasm::{embedded, CallContext, Limits, ObjectReader, Plugin, PluginKind, PluginRuntime};
use futures_util::future::BoxFuture;
use serde_json::{json, Value};
use std::sync::Arc;

pub struct WasmStrategy {
    pub plugin: Plugin,
    pub reader: Arc<dyn ObjectReader>,
    pub limits: Limits,
}

/// The cause types of metav1.StatusCause the plugin may name.
fn cause_type(t: &str) -> &'static str {
    const KNOWN: [&str; 10] = [
        "FieldValueRequired",
        "FieldValueNotFound",
        "FieldValueInvalid",
        "FieldValueNotSupported",
        "FieldValueDuplicate",
        "FieldValueForbidden",
        "FieldValueTooLong",
        "FieldValueTooMany",
        "FieldValueTypeInvalid",
        "InternalError",
    ];
    KNOWN
        .iter()
        .find(|k| **k == t)
        .copied()
        .unwrap_or("FieldValueInvalid")
}

/// The prepared object and the causes of an answer, parsed once; an answer
/// without an object is a broken plugin.
fn read_answer(answer: &str) -> Result<(Value, Vec<Cause>), String> {
    let mut v: Value =
        serde_json::from_str(answer).map_err(|e| format!("answer is not JSON: {e}"))?;
    let prepared = match v.get_mut("object").map(Value::take) {
        Some(obj) if obj.is_object() => obj,
        _ => return Err("the answer has no object".to_string()),
    };
    Ok((prepared, causes(&v)))
}

fn causes(v: &Value) -> Vec<Cause> {
    let list = v.get("causes").and_then(Value::as_array);
    list.into_iter()
        .flatten()
        .map(|c| Cause {
            reason: cause_type(c.get("type").and_then(Value::as_str).unwrap_or_default()),
            field: c
                .get("field")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            message: c
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        })
        .collect()
}

/// The name of the built-in strategy plugin.
pub const STRATEGY_PLUGIN: &str = "strategy";

/// The strategy plugin parses every written object: a 3 MiB body can be a
/// million JSON values (tens of MiB once parsed), so it gets limits any
/// storable object fits in, where a plugin's default limits would turn a
/// valid write into a 500.
fn strategy_limits() -> Limits {
    Limits::fit_any_object()
}

/// The `resource` of a strategy call (`subresource` "" for the resource itself).
fn resource_json(res: &ResourceInfo, subresource: &str) -> Value {
    json!({"group": res.group, "version": res.version, "resource": res.plural,
           "kind": res.kind, "subresource": subresource, "hasStatus": res.has_subresource("status")})
}

/// The encoded objects a table call carries at most (one larger object goes
/// alone): a long list is printed in several calls, so neither the call nor
/// the plugin's parsed copy of it grows with the list.
const TABLE_CALL_BYTES: usize = 1 << 20;

/// Up to this many objects, a table call is prepared on the async worker.
const TABLE_INLINE_OBJECTS: usize = 32;

/// The encoded objects grouped into calls (at least one, maybe empty, so
/// the column definitions come even for no objects).
fn table_batches(objects: &[Value]) -> Vec<Vec<String>> {
    let mut batches = vec![Vec::new()];
    let mut size = 0;
    for obj in objects {
        let text = serde_json::to_string(&Printable(obj)).unwrap_or_default();
        let full = batches.last().is_some_and(|b| !b.is_empty());
        if full && size + text.len() > TABLE_CALL_BYTES {
            batches.push(Vec::new());
            size = 0;
        }
        size += text.len() + 1;
        if let Some(batch) = batches.last_mut() {
            batch.push(text);
        }
    }
    batches
}

/// An object as a printer sees it: without `metadata.managedFields`, which
/// no printer reads and which is often the larger part of an object.
struct Printable<'a>(&'a Value);

/// A JSON object without one of its keys.
struct Without<'a>(&'a serde_json::Map<String, Value>, &'static str);

impl serde::Serialize for Without<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().filter(|(k, _)| *k != self.1))
    }
}

impl serde::Serialize for Printable<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Value::Object(map) = self.0 else {
            return self.0.serialize(serializer);
        };
        serializer.collect_map(map.iter().map(|(key, value)| match value {
            Value::Object(meta) if key == "metadata" => {
                (key, Field::Metadata(Without(meta, "managedFields")))
            }
            _ => (key, Field::Plain(value)),
        }))
    }
}

/// A top-level field of a [`Printable`].
enum Field<'a> {
    Plain(&'a Value),
    Metadata(Without<'a>),
}

impl serde::Serialize for Field<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Plain(v) => v.serialize(serializer),
            Field::Metadata(m) => m.serialize(serializer),
        }
    }
}

/// A table answer for `expected` objects: `None` for `{}` (no printer).
fn read_table_answer(answer: &str, expected: usize) -> Result<Option<PrintedRows>, String> {
    let v: Value = serde_json::from_str(answer).map_err(|e| format!("answer is not JSON: {e}"))?;
    let Some(columns) = v.get("columnDefinitions") else {
        return Ok(None);
    };
    let columns = columns
        .as_array()
        .ok_or("columnDefinitions is not a list")?;
    let rows = v
        .get("rows")
        .and_then(Value::as_array)
        .ok_or("the answer has no rows")?;
    if rows.len() != expected {
        return Err(format!("{} rows for {expected} objects", rows.len()));
    }
    let rows = rows
        .iter()
        .map(|r| r.as_object().cloned().ok_or("a row is not an object"));
    Ok(Some(PrintedRows {
        columns: columns.clone(),
        rows: rows.collect::<Result<_, _>>()?,
    }))
}

impl WasmStrategy {
    /// The built-in strategy plugin, when the binary embeds it.
    pub fn builtin(
        runtime: &PluginRuntime,
        reader: Arc<dyn ObjectReader>,
    ) -> anyhow::Result<Option<Self>> {
        let Some(bytes) = embedded::builtin(STRATEGY_PLUGIN) else {
            return Ok(None);
        };
        let plugin = runtime.load(STRATEGY_PLUGIN, bytes, PluginKind::Strategy)?;
        Ok(Some(WasmStrategy {
            plugin,
            reader,
            limits: strategy_limits(),
        }))
    }

    /// One plugin call; a plugin that fails is the server's 500.
    async fn invoke(&self, input: &str) -> ApiResult<String> {
        let ctx = CallContext {
            config: "{}".into(),
            reader: self.reader.clone(),
            limits: self.limits.clone(),
        };
        self.plugin
            .call(input, ctx)
            .await
            .map_err(|f| self.failed(f.to_string()))
    }

    fn failed(&self, why: String) -> ApiError {
        ApiError::internal(format!(
            "strategy plugin \"{}\" failed: {why}",
            self.plugin.name()
        ))
    }

    /// One call of `phase` ("create", "update" or "default") for `res` (or
    /// its `subresource`): the prepared object, or 422.
    async fn call(
        &self,
        phase: &str,
        (res, subresource): (&ResourceInfo, &str),
        obj: Value,
        old: Option<&Value>,
    ) -> ApiResult<Value> {
        let resource = resource_json(res, subresource);
        let mut call = json!({"phase": phase, "resource": resource, "object": obj});
        if let Some(o) = old {
            call["oldObject"] = o.clone();
        }
        let input = crate::cpu::for_request(|| call.to_string());
        drop(call);
        let answer = self.invoke(&input).await?;
        let parsed = crate::cpu::for_request(|| read_answer(&answer));
        let (prepared, causes) = parsed.map_err(|why| self.failed(why))?;
        if causes.is_empty() {
            return Ok(prepared);
        }
        let name = prepared
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        Err(ApiError::invalid(
            res.internal_group(),
            &res.kind,
            name,
            causes,
        ))
    }

    /// The plugin's rows for `objects`, printed in batches.
    async fn table_rows(
        &self,
        res: &ResourceInfo,
        objects: &[Value],
        now: chrono::DateTime<chrono::Utc>,
    ) -> ApiResult<Option<PrintedRows>> {
        let now = now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let head = json!({"phase": "table", "resource": resource_json(res, ""), "now": now});
        let head = head.to_string();
        let head = head.strip_suffix('}').unwrap_or(&head);
        let mut printed = PrintedRows::default();
        // A long list is encoded and its rows parsed off the async workers,
        // however small each object is.
        if objects.len() > TABLE_INLINE_OBJECTS {
            crate::cpu::mark_large(crate::cpu::LARGE_BYTES);
        }
        for batch in crate::cpu::for_request(|| table_batches(objects)) {
            let input = format!("{head},\"objects\":[{}]}}", batch.join(","));
            let answer = self.invoke(&input).await?;
            let parsed = crate::cpu::for_request(|| read_table_answer(&answer, batch.len()));
            let Some(part) = parsed.map_err(|why| self.failed(why))? else {
                return Ok(None);
            };
            printed.columns = part.columns;
            printed.rows.extend(part.rows);
        }
        Ok(Some(printed))
    }
}

impl Strategy for WasmStrategy {
    fn create<'a>(&'a self, res: &'a ResourceInfo, obj: Value) -> BoxFuture<'a, ApiResult<Value>> {
        Box::pin(self.call("create", (res, ""), obj, None))
    }

    fn update<'a>(
        &'a self,
        res: &'a ResourceInfo,
        obj: Value,
        old: &'a Value,
    ) -> BoxFuture<'a, ApiResult<Value>> {
        Box::pin(self.call("update", (res, ""), obj, Some(old)))
    }

    fn update_subresource<'a>(
        &'a self,
        res: &'a ResourceInfo,
        subresource: &'a str,
        obj: Value,
        old: &'a Value,
    ) -> BoxFuture<'a, ApiResult<Value>> {
        Box::pin(self.call("update", (res, subresource), obj, Some(old)))
    }

    fn defaults<'a>(
        &'a self,
        res: &'a ResourceInfo,
        obj: Value,
    ) -> BoxFuture<'a, ApiResult<Value>> {
        match res.custom {
            None => Box::pin(self.call("default", (res, ""), obj, None)),
            Some(_) => Box::pin(async { Ok(obj) }),
        }
    }

    fn table<'a>(
        &'a self,
        res: &'a ResourceInfo,
        objects: &'a [Value],
        now: chrono::DateTime<chrono::Utc>,
    ) -> BoxFuture<'a, ApiResult<Option<PrintedRows>>> {
        Box::pin(self.table_rows(res, objects, now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printers_get_objects_without_managed_fields() {
        let obj = json!({"kind": "Pod", "metadata": {"name": "p", "managedFields": [{"manager": "x"}],
                         "labels": {"a": "b"}}, "spec": {"x": 1}});
        let printed: Value = serde_json::from_str(&table_batches(&[obj])[0][0]).unwrap();
        assert_eq!(
            printed,
            json!({"kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}}, "spec": {"x": 1}})
        );
    }

    #[test]
    fn long_lists_are_split_into_calls_of_about_a_mebibyte() {
        let big = json!({"metadata": {"name": "x"}, "data": {"k": "v".repeat(300 << 10)}});
        let batches = table_batches(&vec![big; 7]);
        let sizes: Vec<usize> = batches.iter().map(Vec::len).collect();
        assert_eq!(sizes, [3, 3, 1]);
        assert_eq!(table_batches(&[]), vec![Vec::<String>::new()]);
        let answer = r#"{"columnDefinitions": [], "rows": [{"cells": []}]}"#;
        assert!(read_table_answer(answer, 2)
            .unwrap_err()
            .contains("1 rows for 2 objects"));
        assert!(read_table_answer("{}", 2).unwrap().is_none());
    }
}
