//! Status conditions (`metav1.Condition` lists) as kube's controllers keep
//! them: one per type, the transition time kept while the status stays.

use serde_json::{json, Value};

/// `SetCRDCondition`: replaces the condition of its type (keeping the
/// transition time when the status did not change) or appends it.
pub fn set_condition(status: &mut Value, mut new: Value) {
    if !status.get("conditions").is_some_and(Value::is_array) {
        status["conditions"] = json!([]);
    }
    let Some(list) = status["conditions"].as_array_mut() else {
        return;
    };
    match list.iter_mut().find(|c| c["type"] == new["type"]) {
        Some(old) => {
            if old["status"] == new["status"] {
                new["lastTransitionTime"] = old["lastTransitionTime"].clone();
            }
            *old = new;
        }
        None => list.push(new),
    }
}

/// Conditions compared without their timestamps.
pub fn same_status(a: &Value, b: &Value) -> bool {
    let strip = |s: &Value| {
        let mut s = s.clone();
        if let Some(list) = s.get_mut("conditions").and_then(Value::as_array_mut) {
            list.iter_mut().for_each(|c| {
                if let Some(fields) = c.as_object_mut() {
                    fields.remove("lastTransitionTime");
                }
            });
        }
        s
    };
    strip(a) == strip(b)
}
