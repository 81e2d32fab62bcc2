//! Evaluating the rules against an object, as kube's `Validator.Validate`:
//! each node's rules with `self` (and `oldSelf`) bound to its value, then
//! the properties, map values and list items below, within the request's
//! cost budget. Old values follow the new ones where kube correlates them:
//! properties of granular objects, values of granular maps, items of `map`
//! lists by their keys.

use std::sync::Arc;

use cel::objects::OptionalValue;
use cel::{Context, Value as Cel};
use serde_json::Value;

use super::convert::to_cel;
use super::cost::{self, ActualSizes, PER_CALL_LIMIT, RUNTIME_BUDGET};
use super::messages::{evaluation_error, RuleViolation, ViolationKind};
use super::schema::Node;
use super::Rule;

const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

/// kube's `celconfig.MaxEvaluatedMessageExpressionSizeBytes`.
const MAX_MESSAGE_SIZE: usize = 5 * 1024;

struct Run {
    budget: i64,
    out: Vec<RuleViolation>,
}

impl Run {
    fn exhausted(&self) -> bool {
        self.budget < 0
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

pub(crate) fn validate(root: &Node, obj: &Value, old: Option<&Value>) -> Vec<RuleViolation> {
    let mut run = Run {
        budget: RUNTIME_BUDGET,
        out: Vec::new(),
    };
    // kube's functions are registered once per request; each rule gets a
    // scope on it with its `self` and `oldSelf`.
    let functions = crate::context();
    node(root, "", obj, old, &functions, &mut run);
    run.out
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
    if run.budget <= 0 {
        run.push(path, ViolationKind::Invalid, OUT_OF_BUDGET.to_string(), n);
        run.budget = -1;
        return;
    }
    let this = to_cel(n, value);
    let previous = old.map(|o| to_cel(n, o));
    let total = cost::total_size(&this);
    for rule in &n.rules {
        if run.exhausted() {
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
        let detail = format!(
            "'operation cancelled: actual cost limit exceeded': no further validation rules will \
             be run due to call cost exceeds limit for rule: {}",
            rule_text(rule)
        );
        run.push(path, ViolationKind::Invalid, detail, n);
        run.budget = -1;
        return;
    }
    run.budget -= i64::try_from(cost).unwrap_or(i64::MAX);
    let detail = match program.execute(scope) {
        Ok(Cel::Bool(true)) => return,
        Ok(Cel::Bool(false)) => None,
        Ok(other) => Some(format!(
            "no such overload: rule evaluated to {} evaluating rule: {}",
            other.type_of(),
            rule_text(rule)
        )),
        Err(e) => Some(runtime_error(&evaluation_error(&e), rule)),
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
    run.budget -= i64::try_from(cost).unwrap_or(i64::MAX);
    match program.execute(context) {
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
