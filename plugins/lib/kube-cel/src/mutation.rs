//! The CEL of MutatingAdmissionPolicies (kube's `HasPatchTypes`
//! environment): `Object{…}` / `Object.<field>.<field>{…}` literals, which
//! build an apply configuration, `JSONPatch{op, path, from, value}`
//! literals, and `jsonpatch.escapeKey`.
//!
//! The `cel` crate constructs only struct types registered by their exact
//! name, and `Object.spec.template` is a name of kube's making, one per
//! field path. So [`rewrite_literals`] rewrites every such literal into a call of
//! [`OBJECT`] with the type's name and a map of its fields: an `Object` is
//! a map at run time, a `JSONPatch` a map of its four fields (checked as
//! kube's `JSONPatchType.Val` checks them). kube's run-time check that a
//! literal under field `f` of an `Object.x` literal is an `Object.x.f`
//! (`CheckTypeNamesMatchFieldPathNames`) is made once, on the literals
//! as written ([`Rewritten::mismatch`]).

use std::collections::HashMap;

use cel::common::ast::{
    CallExpr, EntryExpr, Expr, IdedEntryExpr, IdedExpr, LiteralValue, MapEntryExpr, MapExpr,
    StructExpr,
};
use cel::objects::{Key, Map};
use cel::{Context, ExecutionError, Program, ResolveResult, Value};

use crate::call::{error, string, Answer};

/// The function an `Object…{}` or `JSONPatch{}` literal becomes.
pub const OBJECT: &str = "@object";
/// The type of an apply configuration (and, `Object.<path>`, of its parts).
pub const OBJECT_TYPE: &str = "Object";
/// kube's JSON Patch type.
pub const JSON_PATCH: &str = "JSONPatch";
const ESCAPE_KEY: &str = "jsonpatch.escapeKey";

/// Whether `name` is a type a mutation may construct.
pub fn is_patch_type(name: &str) -> bool {
    name == JSON_PATCH || is_object_type(name)
}

fn is_object_type(name: &str) -> bool {
    name.strip_prefix(OBJECT_TYPE)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

/// What runs for an expression with patch type literals: its AST with
/// the literals rewritten.
pub struct Rewritten {
    runs: IdedExpr,
    mismatch: Option<String>,
}

impl Rewritten {
    pub fn execute(&self, context: &Context) -> ResolveResult {
        Value::resolve(&self.runs, context)
    }

    /// kube's type name error for a literal nested under a field it does
    /// not name (`Object{metadata: Object.spec{}}`), reported once the
    /// expression evaluated.
    pub fn mismatch(&self) -> Option<&str> {
        self.mismatch.as_deref()
    }
}

/// `program` rewritten to run, if it has patch type literals.
pub fn rewrite_literals(program: &Program) -> Option<Rewritten> {
    let mut literals = false;
    crate::ast::visit(program.expression(), &mut |e| {
        literals |= matches!(&e.expr, Expr::Struct(s) if is_patch_type(&s.type_name));
    });
    literals.then(|| Rewritten {
        runs: rewrite(program.expression()),
        mismatch: first_mismatch(program.expression()),
    })
}

/// `e` with every patch type literal a call of [`OBJECT`].
fn rewrite(e: &IdedExpr) -> IdedExpr {
    let expr = match &e.expr {
        Expr::Struct(s) if is_patch_type(&s.type_name) => object_call(e.id, s),
        Expr::Struct(s) => Expr::Struct(StructExpr {
            type_name: s.type_name.clone(),
            entries: s.entries.iter().map(rewrite_entry).collect(),
        }),
        Expr::Select(s) => {
            let mut s = s.clone();
            s.operand = Box::new(rewrite(&s.operand));
            Expr::Select(s)
        }
        Expr::Call(c) => Expr::Call(CallExpr {
            func_name: c.func_name.clone(),
            target: c.target.as_deref().map(|t| Box::new(rewrite(t))),
            args: c.args.iter().map(rewrite).collect(),
        }),
        Expr::List(l) => {
            let mut l = l.clone();
            l.elements = l.elements.iter().map(rewrite).collect();
            Expr::List(l)
        }
        Expr::Map(m) => Expr::Map(MapExpr {
            entries: m.entries.iter().map(rewrite_entry).collect(),
        }),
        Expr::Comprehension(c) => {
            let mut c = c.clone();
            for part in [
                &mut c.iter_range,
                &mut c.accu_init,
                &mut c.loop_cond,
                &mut c.loop_step,
                &mut c.result,
            ] {
                *part = rewrite(part);
            }
            Expr::Comprehension(c)
        }
        other => other.clone(),
    };
    IdedExpr { id: e.id, expr }
}

fn rewrite_entry(entry: &IdedEntryExpr) -> IdedEntryExpr {
    let mut entry = entry.clone();
    match &mut entry.expr {
        EntryExpr::MapEntry(m) => {
            m.key = rewrite(&m.key);
            m.value = rewrite(&m.value);
        }
        EntryExpr::StructField(f) => f.value = rewrite(&f.value),
    }
    entry
}

/// `@object("<type>", {"<field>": value, …})`, the literal's ids reused.
fn object_call(id: u64, s: &StructExpr) -> Expr {
    let literal = |value: LiteralValue| IdedExpr {
        id,
        expr: Expr::Literal(value),
    };
    let entries = s.entries.iter().filter_map(|entry| match &entry.expr {
        EntryExpr::StructField(f) => Some(IdedEntryExpr {
            id: entry.id,
            expr: EntryExpr::MapEntry(MapEntryExpr {
                key: literal(LiteralValue::String(f.field.clone().into())),
                value: rewrite(&f.value),
                optional: f.optional,
            }),
        }),
        EntryExpr::MapEntry(_) => None,
    });
    let fields = IdedExpr {
        id,
        expr: Expr::Map(MapExpr {
            entries: entries.collect(),
        }),
    };
    Expr::Call(CallExpr {
        func_name: OBJECT.to_string(),
        target: None,
        args: vec![
            literal(LiteralValue::String(s.type_name.clone().into())),
            fields,
        ],
    })
}

/// The first `Object` literal nested (directly, or in list and map
/// literals) under a field whose path its type name does not follow.
fn first_mismatch(e: &IdedExpr) -> Option<String> {
    let mut found = None;
    crate::ast::visit(e, &mut |node| {
        let Expr::Struct(s) = &node.expr else { return };
        if found.is_some() || !is_object_type(&s.type_name) {
            return;
        }
        for entry in &s.entries {
            if let EntryExpr::StructField(f) = &entry.expr {
                let expected = format!("{}.{}", s.type_name, f.field);
                found = found
                    .take()
                    .or_else(|| nested_mismatch(&f.value, &expected));
            }
        }
    });
    found
}

fn nested_mismatch(value: &IdedExpr, expected: &str) -> Option<String> {
    match &value.expr {
        Expr::Struct(s) if is_object_type(&s.type_name) && s.type_name != expected => Some(format!(
            "type mismatch: unexpected type name \"{}\", expected \"{expected}\", which matches field name path from root Object type",
            s.type_name
        )),
        Expr::List(l) => l
            .elements
            .iter()
            .find_map(|x| nested_mismatch(x, expected)),
        Expr::Map(m) => m.entries.iter().find_map(|entry| match &entry.expr {
            EntryExpr::MapEntry(m) => nested_mismatch(&m.value, expected),
            EntryExpr::StructField(_) => None,
        }),
        _ => None,
    }
}

/// `@object(type, fields)` and `jsonpatch.escapeKey(key)`.
pub(crate) fn call(name: &str, this: Option<&Value>, args: &[Value]) -> Answer {
    match (name, this, args) {
        (OBJECT, None, [Value::String(t), Value::Map(fields)]) if t.as_str() == JSON_PATCH => {
            Some(json_patch(fields))
        }
        (OBJECT, None, [_, fields @ Value::Map(_)]) => Some(Ok(fields.clone())),
        (ESCAPE_KEY, None, [key]) => {
            let key = string(key)?;
            Some(Ok(key.replace('~', "~0").replace('/', "~1").into()))
        }
        _ => None,
    }
}

/// kube's `JSONPatchType.Val`: op, path and from strings, any value.
fn json_patch(fields: &Map) -> Result<Value, ExecutionError> {
    for (key, value) in fields.map.iter() {
        let Key::String(key) = key else {
            return Err(error(OBJECT, "unexpected JSONPatchType field"));
        };
        match key.as_str() {
            "op" | "path" | "from" if string(value).is_none() => {
                return Err(error(
                    OBJECT,
                    format!(
                        "unexpected type {} for JSONPatchType '{key}' field",
                        value.type_of()
                    ),
                ));
            }
            "op" | "path" | "from" | "value" => {}
            other => {
                return Err(error(
                    OBJECT,
                    format!("unexpected JSONPatchType field: {other}"),
                ))
            }
        }
    }
    Ok(Value::Map(fields.clone()))
}

/// A CEL value as JSON, as kube converts an apply configuration or a
/// JSON Patch value (maps need string keys; bytes, durations, timestamps
/// and types have no JSON form here).
pub fn to_json(value: &Value) -> Result<serde_json::Value, String> {
    use serde_json::Value as Json;
    Ok(match value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::UInt(u) => Json::from(*u),
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Json::Number)
            .ok_or_else(|| format!("unsupported value: {f}"))?,
        Value::String(s) => Json::String(s.to_string()),
        Value::List(items) => Json::Array(items.iter().map(to_json).collect::<Result<_, _>>()?),
        Value::Map(m) => {
            let mut out = serde_json::Map::new();
            let mut entries: Vec<(&Key, &Value)> = m.map.iter().collect();
            entries.sort_by_key(|(k, _)| key_text(k));
            for (k, v) in entries {
                let Key::String(k) = k else {
                    return Err(format!("map key {} is not a string", key_text(k)));
                };
                out.insert(k.to_string(), to_json(v)?);
            }
            Json::Object(out)
        }
        other => return Err(format!("unsupported value of type {}", other.type_of())),
    })
}

fn key_text(k: &Key) -> String {
    match k {
        Key::String(s) => s.to_string(),
        Key::Int(i) => i.to_string(),
        Key::Uint(u) => u.to_string(),
        Key::Bool(b) => b.to_string(),
    }
}

/// The fields of a JSON Patch operation value built by [`call`].
pub fn json_patch_fields(value: &Value) -> Option<HashMap<String, Value>> {
    let Value::Map(m) = value else { return None };
    let fields = m.map.iter().filter_map(|(k, v)| match k {
        Key::String(k) => Some((k.to_string(), v.clone())),
        _ => None,
    });
    Some(fields.collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn compile(expression: &str) -> Result<Rewritten, String> {
        let program = crate::compile(expression)?;
        rewrite_literals(&program).ok_or_else(|| "no literals".to_string())
    }

    fn run(expression: &str) -> Result<serde_json::Value, String> {
        let compiled = compile(expression)?;
        let context = crate::context();
        let value = compiled.execute(&context).map_err(|e| e.to_string())?;
        to_json(&value)
    }

    #[test]
    fn object_literals_are_maps_of_their_fields() {
        let built = run(
            r#"Object{metadata: Object.metadata{labels: {"a": "b"}}, spec: Object.spec{replicas: 1 + 1}}"#,
        );
        assert_eq!(
            built,
            Ok(json!({"metadata": {"labels": {"a": "b"}}, "spec": {"replicas": 2}}))
        );
        assert_eq!(run("Object{}"), Ok(json!({})));
        assert!(rewrite_literals(&crate::compile("1 + 1").unwrap()).is_none());
    }

    #[test]
    fn json_patch_literals_and_escaped_keys() {
        let built = run(
            r#"[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("a/b~c"), value: "x"}]"#,
        );
        assert_eq!(
            built,
            Ok(json!([{"op": "add", "path": "/metadata/labels/a~1b~0c", "value": "x"}]))
        );
    }

    #[test]
    fn a_literal_under_a_field_it_does_not_name_is_a_mismatch() {
        let c = compile("Object{metadata: Object.spec{labels: {'a': 'b'}}}").unwrap();
        assert_eq!(
            c.mismatch(),
            Some("type mismatch: unexpected type name \"Object.spec\", expected \"Object.metadata\", which matches field name path from root Object type")
        );
        let lists =
            compile("Object{spec: Object.spec{containers: [Object.spec.containers{name: 'c'}]}}")
                .unwrap();
        assert_eq!(lists.mismatch(), None);
    }
}
