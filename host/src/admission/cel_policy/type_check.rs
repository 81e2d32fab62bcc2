//! kube's policy type checking (`validating.TypeChecker`): each validation's
//! expression and messageExpression checked against the schema of every
//! kind the policy's resourceRules name exactly (at most 10, no
//! wildcards), with `params` typed by the paramKind's schema and the
//! variables by their expressions. The warnings are what
//! `status.typeChecking.expressionWarnings` holds, in kube's words:
//! `apps/v1, Kind=Deployment: ERROR: <input>:1:22: ...` per kind.

use std::collections::HashMap;

use kube_cel::policy_types::{self, Declarations, SchemaSource, Type};
use serde_json::{json, Value};

use super::compile::Expression;
use crate::admission::match_conditions::compiled;
use crate::catalogue::{Catalogue, Schemas};

/// kube's `maxTypesToCheck`.
const MAX_TYPES: usize = 10;

/// A kind to check against: its group, version, kind and schema name.
struct Kind {
    group: String,
    version: String,
    kind: String,
    schema: Value,
}

impl Kind {
    /// Go's `GroupVersionKind.String()`.
    fn gvk(&self) -> String {
        format!("{}/{}, Kind={}", self.group, self.version, self.kind)
    }
}

struct Components<'a>(&'a Schemas);

impl SchemaSource for Components<'_> {
    fn schema(&self, reference: &str) -> Option<&Value> {
        self.0.get(reference.rsplit('/').next()?)
    }
}

fn schema_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// The kinds the rules name without wildcards, sorted as kube sorts them.
fn kinds(spec: &Value, catalogue: &Catalogue) -> Vec<Kind> {
    let rules = spec
        .pointer("/matchConstraints/resourceRules")
        .and_then(Value::as_array);
    let strings = |rule: &Value, key: &str| -> Vec<String> {
        let all: Vec<String> = rule
            .get(key)
            .and_then(Value::as_array)
            .map(|l| {
                l.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        all
    };
    let mut out: Vec<Kind> = Vec::new();
    for rule in rules.into_iter().flatten() {
        let (groups, versions) = (strings(rule, "apiGroups"), strings(rule, "apiVersions"));
        if groups.iter().chain(&versions).any(|s| s.contains('*')) {
            continue;
        }
        let resources = strings(rule, "resources");
        for g in &groups {
            for v in &versions {
                for r in &resources {
                    if r.contains(['*', '/']) || out.len() >= MAX_TYPES {
                        continue;
                    }
                    if let Some(res) = catalogue.lookup(g, v, r) {
                        add(&mut out, g, v, res);
                    }
                }
            }
        }
    }
    out.sort_by(|a, b| (&a.group, &a.version, &a.kind).cmp(&(&b.group, &b.version, &b.kind)));
    out
}

fn add(out: &mut Vec<Kind>, group: &str, version: &str, res: &crate::catalogue::ResourceInfo) {
    let known = out
        .iter()
        .any(|k| k.group == group && k.version == version && k.kind == res.kind);
    if !known {
        out.push(Kind {
            group: group.to_string(),
            version: version.to_string(),
            kind: res.kind.clone(),
            schema: schema_ref(&res.schema_name),
        });
    }
}

/// The params' schema, if the paramKind is served.
fn params_schema(spec: &Value, catalogue: &Catalogue) -> Option<Value> {
    let kind = spec.get("paramKind")?;
    let api_version = kind.get("apiVersion")?.as_str()?;
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let res = catalogue.by_kind(group, version, kind.get("kind")?.as_str()?)?;
    Some(schema_ref(&res.schema_name))
}

/// The expression warnings of `policy`, as `{fieldRef, warning}` objects.
pub fn warnings(policy: &Value, catalogue: &Catalogue) -> Vec<Value> {
    let spec = policy.get("spec").unwrap_or(&Value::Null);
    let kinds = kinds(spec, catalogue);
    if kinds.is_empty() {
        return Vec::new();
    }
    let params = params_schema(spec, catalogue);
    let schemas = Components(catalogue.schemas());
    let text = |v: &Value, key: &str| {
        v.get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .to_string()
    };
    let variables: Vec<(String, Expression)> = spec
        .get("variables")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|v| (text(v, "name"), Expression::compile(&text(v, "expression"))))
        .collect();
    let validations = spec.get("validations").and_then(Value::as_array);
    let mut out = Vec::new();
    let decls: Vec<Declarations<'_>> = kinds
        .iter()
        .map(|k| declarations(k, params.as_ref(), &variables, &schemas))
        .collect();
    for (i, validation) in validations.into_iter().flatten().enumerate() {
        for key in ["expression", "messageExpression"] {
            let expression = text(validation, key);
            // Compiled once (and the compile check is the write's), checked per kind.
            let Ok(program) = compiled(&expression) else {
                continue;
            };
            let found: Vec<String> = kinds
                .iter()
                .zip(&decls)
                .filter_map(|(k, d)| {
                    let problem = policy_types::check(&program, &expression, d).err()?;
                    Some(format!("{}: {problem}\n", k.gvk()))
                })
                .collect();
            if !found.is_empty() {
                out.push(json!({
                    "fieldRef": format!("spec.validations[{i}].{key}"),
                    "warning": found.join("\n"),
                }));
            }
        }
    }
    out
}

fn declarations<'s>(
    kind: &'s Kind,
    params: Option<&'s Value>,
    variables: &[(String, Expression)],
    schemas: &'s dyn SchemaSource,
) -> Declarations<'s> {
    let object = Type::Object {
        schema: &kind.schema,
        root: true,
    };
    let mut decls = Declarations {
        variables: HashMap::from([
            ("object".to_string(), object.clone()),
            ("oldObject".to_string(), object),
            (
                "params".to_string(),
                params.map_or(Type::Dyn, |schema| Type::Object { schema, root: true }),
            ),
        ]),
        schemas,
    };
    let mut typed = HashMap::new();
    for (name, expression) in variables {
        decls
            .variables
            .insert("variables".to_string(), Type::Variables(typed.clone()));
        let t = match &expression.program {
            Ok(p) => policy_types::infer_program(p, &decls).unwrap_or(Type::Dyn),
            Err(_) => Type::Dyn,
        };
        typed.insert(name.clone(), t);
    }
    decls
        .variables
        .insert("variables".to_string(), Type::Variables(typed));
    decls
}
