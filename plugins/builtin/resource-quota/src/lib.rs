//! Built-in admission plugin `resource-quota`, kube-apiserver's
//! ResourceQuota (validating): a create or update of a namespaced object is
//! refused with 403 Forbidden when it would take the namespace past one of
//! its ResourceQuotas, or when a pod leaves out a cpu/memory request or
//! limit a quota tracks. Usage is computed live from the namespace's
//! objects with `capstan-quota` (kube reads the controller-maintained
//! `status.used` instead); nothing is reserved, so dry runs are no different.
//!
//! Reads: one list of the namespace's resourcequotas, remembered between
//! calls until resourcequotas change (their watermark); then, only when a
//! quota applies and the write adds usage to it, one list of the objects of
//! the written resource in the namespace.

mod write;

use std::cell::RefCell;
use std::rc::Rc;

use capstan_plugin_sdk::{
    host, AdmissionPlugin, AdmissionRequest, AdmissionResponse, Remembered, Value,
};
use capstan_quota::{admit, applies, check_constraints, requested, usage};

use write::Write;

/// The plugin.
pub struct ResourceQuota;

impl AdmissionPlugin for ResourceQuota {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let Some(write) = Write::of(req) else {
            return Ok(AdmissionResponse::allow());
        };
        let quotas = quotas(&req.namespace)?;
        if quotas.is_empty() {
            return Ok(AdmissionResponse::allow());
        }
        Ok(match evaluate(&write, &quotas)? {
            Some(message) => AdmissionResponse::forbidden(req, &message),
            None => AdmissionResponse::allow(),
        })
    }
}

thread_local! {
    /// Namespace → its ResourceQuotas.
    static QUOTAS: RefCell<Remembered<Rc<Vec<Value>>>> =
        const { RefCell::new(Remembered::new("v1", "resourcequotas")) };
}

/// The namespace's ResourceQuotas.
fn quotas(namespace: &str) -> Result<Rc<Vec<Value>>, String> {
    let read =
        || host::list_objects("v1", "resourcequotas", Some(namespace), None, None).map(Rc::new);
    QUOTAS.with(|cache| cache.borrow_mut().get_or_read(namespace, read, |_| true))
}

/// The refusal message, if any. As kube does, every applicable quota's
/// constraints are checked before any usage.
fn evaluate(write: &Write, quotas: &[Value]) -> Result<Option<String>, String> {
    let applicable: Vec<&Value> = quotas
        .iter()
        .filter(|q| applies(q, &write.resource, write.object))
        .collect();
    for quota in &applicable {
        if let Err(message) = check_constraints(quota, &write.resource, write.object) {
            return Ok(Some(message));
        }
    }
    let charged: Vec<&Value> = applicable
        .into_iter()
        .filter(|q| !requested(q, &write.resource, write.object, write.old_object).is_empty())
        .collect();
    if charged.is_empty() {
        return Ok(None);
    }
    let others = write.list_others()?;
    let objects: Vec<(&str, &Value)> = others
        .iter()
        .map(|o| (write.resource.as_str(), o))
        .collect();
    for quota in charged {
        let used = usage(quota, &objects);
        if let Err(message) = admit(
            quota,
            &write.resource,
            &used,
            write.object,
            write.old_object,
        ) {
            return Ok(Some(message));
        }
    }
    Ok(None)
}

capstan_plugin_sdk::admission_plugin!(ResourceQuota);

#[cfg(test)]
mod tests;
