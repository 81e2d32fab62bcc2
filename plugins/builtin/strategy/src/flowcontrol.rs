//! flowcontrol.apiserver.k8s.io/v1 FlowSchema and PriorityLevelConfiguration:
//! kube's defaults (`pkg/apis/flowcontrol/v1/defaults.go`: matchingPrecedence
//! 1000; a Limited level's nominalConcurrencyShares 30 and lendablePercent 0,
//! an Exempt level's 0 and 0; queuing's handSize 8, queues 64,
//! queueLengthLimit 50) and the main rules of their validation. Served
//! and stored only: nothing here enforces API priority and fairness.

use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use crate::common::{self, text};
use crate::json::set_default;

const LEVEL_TYPES: [&str; 2] = ["Exempt", "Limited"];
const DISTINGUISHERS: [&str; 2] = ["ByNamespace", "ByUser"];
const LIMIT_RESPONSES: [&str; 2] = ["Queue", "Reject"];

/// Sets `pointer` when absent or zero (kube defaults Go's zero values).
fn set_unless_nonzero(object: &mut Value, pointer: &str, value: i64) {
    let current = object.pointer(pointer).and_then(Value::as_i64).unwrap_or(0);
    if current != 0 {
        return;
    }
    if let Some((parent, key)) = pointer.rsplit_once('/') {
        if let Some(fields) = object.pointer_mut(parent).and_then(Value::as_object_mut) {
            fields.insert(key.to_string(), json!(value));
        }
    }
}

pub fn flow_schema_defaults(object: &mut Value) {
    if object.get("spec").is_some_and(Value::is_object) {
        set_unless_nonzero(object, "/spec/matchingPrecedence", 1000);
    }
}

pub fn priority_level_defaults(object: &mut Value) {
    if object.pointer("/spec/exempt").is_some_and(Value::is_object) {
        set_default(object, "/spec/exempt/nominalConcurrencyShares", json!(0));
        set_default(object, "/spec/exempt/lendablePercent", json!(0));
    }
    if object
        .pointer("/spec/limited")
        .is_some_and(Value::is_object)
    {
        set_default(object, "/spec/limited/nominalConcurrencyShares", json!(30));
        set_default(object, "/spec/limited/lendablePercent", json!(0));
    }
    let queuing = "/spec/limited/limitResponse/queuing";
    if object.pointer(queuing).is_some_and(Value::is_object) {
        set_unless_nonzero(object, &format!("{queuing}/handSize"), 8);
        set_unless_nonzero(object, &format!("{queuing}/queues"), 64);
        set_unless_nonzero(object, &format!("{queuing}/queueLengthLimit"), 50);
    }
}

pub fn validate_flow_schema(object: &Value) -> Vec<Cause> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut causes = Vec::new();
    let precedence = spec
        .get("matchingPrecedence")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let field = "spec.matchingPrecedence";
    if precedence <= 0 {
        causes.push(common::invalid(
            field,
            &precedence.to_string(),
            "must be a positive value",
        ));
    } else if precedence > 10000 {
        causes.push(common::invalid(
            field,
            &precedence.to_string(),
            "must not be greater than 10000",
        ));
    } else if precedence == 1 && crate::json::name(object) != Some("exempt") {
        let detail = "only the schema named 'exempt' may have matchingPrecedence 1";
        causes.push(common::invalid(field, "1", detail));
    }
    if let Some(method) = spec.get("distinguisherMethod").filter(|m| m.is_object()) {
        let kind = text(method, "type");
        if !DISTINGUISHERS.contains(&kind) {
            let field = "spec.distinguisherMethod.type";
            causes.push(common::not_supported(field, kind, &DISTINGUISHERS));
        }
    }
    let level = spec
        .pointer("/priorityLevelConfiguration/name")
        .and_then(Value::as_str);
    let field = "spec.priorityLevelConfiguration.name";
    match level.unwrap_or_default() {
        "" => causes.push(common::required(field, "must reference a priority level")),
        name => common::invalid_each(&mut causes, field, name, common::dns1123_subdomain(name)),
    }
    causes
}

pub fn validate_priority_level(object: &Value) -> Vec<Cause> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut causes = Vec::new();
    let kind = text(spec, "type");
    let exempt_name = crate::json::name(object) == Some("exempt");
    if !LEVEL_TYPES.contains(&kind) {
        causes.push(common::not_supported("spec.type", kind, &LEVEL_TYPES));
    } else if exempt_name != (kind == "Exempt") {
        let detail = "type must be 'Exempt' if and only if name is 'exempt'";
        causes.push(common::invalid_str("spec.type", kind, detail));
    }
    let present = |key: &str| spec.get(key).is_some_and(Value::is_object);
    if kind != "Limited" && present("limited") {
        causes.push(common::forbidden(
            "spec.limited",
            "must be nil if the type is not Limited",
        ));
    }
    if kind == "Limited" && present("exempt") {
        causes.push(common::forbidden(
            "spec.exempt",
            "must be nil if the type is Limited",
        ));
    }
    if let Some(response) = spec
        .pointer("/limited/limitResponse")
        .filter(|r| r.is_object())
    {
        let kind = text(response, "type");
        if !LIMIT_RESPONSES.contains(&kind) {
            let field = "spec.limited.limitResponse.type";
            causes.push(common::not_supported(field, kind, &LIMIT_RESPONSES));
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_kubes() {
        let mut fs = json!({"metadata": {"name": "f"}, "spec": {"priorityLevelConfiguration": {"name": "p"}}});
        flow_schema_defaults(&mut fs);
        assert_eq!(fs["spec"]["matchingPrecedence"], 1000);
        let mut pl = json!({"metadata": {"name": "p"}, "spec": {"type": "Limited", "limited": {
            "limitResponse": {"type": "Queue", "queuing": {}}}}});
        priority_level_defaults(&mut pl);
        assert_eq!(pl["spec"]["limited"]["nominalConcurrencyShares"], 30);
        assert_eq!(pl["spec"]["limited"]["lendablePercent"], 0);
        assert_eq!(
            pl["spec"]["limited"]["limitResponse"]["queuing"],
            json!({"handSize": 8, "queues": 64, "queueLengthLimit": 50})
        );
        assert!(validate_priority_level(&pl).is_empty());
    }

    #[test]
    fn precedence_and_type_rules() {
        let fs = json!({"metadata": {"name": "f"}, "spec": {"matchingPrecedence": 1,
                        "priorityLevelConfiguration": {"name": "p"}}});
        assert_eq!(
            validate_flow_schema(&fs)[0].message,
            "Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1"
        );
        let pl = json!({"metadata": {"name": "p"}, "spec": {"type": "Exempt"}});
        assert_eq!(
            validate_priority_level(&pl)[0].message,
            "Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt'"
        );
    }
}
