//! `x-kubernetes-validations`: a CRD version's CEL validation rules, as
//! kube's apiextensions-apiserver runs them (pkg/apiserver/schema/cel:
//! compilation.go, validation.go; the CRD-write checks of
//! pkg/apis/apiextensions/validation).
//!
//! [`ValidationRules::compile`] compiles every rule of an openAPIV3Schema
//! once, with kube's CRD-write problems (compilation, messages, reasons,
//! fieldPath, oldSelf where nothing correlates, cost);
//! [`ValidationRules::validate`] evaluates them against an object (and the
//! old one on update) within kube's runtime cost budget.
//!
//! Where this differs from kube:
//! - The `cel` crate has no type checker: a rule is refused at write for
//!   syntax errors, undeclared variables, fields the schema does not
//!   declare ([`typecheck`]) and results that cannot be a bool (literals,
//!   arithmetic); a wrong-typed call fails at run time as kube's evaluation
//!   errors do.
//! - Costs are estimated by one walk with sizes ([`cost`]), close to but
//!   not cel-go's numbers; run time "actual" cost is the same walk on the
//!   real sizes, computed before evaluating, or what the guarded calls
//!   charged inside the evaluator if more ([`crate::runtime`]).
//! - `allOf`/`anyOf`/`oneOf`/`not` rules are not compiled or run, and
//!   `date-time`/`duration` strings are strings (no timestamps).
//! - CEL problems are left out for a node whose own rules have schema
//!   problems (kube: the node's subtree).

mod compile;
pub(crate) mod convert;
pub mod cost;
mod escape;
pub use escape::is_identifier;
mod evaluate;
mod field_path;
mod messages;
mod schema;
mod typecheck;

use std::time::Instant;

use cel::Program;
use serde_json::Value;

pub(crate) use compile::{located, undeclared_in};
pub use evaluate::DeadlineExceeded;
pub use messages::{evaluation_error, ProblemKind, RuleProblem, RuleViolation, ViolationKind};

use schema::Node;

/// One `x-kubernetes-validations` entry as written.
#[derive(Debug, Clone, Default)]
pub(crate) struct Source {
    pub rule: String,
    pub message: String,
    pub message_expression: String,
    pub reason: Option<String>,
    pub field_path: String,
    pub optional_old_self: Option<bool>,
}

/// A compiled rule.
#[derive(Debug)]
pub(crate) struct Rule {
    pub source: Source,
    /// None when it failed to compile (reported at run time as kube does).
    pub program: Option<Program>,
    pub compile_error: Option<String>,
    pub message_program: Option<Program>,
    pub uses_old_self: bool,
    /// The fieldPath, as kube normalizes it (`a.b[key]`).
    pub field_path: Option<String>,
    pub kind: ViolationKind,
}

/// The rules of one CRD version's schema, compiled once.
#[derive(Debug)]
pub struct ValidationRules {
    root: Option<Node>,
}

impl ValidationRules {
    /// Compiles every rule of `open_api_v3_schema`; refuses the schema with
    /// kube's problems (field paths from `openAPIV3Schema`).
    pub fn compile(open_api_v3_schema: &Value) -> Result<ValidationRules, Vec<RuleProblem>> {
        let (rules, problems) = Self::build(open_api_v3_schema, "openAPIV3Schema");
        if problems.is_empty() {
            Ok(rules)
        } else {
            Err(problems)
        }
    }

    /// The CRD-write problems of `open_api_v3_schema`, whose field path is
    /// `at` (`spec.validation.openAPIV3Schema`,
    /// `spec.versions[0].schema.openAPIV3Schema`), in kube's order.
    pub fn problems(open_api_v3_schema: &Value, at: &str) -> Vec<RuleProblem> {
        Self::build(open_api_v3_schema, at).1
    }

    /// The rules of a schema already accepted, whatever their problems:
    /// a rule that does not compile fails every object it applies to with
    /// kube's "rule compile error", as kube serves a stored CRD.
    pub fn build(open_api_v3_schema: &Value, at: &str) -> (ValidationRules, Vec<RuleProblem>) {
        let (root, problems) = compile::compile(open_api_v3_schema, at);
        let root = root.has_rules.then_some(root);
        (ValidationRules { root }, problems)
    }

    /// The violations of `obj` (and, on update, of the transition from
    /// `old`), within kube's runtime cost budget.
    pub fn validate(&self, obj: &Value, old: Option<&Value>) -> Vec<RuleViolation> {
        self.validate_until(obj, old, None).unwrap_or_default()
    }

    /// [`validate`](Self::validate), stopped (before the next rule, or
    /// inside a guarded call) once `deadline` passes.
    pub fn validate_until(
        &self,
        obj: &Value,
        old: Option<&Value>,
        deadline: Option<Instant>,
    ) -> Result<Vec<RuleViolation>, DeadlineExceeded> {
        match &self.root {
            Some(root) => evaluate::validate(root, obj, old, deadline),
            None => Ok(Vec::new()),
        }
    }

    /// Whether the schema has no rules at all.
    pub fn is_empty(&self) -> bool {
        self.root.is_none()
    }
}

#[cfg(test)]
mod tests;
