//! Evaluating the rules against an object, as kube's `Validator.Validate`:
//! each node's rules with `self` (and `oldSelf`) bound to its value, then
//! the properties, map values and list items below, within the request's
//! cost budget. Old values follow the new ones where kube correlates them:
//! properties of granular objects, values of granular maps, items of `map`
//! lists by their keys.

use std::sync::Arc;
use std::time::Instant;

use cel::objects::OptionalValue;
use cel::{Context, Value as Cel};
use serde_json::Value;

use super::convert::to_cel;
use super::cost::{self, ActualSizes, PER_CALL_LIMIT, RUNTIME_BUDGET};
use super::messages::{evaluation_error, RuleViolation, ViolationKind};
use super::schema::Node;
use super::Rule;
use crate::runtime::{self, Budget, COST_LIMIT_EXCEEDED};

const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

/// kube's `celconfig.MaxEvaluatedMessageExpressionSizeBytes`.
const MAX_MESSAGE_SIZE: usize = 5 * 1024;

struct Run {
    budget: i64,
    out: Vec<RuleViolation>,
    deadline: Option<Instant>,
    /// Set once the deadline passed: nothing more is evaluated.
    interrupted: bool,
}

impl Run {
    fn exhausted(&self) -> bool {
        self.budget < 0 || self.interrupted
    }

    /// Whether the deadline passed (checked before each rule).
    fn past_deadline(&mut self) -> bool {
        self.interrupted |= self.deadline.is_some_and(|d| Instant::now() >= d);
        self.interrupted
    }

    /// Runs one program within the per-call limit and the deadline,
    /// charging the request's budget what it cost: the estimate computed
    /// before evaluating, or what the evaluation charged if more.
    fn execute(
        &mut self,
        estimate: u64,
        evaluate: impl FnOnce() -> cel::ResolveResult,
    ) -> cel::ResolveResult {
        let budget = Budget {
            limit: PER_CALL_LIMIT,
            deadline: self.deadline,
        };
        let (result, spent) = runtime::metered(budget, evaluate);
        self.interrupted |= spent.interrupted;
        let cost = estimate.max(spent.cost);
        self.budget -= i64::try_from(cost).unwrap_or(i64::MAX);
        result
    }

    fn push(&mut self, field: &str, kind: ViolationKind, detail: String, node: &Node) {
        let field = if field.is_empty() { "<nil>" } else { field };
        self.out.push(RuleViolation {
            field: field.to_string(),
            kind,
            detail,
            value_type: node.type_name.clone(),
        });
    }
}

/// The evaluation passed its deadline: what it found is incomplete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeadlineExceeded;

pub(crate) fn validate(
    root: &Node,
    obj: &Value,
    old: Option<&Value>,
    deadline: Option<Instant>,
) -> Result<Vec<RuleViolation>, DeadlineExceeded> {
    let mut run = Run {
        budget: RUNTIME_BUDGET,
        out: Vec::new(),
        deadline,
        interrupted: false,
    };
    // kube's functions are registered once per request; each rule gets a
    // scope on it with its `self` and `oldSelf`.
    let functions = crate::context();
    node(root, "", obj, old, &functions, &mut run);
    match run.interrupted {
        true => Err(DeadlineExceeded),
        false => Ok(run.out),
    }
}

fn node(n: &Node, path: &str, value: &Value, old: Option<&Value>, cx: &Context, run: &mut Run) {
    if !n.has_rules || value.is_null() || run.exhausted() {
        return;
    }
    let old = old.filter(|o| !o.is_null());
    if !n.rules.is_empty() {
        expressions(n, path, value, old, cx, run);
    }
    match value {
        Value::Object(fields) => object(n, path, fields, old, cx, run),
        Value::Array(items) => list(n, path, items, old, cx, run),
        _ => {}
    }
}

fn object(
    n: &Node,
    path: &str,
    fields: &serde_json::Map<String, Value>,
    old: Option<&Value>,
    cx: &Context,
    run: &mut Run,
) {
    let old_of = |key: &str| old.filter(|_| !n.atomic_map).and_then(|o| o.get(key));
    if let Some(values) = n.additional.as_deref() {
        for (key, value) in fields {
            node(
                values,
                &format!("{path}[{key}]"),
                value,
                old_of(key),
                cx,
                run,
            );
        }
    }
    for property in &n.properties {
        if let Some(value) = fields.get(&property.name) {
            let child = if path.is_empty() {
                property.name.clone()
            } else {
                format!("{path}.{}", property.name)
            };
            node(
                &property.node,
                &child,
                value,
                old_of(&property.name),
                cx,
                run,
            );
        }
    }
}

fn list(n: &Node, path: &str, items: &[Value], old: Option<&Value>, cx: &Context, run: &mut Run) {
    let Some(item) = n.items.as_deref() else {
        return;
    };
    let old_items = old.and_then(Value::as_array);
    for (i, value) in items.iter().enumerate() {
        let previous = old_items.and_then(|o| correlated(&n.list_map_keys, value, o));
        node(item, &format!("{path}[{i}]"), value, previous, cx, run);
    }
}

/// The old item with the same map keys as `item`, in a `map` list.
fn correlated<'a>(keys: &[String], item: &Value, old: &'a [Value]) -> Option<&'a Value> {
    if keys.is_empty() {
        return None;
    }
    old.iter()
        .find(|o| keys.iter().all(|k| o.get(k) == item.get(k)))
}

fn optional(value: Option<Cel>) -> Cel {
    Cel::Opaque(Arc::new(match value {
        Some(v) => OptionalValue::of(v),
        None => OptionalValue::none(),
    }))
}

/// The rules of one node (kube's `validateExpressions`).
fn expressions(
    n: &Node,
    path: &str,
    value: &Value,
    old: Option<&Value>,
    cx: &Context,
    run: &mut Run,
) {
    if run.past_deadline() {
        return;
    }
    if run.budget <= 0 {
        run.push(path, ViolationKind::Invalid, OUT_OF_BUDGET.to_string(), n);
        run.budget = -1;
        return;
    }
    let this = to_cel(n, value);
    let previous = old.map(|o| to_cel(n, o));
    let total = cost::total_size(&this);
    for rule in &n.rules {
        if run.exhausted() || run.past_deadline() {
            return;
        }
        let optional_old_self = rule.source.optional_old_self == Some(true);
        if rule.uses_old_self && previous.is_none() && !optional_old_self {
            continue;
        }
        let old_self = match (optional_old_self, &previous) {
            (true, p) => Some(optional(p.clone())),
            (false, p) => p.clone(),
        };
        let mut scope = cx.new_inner_scope();
        scope.add_variable_from_value("self", this.clone());
        if let Some(old_self) = old_self {
            scope.add_variable_from_value("oldSelf", old_self);
        }
        one(n, rule, path, (&this, &scope), total, run);
    }
}

/// kube's `ruleErrorString`: the message, or the rule.
fn rule_text(rule: &Rule) -> &str {
    match rule.source.message.trim() {
        "" => rule.source.rule.trim(),
        message => message,
    }
}

/// One rule, with `self` and its scope.
fn one(
    n: &Node,
    rule: &Rule,
    path: &str,
    (this, scope): (&Cel, &Context),
    total: u64,
    run: &mut Run,
) {
    let Some(program) = &rule.program else {
        let detail = format!(
            "rule compile error: {}",
            rule.compile_error.as_deref().unwrap_or_default()
        );
        run.push(path, ViolationKind::Invalid, detail, n);
        return;
    };
    let sizes = ActualSizes { value: this, total };
    let cost = cost::estimate(program.expression(), &sizes);
    if i64::try_from(cost.min(PER_CALL_LIMIT)).unwrap_or(i64::MAX) > run.budget {
        run.push(path, ViolationKind::Invalid, OUT_OF_BUDGET.to_string(), n);
        run.budget = -1;
        return;
    }
    if cost > PER_CALL_LIMIT {
        return over_the_limit(n, rule, path, run);
    }
    let result = run.execute(cost, || program.execute(scope));
    if run.interrupted {
        return;
    }
    let detail = match result {
        Ok(Cel::Bool(true)) => return,
        Ok(Cel::Bool(false)) => None,
        Ok(other) => Some(format!(
            "no such overload: rule evaluated to {} evaluating rule: {}",
            other.type_of(),
            rule_text(rule)
        )),
        Err(e) => {
            let error = evaluation_error(&e);
            if error.starts_with(COST_LIMIT_EXCEEDED) {
                return over_the_limit(n, rule, path, run);
            }
            Some(runtime_error(&error, rule))
        }
    };
    if let Some(detail) = detail {
        run.push(path, ViolationKind::Invalid, detail, n);
        return;
    }
    let field = match &rule.field_path {
        Some(p) if path.is_empty() => p.clone(),
        Some(p) => format!("{path}.{p}"),
        None => path.to_string(),
    };
    let detail = message(rule, scope, &sizes, run);
    if run.exhausted() {
        run.push(&field, ViolationKind::Invalid, detail, n);
        return;
    }
    run.push(&field, rule.kind, detail, n);
}

/// kube's answer to a call past the per-call limit: it ends validation.
fn over_the_limit(n: &Node, rule: &Rule, path: &str, run: &mut Run) {
    let detail = format!(
        "'{COST_LIMIT_EXCEEDED}': no further validation rules will be run due to call cost \
         exceeds limit for rule: {}",
        rule_text(rule)
    );
    run.push(path, ViolationKind::Invalid, detail, n);
    run.budget = -1;
}

fn runtime_error(error: &str, rule: &Rule) -> String {
    if error.starts_with("no such overload") {
        format!(
            "'{error}': call arguments did not match a supported operator, function or macro \
             signature for rule: {}",
            rule_text(rule)
        )
    } else {
        format!("{error} evaluating rule: {}", rule_text(rule))
    }
}

/// The detail of a failed rule: its messageExpression's value when that
/// works, else its message or kube's default (`failed rule: …`). Running
/// out of budget here ends the request's validation, with kube's text.
fn message(rule: &Rule, context: &cel::Context, sizes: &ActualSizes, run: &mut Run) -> String {
    let fallback = || match rule.source.message.trim() {
        "" => format!("failed rule: {}", rule_text(rule)),
        message => message.to_string(),
    };
    let Some(program) = &rule.message_program else {
        return fallback();
    };
    let cost = cost::estimate(program.expression(), sizes);
    if i64::try_from(cost).unwrap_or(i64::MAX) > run.budget {
        run.budget = -1;
        return "messageExpression evaluation failed due to running out of cost budget, no \
                further validation rules will be run"
            .to_string();
    }
    match run.execute(cost, || program.execute(context)) {
        Ok(Cel::String(s)) => {
            let trimmed = s.trim();
            let fits = !trimmed.is_empty() && trimmed.len() <= MAX_MESSAGE_SIZE;
            if fits && !trimmed.contains('\n') {
                return trimmed.to_string();
            }
            fallback()
        }
        _ => fallback(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> Run {
        Run {
            budget: RUNTIME_BUDGET,
            out: Vec::new(),
            deadline: None,
            interrupted: false,
        }
    }

    /// Given an estimate that misses what a chain builds (here a
    /// deliberately small one), the evaluator itself stops the call whose
    /// result the per-call limit cannot afford, and the request's budget is
    /// charged what was spent.
    #[test]
    fn the_guard_stops_what_the_estimate_let_through() {
        let program = crate::compile(&format!("s{} != ''", ".replace('a', s)".repeat(4))).unwrap();
        let mut context = crate::context();
        context.add_variable_from_value("s", "a".repeat(64));
        let mut run = run();
        let result = run.execute(1, || program.execute(&context));
        let error = evaluation_error(&result.expect_err("stopped"));
        assert_eq!(error, COST_LIMIT_EXCEEDED);
        let spent = RUNTIME_BUDGET - run.budget;
        assert!((1..=PER_CALL_LIMIT as i64).contains(&spent), "{spent}");
    }

    #[test]
    fn a_passed_deadline_stops_validation_unfinished() {
        let schema = serde_json::json!({"type": "object", "properties": {"a": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.a > 0"}]});
        let rules = crate::ValidationRules::compile(&schema).unwrap();
        let obj = serde_json::json!({"a": 0});
        assert_eq!(
            rules.validate_until(&obj, None, None).map(|v| v.len()),
            Ok(1)
        );
        let past = Some(Instant::now());
        assert_eq!(
            rules.validate_until(&obj, None, past),
            Err(DeadlineExceeded)
        );
    }
}
