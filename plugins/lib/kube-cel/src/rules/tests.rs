//! Rules as kube's apiextensions-apiserver runs them; messages compared
//! with kube's (schema/cel/validation_test.go, apiextensions
//! validation_test.go).

use serde_json::{json, Value};

use super::{ProblemKind, ValidationRules, ViolationKind};

fn rules(schema: Value) -> ValidationRules {
    match ValidationRules::compile(&schema) {
        Ok(rules) => rules,
        Err(problems) => panic!(
            "{:?}",
            problems.iter().map(|p| p.message()).collect::<Vec<_>>()
        ),
    }
}

fn messages(rules: &ValidationRules, obj: Value, old: Option<Value>) -> Vec<String> {
    rules
        .validate(&obj, old.as_ref())
        .iter()
        .map(|v| v.message())
        .collect()
}

fn problems(schema: Value) -> Vec<String> {
    ValidationRules::problems(&schema, "spec.validation.openAPIV3Schema")
        .iter()
        .map(|p| p.message())
        .collect()
}

fn spec(properties: Value, validations: Value) -> Value {
    json!({
        "type": "object",
        "properties": {"spec": {
            "type": "object",
            "properties": properties,
            "x-kubernetes-validations": validations,
        }},
    })
}

#[test]
fn a_false_rule_reports_its_message_at_its_node_with_the_type() {
    let rules = rules(spec(
        json!({"replicas": {"type": "integer"}, "maxReplicas": {"type": "integer"}}),
        json!([
            {"rule": "self.replicas <= self.maxReplicas", "message": "must be at most maxReplicas"},
            {"rule": "self.replicas >= 0"},
        ]),
    ));
    assert!(!rules.is_empty());
    let obj = json!({"spec": {"replicas": -5, "maxReplicas": -10}});
    assert_eq!(
        messages(&rules, obj, None),
        [
            "spec: Invalid value: \"object\": must be at most maxReplicas",
            "spec: Invalid value: \"object\": failed rule: self.replicas >= 0",
        ]
    );
    assert!(messages(
        &rules,
        json!({"spec": {"replicas": 1, "maxReplicas": 3}}),
        None
    )
    .is_empty());
}

#[test]
fn list_items_and_map_values_are_checked_one_by_one_at_their_paths() {
    let rules = rules(json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {
            "items": {"type": "array", "items": {
                "type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith('a')"}],
            }},
            "labels": {"type": "object", "additionalProperties": {
                "type": "integer", "x-kubernetes-validations": [{"rule": "self < 10"}],
            }},
        }}},
    }));
    let obj = json!({"spec": {"items": ["ab", "ac", "b"], "labels": {"key": 11, "ok": 1}}});
    assert_eq!(
        messages(&rules, obj, None),
        [
            "spec.items[2]: Invalid value: \"string\": failed rule: self.startsWith('a')",
            "spec.labels[key]: Invalid value: \"integer\": failed rule: self < 10",
        ]
    );
}

#[test]
fn transition_rules_run_on_update_only_unless_old_self_is_optional() {
    let schema = |optional: bool| {
        let mut rule = json!({"rule": "self == oldSelf", "message": "is immutable"});
        if optional {
            rule = json!({
                "rule": "!oldSelf.hasValue() || self == oldSelf.value()",
                "message": "is immutable", "optionalOldSelf": true,
            });
        }
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "name": {"type": "string", "x-kubernetes-validations": [rule]},
        }}}})
    };
    let plain = rules(schema(false));
    let obj = json!({"spec": {"name": "b"}});
    assert!(messages(&plain, obj.clone(), None).is_empty());
    let old = json!({"spec": {"name": "a"}});
    assert_eq!(
        messages(&plain, obj.clone(), Some(old.clone())),
        ["spec.name: Invalid value: \"string\": is immutable"]
    );
    let optional = rules(schema(true));
    assert!(messages(&optional, obj.clone(), None).is_empty());
    assert_eq!(messages(&optional, obj, Some(old)).len(), 1);
}

#[test]
fn reasons_field_paths_and_message_expressions_shape_the_error() {
    let rules = rules(spec(
        json!({"a": {"type": "integer"}, "b": {"type": "string"}}),
        json!([
            {"rule": "self.a > 0", "reason": "FieldValueForbidden", "fieldPath": ".a",
             "message": "a must be positive"},
            {"rule": "has(self.b)", "reason": "FieldValueRequired", "message": "b is required"},
            {"rule": "self.a > 5", "reason": "FieldValueDuplicate"},
            {"rule": "self.a > 10", "messageExpression": "'a is ' + string(self.a)"},
        ]),
    ));
    assert_eq!(
        messages(&rules, json!({"spec": {"a": 0}}), None),
        [
            "spec.a: Forbidden: a must be positive",
            "spec: Required value: b is required",
            "spec: Duplicate value: \"object\"",
            "spec: Invalid value: \"object\": a is 0",
        ]
    );
    let violations = rules.validate(&json!({"spec": {"a": 0}}), None);
    assert_eq!(violations[0].kind, ViolationKind::Forbidden);
    assert_eq!(violations[0].kind.reason(), "FieldValueForbidden");
}

#[test]
fn self_is_typed_by_the_schema() {
    let rules = rules(json!({
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.metadata.name.startsWith('x')"},
            {"rule": "!has(self.metadata.labels)"},
            {"rule": "self.spec.ratio == 1.0"},
            {"rule": "self.spec.port__dash__name == 'http'"},
            {"rule": "self.spec.port == 80 || self.spec.port == 'http'"},
            {"rule": "self.kind == 'Widget'"},
        ],
        "properties": {"spec": {"type": "object", "properties": {
            "ratio": {"type": "number"},
            "port-name": {"type": "string"},
            "port": {"x-kubernetes-int-or-string": true},
        }}},
    }));
    let obj = json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "x1", "labels": {"a": "b"}},
        "spec": {"ratio": 1, "port-name": "http", "port": "http"},
    });
    assert_eq!(messages(&rules, obj, None), Vec::<String>::new());
}

#[test]
fn evaluation_errors_are_reported_with_the_rule() {
    let rules = rules(spec(
        json!({"a": {"type": "integer"}}),
        json!([{"rule": "self.a > 0"}, {"rule": "1 / (self.a - self.a) == 1", "message": "m"}]),
    ));
    assert_eq!(
        messages(&rules, json!({"spec": {"b": 1}}), None),
        [
            "spec: Invalid value: \"object\": no such key: a evaluating rule: self.a > 0",
            "spec: Invalid value: \"object\": no such key: a evaluating rule: m",
        ]
    );
}

#[test]
fn broken_rules_are_refused_at_crd_write_with_kube_paths_and_messages() {
    let schema = spec(
        json!({"a": {"type": "integer"}, "items": {"type": "array", "maxItems": 5, "items": {
            "type": "string", "maxLength": 5,
            "x-kubernetes-validations": [{"rule": "self != oldSelf"}],
        }}}),
        json!([
            {"rule": "self.a >"},
            {"rule": "  "},
            {"rule": "self.a + 1"},
            {"rule": "foo == 1"},
            {"rule": "self.a > 1", "reason": "Bad"},
            {"rule": "self.a > 1", "fieldPath": ".b"},
            {"rule": "self.a > 1", "optionalOldSelf": true},
            {"rule": "self.a > 1", "messageExpression": "1"},
        ]),
    );
    let got = problems(schema);
    let at = "spec.validation.openAPIV3Schema.properties[spec]";
    let rule = |i: usize| format!("{at}.x-kubernetes-validations[{i}]");
    let go = |r: &str, extra: &str| {
        format!(
            "apiextensions.ValidationRule{{Rule:\"{r}\", Message:\"\", MessageExpression:\"{extra}\", \
             Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", \
             OptionalOldSelf:(*bool)(nil)}}"
        )
    };
    assert_eq!(got.len(), 9, "{got:#?}");
    assert_eq!(
        got[0],
        format!("{}.rule: Required value: rule is not specified", rule(1))
    );
    assert!(got[1].starts_with(&format!(
        "{}.reason: Unsupported value: \"Bad\": supported values: \"FieldValueDuplicate\", ",
        rule(4)
    )));
    assert_eq!(
        got[2],
        format!(
            "{}.fieldPath: Invalid value: \".b\": fieldPath must be a valid path",
            rule(5)
        )
    );
    assert_eq!(
        got[3],
        format!(
            "{at}.properties[items].items.x-kubernetes-validations[0].rule: Invalid value: \
             \"self != oldSelf\": oldSelf cannot be used on the uncorrelatable portion of the \
             schema within {at}.properties[items]"
        )
    );
    let compile = format!(
        "{}.rule: Invalid value: {}: compilation failed: ERROR: <input>:1:",
        rule(0),
        go("self.a >", "")
    );
    assert!(got[4].starts_with(&compile), "{}", got[4]);
    assert_eq!(
        got[5],
        format!(
            "{}.rule: Invalid value: {}: cel expression must evaluate to a bool",
            rule(2),
            go("self.a + 1", "")
        )
    );
    assert!(
        got[6].contains("undeclared reference to 'foo' (in container '')"),
        "{}",
        got[6]
    );
    assert_eq!(
        got[7],
        format!("{}.optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule", rule(6))
    );
    assert_eq!(
        got[8],
        format!(
            "{}.messageExpression: Invalid value: {}: messageExpression must evaluate to a string",
            rule(7),
            go("self.a > 1", "1")
        )
    );
}

#[test]
fn unbounded_quadratic_rules_exceed_the_estimated_cost() {
    let schema = |bounds: bool| {
        let mut list = json!({"type": "array", "items": {"type": "string"}});
        if bounds {
            list = json!({"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 10}});
        }
        spec(
            json!({"names": list}),
            json!([{"rule": "self.names.all(x, self.names.exists(y, x == y))"}]),
        )
    };
    assert!(problems(schema(true)).is_empty());
    let got = problems(schema(false));
    let rule = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule";
    assert_eq!(
        got,
        [
            format!(
                "{rule}: Forbidden: estimated rule cost exceeds budget by factor of more than 100x \
                 (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where \
                 arrays, maps, and strings are declared)"
            ),
            format!(
                "{rule}: Forbidden: contributed to estimated rule cost total exceeding cost limit \
                 for entire OpenAPIv3 schema"
            ),
            "spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule \
             cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x \
             (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where \
             arrays, maps, and strings are declared)"
                .to_string(),
        ]
    );
}

#[test]
fn a_call_over_the_per_call_limit_stops_validation() {
    let schema = spec(
        json!({"names": {"type": "array", "items": {"type": "string"}}}),
        json!([
            {"rule": "self.names.all(x, self.names.exists(y, x == y))"},
            {"rule": "false"},
        ]),
    );
    let (rules, problems) = ValidationRules::build(&schema, "openAPIV3Schema");
    assert!(!problems.is_empty());
    let small = json!({"spec": {"names": ["a", "b"]}});
    assert_eq!(messages(&rules, small, None).len(), 1);
    let names: Vec<String> = (0..2000).map(|i| i.to_string()).collect();
    let got = messages(&rules, json!({"spec": {"names": names}}), None);
    assert_eq!(
        got,
        ["spec: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no \
          further validation rules will be run due to call cost exceeds limit for rule: \
          self.names.all(x, self.names.exists(y, x == y))"]
    );
}

#[test]
fn the_request_budget_ends_validation_once_spent() {
    let schema = json!({"type": "object", "properties": {"items": {
        "type": "array", "items": {
            "type": "object",
            "properties": {"v": {"type": "array", "items": {"type": "integer"}}},
            "x-kubernetes-validations": [{"rule": "self.v.exists(x, self.v.exists(y, true))"}],
        },
    }}});
    let (rules, _) = ValidationRules::build(&schema, "openAPIV3Schema");
    let v: Vec<i64> = (0..300).collect();
    let items: Vec<Value> = (0..100).map(|_| json!({"v": v})).collect();
    let got = rules.validate(&json!({"items": items}), None);
    let last = got.last().map(|v| v.message()).unwrap_or_default();
    assert!(
        last.ends_with(
            "Invalid value: \"object\": validation failed due to running out of cost budget, no \
             further validation rules will be run"
        ),
        "{got:?}"
    );
}

#[test]
fn schemas_without_rules_are_empty() {
    let rules = rules(json!({"type": "object", "properties": {"a": {"type": "string"}}}));
    assert!(rules.is_empty());
    assert!(rules.validate(&json!({"a": "x"}), None).is_empty());
    assert_eq!(ProblemKind::Invalid, ProblemKind::Invalid);
}

#[test]
fn fields_the_schema_does_not_declare_are_refused_at_crd_write() {
    let schema = spec(
        json!({"items": {"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"},
        }}}}),
        json!([
            {"rule": "self.items.all(i, i.name != '')"},
            {"rule": "self.items.all(i, i.nmae != '')"},
            {"rule": "has(self.replicas)"},
        ]),
    );
    let got = problems(schema);
    assert_eq!(got.len(), 2, "{got:#?}");
    assert!(
        got[0].ends_with(
            "compilation failed: ERROR: <input>:1:20: undefined field 'nmae'\n | self.items.all(i, \
             i.nmae != '')\n | ...................^"
        ),
        "{}",
        got[0]
    );
    assert!(got[1].contains("undefined field 'replicas'"), "{}", got[1]);
}

#[test]
fn compiled_rules_can_be_shared_between_request_threads() {
    fn shared<T: Send + Sync + 'static>(_: &T) {}
    let rules = rules(spec(
        json!({"a": {"type": "integer"}}),
        json!([{"rule": "self.a > 0"}]),
    ));
    shared(&rules);
    let rules = std::sync::Arc::new(rules);
    let worker = std::sync::Arc::clone(&rules);
    let found = std::thread::spawn(move || worker.validate(&json!({"spec": {"a": 0}}), None).len());
    assert_eq!(found.join().ok(), Some(1));
}

/// Booleans and numbers compare and add at a cost of 1 (no traversal),
/// comprehension accumulators are as large as their range, and an enum
/// bounds a string by its longest value: bounded quadratic rules such as
/// Gateway API's pass, as kube's estimator lets them.
#[test]
fn bounded_rules_over_booleans_counters_and_enums_are_cheap() {
    let refs = json!({"type": "array", "maxItems": 32, "items": {"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 253},
        "kind": {"type": "string", "enum": ["Service", "Gateway"]},
        "sectionName": {"type": "string", "maxLength": 253}}}});
    for rule in [
        "self.refs.all(p1, self.refs.exists_one(p2, p1.name == p2.name))",
        "self.refs.all(p1, self.refs.all(p2, (!has(p1.sectionName) || p1.sectionName == '') == (!has(p2.sectionName) || p2.sectionName == '')))",
        "self.refs.filter(r, r.kind == 'Service').size() <= 1",
        "self.refs.all(r, r.kind.startsWith('G') || r.kind == 'Service')",
    ] {
        let schema = spec(json!({"refs": refs}), json!([{"rule": rule}]));
        assert!(problems(schema).is_empty(), "{rule}");
    }
}

/// Issue 22's rule: five chained replaces on strings of maxLength 64 build
/// up to 64^6 characters; kube's estimate (≈218M) refuses the CRD.
#[test]
fn chained_replaces_exceed_the_estimated_cost() {
    let schema = spec(
        json!({"s": {"type": "string", "maxLength": 64}, "t": {"type": "string", "maxLength": 64}}),
        json!([{"rule": format!("self.s{} != ''", ".replace('a', self.t)".repeat(5))}]),
    );
    let got = problems(schema);
    let rule = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule";
    assert_eq!(
        got[0],
        format!(
            "{rule}: Forbidden: estimated rule cost exceeds budget by factor of 21.8x (try \
             simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, \
             maps, and strings are declared)"
        )
    );
    assert_eq!(got.len(), 3, "{got:#?}");
}
