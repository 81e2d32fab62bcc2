//! Compiling a schema's rules once, with kube's CRD-write problems
//! (apiextensions validation.go's x-kubernetes-validations checks and
//! schema/cel compilation.go).

use std::collections::HashSet;

use cel::common::ast::{Expr, IdedExpr};
use cel::Program;
use serde_json::Value;

use super::cost::{self, StaticSizes, STATIC_CRD_LIMIT, STATIC_EXPRESSION_LIMIT};
use super::messages::{ProblemKind, RuleProblem, ViolationKind};
use super::schema::{Node, Place};
use super::{field_path, typecheck, Rule, Source};
use kube_rules::gofmt::quote;

/// kube's supported reasons, as `sets.List` sorts them.
const REASONS: [&str; 4] = [
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// The problems, kept as kube orders them: schema problems first, then
/// CEL problems, then the total cost.
#[derive(Default)]
struct Problems {
    schema: Vec<RuleProblem>,
    cel: Vec<RuleProblem>,
    total: u64,
    /// The rules costing at least 1% of the total limit, most first (4).
    most_expensive: Vec<(String, u64)>,
}

impl Problems {
    fn observe(&mut self, path: String, cost: u64) {
        self.total = self.total.saturating_add(cost);
        if cost < STATIC_CRD_LIMIT / 100 {
            return;
        }
        self.most_expensive.push((path, cost));
        self.most_expensive.sort_by_key(|e| std::cmp::Reverse(e.1));
        self.most_expensive.truncate(4);
    }

    fn into_list(mut self, at: &str) -> Vec<RuleProblem> {
        let mut list = self.schema;
        list.append(&mut self.cel);
        if self.total > STATIC_CRD_LIMIT {
            for (path, _) in self.most_expensive {
                let detail = "contributed to estimated rule cost total exceeding cost limit for \
                              entire OpenAPIv3 schema";
                list.push(forbidden(path, detail.to_string()));
            }
            let name = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 \
                        schema";
            let detail = cost::exceeds_message(name, self.total, STATIC_CRD_LIMIT);
            list.push(forbidden(at.to_string(), detail));
        }
        list
    }
}

fn forbidden(field: String, detail: String) -> RuleProblem {
    RuleProblem::new(field, ProblemKind::Forbidden, String::new(), detail)
}

/// The tree of `schema` with its rules compiled, and the problems.
pub(crate) fn compile(schema: &Value, at: &str) -> (Node, Vec<RuleProblem>) {
    let mut problems = Problems::default();
    let place = Place {
        path: at.to_string(),
        cardinality: 1,
        uncorrelatable: None,
    };
    let mut compiler =
        |schema: &Value, node: &Node, place: &Place| rules(schema, node, place, &mut problems);
    let node = Node::build(schema, true, &place, &mut compiler);
    (node, problems.into_list(at))
}

fn text(entry: &Value, key: &str) -> String {
    entry
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn source(entry: &Value) -> Source {
    Source {
        rule: text(entry, "rule"),
        message: text(entry, "message"),
        message_expression: text(entry, "messageExpression"),
        reason: entry
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_string),
        field_path: text(entry, "fieldPath"),
        optional_old_self: entry.get("optionalOldSelf").and_then(Value::as_bool),
    }
}

/// The rule as kube prints an `apiextensions.ValidationRule` with `%#v`.
fn go_value(s: &Source) -> String {
    let reason = match &s.reason {
        Some(_) => "(*apiextensions.FieldValueErrorReason)(0xc000000000)",
        None => "(*apiextensions.FieldValueErrorReason)(nil)",
    };
    let optional = match s.optional_old_self {
        Some(_) => "(*bool)(0xc000000000)",
        None => "(*bool)(nil)",
    };
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{reason}, \
         FieldPath:{}, OptionalOldSelf:{optional}}}",
        quote(&s.rule),
        quote(&s.message),
        quote(&s.message_expression),
        quote(&s.field_path),
    )
}

fn has_newlines(s: &str) -> bool {
    s.contains(['\n', '\r'])
}

/// The rules of one schema node.
fn rules(schema: &Value, node: &Node, place: &Place, problems: &mut Problems) -> Vec<Rule> {
    let Some(entries) = schema
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let at = format!("{}.x-kubernetes-validations[{i}]", place.path);
        let s = source(entry);
        let before = problems.schema.len();
        schema_problems(&s, node, &at, &mut problems.schema);
        let clean = problems.schema.len() == before;
        let rule = compile_rule(s, node);
        if clean && !rule.source.rule.trim().is_empty() {
            cel_problems(&rule, node, place, &at, problems);
        }
        out.push(rule);
    }
    out
}

/// The checks of `ValidateCustomResourceDefinitionOpenAPISchema` on one
/// rule, before any CEL.
fn schema_problems(s: &Source, node: &Node, at: &str, out: &mut Vec<RuleProblem>) {
    let invalid = |field: &str, value: &str, detail: &str| {
        RuleProblem::new(
            format!("{at}.{field}"),
            ProblemKind::Invalid,
            quote(value),
            detail.into(),
        )
    };
    let required = |field: &str, detail: &str| {
        RuleProblem::new(
            format!("{at}.{field}"),
            ProblemKind::Required,
            String::new(),
            detail.into(),
        )
    };
    let message = s.message.trim();
    if s.rule.trim().is_empty() {
        out.push(required("rule", "rule is not specified"));
    } else if !s.message.is_empty() && message.is_empty() {
        out.push(invalid(
            "message",
            &s.message,
            "message must be non-empty if specified",
        ));
    } else if has_newlines(message) {
        out.push(invalid(
            "message",
            &s.message,
            "message must not contain line breaks",
        ));
    } else if has_newlines(s.rule.trim()) && message.is_empty() {
        out.push(required(
            "message",
            "message must be specified if rule contains line breaks",
        ));
    }
    if !s.message_expression.is_empty() && s.message_expression.trim().is_empty() {
        let detail = "messageExpression must be non-empty if specified";
        out.push(required("messageExpression", detail));
    }
    if let Some(reason) = s.reason.as_deref().filter(|r| !REASONS.contains(r)) {
        let supported: Vec<String> = REASONS.iter().map(|r| quote(r)).collect();
        let detail = format!("supported values: {}", supported.join(", "));
        out.push(RuleProblem::new(
            format!("{at}.reason"),
            ProblemKind::NotSupported,
            quote(reason),
            detail,
        ));
    }
    let path = &s.field_path;
    if !path.is_empty() && path.trim().is_empty() {
        out.push(invalid(
            "fieldPath",
            path,
            "fieldPath must be non-empty if specified",
        ));
    }
    if has_newlines(path) {
        out.push(invalid(
            "fieldPath",
            path,
            "fieldPath must not contain line breaks",
        ));
    }
    if !path.is_empty() && field_path::normalize(path, node).is_none() {
        out.push(invalid("fieldPath", path, "fieldPath must be a valid path"));
    }
}

fn compile_rule(s: Source, node: &Node) -> Rule {
    let checked = program(&s.rule, true).and_then(|p| typed(p, &s.rule, node));
    let (compiled, compile_error) = match checked {
        Ok(p) => (Some(p), None),
        Err(e) => (None, Some(e)),
    };
    let uses_old_self = compiled
        .as_ref()
        .is_some_and(|p| p.references().has_variable("oldSelf"));
    let message_program = match s.message_expression.trim() {
        "" => None,
        text => program(text, false).and_then(|p| typed(p, text, node)).ok(),
    };
    let field_path = match s.field_path.trim() {
        "" => None,
        path => field_path::normalize(path, node),
    };
    let kind = match s.reason.as_deref() {
        Some("FieldValueForbidden") => ViolationKind::Forbidden,
        Some("FieldValueRequired") => ViolationKind::Required,
        Some("FieldValueDuplicate") => ViolationKind::Duplicate,
        _ => ViolationKind::Invalid,
    };
    Rule {
        source: s,
        program: compiled,
        compile_error,
        message_program,
        uses_old_self,
        field_path,
        kind,
    }
}

/// `program`, if the fields it selects exist.
fn typed(program: Program, text: &str, node: &Node) -> Result<Program, String> {
    match typecheck::undefined_field(program.expression(), node) {
        None => Ok(program),
        Some((id, field)) => {
            let at = program
                .source_info()
                .offset_for(id)
                .map_or(0, |(start, _)| start);
            let error = located(text, at as usize, &format!("undefined field '{field}'"));
            Err(format!("compilation failed: {error}"))
        }
    }
}

/// cel-go's `ERROR: <input>:line:column: message` with the line and a
/// pointer under the column.
pub(crate) fn located(text: &str, start: usize, message: &str) -> String {
    let before = text.get(..start).unwrap_or_default();
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    let snippet = text.lines().nth(line - 1).unwrap_or(text);
    let pointer = format!("{:.>column$}", "^");
    format!("ERROR: <input>:{line}:{column}: {message}\n | {snippet}\n | {pointer}")
}

/// Compiles `text` in kube's environment: `self` and `oldSelf` only; a
/// rule must be able to be a bool, a messageExpression a string.
fn program(text: &str, rule: bool) -> Result<Program, String> {
    let program = crate::compile(text).map_err(|e| format!("compilation failed: {e}"))?;
    if let Some(error) = undeclared(&program, text) {
        return Err(format!("compilation failed: {error}"));
    }
    let root = &program.expression().expr;
    if rule && !can_be(root, Kind::Bool) {
        return Err("cel expression must evaluate to a bool".to_string());
    }
    if !rule && !can_be(root, Kind::String) {
        return Err("must evaluate to a string".to_string());
    }
    Ok(program)
}

#[derive(PartialEq)]
enum Kind {
    Bool,
    String,
}

/// Whether `expr` may have a value of `kind` (false for literals and
/// operators that cannot).
fn can_be(expr: &Expr, kind: Kind) -> bool {
    use cel::common::ast::LiteralValue as L;
    match expr {
        Expr::Literal(L::Boolean(_)) => kind == Kind::Bool,
        Expr::Literal(L::String(_)) => kind == Kind::String,
        Expr::Literal(_) | Expr::List(_) | Expr::Map(_) => false,
        Expr::Call(call) => {
            let arithmetic = ["_-_", "_*_", "_/_", "_%_", "-_", "size"];
            let boolean = [
                "_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_", "_&&_", "_||_", "!_", "@in",
            ];
            let name = call.func_name.as_str();
            let not_bool = kind == Kind::Bool && name == "_+_";
            !(arithmetic.contains(&name)
                || not_bool
                || kind == Kind::String && boolean.contains(&name))
        }
        _ => true,
    }
}

/// cel-go's error for the first variable other than `self`, `oldSelf`
/// and comprehension variables.
fn undeclared(program: &Program, text: &str) -> Option<String> {
    undeclared_in(program, text, ["self", "oldSelf"].map(String::from).into())
}

/// cel-go's error for the first variable not in `bound` (nor a
/// comprehension's).
pub(crate) fn undeclared_in(
    program: &Program,
    text: &str,
    mut bound: HashSet<String>,
) -> Option<String> {
    let (id, name) = first_unbound(program.expression(), &mut bound)?;
    let start = program
        .source_info()
        .offset_for(id)
        .map_or(0, |(start, _)| start);
    let message = format!("undeclared reference to '{name}' (in container '')");
    Some(located(text, start as usize, &message))
}

fn first_unbound(e: &IdedExpr, bound: &mut HashSet<String>) -> Option<(u64, String)> {
    use cel::common::ast::EntryExpr;
    match &e.expr {
        Expr::Ident(name) if !bound.contains(name) && !name.starts_with('@') => {
            Some((e.id, name.clone()))
        }
        Expr::Select(s) => first_unbound(&s.operand, bound),
        Expr::Call(call) => {
            // `format.dns1123Label()`, `sets.contains(…)`, `strings.quote(…)`,
            // `ip.isCanonical(…)`: a namespace.
            let namespaced = matches!(
                call.target.as_deref().map(|t| &t.expr),
                Some(Expr::Ident(ns)) if ["format", "sets", "optional", "strings", "ip", "jsonpatch"].contains(&ns.as_str())
            );
            let target = call.target.as_deref().filter(|_| !namespaced);
            target
                .into_iter()
                .chain(&call.args)
                .find_map(|a| first_unbound(a, bound))
        }
        Expr::List(l) => l.elements.iter().find_map(|x| first_unbound(x, bound)),
        Expr::Map(m) => m.entries.iter().find_map(|entry| match &entry.expr {
            EntryExpr::MapEntry(m) => {
                first_unbound(&m.key, bound).or_else(|| first_unbound(&m.value, bound))
            }
            EntryExpr::StructField(f) => first_unbound(&f.value, bound),
        }),
        Expr::Struct(s) => s.entries.iter().find_map(|entry| match &entry.expr {
            EntryExpr::StructField(f) => first_unbound(&f.value, bound),
            EntryExpr::MapEntry(m) => first_unbound(&m.value, bound),
        }),
        Expr::Comprehension(c) => {
            let found = first_unbound(&c.iter_range, bound);
            if found.is_some() {
                return found;
            }
            let mut inner = bound.clone();
            inner.insert(c.iter_var.clone());
            inner.extend(c.iter_var2.clone());
            inner.insert(c.accu_var.clone());
            [&c.accu_init, &c.loop_cond, &c.loop_step, &c.result]
                .into_iter()
                .find_map(|x| first_unbound(x, &mut inner))
        }
        _ => None,
    }
}

/// The CEL checks of one rule: cost, compilation, messageExpression,
/// oldSelf where nothing correlates, optionalOldSelf without oldSelf.
fn cel_problems(rule: &Rule, node: &Node, place: &Place, at: &str, problems: &mut Problems) {
    let s = &rule.source;
    let invalid = |field: &str, value: String, detail: String| {
        RuleProblem::new(format!("{at}.{field}"), ProblemKind::Invalid, value, detail)
    };
    let sizes = StaticSizes(node);
    if let Some(program) = &rule.program {
        let estimated = cost::estimate(program.expression(), &sizes);
        let total = estimated.saturating_mul(place.cardinality);
        if total > STATIC_EXPRESSION_LIMIT {
            let detail =
                cost::exceeds_message("estimated rule cost", total, STATIC_EXPRESSION_LIMIT);
            problems.cel.push(forbidden(format!("{at}.rule"), detail));
        }
        problems.observe(format!("{at}.rule"), total);
    }
    if let Some(error) = &rule.compile_error {
        problems
            .cel
            .push(invalid("rule", go_value(s), error.clone()));
    }
    let message_expression = s.message_expression.trim();
    if !message_expression.is_empty() {
        match program(message_expression, false).and_then(|p| typed(p, message_expression, node)) {
            Err(e) => {
                let detail = format!("messageExpression {e}");
                problems
                    .cel
                    .push(invalid("messageExpression", go_value(s), detail));
            }
            Ok(p) => {
                let estimated = cost::estimate(p.expression(), &sizes);
                if estimated > STATIC_EXPRESSION_LIMIT {
                    let name = "estimated messageExpression cost";
                    let detail = cost::exceeds_message(name, estimated, STATIC_EXPRESSION_LIMIT);
                    problems
                        .cel
                        .push(forbidden(format!("{at}.messageExpression"), detail));
                }
                problems.observe(format!("{at}.messageExpression"), estimated);
            }
        }
    }
    if rule.uses_old_self {
        if let Some(path) = &place.uncorrelatable {
            let detail = format!(
                "oldSelf cannot be used on the uncorrelatable portion of the schema within {path}"
            );
            problems.cel.push(invalid("rule", quote(&s.rule), detail));
        }
    } else if let Some(optional) = s.optional_old_self {
        let detail = "may not be set if oldSelf is not used in rule".to_string();
        problems
            .cel
            .push(invalid("optionalOldSelf", optional.to_string(), detail));
    }
}
