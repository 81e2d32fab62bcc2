//! The part of cel-go's type check that admission policies meet: the type
//! of every expression inferred from the OpenAPI schemas of the kinds a
//! policy matches (and of its params), so that a field the schema does not
//! declare (`undefined field 'x'`) and an operator applied to types it has
//! no overload for (`found no matching overload for '_>_' applied to
//! '(int, string)'`) are reported in cel-go's words, with the position.
//! kube's policy type checking (`status.typeChecking`) and its write-time
//! check of expressions over untyped variables both rest on it. Where a
//! type is not known (dyn, preserve-unknown-fields, int-or-string, a
//! function this checker does not type) nothing is reported.

use std::collections::HashMap;

use cel::common::ast::{operators, Expr, IdedExpr, LiteralValue};
use cel::Program;
use serde_json::Value;

/// Looks up a `$ref` (`#/components/schemas/<name>` or
/// `#/definitions/<name>`) among the schemas a type refers to.
pub trait SchemaSource {
    fn schema(&self, reference: &str) -> Option<&Value>;
}

/// No schemas: every reference is unknown.
pub struct NoSchemas;

impl SchemaSource for NoSchemas {
    fn schema(&self, _: &str) -> Option<&Value> {
        None
    }
}

/// A CEL type, as far as this checker knows it.
#[derive(Debug, Clone, PartialEq)]
pub enum Type<'s> {
    Int,
    Uint,
    Double,
    String,
    Bool,
    Bytes,
    Null,
    Timestamp,
    Duration,
    List(Box<Type<'s>>),
    Map(Box<Type<'s>>),
    /// An object described by a schema; `root` for a resource's top level
    /// (apiVersion, kind and metadata exist even where not declared).
    Object {
        schema: &'s Value,
        root: bool,
    },
    /// `variables`: each variable's type.
    Variables(HashMap<String, Type<'s>>),
    /// A MutatingAdmissionPolicy's `Object…` or `JSONPatch` literal, by
    /// its type's name.
    Struct(String),
    Dyn,
}

impl Type<'_> {
    /// cel-go's name of the type in messages.
    pub fn name(&self) -> String {
        match self {
            Type::Int => "int".into(),
            Type::Uint => "uint".into(),
            Type::Double => "double".into(),
            Type::String => "string".into(),
            Type::Bool => "bool".into(),
            Type::Bytes => "bytes".into(),
            Type::Null => "null".into(),
            Type::Timestamp => "google.protobuf.Timestamp".into(),
            Type::Duration => "google.protobuf.Duration".into(),
            Type::List(t) => format!("list({})", t.name()),
            Type::Map(t) => format!("map(string, {})", t.name()),
            Type::Object { .. } | Type::Variables(_) => "object".into(),
            Type::Struct(name) => name.clone(),
            Type::Dyn => "dyn".into(),
        }
    }

    fn is_numeric(&self) -> bool {
        matches!(self, Type::Int | Type::Uint | Type::Double)
    }

    /// Known well enough to refuse an overload (not dyn or an object).
    fn is_concrete(&self) -> bool {
        !matches!(
            self,
            Type::Dyn | Type::Object { .. } | Type::Variables(_) | Type::Map(_)
        )
    }
}

/// The variables an expression is checked with.
pub struct Declarations<'s> {
    pub variables: HashMap<String, Type<'s>>,
    pub schemas: &'s dyn SchemaSource,
}

/// A problem found: the expression id it is at and cel-go's message.
pub type Problem = (u64, String);

/// Checks `program` (compiled from `text`); Err holds cel-go's
/// `ERROR: <input>:l:c: message` with the source line and a pointer.
pub fn check(program: &Program, text: &str, decls: &Declarations<'_>) -> Result<(), String> {
    let checker = Checker {
        decls,
        patch_types: false,
    };
    infer_located(program, text, checker).map(|_| ())
}

/// [`infer_program`] with the problem in cel-go's located words.
fn infer_located<'s>(
    program: &Program,
    text: &str,
    checker: Checker<'_, 's>,
) -> Result<Type<'s>, String> {
    let mut scope: Vec<(String, Type<'s>)> = Vec::new();
    let found = checker.infer(program.expression(), &mut scope);
    found.map_err(|(id, message)| {
        let at = program
            .source_info()
            .offset_for(id)
            .map_or(0, |(start, _)| start);
        crate::rules::located(text, at as usize, &message)
    })
}

/// The type `program` evaluates to, or the first problem.
pub fn infer_program<'s>(program: &Program, decls: &Declarations<'s>) -> Result<Type<'s>, Problem> {
    let mut scope: Vec<(String, Type<'s>)> = Vec::new();
    let checker = Checker {
        decls,
        patch_types: false,
    };
    checker.infer(program.expression(), &mut scope)
}

struct Checker<'d, 's> {
    decls: &'d Declarations<'s>,
    /// Whether `Object…{}` and `JSONPatch{}` literals are declared (the
    /// environment of MutatingAdmissionPolicies).
    patch_types: bool,
}

type Scope<'s> = Vec<(String, Type<'s>)>;

impl<'s> Checker<'_, 's> {
    fn infer(&self, e: &IdedExpr, scope: &mut Scope<'s>) -> Result<Type<'s>, Problem> {
        match &e.expr {
            Expr::Literal(l) => Ok(literal(l)),
            Expr::Ident(name) => Ok(self.ident(name, scope)),
            Expr::Select(s) => {
                let operand = self.infer(&s.operand, scope)?;
                let field = self
                    .select(&operand, &s.field)
                    .ok_or_else(|| (e.id, format!("undefined field '{}'", s.field)))?;
                Ok(if s.test { Type::Bool } else { field })
            }
            Expr::Call(call) if crate::iterate::ticked(call).is_some() => {
                let x = crate::iterate::ticked(call).unwrap_or(e);
                self.infer(x, scope)
            }
            Expr::Call(call) => {
                let target = match &call.target {
                    Some(t) => Some(self.infer(t, scope)?),
                    None => None,
                };
                let args = call
                    .args
                    .iter()
                    .map(|a| self.infer(a, scope))
                    .collect::<Result<Vec<_>, _>>()?;
                call_type(&call.func_name, target, args).map_err(|m| (e.id, m))
            }
            Expr::List(l) => {
                let mut element = None;
                for x in &l.elements {
                    let t = self.infer(x, scope)?;
                    element = Some(match element {
                        None => t,
                        Some(prev) if prev == t => prev,
                        Some(_) => Type::Dyn,
                    });
                }
                Ok(Type::List(Box::new(element.unwrap_or(Type::Dyn))))
            }
            Expr::Map(_) => Ok(Type::Map(Box::new(Type::Dyn))),
            Expr::Struct(literal) => self.struct_literal(e.id, literal, scope),
            Expr::Comprehension(c) => {
                let range = self.infer(&c.iter_range, scope)?;
                let element = match (&range, &c.iter_var2) {
                    (Type::List(t), None) => (**t).clone(),
                    (Type::Map(_), None) => Type::String,
                    _ => Type::Dyn,
                };
                let depth = scope.len();
                scope.push((c.iter_var.clone(), element));
                if let Some(v2) = &c.iter_var2 {
                    scope.push((v2.clone(), Type::Dyn));
                }
                scope.push((c.accu_var.clone(), Type::Dyn));
                let parts = [&c.accu_init, &c.loop_cond, &c.loop_step, &c.result];
                let checked = parts
                    .iter()
                    .try_for_each(|p| self.infer(p, scope).map(|_| ()));
                let collected = checked.and_then(|()| self.collected(c, scope));
                scope.truncate(depth);
                collected
            }
            _ => Ok(Type::Dyn),
        }
    }

    /// A `map` or `filter` comprehension's list type (its accumulator
    /// starts empty and grows by `@result + [item]`); dyn for the others.
    fn collected(
        &self,
        c: &cel::common::ast::ComprehensionExpr,
        scope: &mut Scope<'s>,
    ) -> Result<Type<'s>, Problem> {
        let starts_empty = matches!(&c.accu_init.expr, Expr::List(l) if l.elements.is_empty());
        let returns_accu = matches!(&c.result.expr, Expr::Ident(n) if *n == c.accu_var);
        if !starts_empty || !returns_accu {
            return Ok(Type::Dyn);
        }
        let mut item = None;
        crate::ast::visit(&c.loop_step, &mut |node| match &node.expr {
            Expr::Call(call) if call.func_name == operators::ADD && item.is_none() => {
                if let [Expr::Ident(accu), Expr::List(l)] = [&call.args[0].expr, &call.args[1].expr]
                {
                    if *accu == c.accu_var && l.elements.len() == 1 {
                        item = Some(l.elements[0].clone());
                    }
                }
            }
            _ => {}
        });
        let Some(item) = item else {
            return Ok(Type::Dyn);
        };
        let item = match &item.expr {
            Expr::Call(call) => crate::iterate::ticked(call).cloned().unwrap_or(item),
            _ => item,
        };
        Ok(Type::List(Box::new(self.infer(&item, scope)?)))
    }

    /// A struct literal: an `Object…` or `JSONPatch` where declared (its
    /// fields checked as cel-go checks JSONPatch's), else undeclared.
    fn struct_literal(
        &self,
        id: u64,
        literal: &cel::common::ast::StructExpr,
        scope: &mut Scope<'s>,
    ) -> Result<Type<'s>, Problem> {
        use cel::common::ast::EntryExpr;
        let name = &literal.type_name;
        if !self.patch_types || !crate::mutation::is_patch_type(name) {
            return Err((
                id,
                format!("undeclared reference to '{name}' (in container '')"),
            ));
        }
        for entry in &literal.entries {
            let EntryExpr::StructField(field) = &entry.expr else {
                continue;
            };
            let found = self.infer(&field.value, scope)?;
            if name != crate::mutation::JSON_PATCH {
                continue;
            }
            let expected = match field.field.as_str() {
                "op" | "path" | "from" => Type::String,
                "value" => continue,
                _ => Type::Struct(String::new()),
            };
            if found.is_concrete() && found != expected {
                let message = format!(
                    "expected type of field '{}' is '{}' but provided type is '{}'",
                    field.field,
                    expected.name(),
                    found.name()
                );
                return Err((entry.id, message));
            }
        }
        Ok(Type::Struct(name.clone()))
    }

    fn ident(&self, name: &str, scope: &Scope<'s>) -> Type<'s> {
        if let Some((_, t)) = scope.iter().rev().find(|(n, _)| n == name) {
            return t.clone();
        }
        self.decls.variables.get(name).cloned().unwrap_or(Type::Dyn)
    }

    /// The type of `field` selected on `operand`; None when the schema
    /// declares no such field.
    fn select(&self, operand: &Type<'s>, field: &str) -> Option<Type<'s>> {
        match operand {
            Type::Object { schema, root } => self.field(schema, field, *root),
            Type::Map(value) => Some((**value).clone()),
            Type::Variables(vars) => vars.get(field).cloned(),
            _ => Some(Type::Dyn),
        }
    }

    fn field(&self, schema: &'s Value, field: &str, root: bool) -> Option<Type<'s>> {
        let schema = self.resolve(schema);
        if let Some(child) = schema.get("properties").and_then(|p| p.get(field)) {
            return Some(self.schema_type(child));
        }
        if root && matches!(field, "apiVersion" | "kind") {
            return Some(Type::String);
        }
        if root && field == "metadata" {
            return Some(Type::Dyn);
        }
        let open = schema.get("properties").is_none()
            || schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
        open.then_some(Type::Dyn)
    }

    /// The schema a `$ref` (or an `allOf` of one) stands for.
    fn resolve(&self, schema: &'s Value) -> &'s Value {
        let reference = schema.get("$ref").or_else(|| {
            schema
                .get("allOf")
                .and_then(|a| a.get(0))
                .and_then(|a| a.get("$ref"))
        });
        match reference.and_then(Value::as_str) {
            Some(r) => self.decls.schemas.schema(r).unwrap_or(&Value::Null),
            None => schema,
        }
    }

    /// The CEL type of a value described by `schema` (kube's SchemaDeclType).
    pub fn schema_type(&self, schema: &'s Value) -> Type<'s> {
        let schema = self.resolve(schema);
        if schema.is_null() || schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true))
        {
            return Type::Dyn;
        }
        let format = schema.get("format").and_then(Value::as_str);
        match schema.get("type").and_then(Value::as_str) {
            Some("integer") => Type::Int,
            Some("number") => Type::Double,
            Some("boolean") => Type::Bool,
            Some("string") => match format {
                Some("date-time") => Type::Timestamp,
                Some("duration") => Type::Duration,
                Some("byte") => Type::Bytes,
                _ => Type::String,
            },
            Some("array") => Type::List(Box::new(
                schema
                    .get("items")
                    .map_or(Type::Dyn, |i| self.schema_type(i)),
            )),
            Some("object") | None => match schema.get("additionalProperties") {
                Some(v) if v.is_object() && schema.get("properties").is_none() => {
                    Type::Map(Box::new(self.schema_type(v)))
                }
                _ if schema.get("properties").is_some() => Type::Object {
                    schema,
                    root: false,
                },
                _ => Type::Dyn,
            },
            Some(_) => Type::Dyn,
        }
    }
}

fn literal(l: &LiteralValue) -> Type<'static> {
    match l {
        LiteralValue::Boolean(_) => Type::Bool,
        LiteralValue::Bytes(_) => Type::Bytes,
        LiteralValue::Double(_) => Type::Double,
        LiteralValue::Int(_) => Type::Int,
        LiteralValue::Null => Type::Null,
        LiteralValue::String(_) => Type::String,
        LiteralValue::UInt(_) => Type::Uint,
    }
}

fn no_overload(function: &str, args: &[&Type<'_>]) -> String {
    let names: Vec<String> = args.iter().map(|t| t.name()).collect();
    format!(
        "found no matching overload for '{function}' applied to '({})'",
        names.join(", ")
    )
}

/// The result type of a call, or cel-go's message when the argument types
/// have no overload.
fn call_type<'s>(
    function: &str,
    target: Option<Type<'s>>,
    args: Vec<Type<'s>>,
) -> Result<Type<'s>, String> {
    use operators as op;
    if function == op::CONDITIONAL {
        if let Some(problem) = conditional_problem(&args) {
            return Err(problem);
        }
    }
    let [a, b] = match args.as_slice() {
        [a, b] if target.is_none() => [a, b],
        _ => return Ok(other_call(function, target.as_ref(), &args)),
    };
    let refuse = || Err(no_overload(function, &[a, b]));
    let known = a.is_concrete() && b.is_concrete();
    match function {
        op::LESS | op::LESS_EQUALS | op::GREATER | op::GREATER_EQUALS => {
            let comparable = a == b && !matches!(a, Type::Null | Type::List(_))
                || a.is_numeric() && b.is_numeric();
            if known && !comparable {
                return refuse();
            }
            Ok(Type::Bool)
        }
        op::EQUALS | op::NOT_EQUALS => {
            let family = |t: &Type<'s>| if t.is_numeric() { Type::Int } else { t.clone() };
            let list_or_null = |t: &Type<'_>| matches!(t, Type::Null | Type::List(_));
            if known && !list_or_null(a) && !list_or_null(b) && family(a) != family(b) {
                return refuse();
            }
            Ok(Type::Bool)
        }
        op::ADD => arithmetic(a, b, true).ok_or_else(|| no_overload(function, &[a, b])),
        op::SUBSTRACT | op::MULTIPLY | op::DIVIDE | op::MODULO => {
            arithmetic(a, b, false).ok_or_else(|| no_overload(function, &[a, b]))
        }
        op::LOGICAL_AND | op::LOGICAL_OR => {
            let boolish = |t: &Type<'_>| matches!(t, Type::Bool) || !t.is_concrete();
            if !(boolish(a) && boolish(b)) {
                return refuse();
            }
            Ok(Type::Bool)
        }
        op::INDEX => Ok(match a {
            Type::List(t) | Type::Map(t) => (**t).clone(),
            _ => Type::Dyn,
        }),
        op::IN => Ok(Type::Bool),
        _ => Ok(other_call(function, target.as_ref(), &args)),
    }
}

/// `+` (with strings, bytes, lists) and the other arithmetic operators.
fn arithmetic<'s>(a: &Type<'s>, b: &Type<'s>, add: bool) -> Option<Type<'s>> {
    if !a.is_concrete() || !b.is_concrete() {
        return Some(if a.is_concrete() {
            a.clone()
        } else {
            b.clone()
        });
    }
    match (a, b) {
        (x, y) if x == y && x.is_numeric() => Some(x.clone()),
        (Type::String, Type::String) | (Type::Bytes, Type::Bytes) if add => Some(a.clone()),
        (Type::List(_), Type::List(_)) if add => Some(a.clone()),
        (Type::Duration, Type::Duration) => Some(Type::Duration),
        (Type::Timestamp, Type::Duration) | (Type::Duration, Type::Timestamp) if add => {
            Some(Type::Timestamp)
        }
        (Type::Timestamp, Type::Duration) => Some(Type::Timestamp),
        (Type::Timestamp, Type::Timestamp) if !add => Some(Type::Duration),
        _ => None,
    }
}

/// kube's compile check of an admission expression (matchConditions,
/// policies' validations, variables, messages, audit annotations) at
/// write time: the names in `declared` are the variables it may use,
/// untyped, and `variables` the policy's variables so far, typed by their
/// expressions; `returns` is the type it must have. The error is kube's
/// field detail (`compilation failed: ERROR: ...`, `must evaluate to bool
/// but got string`); Ok holds the expression's type.
pub fn check_admission_expression(
    text: &str,
    declared: &[&str],
    variables: Option<&HashMap<String, Type<'static>>>,
    returns: Option<&Type<'static>>,
) -> Result<Type<'static>, String> {
    let found = infer_admission_expression(text, declared, variables, false)?;
    match returns {
        Some(want) if found.is_concrete() && found != *want => Err(must_be(want, &found)),
        _ => Ok(found),
    }
}

/// [`check_admission_expression`] for a MutatingAdmissionPolicy, whose
/// expressions may build `Object…{}` and `JSONPatch{}` literals and whose
/// mutations must have exactly their type (`Object`, `list(JSONPatch)`):
/// dyn is not enough, as in kube.
pub fn check_mutation_expression(
    text: &str,
    declared: &[&str],
    variables: Option<&HashMap<String, Type<'static>>>,
    returns: Option<&Type<'static>>,
) -> Result<Type<'static>, String> {
    let found = infer_admission_expression(text, declared, variables, true)?;
    match returns {
        Some(want) if found != *want => Err(must_be(want, &found)),
        _ => Ok(found),
    }
}

fn must_be(want: &Type<'_>, found: &Type<'_>) -> String {
    format!("must evaluate to {} but got {}", want.name(), found.name())
}

fn infer_admission_expression(
    text: &str,
    declared: &[&str],
    variables: Option<&HashMap<String, Type<'static>>>,
    patch_types: bool,
) -> Result<Type<'static>, String> {
    let program = crate::compile(text).map_err(|e| format!("compilation failed: {e}"))?;
    let mut bound: std::collections::HashSet<String> =
        declared.iter().map(|d| d.to_string()).collect();
    if variables.is_some() {
        bound.insert("variables".to_string());
    }
    if let Some(error) = crate::rules::undeclared_in(&program, text, bound) {
        return Err(format!("compilation failed: {error}"));
    }
    let mut decls = Declarations {
        variables: declared
            .iter()
            .map(|d| (d.to_string(), Type::Dyn))
            .collect(),
        schemas: &NoSchemas,
    };
    if let Some(v) = variables {
        decls
            .variables
            .insert("variables".to_string(), Type::Variables(v.clone()));
    }
    let checker = Checker {
        decls: &decls,
        patch_types,
    };
    infer_located(&program, text, checker).map_err(|e| format!("compilation failed: {e}"))
}

/// Calls other than the binary operators: the ternary is checked, the
/// conversions and `size` typed, anything else dyn.
fn other_call<'s>(function: &str, _target: Option<&Type<'s>>, args: &[Type<'s>]) -> Type<'s> {
    match function {
        operators::CONDITIONAL => match args {
            [_, x, y] if x == y => x.clone(),
            // An empty list literal takes the other branch's type.
            [_, Type::List(x), y @ Type::List(_)] if **x == Type::Dyn => y.clone(),
            [_, x @ Type::List(_), Type::List(y)] if **y == Type::Dyn => x.clone(),
            _ => Type::Dyn,
        },
        operators::LOGICAL_NOT => Type::Bool,
        operators::NEGATE => args.first().cloned().unwrap_or(Type::Dyn),
        "size" | "int" => Type::Int,
        "string" => Type::String,
        "double" => Type::Double,
        "uint" => Type::Uint,
        "bool" | "has" | "matches" | "startsWith" | "endsWith" | "contains" => Type::Bool,
        _ => Type::Dyn,
    }
}

/// The ternary's branches must have one type (null and a value do not).
fn conditional_problem(args: &[Type<'_>]) -> Option<String> {
    let empty_list = |t: &Type<'_>| matches!(t, Type::List(e) if **e == Type::Dyn);
    match args {
        [_, x @ Type::List(_), y @ Type::List(_)] if empty_list(x) || empty_list(y) => None,
        [c, x, y] if x.is_concrete() && y.is_concrete() && x != y => {
            Some(no_overload(operators::CONDITIONAL, &[c, x, y]))
        }
        _ => None,
    }
}

#[cfg(test)]
#[path = "policy_types_tests.rs"]
mod tests;
