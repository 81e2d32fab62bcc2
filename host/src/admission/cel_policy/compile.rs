//! A ValidatingAdmissionPolicy and its bindings read once per change into
//! what evaluation needs: match criteria, compiled expressions, the
//! variables' names each expression uses. What cannot be used (a selector
//! or rule that does not parse, a paramKind with a bad apiVersion) is the
//! policy's or binding's configuration error, which its failurePolicy
//! decides at admission, as kube does.

use std::collections::BTreeSet;
use std::sync::Arc;

use kube_cel::cel::common::ast::{Expr, IdedExpr};
use kube_cel::cel::Program;
use serde_json::Value;

use crate::admission::config::FailurePolicy;
use crate::admission::match_conditions::{compiled, MatchConditions};
use crate::admission::matcher::{Rule, Selector};

/// One CEL expression of a policy, compiled when the policy was read.
pub struct Expression {
    pub text: String,
    pub program: Result<Arc<Program>, String>,
    /// The `variables.<name>` it reads.
    pub uses: BTreeSet<String>,
}

impl Expression {
    pub fn compile(text: &str) -> Expression {
        let program = compiled(text);
        let uses = match &program {
            Ok(p) => variables_used(p.expression()),
            Err(_) => BTreeSet::new(),
        };
        Expression {
            text: text.to_string(),
            program,
            uses,
        }
    }
}

/// The names selected on `variables` anywhere in `e`.
fn variables_used(e: &IdedExpr) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    visit(e, &mut |e| {
        if let Expr::Select(s) = &e.expr {
            if matches!(&s.operand.expr, Expr::Ident(name) if name == "variables") {
                out.insert(s.field.clone());
            }
        }
    });
    out
}

/// Calls `f` on every node of `e`.
pub fn visit(e: &IdedExpr, f: &mut impl FnMut(&IdedExpr)) {
    use kube_cel::cel::common::ast::EntryExpr;
    f(e);
    match &e.expr {
        Expr::Select(s) => visit(&s.operand, f),
        Expr::Call(c) => {
            c.target.iter().for_each(|t| visit(t, f));
            c.args.iter().for_each(|a| visit(a, f));
        }
        Expr::List(l) => l.elements.iter().for_each(|x| visit(x, f)),
        Expr::Map(m) => m.entries.iter().for_each(|entry| match &entry.expr {
            EntryExpr::MapEntry(m) => {
                visit(&m.key, f);
                visit(&m.value, f);
            }
            EntryExpr::StructField(s) => visit(&s.value, f),
        }),
        Expr::Comprehension(c) => {
            for part in [
                &c.iter_range,
                &c.accu_init,
                &c.loop_cond,
                &c.loop_step,
                &c.result,
            ] {
                visit(part, f);
            }
        }
        _ => {}
    }
}

pub struct Validation {
    pub expression: Expression,
    pub message: String,
    pub message_expression: Option<Expression>,
    /// The Status reason of a denial (kube's default: Invalid).
    pub reason: &'static str,
}

pub struct AuditAnnotation {
    pub key: String,
    pub value: Expression,
}

/// One of `resourceRules`: a webhook rule plus resource names.
pub struct NamedRule {
    pub rule: Rule,
    pub names: Vec<String>,
}

/// `matchConstraints` / a binding's `matchResources`.
pub struct MatchResources {
    pub namespace_selector: Selector,
    pub object_selector: Selector,
    pub rules: Vec<NamedRule>,
    pub excluded: Vec<NamedRule>,
}

pub struct ParamKind {
    pub group: String,
    pub version: String,
    pub kind: String,
}

pub struct Policy {
    pub name: String,
    pub failure_policy: FailurePolicy,
    pub constraints: MatchResources,
    pub param_kind: Option<ParamKind>,
    pub conditions: MatchConditions,
    pub variables: Vec<(String, Expression)>,
    pub validations: Vec<Validation>,
    pub audit_annotations: Vec<AuditAnnotation>,
    /// Why the policy cannot be used, if it cannot.
    pub error: Option<String>,
    /// Whether an expression may read `namespaceObject` (else the
    /// namespace is not read for it).
    pub reads_namespace: bool,
    /// Whether an expression may loop (a comprehension macro): its
    /// evaluation then always runs off the async workers.
    pub loops: bool,
}

pub struct ParamRef {
    pub name: String,
    pub namespace: String,
    pub selector: Option<Selector>,
    pub deny_when_missing: bool,
}

pub struct Binding {
    pub name: String,
    pub policy: String,
    pub param_ref: Option<ParamRef>,
    pub match_resources: Option<MatchResources>,
    pub deny: bool,
    pub warn: bool,
    pub audit: bool,
    pub actions: Vec<String>,
    pub error: Option<String>,
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn items<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn named_rules(list: &[Value]) -> Result<Vec<NamedRule>, String> {
    list.iter()
        .map(|r| {
            let mut rule = r.clone();
            let names = match rule.as_object_mut().and_then(|o| o.remove("resourceNames")) {
                Some(Value::Array(names)) => names
                    .iter()
                    .filter_map(|n| n.as_str().map(String::from))
                    .collect(),
                _ => Vec::new(),
            };
            let rule: Rule = serde_json::from_value(rule).map_err(|e| format!("rules: {e}"))?;
            Ok(NamedRule { rule, names })
        })
        .collect()
}

fn match_resources(v: &Value) -> Result<MatchResources, String> {
    Ok(MatchResources {
        namespace_selector: Selector::parse(v.get("namespaceSelector"))?,
        object_selector: Selector::parse(v.get("objectSelector"))?,
        rules: named_rules(items(v, "resourceRules"))?,
        excluded: named_rules(items(v, "excludeResourceRules"))?,
    })
}

fn reason(validation: &Value) -> &'static str {
    match text(validation, "reason") {
        "Forbidden" => "Forbidden",
        "RequestEntityTooLarge" => "RequestEntityTooLarge",
        "Unauthorized" => "Unauthorized",
        _ => "Invalid",
    }
}

fn validation(v: &Value) -> Validation {
    let message_expression = text(v, "messageExpression").trim();
    Validation {
        expression: Expression::compile(text(v, "expression").trim()),
        message: text(v, "message").to_string(),
        message_expression: (!message_expression.is_empty())
            .then(|| Expression::compile(message_expression)),
        reason: reason(v),
    }
}

fn param_kind(spec: &Value) -> Result<Option<ParamKind>, String> {
    let Some(kind) = spec.get("paramKind").filter(|k| k.is_object()) else {
        return Ok(None);
    };
    let api_version = text(kind, "apiVersion");
    let (group, version) = match api_version.split('/').collect::<Vec<_>>()[..] {
        [version] => ("", version),
        [group, version] => (group, version),
        _ => return Err(format!("unexpected GroupVersion string: {api_version}")),
    };
    Ok(Some(ParamKind {
        group: group.to_string(),
        version: version.to_string(),
        kind: text(kind, "kind").to_string(),
    }))
}

impl Policy {
    pub fn read(object: &Value) -> Policy {
        let spec = object.get("spec").unwrap_or(&Value::Null);
        let mut error = None;
        let constraints = spec
            .get("matchConstraints")
            .map(match_resources)
            .unwrap_or_else(|| Err("matchConstraints is required".to_string()))
            .unwrap_or_else(|e| {
                error = Some(e);
                empty_match()
            });
        let param_kind = param_kind(spec).unwrap_or_else(|e| {
            error.get_or_insert(e);
            None
        });
        let conditions = MatchConditions::parse(spec.get("matchConditions")).unwrap_or_else(|e| {
            error.get_or_insert(e);
            MatchConditions::default()
        });
        let mut policy = Policy {
            name: text(object.get("metadata").unwrap_or(&Value::Null), "name").to_string(),
            failure_policy: match text(spec, "failurePolicy") {
                "Ignore" => FailurePolicy::Ignore,
                _ => FailurePolicy::Fail,
            },
            constraints,
            param_kind,
            conditions,
            variables: items(spec, "variables")
                .iter()
                .map(|v| {
                    let name = text(v, "name").to_string();
                    (name, Expression::compile(text(v, "expression").trim()))
                })
                .collect(),
            validations: items(spec, "validations").iter().map(validation).collect(),
            audit_annotations: items(spec, "auditAnnotations")
                .iter()
                .map(|a| AuditAnnotation {
                    key: text(a, "key").to_string(),
                    value: Expression::compile(text(a, "valueExpression").trim()),
                })
                .collect(),
            error,
            reads_namespace: false,
            loops: false,
        };
        policy.reads_namespace =
            policy.any_node(|e| matches!(&e.expr, Expr::Ident(name) if name == "namespaceObject"));
        policy.loops = policy.any_node(|e| matches!(e.expr, Expr::Comprehension(_)));
        policy
    }

    /// Whether a node of any of the policy's compiled expressions is `f`.
    fn any_node(&self, f: impl Fn(&IdedExpr) -> bool) -> bool {
        let expressions =
            self.variables
                .iter()
                .map(|(_, e)| e)
                .chain(self.validations.iter().flat_map(|v| {
                    std::iter::once(&v.expression).chain(v.message_expression.as_ref())
                }))
                .chain(self.audit_annotations.iter().map(|a| &a.value));
        let programs = expressions
            .filter_map(|e| e.program.as_deref().ok())
            .chain(self.conditions.programs());
        programs.into_iter().any(|p| {
            let mut found = false;
            visit(p.expression(), &mut |e| found |= f(e));
            found
        })
    }
}

fn empty_match() -> MatchResources {
    MatchResources {
        namespace_selector: Selector::everything(),
        object_selector: Selector::everything(),
        rules: Vec::new(),
        excluded: Vec::new(),
    }
}

fn param_ref(v: &Value) -> Result<ParamRef, String> {
    Ok(ParamRef {
        name: text(v, "name").to_string(),
        namespace: text(v, "namespace").to_string(),
        selector: v
            .get("selector")
            .filter(|s| s.is_object())
            .map(|s| Selector::parse(Some(s)))
            .transpose()?,
        deny_when_missing: text(v, "parameterNotFoundAction") == "Deny",
    })
}

impl Binding {
    pub fn read(object: &Value) -> Binding {
        let spec = object.get("spec").unwrap_or(&Value::Null);
        let actions: Vec<String> = items(spec, "validationActions")
            .iter()
            .filter_map(|a| a.as_str().map(String::from))
            .collect();
        let has = |a: &str| actions.iter().any(|x| x == a);
        let mut error = None;
        let param_ref = spec
            .get("paramRef")
            .filter(|p| p.is_object())
            .map(param_ref)
            .transpose()
            .unwrap_or_else(|e| {
                error = Some(e);
                None
            });
        let match_resources = spec
            .get("matchResources")
            .filter(|m| m.is_object())
            .map(match_resources)
            .transpose()
            .unwrap_or_else(|e| {
                error.get_or_insert(e);
                None
            });
        Binding {
            name: text(object.get("metadata").unwrap_or(&Value::Null), "name").to_string(),
            policy: text(spec, "policyName").to_string(),
            param_ref,
            match_resources,
            deny: has("Deny"),
            warn: has("Warn"),
            audit: has("Audit"),
            actions,
            error,
        }
    }
}
