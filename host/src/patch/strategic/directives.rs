//! The map-level directives of strategic merge patch: `$retainKeys`,
//! `$setElementOrder/<list>`, and the cleanup of directives left in values that
//! are copied from the patch into the object as they are.

use serde_json::{Map, Value};

use super::lists::{self, element_kind, Kind};
use super::order::{self, is_delete_directive, Identity};
use super::schema::Schema;
use crate::apimachinery::gofmt;
use crate::patch::PatchError;

pub(super) const PATCH: &str = "$patch";
pub(super) const RETAIN_KEYS: &str = "$retainKeys";
pub(super) const SET_ELEMENT_ORDER: &str = "$setElementOrder";
pub(super) const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";

const BAD_RETAIN_KEYS: &str = "invalid patch format of retainKeys";
const BAD_SET_ELEMENT_ORDER: &str = "invalid patch format of setElementOrder list";

/// `$retainKeys: [..]`: drops every original field not listed; every field the
/// patch sets must be listed too.
pub(super) fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<(), PatchError> {
    let Some(retain) = take_key(patch, RETAIN_KEYS) else {
        return Ok(());
    };
    let Value::Array(retain) = retain else {
        return Err(PatchError::BadRequest(BAD_RETAIN_KEYS.into()));
    };
    let listed = |key: &str| retain.iter().any(|k| k.as_str() == Some(key));
    let unlisted_in_patch = patch.iter().any(|(k, v)| {
        !v.is_null()
            && !k.starts_with(DELETE_FROM_PRIMITIVE_LIST)
            && !k.starts_with(SET_ELEMENT_ORDER)
            && !listed(k)
    });
    if unlisted_in_patch {
        return Err(PatchError::BadRequest(BAD_RETAIN_KEYS.into()));
    }
    original.retain(|k, _| listed(k));
    Ok(())
}

/// Every `$setElementOrder/<list>`: merges `<list>` and orders the result as
/// the directive says, server-only items interleaved by their server order.
pub(super) fn merge_set_element_order(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    schema: Schema,
) -> Result<(), PatchError> {
    let keys: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ELEMENT_ORDER))
        .cloned()
        .collect();
    for key in keys {
        let order = take_key(patch, &key).unwrap_or(Value::Null);
        let Value::Array(order) = order else {
            return Err(PatchError::Internal(gofmt::bad_arg_type(
                "[]interface {}",
                &order,
            )));
        };
        let field = key
            .strip_prefix(SET_ELEMENT_ORDER)
            .and_then(|rest| rest.strip_prefix('/'))
            .ok_or_else(|| PatchError::BadRequest(BAD_SET_ELEMENT_ORDER.into()))?;
        order_one_list(original, patch, field, &order, schema)?;
    }
    Ok(())
}

fn order_one_list(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    field: &str,
    order: &[Value],
    schema: Schema,
) -> Result<(), PatchError> {
    let server = list_at(original, field)?;
    let patched = list_at(patch, field)?;
    let (sub, meta) = schema.field(field);
    let merge_key = meta.merge_key.clone().unwrap_or_default();
    validate_against_order(patched.as_deref().unwrap_or_default(), order, &merge_key)?;
    let kind = element_kind(
        server.as_deref().unwrap_or_default(),
        patched.as_deref().unwrap_or_default(),
    )?;
    let merged = match (server.clone(), patched) {
        (Some(server), None) => server,
        (None, Some(patched)) => clean_list(patched),
        (Some(server), Some(patched)) => {
            lists::merge_list(server, patched, sub.items(), &meta, false)?
        }
        (None, None) => return Ok(()),
    };
    let ordered = match kind {
        None => merged,
        Some(kind) => {
            let id = Identity {
                is_map: kind == Kind::Object,
                merge_key: &merge_key,
            };
            let (named, server_only) = order::partition(merged, order, id)?;
            order::normalize(
                named,
                server_only,
                order,
                server.as_deref().unwrap_or_default(),
                id,
            )?
        }
    };
    original.insert(field.to_string(), Value::Array(ordered));
    take_key(patch, field);
    Ok(())
}

/// The list at `key`, if any; anything but a list is kube's ErrBadArgType.
fn list_at(map: &Map<String, Value>, key: &str) -> Result<Option<Vec<Value>>, PatchError> {
    match map.get(key) {
        None => Ok(None),
        Some(Value::Array(items)) => Ok(Some(items.clone())),
        Some(other) => Err(PatchError::Internal(gofmt::bad_arg_type(
            "[]interface {}",
            other,
        ))),
    }
}

/// The patch list must name its items in the directive's relative order
/// (kube's `validatePatchWithSetOrderList`).
fn validate_against_order(
    patched: &[Value],
    order: &[Value],
    merge_key: &str,
) -> Result<(), PatchError> {
    if order.is_empty() || patched.is_empty() {
        return Ok(());
    }
    let mut kept = Vec::with_capacity(patched.len());
    for item in patched {
        if !merge_key.is_empty() && !item.is_object() {
            return Err(PatchError::Internal(gofmt::bad_arg_type(
                "map[string]interface {}",
                item,
            )));
        }
        if merge_key.is_empty() || !is_delete_directive(item) {
            kept.push(item);
        }
    }
    let (mut p, mut s) = (0, 0);
    while p < kept.len() && s < order.len() {
        if kept[p].get(PATCH).is_some() {
            p += 1;
            continue;
        }
        if merge_key_equal(kept[p], &order[s], merge_key)? {
            p += 1;
        }
        s += 1;
    }
    if p < kept.len() {
        return Err(PatchError::Internal(format!(
            "the order in patch list:\n{}\n doesn't match {SET_ELEMENT_ORDER} list:\n{}",
            kube_rules::gofmt::v(&Value::Array(patched.to_vec())),
            kube_rules::gofmt::v(&Value::Array(order.to_vec()))
        )));
    }
    Ok(())
}

fn merge_key_equal(left: &Value, right: &Value, merge_key: &str) -> Result<bool, PatchError> {
    if merge_key.is_empty() {
        return Ok(left == right);
    }
    let key_of = |v: &Value| -> Result<Value, PatchError> {
        let map = v.as_object().ok_or_else(|| {
            PatchError::Internal(gofmt::bad_arg_type("map[string]interface {}", v))
        })?;
        map.get(merge_key)
            .cloned()
            .ok_or_else(|| PatchError::Internal(gofmt::no_merge_key(v, merge_key)))
    };
    Ok(key_of(left)? == key_of(right)?)
}

/// A patch value stored as is (new field, replaced list...): drops nulls,
/// `$patch: delete` items and the parallel-list directives; `None` when
/// nothing is left to store.
pub(super) fn clean_new_value(value: Value) -> Option<Value> {
    match value {
        Value::Object(mut map) => {
            let directive = take_key(&mut map, PATCH);
            if directive.as_ref().and_then(Value::as_str) == Some("delete") {
                return None;
            }
            let cleaned = clean_map(map);
            if directive.is_some() && cleaned.is_empty() {
                return None;
            }
            Some(Value::Object(cleaned))
        }
        Value::Array(items) => Some(Value::Array(clean_list(items))),
        other => Some(other),
    }
}

/// [`clean_new_value`] for every field of a map.
pub(super) fn clean_map(map: Map<String, Value>) -> Map<String, Value> {
    map.into_iter()
        .filter(|(k, v)| !v.is_null() && !is_parallel_directive(k))
        .filter_map(|(k, v)| clean_new_value(v).map(|v| (k, v)))
        .collect()
}

/// [`clean_new_value`] for every item of a list.
pub(super) fn clean_list(items: Vec<Value>) -> Vec<Value> {
    items.into_iter().filter_map(clean_new_value).collect()
}

fn is_parallel_directive(key: &str) -> bool {
    key == RETAIN_KEYS
        || key.starts_with(SET_ELEMENT_ORDER)
        || key.starts_with(DELETE_FROM_PRIMITIVE_LIST)
}

/// Removes `key` keeping the order of the other fields.
pub(super) fn take_key(map: &mut Map<String, Value>, key: &str) -> Option<Value> {
    let value = map.get(key).cloned();
    if value.is_some() {
        map.retain(|k, _| k != key);
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn retain_keys_drops_unlisted_original_fields() {
        let mut original = map(json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}));
        let mut patch = map(json!({"$retainKeys": ["type"], "type": "Recreate"}));
        apply_retain_keys(&mut original, &mut patch).unwrap();
        assert_eq!(Value::Object(original), json!({"type": "RollingUpdate"}));
        assert_eq!(Value::Object(patch), json!({"type": "Recreate"}));
    }

    #[test]
    fn retain_keys_must_list_patched_fields() {
        let mut original = Map::new();
        let mut patch = map(json!({"$retainKeys": ["type"], "other": 1}));
        assert_eq!(
            apply_retain_keys(&mut original, &mut patch),
            Err(PatchError::BadRequest(
                "invalid patch format of retainKeys".into()
            ))
        );
        let mut patch = map(json!({"$retainKeys": "type"}));
        assert!(matches!(
            apply_retain_keys(&mut original, &mut patch),
            Err(PatchError::BadRequest(_))
        ));
    }

    #[test]
    fn new_values_lose_directives_and_nulls() {
        let value = json!({"a": null, "b": [{"$patch": "delete", "name": "x"}, {"name": "y", "c": null}],
                           "$setElementOrder/b": [{"name": "y"}], "d": {"$patch": "replace", "e": 1}});
        assert_eq!(
            clean_new_value(value),
            Some(json!({"b": [{"name": "y"}], "d": {"e": 1}}))
        );
    }
}
