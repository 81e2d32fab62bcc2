//! Built-in admission plugin `runtime-class`, kube-apiserver's RuntimeClass:
//! a Pod created naming a RuntimeClass (`spec.runtimeClassName`) gets the
//! class's `overhead.podFixed` as `spec.overhead` and its `scheduling`
//! (node selector and tolerations merged into the pod's); a class that does
//! not exist (or is not served), an overhead the pod sets that is not the
//! class's, or a node selector that conflicts, is refused with kube's 403.
//!
//! Runs in both phases, as kube's plugin mutates and validates: each call
//! checks the object it would leave, so the validating call refuses an
//! overhead a later mutation changed.

mod overhead;
mod tolerations;

use capstan_plugin_sdk::{
    host, object, AdmissionPlugin, AdmissionRequest, AdmissionResponse, JsonPatch, Operation, Value,
};

/// The plugin.
pub struct RuntimeClass;

impl AdmissionPlugin for RuntimeClass {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let Some(pod) = req
            .written_object("", "pods")
            .filter(|_| req.operation == Operation::Create)
        else {
            return Ok(AdmissionResponse::allow());
        };
        let class = match runtime_class(req, pod) {
            Ok(class) => class,
            Err(refusal) => return Ok(*refusal),
        };
        let admitted = admit(pod, class.as_ref())
            .and_then(|admitted| overhead::validate(&admitted, class.as_ref()).map(|_| admitted));
        match admitted {
            Ok(admitted) => {
                Ok(AdmissionResponse::allow().with_patch(spec_patch(pod, &admitted).ops()))
            }
            Err(why) => Ok(AdmissionResponse::forbidden(req, &why)),
        }
    }
}

/// The RuntimeClass the pod names (None when it names none).
fn runtime_class(
    req: &AdmissionRequest,
    pod: &Value,
) -> Result<Option<Value>, Box<AdmissionResponse>> {
    let Some(name) = object::get_str(pod, &["spec", "runtimeClassName"]) else {
        return Ok(None);
    };
    let not_found = || {
        let message = format!("pod rejected: RuntimeClass {name:?} not found");
        Box::new(AdmissionResponse::forbidden(req, &message))
    };
    match host::get_object("node.k8s.io/v1", "runtimeclasses", None, name) {
        Ok(Some(class)) => Ok(Some(class)),
        Ok(None) => Err(not_found()),
        Err(e) if e.starts_with("the server does not serve") => Err(not_found()),
        Err(e) => Err(Box::new(AdmissionResponse::deny(500, "", e))),
    }
}

/// The pod with the class's overhead and scheduling.
fn admit(pod: &Value, class: Option<&Value>) -> Result<Value, String> {
    let mut out = pod.clone();
    let Some(class) = class else {
        return Ok(out);
    };
    if let Some(fixed) = overhead::set(pod, class)? {
        out["spec"]["overhead"] = fixed;
    }
    if let Some(scheduling) = class.get("scheduling").filter(|s| s.is_object()) {
        out["spec"]["nodeSelector"] = node_selector(pod, scheduling)?;
        let own = object::array(pod, &["spec", "tolerations"]);
        let added = object::array(scheduling, &["tolerations"]);
        out["spec"]["tolerations"] = Value::Array(tolerations::merge(own, added));
    }
    Ok(out)
}

/// The pod's node selector with the class's added; a key set to another
/// value is a conflict.
fn node_selector(pod: &Value, scheduling: &Value) -> Result<Value, String> {
    let class_selector = scheduling
        .get("nodeSelector")
        .cloned()
        .unwrap_or(Value::Null);
    let Some(own) = object::get(pod, &["spec", "nodeSelector"]).and_then(Value::as_object) else {
        return Ok(class_selector);
    };
    let mut merged = own.clone();
    for (key, value) in class_selector.as_object().into_iter().flatten() {
        let wanted = value.as_str().unwrap_or("");
        match own.get(key).and_then(Value::as_str) {
            Some(set) if set != wanted => {
                return Err(format!("conflict: runtimeClass.scheduling.nodeSelector[{key}] = {wanted}; pod.spec.nodeSelector[{key}] = {set}"))
            }
            _ => merged.insert(key.clone(), value.clone()),
        };
    }
    Ok(Value::Object(merged))
}

/// Patches making the pod's overhead, node selector and tolerations those of `admitted`.
fn spec_patch(pod: &Value, admitted: &Value) -> JsonPatch {
    let mut patch = JsonPatch::new();
    for field in ["overhead", "nodeSelector", "tolerations"] {
        let before = object::get(pod, &["spec", field]).filter(|v| !v.is_null());
        let after = object::get(admitted, &["spec", field]).filter(|v| !is_empty(v));
        patch = match (before, after) {
            (before, Some(after)) if before != Some(after) => {
                patch.add(["spec", field], after.clone())
            }
            (Some(before), None) if !is_empty(before) => patch.remove(["spec", field]),
            _ => patch,
        };
    }
    patch
}

/// Null, `{}` and `[]` are what Go leaves out.
fn is_empty(value: &Value) -> bool {
    value.is_null()
        || value.as_object().is_some_and(|m| m.is_empty())
        || value.as_array().is_some_and(|a| a.is_empty())
}

capstan_plugin_sdk::admission_plugin!(RuntimeClass);

#[cfg(test)]
mod tests;
