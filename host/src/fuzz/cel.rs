//! CRD validation rules (kube-cel's evaluator): generated rules, built from
//! the functions that grow strings and lists or cost per character
//! (`replace`, `split`, `join`, `+`, `format`, `matches`, comprehensions),
//! over generated objects. Whether the estimate accepts the rule or not
//! (a refused one is run as a CRD stored before the check would run it),
//! the property is: no panic, the evaluation ends on its own (never by the
//! deadline), within the per-call limit enforced inside the evaluator, and
//! every value it hands back within the size bound of a guarded result.

use std::time::{Duration, Instant};

use kube_cel::rules::cost::PER_CALL_LIMIT;
use kube_cel::runtime::MAX_RESULT_CHARS;
use kube_cel::{Budget, ValidationRules};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Characters the strings are made of: letters, regex syntax, format verbs.
const CHARS: &str = "aab%sw{}()*+.\\ ";

fn text(max: usize) -> impl Strategy<Value = String> {
    let chars: Vec<char> = CHARS.chars().collect();
    proptest::collection::vec(proptest::sample::select(chars), 0..=max)
        .prop_map(|c| c.into_iter().collect())
}

/// Objects of the schema [`schema`] declares, at or under its bounds.
fn object() -> impl Strategy<Value = Value> {
    (
        text(64),
        text(64),
        text(64),
        proptest::collection::vec(text(64), 0..=16),
    )
        .prop_map(|(s, t, p, l)| json!({"spec": {"s": s, "t": t, "p": p, "l": l}}))
}

fn string_expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("self.s"),
        Just("self.t"),
        Just("self.p"),
        Just("'a'"),
        Just("''"),
        Just("'%s%s'"),
    ]
    .prop_map(String::from);
    leaf.prop_recursive(5, 48, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| format!("{a}.replace({b}, {c})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} + {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a}.split({b}).join({b})")),
            (inner.clone(), inner.clone())
                .prop_map(|(a, b)| format!("self.l.map(x, {a} + x).join({b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a}.format([{b}, {b}])")),
            inner.clone().prop_map(|a| format!("{a}.lowerAscii()")),
            inner.clone().prop_map(|a| format!("strings.quote({a})")),
        ]
    })
}

fn rule() -> impl Strategy<Value = String> {
    let s = string_expr;
    prop_oneof![
        (s(), s()).prop_map(|(a, b)| format!("{a}.matches({b})")),
        (s(), s()).prop_map(|(a, b)| format!("{a} == {b}")),
        (s(), s()).prop_map(|(a, b)| format!("{a}.contains({b})")),
        s().prop_map(|a| format!("size({a}) < 1000")),
        s().prop_map(|a| format!("{a}.split('').all(c, c != '!')")),
        s().prop_map(|a| format!("self.l.all(x, self.l.exists(y, (x + y).matches({a})))")),
        s().prop_map(|a| format!("{a}.findAll('a+').size() >= 0")),
    ]
}

/// Strings of at most 64 characters and a list of at most 16 of them.
fn schema(rule: &str) -> Value {
    let string = json!({"type": "string", "maxLength": 64});
    json!({"type": "object", "properties": {"spec": {
        "type": "object",
        "properties": {"s": string, "t": string, "p": string,
            "l": {"type": "array", "maxItems": 16, "items": string}},
        "x-kubernetes-validations": [{"rule": rule}],
    }}})
}

/// The most characters and elements of a value.
fn size(value: &kube_cel::cel::Value) -> u64 {
    use kube_cel::cel::Value as Cel;
    match value {
        Cel::String(s) => s.chars().count() as u64,
        Cel::List(l) => l.iter().map(size).sum::<u64>() + l.len() as u64,
        _ => 1,
    }
}

proptest! {
    #![proptest_config(super::config())]

    #[test]
    fn generated_rules_end_within_their_budget(rule in rule(), obj in object()) {
        let (rules, _problems) = ValidationRules::build(&schema(&rule), "openAPIV3Schema");
        let started = Instant::now();
        let far = Some(started + Duration::from_secs(60));
        prop_assert!(rules.validate_until(&obj, None, far).is_ok(), "{rule}: hit the deadline");
        prop_assert!(started.elapsed() < Duration::from_secs(20), "{rule}: {:?}", started.elapsed());

        let Ok(program) = kube_cel::compile(&rule) else { return Ok(()) };
        let mut context = kube_cel::context();
        prop_assert!(context.add_variable("self", &obj["spec"]).is_ok());
        let (result, spent) = kube_cel::metered(Budget::per_call(), || program.execute(&context));
        prop_assert!(spent.exceeded || spent.cost <= PER_CALL_LIMIT, "{rule}: {spent:?}");
        if let Ok(value) = result {
            prop_assert!(size(&value) <= MAX_RESULT_CHARS, "{rule}");
        }
    }
}
