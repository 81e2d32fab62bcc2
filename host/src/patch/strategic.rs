//! `application/strategic-merge-patch+json`, after kube's
//! k8s.io/apimachinery/pkg/util/strategicpatch (the apply half, server-side
//! options): maps merge recursively, `null` deletes, lists follow the field's
//! `x-kubernetes-patch-strategy`, and the `$patch`, `$retainKeys`,
//! `$setElementOrder/` and `$deleteFromPrimitiveList/` directives are honoured.

mod directives;
mod lists;
mod order;
pub(in crate::patch) mod schema;

use serde_json::{Map, Value};

use self::directives::{clean_map, clean_new_value, take_key, DELETE_FROM_PRIMITIVE_LIST, PATCH};
use self::schema::{Schema, Strategy};
use super::{PatchError, SchemaLookup};
use crate::apimachinery::gofmt;

/// Applies a strategic merge patch (already parsed) to `original`.
/// `root_schema` names the component schema of the object's type; fields
/// without schema information merge maps and replace lists.
pub fn strategic_merge(
    original: &Value,
    patch: &Value,
    root_schema: Option<&str>,
    schemas: &dyn SchemaLookup,
) -> Result<Value, PatchError> {
    merge_at(original, patch, Schema::root(root_schema, schemas))
}

/// Merges a server-side apply configuration onto the live object: as a
/// strategic merge, with lists that declare no patch strategy merged by
/// their `x-kubernetes-list-type` (custom resources' lists).
pub(super) fn apply_merge(
    original: &Value,
    patch: &Value,
    root_schema: Option<&str>,
    schemas: &dyn SchemaLookup,
) -> Result<Value, PatchError> {
    merge_at(
        original,
        patch,
        Schema::root_for_apply(root_schema, schemas),
    )
}

fn merge_at(original: &Value, patch: &Value, schema: Schema) -> Result<Value, PatchError> {
    let patch = match patch {
        Value::Object(map) => map.clone(),
        Value::Null => return Ok(original.clone()),
        other => {
            return Err(PatchError::BadRequest(gofmt::unmarshal_error(
                other,
                "map[string]interface {}",
            )))
        }
    };
    let original = match original {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    merge_map(original, patch, schema).map(Value::Object)
}

/// Parses a strategic merge patch body.
pub(super) fn parse_body(body: &[u8]) -> Result<Value, PatchError> {
    serde_json::from_slice(body).map_err(|e| PatchError::BadRequest(gofmt::syntax_error(body, &e)))
}

/// kube's `mergeMap`: directives first, then field by field in patch order.
fn merge_map(
    original: Map<String, Value>,
    patch: Map<String, Value>,
    schema: Schema,
) -> Result<Map<String, Value>, PatchError> {
    let mut patch = patch;
    if let Some(directive) = take_key(&mut patch, PATCH) {
        return map_directive(original, directive, patch, schema);
    }
    let mut original = original;
    directives::apply_retain_keys(&mut original, &mut patch)?;
    directives::merge_set_element_order(&mut original, &mut patch, schema)?;
    for (key, value) in patch {
        merge_field(&mut original, key, value, schema)?;
    }
    Ok(original)
}

/// `$patch` on a map: `replace` takes the patch as the whole map, `delete`
/// empties it, `merge` is the default behaviour.
fn map_directive(
    original: Map<String, Value>,
    directive: Value,
    patch: Map<String, Value>,
    schema: Schema,
) -> Result<Map<String, Value>, PatchError> {
    match directive.as_str() {
        Some("replace") => Ok(clean_map(patch)),
        Some("delete") => Ok(Map::new()),
        Some("merge") => merge_map(original, patch, schema),
        _ => {
            let mut shown = patch;
            shown.insert(PATCH.to_string(), directive.clone());
            Err(PatchError::Internal(format!(
                "unknown patch type: {} in map: {}",
                kube_rules::gofmt::v(&directive),
                kube_rules::gofmt::v(&Value::Object(shown))
            )))
        }
    }
}

/// Merges one patch field into `original`.
fn merge_field(
    original: &mut Map<String, Value>,
    key: String,
    value: Value,
    schema: Schema,
) -> Result<(), PatchError> {
    let (key, is_delete_list) = match key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
        Some(rest) => match rest.strip_prefix('/') {
            Some(field) => (field.to_string(), true),
            None => {
                return Err(PatchError::BadRequest(
                    "invalid patch format of primitive list".into(),
                ))
            }
        },
        None => (key, false),
    };
    if value.is_null() {
        take_key(original, &key);
        return Ok(());
    }
    let Some(current) = original.get_mut(&key) else {
        if !is_delete_list {
            original.extend(clean_new_value(value).map(|v| (key, v)));
        }
        return Ok(());
    };
    let merged = match (std::mem::take(current), value) {
        (Value::Object(cur), Value::Object(patch)) => {
            let (sub, meta) = schema.field(&key);
            if meta.strategy == Strategy::Replace {
                Some(Value::Object(clean_map(patch)))
            } else {
                Some(Value::Object(merge_map(cur, patch, sub)?))
            }
        }
        (Value::Array(cur), Value::Array(patch)) => {
            let (sub, meta) = schema.field(&key);
            Some(Value::Array(lists::merge_list(
                cur,
                patch,
                sub.items(),
                &meta,
                is_delete_list,
            )?))
        }
        (cur, _) if is_delete_list => Some(cur),
        (_, value) => clean_new_value(value),
    };
    match merged {
        Some(v) => {
            original.insert(key, v);
        }
        None => {
            take_key(original, &key);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
