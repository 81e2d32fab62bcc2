//! The pod overhead a RuntimeClass defines (`overhead.podFixed`).

use capstan_plugin_sdk::{object, Value};
use capstan_quota::Quantity;

const MISMATCH: &str = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";
const UNDEFINED: &str =
    "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead";

/// The class's `podFixed` (Null when its overhead names none); None when
/// the class defines no overhead.
fn pod_fixed(class: &Value) -> Option<Value> {
    let overhead = class.get("overhead").filter(|o| !o.is_null())?;
    Some(overhead.get("podFixed").cloned().unwrap_or(Value::Null))
}

/// The overhead the pod gets from the class (None: the class defines none);
/// refused when the pod sets another one itself.
pub fn set(pod: &Value, class: &Value) -> Result<Option<Value>, String> {
    let Some(fixed) = pod_fixed(class) else {
        return Ok(None);
    };
    let own = object::get(pod, &["spec", "overhead"]).unwrap_or(&Value::Null);
    let sets_own = own.as_object().is_some_and(|m| !m.is_empty());
    if sets_own && !same_resources(&fixed, own) {
        return Err(MISMATCH.to_string());
    }
    Ok(Some(fixed))
}

/// The pod's overhead is the class's, or (no class overhead) none.
pub fn validate(pod: &Value, class: Option<&Value>) -> Result<(), String> {
    let own = object::get(pod, &["spec", "overhead"]).unwrap_or(&Value::Null);
    match class.and_then(pod_fixed) {
        Some(fixed) if !same_resources(&fixed, own) => Err(MISMATCH.to_string()),
        Some(_) => Ok(()),
        None if !own.is_null() => Err(UNDEFINED.to_string()),
        None => Ok(()),
    }
}

/// kube's semantic equality of two resource lists: the same names, equal
/// quantities (a missing list is an empty one).
fn same_resources(a: &Value, b: &Value) -> bool {
    let empty = serde_json::Map::new();
    let (a, b) = (
        a.as_object().unwrap_or(&empty),
        b.as_object().unwrap_or(&empty),
    );
    a.len() == b.len()
        && a.iter()
            .all(|(name, qa)| b.get(name).is_some_and(|qb| same_quantity(qa, qb)))
}

fn same_quantity(a: &Value, b: &Value) -> bool {
    let parse = |v: &Value| v.as_str().and_then(|t| Quantity::parse(t).ok());
    match (parse(a), parse(b)) {
        (Some(a), Some(b)) => a == b,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::json;

    #[test]
    fn resource_lists_compare_by_quantity() {
        assert!(same_resources(
            &json!({"cpu": "100m"}),
            &json!({"cpu": "0.1"})
        ));
        assert!(!same_resources(
            &json!({"cpu": "100m"}),
            &json!({"cpu": "200m"})
        ));
        assert!(!same_resources(
            &json!({"cpu": "1"}),
            &json!({"cpu": "1", "memory": "1Mi"})
        ));
        assert!(same_resources(&Value::Null, &json!({})));
    }
}
