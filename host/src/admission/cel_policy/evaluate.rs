//! One policy evaluated for one binding and one param, as kube's
//! `validator.Validate`: the match conditions, then every validation (its
//! message from `messageExpression`, `message` or the expression), then
//! the audit annotations. Variables are evaluated in order before them; an
//! expression that reads a variable whose evaluation failed fails with that
//! error, as kube's lazily evaluated variables do. Every expression runs
//! within kube's per-call cost limit and the request's deadline, and the
//! whole evaluation within kube's runtime budget.

use std::collections::HashMap;

use kube_cel::cel::{Context, Value};

use super::compile::{Expression, Policy};
use crate::admission::match_conditions::Outcome;

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
        let (result, spent) = kube_cel::metered(budget, || program.execute(&self.context));
        self.spent = self.spent.saturating_add(spent.cost);
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
    let mut context = kube_cel::context();
    context.add_variable_from_value("object", input.object.clone());
    context.add_variable_from_value("oldObject", input.old_object.clone());
    context.add_variable_from_value("request", input.request.clone());
    context.add_variable_from_value("namespaceObject", input.namespace_object.clone());
    context.add_variable_from_value("params", params.clone());
    let mut runner = Runner {
        context,
        failed_variables: HashMap::new(),
        spent: 0,
    };
    bind_variables(policy, &mut runner);
    match policy.conditions.evaluate_in(&runner.context) {
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
                message: message(&mut runner, validation),
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
        .filter_map(|a| annotation(&mut runner, &a.key, &a.value))
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
