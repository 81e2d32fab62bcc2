//! Pods: their priority resolved on create, kept on update.

use crate::classes::{self, Resolved};
use capstan_plugin_sdk::{
    json, object, AdmissionRequest, AdmissionResponse, JsonPatch, Operation, Value,
};

const PREEMPT_LOWER_PRIORITY: &str = "PreemptLowerPriority";

pub fn admit(req: &AdmissionRequest, pod: &Value) -> AdmissionResponse {
    match req.operation {
        Operation::Create => admit_create(req, pod),
        Operation::Update => keep_on_update(pod, req.old_object.as_ref()),
        _ => AdmissionResponse::allow(),
    }
}

fn admit_create(req: &AdmissionRequest, pod: &Value) -> AdmissionResponse {
    let named = object::get_str(pod, &["spec", "priorityClassName"]).unwrap_or("");
    let resolved = match resolve(named) {
        Ok(Some(resolved)) => resolved,
        Ok(None) => {
            let message = format!("no PriorityClass with name {named} was found");
            return AdmissionResponse::forbidden(req, &message);
        }
        Err(e) => return classes::internal(&e),
    };
    if let Some(refusal) = conflict(req, pod, &resolved) {
        return refusal;
    }
    let mut fields = vec![("priority", json!(resolved.value))];
    if named.is_empty() && !resolved.name.is_empty() {
        fields.push(("priorityClassName", json!(resolved.name)));
    }
    if let Some(policy) = resolved.preemption_policy {
        fields.push(("preemptionPolicy", json!(policy)));
    }
    AdmissionResponse::allow().with_patch(set_spec_fields(pod, fields).ops())
}

/// The class named, or (none named) the global default, or kube's fallback.
fn resolve(named: &str) -> Result<Option<Resolved>, String> {
    if !named.is_empty() {
        let class = classes::get(named);
        return class.map_err(|e| format!("failed to get PriorityClass with name {named}: {e}"));
    }
    let default = classes::global_default()
        .map_err(|e| format!("failed to get default priority class: {e}"))?;
    Ok(Some(default.unwrap_or_else(|| Resolved {
        name: String::new(),
        value: 0,
        preemption_policy: Some(PREEMPT_LOWER_PRIORITY.to_string()),
    })))
}

/// A priority or preemption policy the pod sets itself must be the class's.
fn conflict(req: &AdmissionRequest, pod: &Value, resolved: &Resolved) -> Option<AdmissionResponse> {
    let own = object::get(pod, &["spec", "priority"]).and_then(Value::as_i64);
    if let Some(own) = own.filter(|own| *own != resolved.value) {
        let message = format!("the integer value of priority ({own}) must not be provided in pod spec; priority admission controller computed {} from the given PriorityClass name", resolved.value);
        return Some(AdmissionResponse::forbidden(req, &message));
    }
    let policy = resolved.preemption_policy.as_deref()?;
    let own = object::get_str(pod, &["spec", "preemptionPolicy"])?;
    (own != policy).then(|| {
        let message = format!("the string value of PreemptionPolicy ({own}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name");
        AdmissionResponse::forbidden(req, &message)
    })
}

/// An update that leaves out the priority or policy the pod had keeps them.
fn keep_on_update(pod: &Value, old: Option<&Value>) -> AdmissionResponse {
    let Some(old) = old else {
        return AdmissionResponse::allow();
    };
    let kept = ["priority", "preemptionPolicy"]
        .into_iter()
        .filter(|field| object::get(pod, &["spec", field]).is_none_or(Value::is_null))
        .filter_map(|field| Some((field, object::get(old, &["spec", field])?.clone())))
        .filter(|(_, value)| !value.is_null())
        .collect();
    AdmissionResponse::allow().with_patch(set_spec_fields(pod, kept).ops())
}

/// Patches setting `spec.<field>` for each field (`spec` made when missing).
fn set_spec_fields(pod: &Value, fields: Vec<(&str, Value)>) -> JsonPatch {
    if fields.is_empty() {
        return JsonPatch::new();
    }
    if !pod.get("spec").is_some_and(Value::is_object) {
        let mut spec = json!({});
        for (field, value) in fields {
            spec[field] = value;
        }
        return JsonPatch::new().add(["spec"], spec);
    }
    fields
        .into_iter()
        .fold(JsonPatch::new(), |p, (field, value)| {
            p.add(["spec", field], value)
        })
}
