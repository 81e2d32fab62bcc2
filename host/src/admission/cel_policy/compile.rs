//! An admission policy (Validating or Mutating) and its bindings read once
//! per change into what evaluation needs: match criteria, compiled
//! expressions, the variables' names each expression uses. What cannot be used (a selector
//! or rule that does not parse, a paramKind with a bad apiVersion) is the
//! policy's or binding's configuration error, which its failurePolicy
//! decides at admission, as kube does.

use std::collections::BTreeSet;
use std::sync::Arc;

use kube_cel::ast::visit;
use kube_cel::cel::common::ast::{Expr, IdedExpr};
use kube_cel::cel::Program;
use kube_cel::mutation::Rewritten;
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
    /// What runs instead of `program` when a MutatingAdmissionPolicy's
    /// expression builds `Object{…}` or `JSONPatch{…}` literals.
    pub literals: Option<Arc<Rewritten>>,
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
            literals: None,
        }
    }

    /// A MutatingAdmissionPolicy's expression, whose literals are rewritten
    /// to run. `text` is kept as written (kube's messages quote it so).
    pub fn compile_mutating(text: &str) -> Expression {
        let mut e = Expression::compile(text.trim());
        e.text = text.to_string();
        e.literals = match &e.program {
            Ok(p) => kube_cel::mutation::rewrite_literals(p).map(Arc::new),
            Err(_) => None,
        };
        e
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

/// How a mutation's expression patches the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    /// Merged as server-side apply merges (`Object{…}`).
    ApplyConfiguration,
    /// A list of `JSONPatch{…}` operations.
    JsonPatch,
}

pub struct Mutation {
    pub patch_type: PatchType,
    pub expression: Expression,
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
    /// A MutatingAdmissionPolicy's mutations, in order.
    pub mutations: Vec<Mutation>,
    /// reinvocationPolicy IfNeeded (mutating).
    pub reinvoke_if_needed: bool,
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

/// A mutation as written (one with an unknown patch type is left out: the
/// API refuses it on write).
fn mutation(v: &Value) -> Option<Mutation> {
    let (patch_type, key) = match text(v, "patchType") {
        "ApplyConfiguration" => (
            PatchType::ApplyConfiguration,
            "/applyConfiguration/expression",
        ),
        "JSONPatch" => (PatchType::JsonPatch, "/jsonPatch/expression"),
        _ => return None,
    };
    let expression = v.pointer(key).and_then(Value::as_str).unwrap_or_default();
    Some(Mutation {
        patch_type,
        expression: Expression::compile_mutating(expression),
    })
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
    /// A ValidatingAdmissionPolicy.
    pub fn read(object: &Value) -> Policy {
        let spec = object.get("spec").unwrap_or(&Value::Null);
        let mut policy = Policy::read_common(object, |e| Expression::compile(e.trim()));
        policy.validations = items(spec, "validations").iter().map(validation).collect();
        policy.audit_annotations = items(spec, "auditAnnotations")
            .iter()
            .map(|a| AuditAnnotation {
                key: text(a, "key").to_string(),
                value: Expression::compile(text(a, "valueExpression").trim()),
            })
            .collect();
        policy.scan()
    }

    /// A MutatingAdmissionPolicy.
    pub fn read_mutating(object: &Value) -> Policy {
        let spec = object.get("spec").unwrap_or(&Value::Null);
        let mut policy = Policy::read_common(object, Expression::compile_mutating);
        policy.mutations = items(spec, "mutations")
            .iter()
            .filter_map(mutation)
            .collect();
        policy.reinvoke_if_needed = text(spec, "reinvocationPolicy") == "IfNeeded";
        policy.scan()
    }

    /// What both kinds have: match criteria, params, conditions, variables.
    fn read_common(object: &Value, compile: fn(&str) -> Expression) -> Policy {
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
        Policy {
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
                .map(|v| (text(v, "name").to_string(), compile(text(v, "expression"))))
                .collect(),
            validations: Vec::new(),
            audit_annotations: Vec::new(),
            mutations: Vec::new(),
            reinvoke_if_needed: false,
            error,
            reads_namespace: false,
            loops: false,
        }
    }

    /// Notes what the compiled expressions read and do.
    fn scan(mut self) -> Policy {
        self.reads_namespace =
            self.any_node(|e| matches!(&e.expr, Expr::Ident(name) if name == "namespaceObject"));
        self.loops = self.any_node(|e| matches!(e.expr, Expr::Comprehension(_)));
        self
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
                .chain(self.audit_annotations.iter().map(|a| &a.value))
                .chain(self.mutations.iter().map(|m| &m.expression));
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
