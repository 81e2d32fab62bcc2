use serde_json::{json, Value};

use super::*;
use crate::tests::messages;

fn hook() -> Value {
    json!({"name": "deny.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
           "clientConfig": {"url": "https://127.0.0.1:8443/validate"},
           "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]})
}

fn config(hooks: Vec<Value>) -> Value {
    json!({"metadata": {"name": "c"}, "webhooks": hooks})
}

fn problems(hooks: Vec<Value>) -> Vec<String> {
    let mut object = config(hooks);
    defaults(&mut object, false);
    messages(&validate(&object, None, false))
}

/// `hook()` with `field` set; named after it, so each is unique.
fn with(field: &str, value: Value) -> Value {
    let mut h = hook();
    h[field] = value;
    h["name"] = json!(format!("{}.example.com", field.to_lowercase()));
    h
}

#[test]
fn a_good_configuration_passes_and_is_defaulted() {
    assert_eq!(problems(vec![hook()]), Vec::<String>::new());
    let mut object = config(vec![hook()]);
    defaults(&mut object, true);
    let h = &object["webhooks"][0];
    assert_eq!(
        (
            &h["failurePolicy"],
            &h["timeoutSeconds"],
            &h["reinvocationPolicy"]
        ),
        (&json!("Fail"), &json!(10), &json!("Never"))
    );
    assert_eq!(h["rules"][0]["scope"], "*");
}

#[test]
fn timeouts_outside_one_to_thirty_seconds_are_refused() {
    for seconds in [0, 31, 100000] {
        assert_eq!(
            problems(vec![with("timeoutSeconds", json!(seconds))]),
            [format!("webhooks[0].timeoutSeconds: Invalid value: {seconds}: the timeout value must be between 1 and 30 seconds")]
        );
    }
    assert!(problems(vec![with("timeoutSeconds", json!(30))]).is_empty());
}

#[test]
fn names_are_qualified_and_unique() {
    let mut short = hook();
    short["name"] = json!("deny");
    assert_eq!(
        problems(vec![hook(), hook(), short]),
        [
            "webhooks[1].name: Duplicate value: \"deny.example.com\"",
            "webhooks[2].name: Invalid value: \"deny\": should be a domain with at least three segments separated by dots",
        ]
    );
}

#[test]
fn side_effects_and_review_versions_are_required_on_create() {
    let mut h = hook();
    h.as_object_mut().unwrap().remove("sideEffects");
    h["admissionReviewVersions"] = json!(["v2", "v2"]);
    assert_eq!(
        problems(vec![h, with("sideEffects", json!("Some"))]),
        [
            "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun",
            "webhooks[0].admissionReviewVersions[1]: Invalid value: \"v2\": duplicate version",
            "webhooks[0].admissionReviewVersions: Invalid value: []string{\"v2\", \"v2\"}: must include at least one of v1, v1beta1",
            "webhooks[1].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\"",
        ]
    );
}

#[test]
fn an_update_keeps_accepting_what_was_stored() {
    let old = config(vec![with("sideEffects", json!("Unknown")), hook()]);
    let mut new = old.clone();
    new["webhooks"][1]["sideEffects"] = json!("Some");
    assert!(validate(&new, Some(&old), false).is_empty());
    let strict = validate(&new, Some(&config(vec![hook()])), false);
    assert_eq!(strict.len(), 2, "{:?}", messages(&strict));
}

#[test]
fn rules_name_their_problems() {
    let rule = json!({"operations": ["*", "PATCH"], "apiGroups": [], "apiVersions": ["v1", ""],
                      "resources": ["*/*", "pods"], "scope": "Everywhere"});
    assert_eq!(
        problems(vec![with("rules", json!([rule]))]),
        [
            "webhooks[0].rules[0].operations: Invalid value: []admissionregistration.OperationType{\"*\", \"PATCH\"}: if '*' is present, must not specify other operations",
            "webhooks[0].rules[0].operations[1]: Unsupported value: \"PATCH\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \"UPDATE\"",
            "webhooks[0].rules[0].apiGroups: Required value",
            "webhooks[0].rules[0].apiVersions[1]: Required value",
            "webhooks[0].rules[0].resources: Invalid value: []string{\"*/*\", \"pods\"}: if '*/*' is present, must not specify other resources",
            "webhooks[0].rules[0].scope: Unsupported value: \"Everywhere\": supported values: \"*\", \"Cluster\", \"Namespaced\"",
        ]
    );
}

#[test]
fn client_config_and_conditions_are_checked() {
    let both = json!({"url": "https://a.example/x", "service": {"name": "s", "namespace": "n"}});
    let conditions = json!([{"name": "ok", "expression": "true"}, {"name": "ok", "expression": "object.("},
                            {"name": "bad name!", "expression": " "}]);
    let mut h = with("clientConfig", both);
    h["matchConditions"] = conditions;
    let p = problems(vec![h]);
    assert_eq!(
        p[0],
        "webhooks[0].clientConfig: Required value: exactly one of url or service is required"
    );
    assert!(p[1].starts_with("webhooks[0].matchConditions[1].expression: Invalid value: \"object.(\": compilation failed:"), "{p:?}");
    assert_eq!(
        p[2],
        "webhooks[0].matchConditions[1].name: Duplicate value: \"ok\""
    );
    assert_eq!(
        p[3],
        "webhooks[0].matchConditions[2].expression: Required value"
    );
    assert!(p[4].starts_with("webhooks[0].matchConditions[2].name: Invalid value: \"bad name!\": name part must consist of"), "{p:?}");
    assert_eq!(p.len(), 5, "{p:?}");
    let many: Vec<Value> = (0..65)
        .map(|i| json!({"name": format!("c{i}"), "expression": "true"}))
        .collect();
    assert_eq!(
        problems(vec![with("matchConditions", json!(many))]),
        ["webhooks[0].matchConditions: Too many: 65: must have at most 64 items"]
    );
}

#[test]
fn selectors_are_label_selectors() {
    let selector = json!({"matchLabels": {"a b": "c"}, "matchExpressions": [{"key": "k", "operator": "In", "values": ["-x"]}]});
    let p = problems(vec![with("namespaceSelector", selector)]);
    assert_eq!(p.len(), 2, "{p:?}");
    assert!(
        p[0].starts_with("webhooks[0].namespaceSelector.matchLabels: Invalid value: \"a b\""),
        "{p:?}"
    );
    assert!(
        p[1].starts_with(
            "webhooks[0].namespaceSelector.matchExpressions[0].values[0]: Invalid value: \"-x\""
        ),
        "{p:?}"
    );
}
