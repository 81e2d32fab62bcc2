//! The estimator's numbers for the rules kube refuses (and accepts) at
//! CRD write, by kube's and cel-go's formulas.

use serde_json::{json, Value};

use super::super::compile::compile;
use super::{estimate, StaticSizes};

/// The estimated cost of `rule` on an object of `properties`.
fn cost(properties: Value, rule: &str) -> u64 {
    let schema = json!({
        "type": "object",
        "properties": properties,
        "x-kubernetes-validations": [{"rule": rule}],
    });
    let (node, _) = compile(&schema, "openAPIV3Schema");
    let program = node.rules[0].program.as_ref().expect(rule);
    estimate(program.expression(), &StaticSizes(&node))
}

fn strings(max_length: Option<u64>) -> Value {
    let string = match max_length {
        Some(n) => json!({"type": "string", "maxLength": n}),
        None => json!({"type": "string"}),
    };
    json!({"s": string, "t": string, "p": string})
}

fn replaces(n: usize) -> String {
    format!("self.s{} != ''", ".replace('a', self.t)".repeat(n))
}

/// Each replace multiplies the longest string by the longest replacement
/// (64 × 64 …) and costs two traversals of its input: kube's formula.
#[test]
fn chained_replaces_are_priced_on_what_they_build() {
    // 2 (self.s) + 5 × 2 (self.t) + 13 + 820 + 52 429 + 3 355 444 + 214 748 365
    assert_eq!(cost(strings(Some(64)), &replaces(5)), 218_157_083);
    assert_eq!(cost(strings(Some(64)), &replaces(4)), 3_408_716);
    // Unbounded, two replaces already build 3 MiB × 3 MiB.
    assert!(cost(strings(None), &replaces(2)) > 1_000_000_000_000);
    // A replacement no longer than what it replaces keeps the size.
    assert_eq!(
        cost(
            strings(Some(64)),
            "self.s.replace('ab', 'c').replace('ab', 'c') == ''"
        ),
        2 + 13 + 13
    );
}

/// cel-go prices `matches` by the text times the pattern, whatever the
/// pattern's source (a constant, or a field of the object).
#[test]
fn matches_with_a_pattern_from_the_object_is_priced_by_both_lengths() {
    // ceil((1000 + 1) × 0.1) × ceil(1000 × 0.25) + 2 + 2 + 1 (!)
    assert_eq!(
        cost(strings(Some(1000)), "!self.s.matches(self.p)"),
        101 * 250 + 5
    );
    assert_eq!(cost(strings(Some(1000)), "self.s.matches('^a+$')"), 101 + 2);
    assert!(cost(strings(None), "self.s.matches(self.p)") > 10_000_000);
}

#[test]
fn split_join_and_concatenation_size_their_results() {
    // split: 2 traversals, then each part joined back: 64 × 64 characters.
    assert_eq!(
        cost(strings(Some(64)), "self.s.split('').join() == ''"),
        2 + 13 + 410
    );
    // '+' copies both strings.
    assert_eq!(cost(strings(Some(64)), "self.s + self.t == ''"), 2 + 2 + 13);
    // Lists concatenate at 1.
    let list = json!({"l": {"type": "array", "maxItems": 10, "items": {"type": "integer"}}});
    assert_eq!(cost(list, "size(self.l + self.l) == 20"), 2 + 2 + 1 + 1 + 1);
    assert_eq!(
        cost(
            strings(Some(64)),
            "self.s.lowerAscii().upperAscii() == self.t"
        ),
        2 + 7 + 7 + 2 + 7
    );
    assert_eq!(
        cost(strings(Some(10)), "strings.quote(self.s) == ''"),
        2 + 1
    );
}

/// `map` builds its list at 1 per element, so a bounded `map` is linear;
/// the comprehension's own calls (`@not_strictly_false`, `!`) cost 1.
#[test]
fn comprehensions_cost_their_range_times_their_step() {
    let list = json!({"l": {"type": "array", "maxItems": 100, "items": {"type": "string", "maxLength": 10}}});
    // range 2, result 1; per element: cond 1 (call) + 1 (@result); step:
    // @result 1, x 1, the comparison 1
    assert_eq!(
        cost(list.clone(), "self.l.all(x, x == 'a')"),
        2 + 1 + 100 * 5
    );
    // range 2, init [] 10, result 1, size() 1, < 1; per element the step
    // @result + [x]: 1 (add) + 1 (@result) + 10 (list) + 1 (x)
    assert_eq!(
        cost(list, "size(self.l.map(x, x)) < 5"),
        2 + 10 + 1 + 1 + 1 + 100 * 13
    );
}
