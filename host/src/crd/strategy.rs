//! The strategy of custom resources (kube's customResourceStrategy): the
//! generic rules of every object come from the built-in strategy (metadata
//! validation, status dropped on create when it is a subresource); on top,
//! `metadata.generation` (1 on create, +1 when anything but metadata, and
//! status when it is a subresource, changed) and the CRD version's schema:
//! its validation and its CEL rules, every problem in one 422.

use std::sync::Arc;
use std::time::Instant;

use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};

use crate::apimachinery::status::{ApiError, ApiResult, Cause};
use crate::catalogue::ResourceInfo;
use crate::registry::strategy::{PrintedRows, Strategy};

use crate::catalogue::custom::CustomResource;

/// Routes custom resources through their CRD's rules, the rest to `inner`.
pub struct CustomAware {
    pub inner: Arc<dyn Strategy>,
}

impl Strategy for CustomAware {
    fn create<'a>(&'a self, res: &'a ResourceInfo, obj: Value) -> BoxFuture<'a, ApiResult<Value>> {
        match &res.custom {
            None => self.inner.create(res, obj),
            Some(custom) => Box::pin(self.create_custom(res, custom, obj)),
        }
    }

    fn update<'a>(
        &'a self,
        res: &'a ResourceInfo,
        obj: Value,
        old: &'a Value,
    ) -> BoxFuture<'a, ApiResult<Value>> {
        match &res.custom {
            None => self.inner.update(res, obj, old),
            Some(custom) => Box::pin(self.update_custom(res, custom, obj, old)),
        }
    }

    fn update_subresource<'a>(
        &'a self,
        res: &'a ResourceInfo,
        subresource: &'a str,
        obj: Value,
        old: &'a Value,
    ) -> BoxFuture<'a, ApiResult<Value>> {
        self.inner.update_subresource(res, subresource, obj, old)
    }

    /// A custom resource is defaulted by its schema when decoded.
    fn defaults<'a>(
        &'a self,
        res: &'a ResourceInfo,
        obj: Value,
    ) -> BoxFuture<'a, ApiResult<Value>> {
        match &res.custom {
            None => self.inner.defaults(res, obj),
            Some(_) => Box::pin(async { Ok(obj) }),
        }
    }

    fn table<'a>(
        &'a self,
        res: &'a ResourceInfo,
        objects: &'a [Value],
        now: chrono::DateTime<chrono::Utc>,
    ) -> BoxFuture<'a, ApiResult<Option<PrintedRows>>> {
        self.inner.table(res, objects, now)
    }
}

impl CustomAware {
    async fn create_custom(
        &self,
        res: &ResourceInfo,
        custom: &CustomResource,
        obj: Value,
    ) -> ApiResult<Value> {
        let answer = self.inner.create(res, obj.clone()).await;
        let mut prepared = checked(res, custom, &obj, answer, None)?;
        set_generation(&mut prepared, 1);
        Ok(prepared)
    }

    async fn update_custom(
        &self,
        res: &ResourceInfo,
        custom: &CustomResource,
        obj: Value,
        old: &Value,
    ) -> ApiResult<Value> {
        let answer = self.inner.update(res, obj.clone(), old).await;
        let mut prepared = checked(res, custom, &obj, answer, Some(old))?;
        let generation = old.pointer("/metadata/generation").and_then(Value::as_i64);
        let generation = generation.unwrap_or(0);
        let status_apart = res.has_subresource("status");
        if desired_state(&prepared, status_apart) != desired_state(old, status_apart) {
            set_generation(&mut prepared, generation + 1);
        } else {
            set_generation(&mut prepared, generation.max(1));
        }
        Ok(prepared)
    }
}

/// The schema checks what will be stored (the strategy's prepared object:
/// status dropped or kept as the subresource rules say), or what was sent
/// when the strategy refused it, so both sets of problems are reported.
fn checked(
    res: &ResourceInfo,
    custom: &CustomResource,
    obj: &Value,
    answer: ApiResult<Value>,
    old: Option<&Value>,
) -> ApiResult<Value> {
    let subject = answer.as_ref().unwrap_or(obj);
    let deadline = crate::cpu::deadline();
    let validated = || validate_until(custom, subject, old, deadline);
    // CEL rules run off the async workers whatever the object's size.
    let causes = match custom.rules.is_some() {
        true => crate::cpu::heavy(validated),
        false => crate::cpu::for_request(validated),
    }?;
    with_schema_causes(res, obj, answer, causes)
}

/// The built-in strategy's answer with the schema's causes added: both
/// sets of problems in one 422, as kube reports them.
fn with_schema_causes(
    res: &ResourceInfo,
    obj: &Value,
    answer: ApiResult<Value>,
    causes: Vec<Cause>,
) -> ApiResult<Value> {
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let schema_error = || ApiError::invalid(&res.group, &res.kind, name, causes.clone());
    match answer {
        Ok(prepared) if causes.is_empty() => Ok(prepared),
        Ok(_) => Err(schema_error()),
        Err(e) if e.code == 422 && !causes.is_empty() => Err(e.and_invalid(schema_error())),
        Err(e) => Err(e),
    }
}

/// The problems of `obj` by the CRD version's schema (validation, then
/// its CEL rules, then a built-in's own checks).
pub fn validate(custom: &CustomResource, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    validate_until(custom, obj, old, None).unwrap_or_default()
}

/// [`validate`], or kube's 504 once `deadline` passes.
fn validate_until(
    custom: &CustomResource,
    obj: &Value,
    old: Option<&Value>,
    deadline: Option<Instant>,
) -> ApiResult<Vec<Cause>> {
    let mut causes = match (&custom.compiled, old) {
        (Some(schema), Some(old)) => schema.validate_update(obj, old),
        (Some(schema), None) => schema.validate(obj),
        (None, _) => Vec::new(),
    };
    if let Some(rules) = &custom.rules {
        causes.extend(crate::catalogue::custom::rules::causes(
            rules, obj, old, deadline,
        )?);
    }
    if let Some(checks) = custom.checks {
        causes.extend(checks(obj, old));
    }
    Ok(causes)
}

/// What the generation follows: everything but metadata (and status when
/// status is a subresource).
fn desired_state(obj: &Value, status_apart: bool) -> Map<String, Value> {
    let mut fields = obj.as_object().cloned().unwrap_or_default();
    fields.remove("metadata");
    if status_apart {
        fields.remove("status");
    }
    fields
}

fn set_generation(obj: &mut Value, generation: i64) {
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.insert("generation".into(), json!(generation));
    }
}
