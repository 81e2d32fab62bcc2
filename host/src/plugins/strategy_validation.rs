//! The strategy's Validate step as a Wasm strategy plugin: the registry's
//! `Validation` hook calls the plugin's `call` export with phase "validate"
//! and turns its causes into kube-apiserver's 422 Invalid.

use super::{CallContext, Limits, ObjectReader, Plugin};
use crate::catalogue::ResourceInfo;
use crate::registry::validation::Validation;
use crate::status::{ApiError, ApiResult, Cause};
use futures_util::future::BoxFuture;
use serde_json::{json, Value};
use std::sync::Arc;

pub struct WasmValidation {
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

fn causes(answer: &str) -> Result<Vec<Cause>, String> {
    let v: Value = serde_json::from_str(answer).map_err(|e| format!("answer is not JSON: {e}"))?;
    let list = v
        .get("causes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    Ok(list
        .iter()
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
        .collect())
}

impl Validation for WasmValidation {
    fn validate<'a>(
        &'a self,
        res: &'a ResourceInfo,
        obj: &'a Value,
        old: Option<&'a Value>,
    ) -> BoxFuture<'a, ApiResult<()>> {
        Box::pin(async move {
            let mut call = json!({
                "phase": "validate",
                "resource": {"group": res.group, "version": res.version, "resource": res.plural, "kind": res.kind, "subresource": ""},
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
            let answer = self
                .plugin
                .call(&call.to_string(), ctx)
                .await
                .map_err(|f| failed(f.to_string()))?;
            let causes = causes(&answer).map_err(failed)?;
            if causes.is_empty() {
                return Ok(());
            }
            let name = obj
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            Err(ApiError::invalid(&res.group, &res.kind, name, causes))
        })
    }
}
