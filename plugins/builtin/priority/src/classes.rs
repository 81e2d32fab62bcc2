//! PriorityClasses: reading them, and the one-global-default rule.

use capstan_plugin_sdk::{host, object, AdmissionRequest, AdmissionResponse, Operation, Value};

/// What a pod takes from a class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The class's name ("" when no class applies).
    pub name: String,
    pub value: i64,
    /// None when the class sets none.
    pub preemption_policy: Option<String>,
}

impl Resolved {
    fn of(class: &Value) -> Self {
        Self {
            name: object::name(class).to_string(),
            value: class.get("value").and_then(Value::as_i64).unwrap_or(0),
            preemption_policy: class
                .get("preemptionPolicy")
                .and_then(Value::as_str)
                .map(String::from),
        }
    }
}

/// The class named `name`; Ok(None) when it does not exist.
pub fn get(name: &str) -> Result<Option<Resolved>, String> {
    let class = host::get_object("scheduling.k8s.io/v1", "priorityclasses", None, name)?;
    Ok(class.as_ref().map(Resolved::of))
}

/// The global default class; when several are (after a race), the one of
/// the lowest value, as kube picks.
pub fn global_default() -> Result<Option<Resolved>, String> {
    let all = host::list_objects("scheduling.k8s.io/v1", "priorityclasses", None, None, None)?;
    let defaults = all.iter().filter(|c| is_global_default(c));
    Ok(defaults.map(Resolved::of).reduce(
        |lowest, c| {
            if c.value < lowest.value {
                c
            } else {
                lowest
            }
        },
    ))
}

fn is_global_default(class: &Value) -> bool {
    class.get("globalDefault").and_then(Value::as_bool) == Some(true)
}

/// A class marked globalDefault is refused while another one is.
pub fn validate(req: &AdmissionRequest, class: &Value) -> AdmissionResponse {
    if !is_global_default(class) {
        return AdmissionResponse::allow();
    }
    let current = match global_default() {
        Ok(current) => current,
        Err(e) => return internal(&format!("failed to get default priority class: {e}")),
    };
    match current {
        Some(other) if req.operation == Operation::Create || other.name != object::name(class) => {
            let message = format!(
                "PriorityClass {} is already marked as default. Only one default can exist",
                other.name
            );
            AdmissionResponse::forbidden(req, &message)
        }
        _ => AdmissionResponse::allow(),
    }
}

/// An error kube's plugin returns as a plain error: a 500 without reason.
pub fn internal(message: &str) -> AdmissionResponse {
    AdmissionResponse::deny(500, "", message)
}
