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
const MAX_QUEUES: i64 = 10_000_000;
const MAX_HASH_BITS: i64 = 60;

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
        name => common::invalid_each(
            &mut causes,
            field,
            name,
            kube_rules::dns1123_subdomain(name),
        ),
    }
    causes
}

/// `ValidatePriorityLevelConfigurationSpec`.
pub fn validate_priority_level(object: &Value) -> Vec<Cause> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut causes = Vec::new();
    let kind = text(spec, "type");
    let exempt_name = crate::json::name(object) == Some("exempt");
    if exempt_name != (kind == "Exempt") {
        let detail = "type must be 'Exempt' if and only if name is 'exempt'";
        causes.push(common::invalid_str("spec.type", kind, detail));
    }
    let part = |key: &str| spec.get(key).filter(|v| !v.is_null());
    match kind {
        "Exempt" => {
            if part("limited").is_some() {
                let detail = "must be nil if the type is not Limited";
                causes.push(common::forbidden("spec.limited", detail));
            }
            if let Some(exempt) = part("exempt") {
                shares_and_lending(exempt, "spec.exempt", &mut causes);
            }
        }
        "Limited" => {
            if part("exempt").is_some() {
                let detail = "must be nil if the type is Limited";
                causes.push(common::forbidden("spec.exempt", detail));
            }
            match part("limited") {
                None => causes.push(common::required(
                    "spec.limited",
                    "must not be empty when type is Limited",
                )),
                Some(limited) => limited_level(limited, &mut causes),
            }
        }
        other => causes.push(common::not_supported("spec.type", other, &LEVEL_TYPES)),
    }
    causes
}

fn shares_and_lending(level: &Value, at: &str, causes: &mut Vec<Cause>) {
    if let Some(shares) = level
        .get("nominalConcurrencyShares")
        .and_then(Value::as_i64)
    {
        if shares < 0 {
            let field = format!("{at}.nominalConcurrencyShares");
            causes.push(common::invalid(
                &field,
                &shares.to_string(),
                "must be a non-negative integer",
            ));
        }
    }
    if let Some(lendable) = level.get("lendablePercent").and_then(Value::as_i64) {
        if !(0..=100).contains(&lendable) {
            let field = format!("{at}.lendablePercent");
            let detail = "must be between 0 and 100, inclusive";
            causes.push(common::invalid(&field, &lendable.to_string(), detail));
        }
    }
}

/// `ValidateLimitedPriorityLevelConfiguration`.
fn limited_level(limited: &Value, causes: &mut Vec<Cause>) {
    let at = "spec.limited";
    let shares = common::int(limited, "nominalConcurrencyShares");
    if shares < 0 {
        let field = format!("{at}.nominalConcurrencyShares");
        causes.push(common::invalid(
            &field,
            &shares.to_string(),
            "must be a non-negative integer",
        ));
    }
    limit_response(limited.get("limitResponse").unwrap_or(&Value::Null), causes);
    let without_shares = limited.as_object().map(|m| {
        let mut m = m.clone();
        m.remove("nominalConcurrencyShares");
        Value::Object(m)
    });
    shares_and_lending(&without_shares.unwrap_or(Value::Null), at, causes);
    if let Some(borrowing) = limited.get("borrowingLimitPercent").and_then(Value::as_i64) {
        if borrowing < 0 {
            let field = format!("{at}.borrowingLimitPercent");
            let detail = "if specified, must be a non-negative integer";
            causes.push(common::invalid(&field, &borrowing.to_string(), detail));
        }
    }
}

/// `ValidateLimitResponse`.
fn limit_response(response: &Value, causes: &mut Vec<Cause>) {
    let at = "spec.limited.limitResponse";
    let queuing = response.get("queuing").filter(|q| !q.is_null());
    match (text(response, "type"), queuing) {
        ("Reject", Some(_)) => causes.push(common::forbidden(
            &format!("{at}.queuing"),
            "must be nil if limited.limitResponse.type is not Limited",
        )),
        ("Reject", None) => {}
        ("Queue", None) => causes.push(common::required(
            &format!("{at}.queuing"),
            "must not be empty if limited.limitResponse.type is Limited",
        )),
        ("Queue", Some(queuing)) => queuing_causes(queuing, &format!("{at}.queuing"), causes),
        (other, _) => causes.push(common::not_supported(
            &format!("{at}.type"),
            other,
            &LIMIT_RESPONSES,
        )),
    }
}

/// `ValidatePriorityLevelQueuingConfiguration`.
fn queuing_causes(queuing: &Value, at: &str, causes: &mut Vec<Cause>) {
    let value = |key: &str| common::int(queuing, key);
    let field = |key: &str| format!("{at}.{key}");
    let (limit, queues, hand) = (
        value("queueLengthLimit"),
        value("queues"),
        value("handSize"),
    );
    if limit <= 0 {
        causes.push(common::invalid(
            &field("queueLengthLimit"),
            &limit.to_string(),
            "must be positive",
        ));
    }
    if queues <= 0 {
        causes.push(common::invalid(
            &field("queues"),
            &queues.to_string(),
            "must be positive",
        ));
    } else if queues > MAX_QUEUES {
        let detail = format!("must not be greater than {MAX_QUEUES}");
        causes.push(common::invalid(
            &field("queues"),
            &queues.to_string(),
            &detail,
        ));
    }
    let hand_field = field("handSize");
    if hand <= 0 {
        causes.push(common::invalid(
            &hand_field,
            &hand.to_string(),
            "must be positive",
        ));
    } else if hand > queues {
        let detail = format!("should not be greater than queues ({queues})");
        causes.push(common::invalid(&hand_field, &hand.to_string(), &detail));
    } else if entropy_bits(queues, hand) > MAX_HASH_BITS {
        let detail = format!(
            "required entropy bits of deckSize {queues} and handSize {hand} should not be greater than {MAX_HASH_BITS}"
        );
        causes.push(common::invalid(&hand_field, &hand.to_string(), &detail));
    }
}

/// shufflesharding's `RequiredEntropyBits`.
fn entropy_bits(deck: i64, hand: i64) -> i64 {
    ((deck as f64).log2() * hand as f64).ceil() as i64
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

    #[test]
    fn limited_levels_and_queuing() {
        let pl = json!({"metadata": {"name": "p"}, "spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": -1, "limitResponse": {"type": "Queue"}}}});
        let got: Vec<String> = validate_priority_level(&pl)
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(got, [
            "spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer",
            "spec.limited.limitResponse.queuing: Required value: must not be empty if limited.limitResponse.type is Limited",
        ]);
        let pl = json!({"metadata": {"name": "p"}, "spec": {"type": "Limited", "limited": {
            "limitResponse": {"type": "Queue", "queuing": {"queues": 128, "handSize": 60, "queueLengthLimit": 5}}}}});
        assert_eq!(
            validate_priority_level(&pl)[0].message,
            "Invalid value: 60: required entropy bits of deckSize 128 and handSize 60 should not be greater than 60"
        );
    }
}
