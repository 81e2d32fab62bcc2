//! Pruning as kube's CR decoder does it (crdHandler's schema coercer):
//! unknown fields of the root `metadata` (ObjectMeta's fields only), then
//! every field the structural schema does not specify (apiVersion, kind and
//! metadata of the root and of embedded resources kept), then non-nullable
//! nulls without a default, then unknown fields of embedded resources'
//! metadata. The dropped paths come back in that order, each group as kube
//! orders it.

use super::node::{Additional, Node};
use serde_json::{Map, Value};

const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// ObjectMeta's JSON fields.
const OBJECT_META: [&str; 15] = [
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];
const OWNER_REFERENCE: [&str; 6] = [
    "apiVersion",
    "kind",
    "name",
    "uid",
    "controller",
    "blockOwnerDeletion",
];
const MANAGED_FIELDS_ENTRY: [&str; 7] = [
    "manager",
    "operation",
    "apiVersion",
    "time",
    "fieldsType",
    "fieldsV1",
    "subresource",
];

/// Prunes the whole custom resource `obj` against its version's schema.
pub(super) fn prune_resource(obj: &mut Value, root: &Node) -> Vec<String> {
    let mut dropped = Vec::new();
    if let Some(meta) = obj.get_mut("metadata") {
        dropped.extend(prune_object_meta(meta, "metadata"));
    }
    let mut paths = Vec::new();
    prune(obj, Some(root), true, &mut String::new(), &mut paths);
    paths.sort();
    dropped.extend(paths);
    prune_nulls(obj, Some(root));
    let mut embedded = Vec::new();
    coerce_embedded(obj, root, &mut String::new(), &mut embedded);
    embedded.sort();
    dropped.extend(embedded);
    dropped
}

/// Prunes a default value with the schema it sits at, as kube does when it
/// builds the structural schema.
pub(super) fn prune_default(value: &mut Value, node: &Node) {
    prune(
        value,
        Some(node),
        node.embedded,
        &mut String::new(),
        &mut Vec::new(),
    );
}

/// kube's structural pruning. `keep_meta` is the embedded-resource flag
/// (apiVersion, kind and metadata are kept). `path` is the JSON path built
/// as kube's UnknownFieldPathOptions builds it.
fn prune(
    x: &mut Value,
    s: Option<&Node>,
    keep_meta: bool,
    path: &mut String,
    out: &mut Vec<String>,
) {
    if let Some(node) = s.filter(|n| n.preserve_unknown) {
        skip_prune(x, node, keep_meta, path, out);
        return;
    }
    match x {
        Value::Object(map) => prune_map(map, s, keep_meta, path, out),
        Value::Array(items) => {
            let item_schema = s.and_then(|n| n.items.as_deref());
            for (i, item) in items.iter_mut().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                prune(
                    item,
                    item_schema,
                    item_schema.is_some_and(|n| n.embedded),
                    path,
                    out,
                );
                path.truncate(len);
            }
        }
        _ => {}
    }
}

fn prune_map(
    map: &mut Map<String, Value>,
    s: Option<&Node>,
    keep_meta: bool,
    path: &mut String,
    out: &mut Vec<String>,
) {
    let Some(node) = s else {
        for key in map.keys() {
            out.push(join_key(path, key));
        }
        map.clear();
        return;
    };
    map.retain(|key, value| {
        if keep_meta && META_FIELDS.contains(&key.as_str()) {
            return true;
        }
        let child = match (node.properties.get(key), &node.additional) {
            (Some(prop), _) => Some(Some(prop)),
            (None, Some(Additional::Schema(schema))) => Some(Some(schema.as_ref())),
            (None, Some(Additional::Allows(_))) => Some(None),
            (None, None) => None,
        };
        let Some(child) = child else {
            if !META_FIELDS.contains(&key.as_str()) || !path.is_empty() {
                out.push(join_key(path, key));
            }
            return false;
        };
        let len = path.len();
        *path = join_key(path, key);
        prune(value, child, child.is_some_and(|n| n.embedded), path, out);
        path.truncate(len);
        true
    });
}

/// x-kubernetes-preserve-unknown-fields: unknown fields stay, known ones
/// are still pruned by their own schema.
fn skip_prune(
    x: &mut Value,
    node: &Node,
    keep_meta: bool,
    path: &mut String,
    out: &mut Vec<String>,
) {
    match x {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                if keep_meta && META_FIELDS.contains(&key.as_str()) {
                    continue;
                }
                let child = match (node.properties.get(key), &node.additional) {
                    (Some(prop), _) => Some(Some(prop)),
                    (None, Some(Additional::Schema(schema))) => Some(Some(schema.as_ref())),
                    (None, Some(Additional::Allows(_))) => Some(None),
                    (None, None) => None,
                };
                if let Some(child) = child {
                    let len = path.len();
                    *path = join_key(path, key);
                    prune(value, child, child.is_some_and(|n| n.embedded), path, out);
                    path.truncate(len);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = node.items.as_deref() {
                for (i, item) in items.iter_mut().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    skip_prune(item, item_schema, item_schema.embedded, path, out);
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
}

fn join_key(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// PruneNonNullableNullsWithoutDefaults: a null where the schema is not
/// nullable and has no default is dropped (those with a default are
/// defaulted later).
fn prune_nulls(x: &mut Value, s: Option<&Node>) {
    match x {
        Value::Object(map) => map.retain(|key, value| {
            let child = s.and_then(|n| n.field(key));
            let drop = value.is_null() && child.is_some_and(|c| !c.nullable && c.default.is_none());
            if !drop {
                prune_nulls(value, child);
            }
            !drop
        }),
        Value::Array(items) => {
            let item_schema = s.and_then(|n| n.items.as_deref());
            for item in items {
                prune_nulls(item, item_schema);
            }
        }
        _ => {}
    }
}

/// Unknown fields of an ObjectMeta (and of its owner references and
/// managed fields entries), removed; their paths in the order a strict
/// decode of Go's sorted JSON meets them.
fn prune_object_meta(meta: &mut Value, prefix: &str) -> Vec<String> {
    let mut dropped = Vec::new();
    let Some(map) = meta.as_object_mut() else {
        return dropped;
    };
    let mut keys: Vec<String> = map.keys().cloned().collect();
    keys.sort();
    for key in keys {
        if !OBJECT_META.contains(&key.as_str()) {
            map.shift_remove(&key);
            dropped.push(format!("{prefix}.{key}"));
            continue;
        }
        let allowed: &[&str] = match key.as_str() {
            "ownerReferences" => &OWNER_REFERENCE,
            "managedFields" => &MANAGED_FIELDS_ENTRY,
            _ => continue,
        };
        if let Some(Value::Array(items)) = map.get_mut(&key) {
            for (i, item) in items.iter_mut().enumerate() {
                let at = format!("{prefix}.{key}[{i}]");
                dropped.extend(prune_fields(item, allowed, &at));
            }
        }
    }
    dropped
}

fn prune_fields(item: &mut Value, allowed: &[&str], at: &str) -> Vec<String> {
    let Some(map) = item.as_object_mut() else {
        return Vec::new();
    };
    let mut unknown: Vec<String> = map
        .keys()
        .filter(|k| !allowed.contains(&k.as_str()))
        .cloned()
        .collect();
    unknown.sort();
    map.retain(|k, _| allowed.contains(&k.as_str()));
    unknown.into_iter().map(|k| format!("{at}.{k}")).collect()
}

/// objectmeta's Coerce: the metadata of every embedded resource keeps only
/// ObjectMeta's fields. `path` is a field path (`spec.items[0]`, map keys
/// as `[key]`).
fn coerce_embedded(x: &mut Value, node: &Node, path: &mut String, out: &mut Vec<String>) {
    match x {
        Value::Object(map) => {
            if node.embedded {
                if let Some(meta) = map.get_mut("metadata") {
                    out.extend(prune_object_meta(meta, &join_key(path, "metadata")));
                }
            }
            for (key, value) in map.iter_mut() {
                let (child, segment) = match node.properties.get(key) {
                    Some(prop) => (Some(prop), join_key(path, key)),
                    None => (node.additional_schema(), format!("{path}[{key}]")),
                };
                if let Some(child) = child {
                    let mut child_path = segment;
                    coerce_embedded(value, child, &mut child_path, out);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = node.items.as_deref() {
                for (i, item) in items.iter_mut().enumerate() {
                    let mut child_path = format!("{path}[{i}]");
                    coerce_embedded(item, item_schema, &mut child_path, out);
                }
            }
        }
        _ => {}
    }
}
