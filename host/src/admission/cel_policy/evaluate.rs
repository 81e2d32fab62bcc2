//! One policy evaluated for one binding and one param, as kube's
//! `validator.Validate`: the match conditions, then every validation (its
//! message from `messageExpression`, `message` or the expression), then
//! the audit annotations. Variables are evaluated in order before them; an
//! expression that reads a variable whose evaluation failed fails with that
//! error, as kube's lazily evaluated variables do. Every expression runs
//! within kube's per-call cost limit and the request's deadline, and the
//! whole evaluation within kube's runtime budget.

use std::collections::HashMap;

use std::sync::Arc;

use kube_cel::authz::{Authorize, ResourceCheck};
use kube_cel::cel::{Context, Value};

use super::compile::{Expression, Policy};
pub use crate::admission::match_conditions::Outcome;

/// kube's `RuntimeCELCostBudget` for one policy, binding and param.
const RUNTIME_BUDGET: u64 = 10_000_000;
/// kube's `MaxEvaluatedMessageExpressionSizeBytes`.
const MAX_MESSAGE_BYTES: usize = 5 * 1024;
const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

/// The variables every expression sees (besides `params` and `variables`).
pub struct Input {
    pub object: Value,
    pub old_object: Value,
    pub request: Value,
    pub namespace_object: Value,
    /// What `authorizer` asks, and `authorizer.requestResource`.
    pub authorizer: Option<(Arc<dyn Authorize>, ResourceCheck)>,
}

#[derive(Debug, PartialEq)]
pub enum Decision {
    Admit,
    Deny {
        message: String,
        reason: &'static str,
    },
    /// The expression could not be evaluated (its failurePolicy decides).
    Error(String),
}

#[derive(Debug, PartialEq)]
pub enum Annotation {
    Publish { key: String, value: String },
    Error(String),
}

#[derive(Debug, PartialEq)]
pub enum Evaluation {
    /// A match condition was false.
    Skipped,
    /// The policy could not be evaluated as a whole (a match condition's
    /// error, the budget).
    Failed(String),
    Done {
        decisions: Vec<Decision>,
        annotations: Vec<Annotation>,
    },
}

/// Runs expressions in one context, counting what they spend.
struct Runner<'c> {
    context: Context<'c, 'static>,
    failed_variables: HashMap<String, String>,
    spent: u64,
}

impl Runner<'_> {
    /// The expression's value, or kube's error for it.
    fn run(&mut self, e: &Expression) -> Result<Value, String> {
        let program = e
            .program
            .as_ref()
            .map_err(|why| format!("compilation error: {why}"))?;
        if let Some(why) = e.uses.iter().find_map(|v| self.failed_variables.get(v)) {
            return Err(format!("expression '{}' resulted in error: {why}", e.text));
        }
        let budget = kube_cel::Budget {
            deadline: crate::cpu::deadline(),
            ..kube_cel::Budget::per_call()
        };
        let (result, spent) = kube_cel::metered(budget, || match &e.literals {
            Some(rewritten) => rewritten.execute(&self.context),
            None => program.execute(&self.context),
        });
        self.spent = self.spent.saturating_add(spent.cost);
        // A result reached past the limit (an error absorbed by `||` or
        // `&&` after it) does not count: the evaluation was over budget.
        let result = match spent.exceeded || spent.interrupted {
            true if result.is_ok() => Err(kube_cel::cel::ExecutionError::function_error(
                "evaluation",
                if spent.exceeded {
                    kube_cel::runtime::COST_LIMIT_EXCEEDED
                } else {
                    kube_cel::runtime::INTERRUPTED
                },
            )),
            _ => result,
        };
        result.map_err(|err| {
            format!(
                "expression '{}' resulted in error: {}",
                e.text,
                kube_cel::evaluation_error(&err)
            )
        })
    }

    fn over_budget(&self) -> bool {
        self.spent > RUNTIME_BUDGET
    }
}

/// Evaluates `policy` against `input` with `params` (null without).
pub fn evaluate(policy: &Policy, input: &Input, params: &Value) -> Evaluation {
    with_runner(policy, input, params, |runner| validate(policy, runner))
}

/// Runs `f` with a runner whose context has `input`, `params` and the
/// policy's variables bound.
fn with_runner<T>(
    policy: &Policy,
    input: &Input,
    params: &Value,
    f: impl FnOnce(&mut Runner<'_>) -> T,
) -> T {
    let by = input.authorizer.as_ref().map(|(by, _)| by.clone());
    kube_cel::authz::with_authorizer(by, || {
        kube_cel::with_scope(|mut context| {
            context.add_variable_from_value("object", input.object.clone());
            context.add_variable_from_value("oldObject", input.old_object.clone());
            context.add_variable_from_value("request", input.request.clone());
            context.add_variable_from_value("namespaceObject", input.namespace_object.clone());
            context.add_variable_from_value("params", params.clone());
            if let Some((_, request)) = &input.authorizer {
                context.add_variable_from_value(
                    "authorizer",
                    kube_cel::authz::variable(request.clone()),
                );
            }
            let mut runner = Runner {
                context,
                failed_variables: HashMap::new(),
                spent: 0,
            };
            bind_variables(policy, &mut runner);
            f(&mut runner)
        })
    })
}

/// Whether a MutatingAdmissionPolicy's match conditions take the request.
pub fn conditions(policy: &Policy, input: &Input, params: &Value) -> Outcome {
    with_runner(policy, input, params, |runner| {
        policy.conditions.evaluate_for_policy(&runner.context)
    })
}

/// The value of a MutatingAdmissionPolicy's mutation `index` (an
/// apply configuration, or JSON Patch operations), or kube's error.
pub fn mutation(
    policy: &Policy,
    index: usize,
    input: &Input,
    params: &Value,
) -> Result<Value, String> {
    let mutation = policy
        .mutations
        .get(index)
        .ok_or_else(|| format!("policy has no mutation {index}"))?;
    with_runner(policy, input, params, |runner| {
        runner.run(&mutation.expression)
    })
}

fn validate(policy: &Policy, runner: &mut Runner<'_>) -> Evaluation {
    match policy.conditions.evaluate_for_policy(&runner.context) {
        Outcome::Skip => return Evaluation::Skipped,
        Outcome::Error(why) => return Evaluation::Failed(why),
        Outcome::Call => {}
    }
    let mut decisions = Vec::with_capacity(policy.validations.len());
    for validation in &policy.validations {
        let decision = match runner.run(&validation.expression) {
            Err(why) => Decision::Error(why),
            Ok(Value::Bool(true)) => Decision::Admit,
            Ok(_) => Decision::Deny {
                message: message(runner, validation),
                reason: validation.reason,
            },
        };
        if runner.over_budget() {
            return Evaluation::Failed(OUT_OF_BUDGET.to_string());
        }
        decisions.push(decision);
    }
    let annotations = policy
        .audit_annotations
        .iter()
        .filter_map(|a| annotation(runner, &a.key, &a.value))
        .collect();
    if runner.over_budget() {
        return Evaluation::Failed(OUT_OF_BUDGET.to_string());
    }
    Evaluation::Done {
        decisions,
        annotations,
    }
}

/// Evaluates the variables in order into `variables`; a failed one is
/// left out and remembered.
fn bind_variables(policy: &Policy, runner: &mut Runner<'_>) {
    let mut values: HashMap<String, Value> = HashMap::new();
    for (name, expression) in &policy.variables {
        runner
            .context
            .add_variable_from_value("variables", values.clone());
        match runner.run(expression) {
            Ok(v) => {
                values.insert(name.clone(), v);
            }
            Err(why) => {
                runner.failed_variables.insert(name.clone(), why);
            }
        }
    }
    runner.context.add_variable_from_value("variables", values);
}

/// A denial's message: `messageExpression`'s string (trimmed, one line,
/// within kube's size), else `message`, else the failed expression.
fn message(runner: &mut Runner<'_>, v: &super::compile::Validation) -> String {
    let evaluated = v
        .message_expression
        .as_ref()
        .and_then(|e| match runner.run(e) {
            Ok(Value::String(s)) => Some(s.trim().to_string()),
            Ok(_) => None,
            Err(why) => {
                tracing::debug!(error = %why, "error while evaluating messageExpression");
                None
            }
        });
    let evaluated = evaluated.filter(|m| m.len() <= MAX_MESSAGE_BYTES && !m.contains('\n'));
    match evaluated.filter(|m| !m.is_empty()) {
        Some(m) => m,
        None if !v.message.trim().is_empty() => v.message.trim().to_string(),
        None => format!("failed expression: {}", v.expression.text.trim()),
    }
}

/// kube's longest audit annotation value.
const MAX_ANNOTATION_BYTES: usize = 10 * 1024;

fn annotation(runner: &mut Runner<'_>, key: &str, value: &Expression) -> Option<Annotation> {
    match runner.run(value) {
        Err(why) => Some(Annotation::Error(why)),
        Ok(Value::Null) => None,
        Ok(Value::String(s)) => {
            let mut v = s.trim().to_string();
            if v.is_empty() {
                return None;
            }
            if v.len() > MAX_ANNOTATION_BYTES {
                let mut end = MAX_ANNOTATION_BYTES;
                while !v.is_char_boundary(end) {
                    end -= 1;
                }
                v.truncate(end);
            }
            Some(Annotation::Publish {
                key: key.to_string(),
                value: v,
            })
        }
        Ok(other) => Some(Annotation::Error(format!(
            "valueExpression '{}' resulted in unsupported return type: {}. Return type must be either string or null.",
            value.text,
            type_name(&other)
        ))),
    }
}

/// cel-go's name of a value's type.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::List(_) => "list",
        Value::Map(_) => "map",
        Value::Int(_) => "int",
        Value::UInt(_) => "uint",
        Value::Float(_) => "double",
        Value::String(_) => "string",
        Value::Bytes(_) => "bytes",
        Value::Bool(_) => "bool",
        Value::Null => "null_type",
        _ => "dyn",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::cel_policy::cel_value;
    use crate::admission::cel_policy::compile::Policy;
    use serde_json::json;

    fn policy(spec: serde_json::Value) -> Policy {
        Policy::read(&json!({"metadata": {"name": "p"}, "spec": spec}))
    }

    fn input(object: serde_json::Value) -> Input {
        Input {
            object: cel_value(Some(&object)),
            old_object: Value::Null,
            request: cel_value(Some(&json!({"operation": "CREATE"}))),
            namespace_object: Value::Null,
            authorizer: None,
        }
    }

    fn decisions(e: Evaluation) -> Vec<Decision> {
        match e {
            Evaluation::Done { decisions, .. } => decisions,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn variables_are_integers_and_chain() {
        let p = policy(json!({
            "variables": [
                {"name": "replicas", "expression": "object.spec.replicas"},
                {"name": "odd", "expression": "variables.replicas % 2 == 1"}],
            "validations": [{"expression": "variables.replicas > 1"}, {"expression": "variables.odd"}]}));
        let run = |replicas: i64| {
            decisions(evaluate(
                &p,
                &input(json!({"spec": {"replicas": replicas}})),
                &Value::Null,
            ))
        };
        assert_eq!(run(3), [Decision::Admit, Decision::Admit]);
        let denied = run(2);
        assert_eq!(denied[0], Decision::Admit);
        assert!(
            matches!(&denied[1], Decision::Deny { message, reason: "Invalid" } if message == "failed expression: variables.odd"),
            "{denied:?}"
        );
    }

    #[test]
    fn a_failed_variable_fails_only_the_expressions_that_read_it() {
        let p = policy(json!({
            "variables": [{"name": "missing", "expression": "object.spec.nothing"}],
            "validations": [{"expression": "variables.missing == 1"}, {"expression": "true"}]}));
        let d = decisions(evaluate(&p, &input(json!({"spec": {}})), &Value::Null));
        assert_eq!(
            d[0],
            Decision::Error(
                "expression 'variables.missing == 1' resulted in error: expression 'object.spec.nothing' resulted in error: no such key: nothing"
                    .into()
            )
        );
        assert_eq!(d[1], Decision::Admit);
    }

    #[test]
    fn messages_come_from_the_expression_then_the_message() {
        let p = policy(json!({"validations": [
            {"expression": "false", "messageExpression": "'too many: ' + string(object.n)", "message": "fallback"},
            {"expression": "false", "messageExpression": "'two\\nlines'", "message": "fallback", "reason": "Forbidden"},
            {"expression": "false", "messageExpression": "object.missing"}]}));
        let d = decisions(evaluate(&p, &input(json!({"n": 7})), &Value::Null));
        let messages: Vec<(&str, &str)> = d
            .iter()
            .map(|d| match d {
                Decision::Deny { message, reason } => (message.as_str(), *reason),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            messages,
            [
                ("too many: 7", "Invalid"),
                ("fallback", "Forbidden"),
                ("failed expression: false", "Invalid")
            ]
        );
    }

    #[test]
    fn params_match_conditions_and_audit_annotations() {
        let p = policy(json!({
            "matchConditions": [{"name": "labelled", "expression": "has(object.metadata.labels)"}],
            "validations": [{"expression": "object.n <= params.max"}],
            "auditAnnotations": [
                {"key": "n", "valueExpression": "'n is ' + string(object.n)"},
                {"key": "none", "valueExpression": "null"},
                {"key": "bad", "valueExpression": "object.n"}]}));
        let params = cel_value(Some(&json!({"max": 3})));
        assert_eq!(
            evaluate(&p, &input(json!({"metadata": {}, "n": 1})), &params),
            Evaluation::Skipped
        );
        let Evaluation::Done {
            decisions,
            annotations,
        } = evaluate(
            &p,
            &input(json!({"metadata": {"labels": {}}, "n": 5})),
            &params,
        )
        else {
            panic!()
        };
        assert!(matches!(decisions[0], Decision::Deny { .. }));
        assert_eq!(
            annotations,
            [
                Annotation::Publish { key: "n".into(), value: "n is 5".into() },
                Annotation::Error("valueExpression 'object.n' resulted in unsupported return type: int. Return type must be either string or null.".into()),
            ]
        );
    }

    #[test]
    fn a_quadratic_expression_over_a_large_list_is_stopped_at_the_limit() {
        let p = policy(json!({"validations": [
            {"expression": "object.items.all(x, object.items.exists(y, y == x))"}]}));
        let items: Vec<i64> = (0..3000).collect();
        let started = std::time::Instant::now();
        let d = decisions(evaluate(&p, &input(json!({"items": items})), &Value::Null));
        assert!(
            matches!(&d[0], Decision::Error(why) if why.contains("actual cost limit exceeded")),
            "{d:?}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }

    #[test]
    fn a_policy_knows_whether_it_loops_or_reads_the_namespace() {
        let plain = policy(json!({"validations": [{"expression": "object.n > 1"}]}));
        assert!(!plain.loops && !plain.reads_namespace);
        let p = policy(json!({
            "matchConditions": [{"name": "c", "expression": "namespaceObject.metadata.name != ''"}],
            "validations": [{"expression": "object.items.all(x, x > 0)"}]}));
        assert!(p.loops && p.reads_namespace);
    }
}
