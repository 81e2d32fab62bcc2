//! The registry's `Strategy` hook over the Wasm strategy plugin: one call
//! per write (phase "create" or "update") returns the prepared, defaulted
//! object and the validation causes, which become kube-apiserver's 422 Invalid.

use super::{CallContext, Limits, ObjectReader, Plugin};
use crate::catalogue::ResourceInfo;
use crate::registry::strategy::Strategy;
use crate::status::{ApiError, ApiResult, Cause};
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
    const KNOWN: [&str; 9] = [
        "FieldValueRequired",
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

impl WasmStrategy {
    /// One call of `phase` ("create" or "update"): the prepared object, or 422.
    async fn call(
        &self,
        phase: &str,
        res: &ResourceInfo,
        obj: Value,
        old: Option<&Value>,
    ) -> ApiResult<Value> {
        let mut call = json!({
            "phase": phase,
            "resource": {"group": res.group, "version": res.version, "resource": res.plural,
                         "kind": res.kind, "subresource": "", "hasStatus": res.has_subresource("status")},
            "object": obj,
        });
        if let Some(o) = old {
            call["oldObject"] = o.clone();
        }
        let ctx = CallContext {
            config: "{}".into(),
            reader: self.reader.clone(),
            limits: self.limits.clone(),
        };
        let failed = |why: String| {
            ApiError::internal(format!(
                "strategy plugin \"{}\" failed: {why}",
                self.plugin.name()
            ))
        };
        let input = crate::cpu::for_request(|| call.to_string());
        drop(call);
        let answer = self
            .plugin
            .call(&input, ctx)
            .await
            .map_err(|f| failed(f.to_string()))?;
        let parsed = crate::cpu::for_request(|| read_answer(&answer));
        let (prepared, causes) = parsed.map_err(failed)?;
        if causes.is_empty() {
            return Ok(prepared);
        }
        let name = prepared
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        Err(ApiError::invalid(&res.group, &res.kind, name, causes))
    }
}

impl Strategy for WasmStrategy {
    fn create<'a>(&'a self, res: &'a ResourceInfo, obj: Value) -> BoxFuture<'a, ApiResult<Value>> {
        Box::pin(self.call("create", res, obj, None))
    }

    fn update<'a>(
        &'a self,
        res: &'a ResourceInfo,
        obj: Value,
        old: &'a Value,
    ) -> BoxFuture<'a, ApiResult<Value>> {
        Box::pin(self.call("update", res, obj, Some(old)))
    }
}
