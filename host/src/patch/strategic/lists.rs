//! Lists under strategic merge patch: replaced unless the field's strategy is
//! `merge`; then lists of objects merge item by item on the merge key
//! (`$patch: delete|replace` items included) and lists of scalars are unioned,
//! or shrunk by a `$deleteFromPrimitiveList/<field>` list.

use serde_json::Value;

use super::directives::{clean_list, clean_new_value, take_key, PATCH};
use super::order::{self, find_by_key, Identity};
use super::schema::{PatchMeta, Schema, Strategy};
use crate::apimachinery::gofmt;
use crate::patch::PatchError;

/// What a list holds, as far as merging cares (Go's element `reflect.Kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Null,
    Bool,
    Number,
    String,
    Object,
    List,
}

fn kind_of(v: &Value) -> Kind {
    match v {
        Value::Null => Kind::Null,
        Value::Bool(_) => Kind::Bool,
        Value::Number(_) => Kind::Number,
        Value::String(_) => Kind::String,
        Value::Object(_) => Kind::Object,
        Value::Array(_) => Kind::List,
    }
}

/// The one item kind shared by both lists; `None` when both are empty.
pub(super) fn element_kind(a: &[Value], b: &[Value]) -> Result<Option<Kind>, PatchError> {
    let mut kinds = a.iter().chain(b).map(kind_of);
    let Some(first) = kinds.next() else {
        return Ok(None);
    };
    if first == Kind::List {
        return Err(PatchError::Invalid(
            "lists of lists are not supported".into(),
        ));
    }
    if kinds.any(|k| k != first) {
        let both = Value::Array(vec![Value::Array(a.to_vec()), Value::Array(b.to_vec())]);
        return Err(PatchError::Internal(format!(
            "list element types are not identical: {}",
            kube_rules::gofmt::v(&both)
        )));
    }
    Ok(Some(first))
}

/// Merges the patch list of a field into its current list.
pub(super) fn merge_list(
    original: Vec<Value>,
    patch: Vec<Value>,
    items: Schema,
    meta: &PatchMeta,
    is_delete_list: bool,
) -> Result<Vec<Value>, PatchError> {
    if meta.strategy != Strategy::Merge && !is_delete_list {
        return Ok(clean_list(patch));
    }
    let Some(kind) = element_kind(&original, &patch)? else {
        return Ok(original);
    };
    let merge_key = meta.merge_key.as_deref().unwrap_or_default();
    if kind != Kind::Object {
        return merge_scalars(original, patch, is_delete_list, items.for_apply());
    }
    if merge_key.is_empty() {
        return Err(PatchError::Internal(format!(
            "cannot merge lists without merge key for {}",
            items.name()
        )));
    }
    merge_objects(original, patch, merge_key, items)
}

/// Union of two scalar lists (or the original minus a deletion list).
fn merge_scalars(
    original: Vec<Value>,
    patch: Vec<Value>,
    is_delete_list: bool,
    for_apply: bool,
) -> Result<Vec<Value>, PatchError> {
    if is_delete_list {
        return Ok(original
            .into_iter()
            .filter(|v| !patch.contains(v))
            .collect());
    }
    let mut merged: Vec<Value> = Vec::with_capacity(original.len() + patch.len());
    for v in original.iter().chain(&patch) {
        if !merged.contains(v) {
            merged.push(v.clone());
        }
    }
    if for_apply {
        // Server-side apply keeps the live order and appends new values.
        return Ok(merged);
    }
    let id = Identity {
        is_map: false,
        merge_key: "",
    };
    let (named, server_only) = order::partition(merged, &patch, id)?;
    order::normalize(named, server_only, &patch, &original, id)
}

/// Item-by-item merge of two lists of objects on `merge_key`.
fn merge_objects(
    original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
    items: Schema,
) -> Result<Vec<Value>, PatchError> {
    let (original, patch) = apply_item_directives(original, patch, merge_key)?;
    let mut merged = original.clone();
    for item in &patch {
        let Some(wanted) = item.get(merge_key) else {
            return Err(PatchError::Internal(gofmt::no_merge_key(item, merge_key)));
        };
        match find_by_key(&merged, merge_key, wanted)? {
            Some(i) => {
                let current = object_of(std::mem::take(&mut merged[i]));
                merged[i] =
                    Value::Object(super::merge_map(current, object_of(item.clone()), items)?);
            }
            None => merged.extend(clean_new_value(item.clone())),
        }
    }
    if items.for_apply() {
        // Server-side apply keeps the live order and appends new items.
        return Ok(merged);
    }
    let id = Identity {
        is_map: true,
        merge_key,
    };
    let (named, server_only) = order::partition(merged, &patch, id)?;
    order::normalize(named, server_only, &patch, &original, id)
}

/// Handles `$patch` items: `delete` removes the matching originals, `replace`
/// makes the rest of the patch list the whole list, `merge` is a plain item.
/// Returns the original list and the patch items left to merge.
fn apply_item_directives(
    original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let mut original = original;
    let mut rest = Vec::with_capacity(patch.len());
    let mut replace = false;
    for item in patch {
        let Some(directive) = item.get(PATCH).cloned() else {
            rest.push(item);
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                let Some(wanted) = item.get(merge_key) else {
                    return Err(PatchError::Internal(gofmt::no_merge_key(&item, merge_key)));
                };
                original.retain(|o| o.get(merge_key) != Some(wanted));
            }
            Some("replace") => replace = true,
            Some("merge") => {
                let mut plain = object_of(item);
                take_key(&mut plain, PATCH);
                rest.push(Value::Object(plain));
            }
            _ => {
                return Err(PatchError::Internal(format!(
                    "unknown patch type: {} in map: {}",
                    kube_rules::gofmt::v(&directive),
                    kube_rules::gofmt::v(&item)
                )))
            }
        }
    }
    if replace {
        return Ok((rest, Vec::new()));
    }
    Ok((original, rest))
}

fn object_of(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};

    fn merge_meta(key: Option<&str>) -> PatchMeta {
        PatchMeta {
            strategy: Strategy::Merge,
            merge_key: key.map(str::to_string),
        }
    }

    fn run(
        original: Value,
        patch: Value,
        meta: &PatchMeta,
        is_delete_list: bool,
    ) -> Result<Value, PatchError> {
        let schemas = Map::new();
        let schema = Schema::root(None, &schemas);
        let list = |v: Value| v.as_array().cloned().unwrap();
        merge_list(list(original), list(patch), schema, meta, is_delete_list).map(Value::Array)
    }

    #[test]
    fn lists_without_merge_strategy_are_replaced() {
        let out = run(
            json!(["a", "b"]),
            json!(["c"]),
            &PatchMeta::default(),
            false,
        )
        .unwrap();
        assert_eq!(out, json!(["c"]));
    }

    #[test]
    fn scalar_lists_union_and_delete() {
        let meta = merge_meta(None);
        assert_eq!(
            run(json!(["a", "b"]), json!(["b", "c"]), &meta, false).unwrap(),
            json!(["a", "b", "c"])
        );
        assert_eq!(
            run(json!(["a", "b", "c"]), json!(["b"]), &meta, true).unwrap(),
            json!(["a", "c"])
        );
    }

    #[test]
    fn replace_directive_item_swaps_the_whole_list() {
        let meta = merge_meta(Some("name"));
        let out = run(
            json!([{"name": "a", "image": "x"}, {"name": "b"}]),
            json!([{"$patch": "replace"}, {"name": "c", "image": "z"}]),
            &meta,
            false,
        )
        .unwrap();
        assert_eq!(out, json!([{"name": "c", "image": "z"}]));
    }

    #[test]
    fn item_errors_match_kube() {
        let meta = merge_meta(Some("name"));
        assert_eq!(
            run(
                json!([{"name": "a"}]),
                json!([{"image": "x"}]),
                &meta,
                false
            ),
            Err(PatchError::Internal(
                "map: map[image:x] does not contain declared merge key: name".into()
            ))
        );
        assert_eq!(
            run(json!([["a"]]), json!([["b"]]), &meta, false),
            Err(PatchError::Invalid(
                "lists of lists are not supported".into()
            ))
        );
        assert_eq!(
            run(
                json!([{"name": "a"}]),
                json!([{"name": "a", "$patch": "bogus"}]),
                &meta,
                false
            ),
            Err(PatchError::Internal(
                "unknown patch type: bogus in map: map[$patch:bogus name:a]".into()
            ))
        );
    }
}
