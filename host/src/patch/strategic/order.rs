//! Order of a merged list, as kube's strategic merge patch computes it: items
//! named by the patch (or by `$setElementOrder`) keep the patch's order, items
//! only on the server keep theirs, and the two are interleaved by server order.

use serde_json::Value;

use crate::apimachinery::gofmt;
use crate::patch::PatchError;

/// How list items are identified: objects by their merge key, scalars by value.
#[derive(Clone, Copy)]
pub(super) struct Identity<'k> {
    /// Items are objects (Go's `reflect.Map` element kind).
    pub is_map: bool,
    /// The merge key; empty when none is declared.
    pub merge_key: &'k str,
}

impl Identity<'_> {
    fn same(&self, a: &Value, b: &Value) -> bool {
        if self.is_map {
            // Go compares `item[mergeKey]`, where a missing key reads as nil.
            a.get(self.merge_key) == b.get(self.merge_key)
        } else {
            a == b
        }
    }

    fn index_in(&self, list: &[Value], item: &Value) -> Option<usize> {
        list.iter().position(|v| self.same(item, v))
    }
}

/// Splits `merged` into items present in `present_in` and server-only items.
pub(super) fn partition(
    merged: Vec<Value>,
    present_in: &[Value],
    id: Identity,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let mut named = Vec::with_capacity(merged.len());
    let mut server_only = Vec::with_capacity(merged.len());
    for item in merged {
        let found = if id.is_map {
            map_is_listed(&item, present_in, id.merge_key)?
        } else {
            present_in.contains(&item)
        };
        if found {
            named.push(item);
        } else {
            server_only.push(item);
        }
    }
    Ok((named, server_only))
}

/// Whether a list of objects holds one with the same merge key value as `item`.
fn map_is_listed(item: &Value, list: &[Value], merge_key: &str) -> Result<bool, PatchError> {
    let Some(map) = item.as_object() else {
        return Err(PatchError::Internal(gofmt::bad_arg_type(
            "map[string]interface {}",
            item,
        )));
    };
    let Some(wanted) = map.get(merge_key) else {
        return Err(PatchError::Internal(gofmt::no_merge_key(item, merge_key)));
    };
    find_by_key(list, merge_key, wanted).map(|found| found.is_some())
}

/// Position of the first object in `list` whose `merge_key` equals `wanted`.
pub(super) fn find_by_key(
    list: &[Value],
    merge_key: &str,
    wanted: &Value,
) -> Result<Option<usize>, PatchError> {
    for (i, v) in list.iter().enumerate() {
        let Some(map) = v.as_object() else {
            return Err(PatchError::Internal(format!(
                "value for key {i} is not a map"
            )));
        };
        if map.get(merge_key) == Some(wanted) {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// Sorts `named` by `named_order` and `server_only` by `server_order`, then
/// interleaves them by server order (kube's `normalizeElementOrder`).
pub(super) fn normalize(
    named: Vec<Value>,
    server_only: Vec<Value>,
    named_order: &[Value],
    server_order: &[Value],
    id: Identity,
) -> Result<Vec<Value>, PatchError> {
    let named = sort_by_order(named, named_order, id)?;
    let server_only = sort_by_order(server_only, server_order, id)?;
    Ok(interleave(server_only, named, server_order, id))
}

/// Stable sort by position in `order`; `$patch: delete` items go last.
fn sort_by_order(
    items: Vec<Value>,
    order: &[Value],
    id: Identity,
) -> Result<Vec<Value>, PatchError> {
    let mut items = items;
    let mut deletes = Vec::new();
    if id.is_map {
        validate_merge_keys(&items, id.merge_key)?;
        validate_merge_keys(order, id.merge_key)?;
        let (keep, delete): (Vec<Value>, Vec<Value>) =
            items.into_iter().partition(|v| !is_delete_directive(v));
        items = keep;
        deletes = delete;
    }
    items.sort_by_key(|item| id.index_in(order, item).unwrap_or(usize::MAX));
    items.extend(deletes);
    Ok(items)
}

fn validate_merge_keys(list: &[Value], merge_key: &str) -> Result<(), PatchError> {
    for item in list {
        match item.as_object() {
            None => {
                return Err(PatchError::Internal(gofmt::bad_arg_type(
                    "map[string]interface {}",
                    item,
                )))
            }
            Some(map) if !map.contains_key(merge_key) => {
                return Err(PatchError::Internal(gofmt::no_merge_key(item, merge_key)))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

pub(super) fn is_delete_directive(item: &Value) -> bool {
    item.get("$patch").and_then(Value::as_str) == Some("delete")
}

/// kube's `mergeSortedSlice`: a server-only item goes first only when both it
/// and the next named item are on the server and it comes earlier there.
fn interleave(
    server_only: Vec<Value>,
    named: Vec<Value>,
    server_order: &[Value],
    id: Identity,
) -> Vec<Value> {
    let mut out = Vec::with_capacity(server_only.len() + named.len());
    let mut left = server_only.into_iter().peekable();
    let mut right = named.into_iter().peekable();
    while let (Some(l), Some(r)) = (left.peek(), right.peek()) {
        let left_first = match (id.index_in(server_order, l), id.index_in(server_order, r)) {
            (Some(li), Some(ri)) => li < ri,
            _ => false,
        };
        let next = if left_first {
            left.next()
        } else {
            right.next()
        };
        out.extend(next);
    }
    out.extend(left);
    out.extend(right);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const BY_NAME: Identity = Identity {
        is_map: true,
        merge_key: "name",
    };
    const BY_VALUE: Identity = Identity {
        is_map: false,
        merge_key: "",
    };

    fn names(list: &[Value]) -> Vec<&str> {
        list.iter().filter_map(|v| v["name"].as_str()).collect()
    }

    #[test]
    fn new_patch_items_come_before_later_server_items() {
        let server = vec![json!({"name": "a"}), json!({"name": "b"})];
        let merged = vec![
            json!({"name": "a"}),
            json!({"name": "b"}),
            json!({"name": "c"}),
        ];
        let patch = vec![json!({"name": "c"})];
        let (named, only) = partition(merged, &patch, BY_NAME).unwrap();
        let out = normalize(named, only, &patch, &server, BY_NAME).unwrap();
        assert_eq!(names(&out), ["c", "a", "b"]);
    }

    #[test]
    fn patched_items_keep_their_server_position() {
        let server = vec![
            json!({"name": "a"}),
            json!({"name": "b"}),
            json!({"name": "c"}),
        ];
        let patch = vec![json!({"name": "b"}), json!({"name": "d"})];
        let merged = vec![
            server[0].clone(),
            server[1].clone(),
            server[2].clone(),
            json!({"name": "d"}),
        ];
        let (named, only) = partition(merged, &patch, BY_NAME).unwrap();
        let out = normalize(named, only, &patch, &server, BY_NAME).unwrap();
        assert_eq!(names(&out), ["a", "b", "d", "c"]);
    }

    #[test]
    fn scalars_are_ordered_by_value() {
        let server = vec![json!(1), json!(2)];
        let patch = vec![json!(2), json!(3)];
        let (named, only) =
            partition(vec![json!(1), json!(2), json!(3)], &patch, BY_VALUE).unwrap();
        assert_eq!(
            normalize(named, only, &patch, &server, BY_VALUE).unwrap(),
            [json!(1), json!(2), json!(3)]
        );
    }

    #[test]
    fn items_without_merge_key_are_internal_errors() {
        let err = partition(vec![json!({"image": "x"})], &[], BY_NAME).unwrap_err();
        assert_eq!(
            err,
            PatchError::Internal(
                "map: map[image:x] does not contain declared merge key: name".into()
            )
        );
    }
}
