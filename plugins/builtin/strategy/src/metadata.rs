//! `ValidateObjectMeta`'s checks every kind gets, in kube's order: label
//! keys and values, annotation keys and their total size, ownerReferences'
//! required fields and single controller, and finalizer names
//! (`k8s.io/apimachinery/pkg/api/validation/objectmeta.go`). Each distinct
//! finalizer is checked once, so a huge list of the same name costs little.

use std::collections::HashSet;

use capstan_plugin_sdk::Cause;
use serde_json::{Map, Value};

use crate::common::{self, text};
use kube_rules::{gofmt, label_value, qualified_name};

/// kube's `TotalAnnotationSizeLimitB` (256 kB).
const ANNOTATIONS_SIZE_LIMIT: usize = 256 * 1024;

/// The causes for the object's metadata.
pub fn validate(object: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let Some(meta) = object.get("metadata").and_then(Value::as_object) else {
        return causes;
    };
    labels("metadata.labels", string_map(meta, "labels"), &mut causes);
    annotations(string_map(meta, "annotations"), &mut causes);
    owner_references(list(meta, "ownerReferences"), &mut causes);
    finalizers(list(meta, "finalizers"), &mut causes);
    causes
}

fn list<'a>(meta: &'a Map<String, Value>, key: &str) -> &'a [Value] {
    meta.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn string_map<'a>(
    meta: &'a Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = (&'a str, &'a str)> {
    meta.get(key)
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default()))
}

/// `ValidateLabels` of a labels map at `field` (e.g. a template's).
pub fn validate_labels(field: &str, map: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    if let Some(map) = map.as_object() {
        let pairs = map
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default()));
        labels(field, pairs, &mut causes);
    }
    causes
}

fn labels<'a>(field: &str, map: impl Iterator<Item = (&'a str, &'a str)>, causes: &mut Vec<Cause>) {
    for (key, value) in map {
        common::invalid_each(causes, field, key, qualified_name(key));
        common::invalid_each(causes, field, value, label_value(value));
    }
}

fn annotations<'a>(map: impl Iterator<Item = (&'a str, &'a str)>, causes: &mut Vec<Cause>) {
    let field = "metadata.annotations";
    let mut size = 0;
    for (key, value) in map {
        common::invalid_each(causes, field, key, qualified_name(&key.to_lowercase()));
        size += key.len() + value.len();
    }
    if size > ANNOTATIONS_SIZE_LIMIT {
        causes.push(common::too_long(field, ANNOTATIONS_SIZE_LIMIT));
    }
}

/// The version of an apiVersion (`schema.FromAPIVersionAndKind`): "" when
/// it is empty or has more than one '/'.
fn version_of(api_version: &str) -> &str {
    match api_version.split('/').collect::<Vec<_>>().as_slice() {
        [version] => version,
        [_, version] => version,
        _ => "",
    }
}

fn owner_references(refs: &[Value], causes: &mut Vec<Cause>) {
    let at = |field: &str| format!("metadata.ownerReferences.{field}");
    let mut first_controller: Option<String> = None;
    for r in refs {
        let empty = |field: &str, what: &str| {
            let value = text(r, field);
            let message = format!("{what} must not be empty");
            common::invalid_str(&at(field), value, &message)
        };
        if version_of(text(r, "apiVersion")).is_empty() {
            causes.push(empty("apiVersion", "version"));
        }
        for (field, what) in [("kind", "kind"), ("name", "name"), ("uid", "uid")] {
            if text(r, field).is_empty() {
                causes.push(empty(field, what));
            }
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            let current = format!("{}/{}", text(r, "kind"), text(r, "name"));
            match &first_controller {
                Some(first) => causes.push(common::invalid(
                    "metadata.ownerReferences",
                    "[]v1.OwnerReference{...}",
                    &format!(
                        "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}"
                    ),
                )),
                None => first_controller = Some(current),
            }
        }
    }
}

fn finalizers(list: &[Value], causes: &mut Vec<Cause>) {
    let field = "metadata.finalizers";
    let mut seen: HashSet<&str> = HashSet::new();
    for finalizer in list.iter().map(|f| f.as_str().unwrap_or_default()) {
        if seen.insert(finalizer) {
            common::invalid_each(causes, field, finalizer, qualified_name(finalizer));
        }
    }
    if seen.contains("orphan") && seen.contains("foregroundDeletion") {
        let names: Vec<&str> = list
            .iter()
            .map(|f| f.as_str().unwrap_or_default())
            .collect();
        causes.push(common::invalid(
            field,
            &gofmt::strings(&names),
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(object: Value) -> Vec<String> {
        validate(&object)
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    #[test]
    fn label_keys_and_values() {
        assert!(messages(
            json!({"metadata": {"labels": {"app.kubernetes.io/name": "web", "a": ""}}})
        )
        .is_empty());
        assert_eq!(
            messages(json!({"metadata": {"labels": {"a b": "-x"}}})),
            vec![
                "metadata.labels: Invalid value: \"a b\": name part must consist of alphanumeric \
                 characters, '-', '_' or '.', and must start and end with an alphanumeric character \
                 (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is \
                 '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                "metadata.labels: Invalid value: \"-x\": a valid label must be an empty string or \
                 consist of alphanumeric characters, '-', '_' or '.', and must start and end with an \
                 alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for \
                 validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            ]
        );
        assert_eq!(
            messages(json!({"metadata": {"labels": {"/a": "x".repeat(64)}}})),
            vec![
                "metadata.labels: Invalid value: \"/a\": prefix part must be non-empty".to_string(),
                format!(
                    "metadata.labels: Invalid value: \"{}\": must be no more than 63 characters",
                    "x".repeat(64)
                ),
            ]
        );
    }

    #[test]
    fn annotations_keys_ignore_case_and_total_size() {
        assert!(messages(
            json!({"metadata": {"annotations": {"Example.com/Key": "any value at all"}}})
        )
        .is_empty());
        assert_eq!(
            messages(json!({"metadata": {"annotations": {"a/b/c": "v"}}}))[0],
            "metadata.annotations: Invalid value: \"a/b/c\": a qualified name must consist of \
             alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric \
             character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is \
             '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and \
             '/' (e.g. 'example.com/MyName')"
        );
        let big = json!({"metadata": {"annotations": {"a": "x".repeat(ANNOTATIONS_SIZE_LIMIT)}}});
        assert_eq!(
            messages(big),
            vec!["metadata.annotations: Too long: may not be more than 262144 bytes"]
        );
    }

    #[test]
    fn owner_references_need_their_fields() {
        assert_eq!(
            messages(
                json!({"metadata": {"ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet"}]}})
            ),
            vec![
                "metadata.ownerReferences.name: Invalid value: \"\": name must not be empty",
                "metadata.ownerReferences.uid: Invalid value: \"\": uid must not be empty",
            ]
        );
        assert_eq!(
            messages(json!({"metadata": {"ownerReferences": [{"name": "o", "uid": "u", "kind": "K"}]}})),
            vec!["metadata.ownerReferences.apiVersion: Invalid value: \"\": version must not be empty"]
        );
    }

    #[test]
    fn many_identical_finalizers_are_checked_once() {
        let list = vec![""; 1_000_000];
        let causes = messages(json!({"metadata": {"finalizers": list}}));
        assert_eq!(causes.len(), 2);
        assert_eq!(
            causes[0],
            "metadata.finalizers: Invalid value: \"\": name part must be non-empty"
        );
        assert!(
            messages(json!({"metadata": {"finalizers": ["kubernetes", "example.com/x"]}}))
                .is_empty()
        );
        assert_eq!(
            messages(json!({"metadata": {"finalizers": ["orphan", "foregroundDeletion"]}})),
            vec!["metadata.finalizers: Invalid value: []string{\"orphan\", \"foregroundDeletion\"}: \
                  finalizer orphan and foregroundDeletion cannot be both set"]
        );
    }
}
