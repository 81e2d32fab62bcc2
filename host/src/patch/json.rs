//! `application/json-patch+json` (RFC 6902). The `json_patch` crate performs
//! the edits; this file decides, before each edit, what evanphx/json-patch v4
//! (the library kube-apiserver uses) would do, so results and error texts match
//! kube: `replace` of a missing object key adds it, `test` of a missing key
//! against `null` passes, negative array indices count from the end.

use serde_json::{json, Map, Value};

mod pointer;

use self::pointer::{existing_index, insert_index, locate, pointer, Parent};
use super::PatchError;
use crate::apimachinery::gofmt;

/// kube-apiserver's `maxJSONPatchOperations`.
const MAX_OPERATIONS: usize = 10000;

/// kube-apiserver's `JSONPatchMaxCopyBytes` (evanphx's
/// `AccumulatedCopySizeLimit`): the most bytes of JSON all `copy` operations
/// of one patch may add, so a small patch cannot blow an object up.
const MAX_COPY_BYTES: usize = 3 * 1024 * 1024;

type Op = Map<String, Value>;

/// Applies a JSON patch body to `original`.
pub(super) fn apply(original: &Value, body: &[u8]) -> Result<Value, PatchError> {
    let ops = decode(body)?;
    if ops.len() > MAX_OPERATIONS {
        return Err(PatchError::TooLarge(format!(
            "The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, got {}",
            ops.len()
        )));
    }
    let mut doc = original.clone();
    let mut copied = 0usize;
    for op in &ops {
        apply_op(&mut doc, op, &mut copied).map_err(PatchError::Invalid)?;
    }
    Ok(doc)
}

/// Applies the operations a MutatingAdmissionPolicy built (kube's
/// `jsonPatcher`): as a PATCH request's would be, except that a failed
/// `test` leaves the object as it was (`Ok(None)`), as kube does.
pub fn apply_policy_patch(original: &Value, ops: &[Op]) -> Result<Option<Value>, String> {
    if ops.len() > MAX_OPERATIONS {
        return Err(format!(
            "The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, got {}",
            ops.len()
        ));
    }
    let mut doc = original.clone();
    let mut copied = 0usize;
    for op in ops {
        match apply_op(&mut doc, op, &mut copied) {
            Err(e) if op.get("op") == Some(&json!("test")) && e.starts_with("testing value ") => {
                return Ok(None)
            }
            Err(e) => return Err(e),
            Ok(()) => {}
        }
    }
    Ok(Some(doc))
}

/// Parses the body as a list of operation objects (`null` is an empty list).
fn decode(body: &[u8]) -> Result<Vec<Op>, PatchError> {
    let parsed: Value = serde_json::from_slice(body)
        .map_err(|e| PatchError::BadRequest(gofmt::syntax_error(body, &e)))?;
    let items = match parsed {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        other => {
            return Err(PatchError::BadRequest(gofmt::unmarshal_error(
                &other,
                "jsonpatch.Patch",
            )))
        }
    };
    items
        .into_iter()
        .map(|item| match item {
            Value::Object(op) => Ok(op),
            Value::Null => Ok(Op::new()),
            other => Err(PatchError::BadRequest(gofmt::unmarshal_error(
                &other,
                "jsonpatch.Operation",
            ))),
        })
        .collect()
}

/// Applies one operation; `copied` is the JSON size all copies added so far.
fn apply_op(doc: &mut Value, op: &Op, copied: &mut usize) -> Result<(), String> {
    let kind = op.get("op").and_then(Value::as_str).unwrap_or("unknown");
    match kind {
        "add" => add(doc, op),
        "remove" => remove(doc, op),
        "replace" => replace(doc, op),
        "move" => move_op(doc, op),
        "copy" => copy(doc, op, copied),
        "test" => test(doc, op),
        other => Err(format!("Unexpected kind: {other}")),
    }
}

fn add(doc: &mut Value, op: &Op) -> Result<(), String> {
    let path = path_field(op)
        .map_err(|_| "add operation failed to decode path: missing value".to_string())?;
    insert(doc, &path, value_field(op)).map_err(|failure| match failure {
        AddFailure::Missing => {
            format!("add operation does not apply: doc is missing path: \"{path}\": missing value")
        }
        AddFailure::Inner(e) => format!("error in add for path: '{path}': {e}"),
    })
}

fn remove(doc: &mut Value, op: &Op) -> Result<(), String> {
    let path = path_field(op)
        .map_err(|_| "remove operation failed to decode path: missing value".to_string())?;
    let slot = locate(doc, &path).ok_or_else(|| {
        format!("remove operation does not apply: doc is missing path: \"{path}\": missing value")
    })?;
    let token = match slot.parent {
        Parent::Object { has_key: true } => slot.key.clone(),
        Parent::Object { has_key: false } => {
            let key = &slot.key;
            return Err(format!(
                "error in remove for path: '{path}': Unable to remove nonexistent key: {key}: missing value"
            ));
        }
        Parent::Array { len } => existing_index(&slot.key, len)
            .map_err(|e| format!("error in remove for path: '{path}': {e}"))?
            .to_string(),
    };
    run(doc, "remove", &slot.child(token), None)
}

fn replace(doc: &mut Value, op: &Op) -> Result<(), String> {
    let path =
        path_field(op).map_err(|e| format!("replace operation failed to decode path: {e}"))?;
    if path.is_empty() {
        // evanphx replaces the whole document with an object or array and
        // silently ignores any other value.
        let value = value_field(op);
        if value.is_object() || value.is_array() {
            *doc = value;
        }
        return Ok(());
    }
    let slot = locate(doc, &path).ok_or_else(|| {
        format!("replace operation does not apply: doc is missing path: {path}: missing value")
    })?;
    match slot.parent {
        // A missing object key is not an error in evanphx v4: replace adds it.
        Parent::Object { .. } => run(
            doc,
            "add",
            &slot.child(slot.key.clone()),
            Some(value_field(op)),
        ),
        Parent::Array { len } => {
            let index = existing_index(&slot.key, len).map_err(|_| {
                format!(
                    "replace operation does not apply: doc is missing key: {path}: missing value"
                )
            })?;
            run(
                doc,
                "replace",
                &slot.child(index.to_string()),
                Some(value_field(op)),
            )
        }
    }
}

fn move_op(doc: &mut Value, op: &Op) -> Result<(), String> {
    let from = from_field(op).map_err(|e| format!("move operation failed to decode from: {e}"))?;
    let slot = locate(doc, &from).ok_or_else(|| {
        format!("move operation does not apply: doc is missing from path: {from}: missing value")
    })?;
    let key = slot.key.clone();
    let token = match slot.parent {
        Parent::Object { has_key: true } => key,
        Parent::Object { has_key: false } => {
            return Err(format!(
                "error in move for path: '{key}': Unable to remove nonexistent key: {key}: missing value"
            ))
        }
        Parent::Array { len } => existing_index(&key, len)
            .map_err(|e| format!("error in move for path: '{key}': {e}"))?
            .to_string(),
    };
    let tokens = slot.child(token);
    let value = doc
        .pointer(&pointer(&tokens))
        .cloned()
        .unwrap_or(Value::Null);
    run(doc, "remove", &tokens, None)?;
    let path = path_field(op).map_err(|e| format!("move operation failed to decode path: {e}"))?;
    insert(doc, &path, value).map_err(|failure| match failure {
        AddFailure::Missing => {
            format!("move operation does not apply: doc is missing destination path: {path}: missing value")
        }
        AddFailure::Inner(e) => format!("error in move for path: '{path}': {e}"),
    })
}

fn copy(doc: &mut Value, op: &Op, copied: &mut usize) -> Result<(), String> {
    let from = from_field(op).map_err(|e| format!("copy operation failed to decode from: {e}"))?;
    let slot = locate(doc, &from).ok_or_else(|| {
        format!("copy operation does not apply: doc is missing from path: {from}: missing value")
    })?;
    let token = match slot.parent {
        Parent::Object { .. } => slot.key.clone(),
        Parent::Array { len } => existing_index(&slot.key, len)
            .map_err(|e| format!("error in copy for from: '{from}': {e}"))?
            .to_string(),
    };
    // Copying a missing object key copies null, as evanphx does.
    let source = doc.pointer(&pointer(&slot.child(token)));
    *copied = copied.saturating_add(source.map_or(4, crate::apimachinery::kube_json::encoded_len));
    if *copied > MAX_COPY_BYTES {
        return Err(format!(
            "Unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {MAX_COPY_BYTES}"
        ));
    }
    let value = source.cloned().unwrap_or(Value::Null);
    let path = path_field(op)
        .map_err(|_| "copy operation failed to decode path: missing value".to_string())?;
    insert(doc, &path, value).map_err(|failure| match failure {
        AddFailure::Missing => {
            format!("copy operation does not apply: doc is missing destination path: {path}: missing value")
        }
        AddFailure::Inner(e) => format!("error while adding value during copy: {e}"),
    })
}

fn test(doc: &Value, op: &Op) -> Result<(), String> {
    let path = path_field(op).map_err(|e| format!("test operation failed to decode path: {e}"))?;
    let expected = op.get("value");
    let failed = || format!("testing value {path} failed: test failed");
    if path.is_empty() {
        return if expected == Some(doc) {
            Ok(())
        } else {
            Err(failed())
        };
    }
    let slot = locate(doc, &path).ok_or_else(|| {
        format!("test operation does not apply: is missing path: {path}: missing value")
    })?;
    let token = match slot.parent {
        Parent::Object { .. } => slot.key.clone(),
        Parent::Array { len } => existing_index(&slot.key, len)
            .map_err(|e| format!("error in test for path: '{path}': {e}"))?
            .to_string(),
    };
    // evanphx sees a missing key and a null value alike, and a null `value`
    // matches both.
    let actual = doc
        .pointer(&pointer(&slot.child(token)))
        .filter(|v| !v.is_null());
    match (actual, expected) {
        (None, Some(Value::Null)) => Ok(()),
        (Some(actual), Some(expected)) if actual == expected => Ok(()),
        _ => Err(failed()),
    }
}

/// Why an `add` (also the second half of move and copy) failed.
enum AddFailure {
    /// The parent of the target does not exist.
    Missing,
    /// The parent exists but the array index is unusable.
    Inner(String),
}

fn insert(doc: &mut Value, path: &str, value: Value) -> Result<(), AddFailure> {
    let slot = locate(doc, path).ok_or(AddFailure::Missing)?;
    let token = match slot.parent {
        Parent::Object { .. } => slot.key.clone(),
        Parent::Array { len } => insert_index(&slot.key, len).map_err(AddFailure::Inner)?,
    };
    run(doc, "add", &slot.child(token), Some(value)).map_err(AddFailure::Inner)
}

/// Runs one operation through the `json_patch` crate.
fn run(doc: &mut Value, kind: &str, tokens: &[String], value: Option<Value>) -> Result<(), String> {
    let mut raw = json!({"op": kind, "path": pointer(tokens)});
    if let Some(value) = value {
        raw["value"] = value;
    }
    let op: json_patch::PatchOperation = serde_json::from_value(raw).map_err(|e| e.to_string())?;
    json_patch::patch(doc, std::slice::from_ref(&op)).map_err(|e| e.to_string())
}

fn path_field(op: &Op) -> Result<String, String> {
    string_field(op, "path", "operation missing path field")
}

fn from_field(op: &Op) -> Result<String, String> {
    string_field(op, "from", "operation, missing from field")
}

fn string_field(op: &Op, name: &str, missing: &str) -> Result<String, String> {
    match op.get(name) {
        Some(Value::String(s)) => Ok(s.clone()),
        None | Some(Value::Null) => Err(format!("{missing}: missing value")),
        Some(other) => Err(gofmt::unmarshal_error(other, "string")),
    }
}

/// A missing `value` is added as null, as evanphx does.
fn value_field(op: &Op) -> Value {
    op.get("value").cloned().unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod() -> Value {
        json!({
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"containers": [
                {"name": "web", "image": "nginx", "args": ["a", "b"]},
                {"name": "log", "image": "busybox"}
            ]}
        })
    }

    fn patch(body: &str) -> Result<Value, PatchError> {
        apply(&pod(), body.as_bytes())
    }

    fn invalid(body: &str) -> String {
        match patch(body) {
            Err(PatchError::Invalid(message)) => message,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn add_remove_replace_and_test_succeed() {
        let out = patch(
            r#"[
            {"op":"test","path":"/spec/containers/0/image","value":"nginx"},
            {"op":"replace","path":"/spec/containers/0/image","value":"nginx:1.27"},
            {"op":"add","path":"/metadata/labels/tier","value":"front"},
            {"op":"remove","path":"/spec/containers/1"},
            {"op":"add","path":"/spec/containers/0/args/-","value":"c"}
        ]"#,
        )
        .unwrap();
        assert_eq!(out["spec"]["containers"][0]["image"], "nginx:1.27");
        assert_eq!(
            out["metadata"]["labels"],
            json!({"app": "web", "tier": "front"})
        );
        assert_eq!(out["spec"]["containers"].as_array().map(Vec::len), Some(1));
        assert_eq!(out["spec"]["containers"][0]["args"], json!(["a", "b", "c"]));
    }

    #[test]
    fn failed_test_is_invalid_with_evanphx_text_and_nothing_applies() {
        let body = r#"[{"op":"add","path":"/metadata/labels/x","value":"y"},
                       {"op":"test","path":"/metadata/name","value":"other"}]"#;
        assert_eq!(
            invalid(body),
            "testing value /metadata/name failed: test failed"
        );
    }

    #[test]
    fn missing_paths_report_like_kube() {
        assert_eq!(
            invalid(r#"[{"op":"add","path":"/spec/nope/x","value":1}]"#),
            r#"add operation does not apply: doc is missing path: "/spec/nope/x": missing value"#
        );
        assert_eq!(
            invalid(r#"[{"op":"remove","path":"/metadata/labels/absent"}]"#),
            "error in remove for path: '/metadata/labels/absent': Unable to remove nonexistent key: absent: missing value"
        );
        assert_eq!(
            invalid(r#"[{"op":"replace","path":"/spec/containers/5","value":{}}]"#),
            "replace operation does not apply: doc is missing key: /spec/containers/5: missing value"
        );
        assert_eq!(
            invalid(r#"[{"op":"add","path":"/spec/containers/7","value":{}}]"#),
            "error in add for path: '/spec/containers/7': Unable to access invalid index: 7: invalid index referenced"
        );
        assert_eq!(
            invalid(r#"[{"op":"test","path":"/a/b","value":1}]"#),
            "test operation does not apply: is missing path: /a/b: missing value"
        );
    }

    #[test]
    fn replace_of_missing_object_key_adds_it_like_kube() {
        let out = patch(r#"[{"op":"replace","path":"/metadata/labels/new","value":"v"}]"#).unwrap();
        assert_eq!(out["metadata"]["labels"]["new"], "v");
    }

    #[test]
    fn test_against_null_matches_missing_key() {
        assert!(patch(r#"[{"op":"test","path":"/metadata/namespace","value":null}]"#).is_ok());
        assert_eq!(
            invalid(r#"[{"op":"test","path":"/metadata/namespace","value":"default"}]"#),
            "testing value /metadata/namespace failed: test failed"
        );
    }

    #[test]
    fn move_copy_and_negative_indices() {
        let out = patch(
            r#"[{"op":"copy","from":"/metadata/labels/app","path":"/metadata/labels/copy"},
                {"op":"move","from":"/spec/containers/-1","path":"/spec/containers/0"},
                {"op":"remove","path":"/spec/containers/1/args/-1"}]"#,
        )
        .unwrap();
        assert_eq!(out["metadata"]["labels"]["copy"], "web");
        assert_eq!(out["spec"]["containers"][0]["name"], "log");
        assert_eq!(out["spec"]["containers"][1]["args"], json!(["a"]));
    }

    #[test]
    fn escaped_tokens_address_annotation_keys() {
        let doc = json!({"metadata": {"annotations": {"example.com/a~b": "1"}}});
        let out = apply(
            &doc,
            br#"[{"op":"replace","path":"/metadata/annotations/example.com~1a~0b","value":"2"}]"#,
        )
        .unwrap();
        assert_eq!(out["metadata"]["annotations"]["example.com/a~b"], "2");
    }

    #[test]
    fn unknown_op_is_invalid() {
        assert_eq!(
            invalid(r#"[{"op":"frob","path":"/a"}]"#),
            "Unexpected kind: frob"
        );
        assert_eq!(invalid(r#"[{"path":"/a"}]"#), "Unexpected kind: unknown");
    }

    #[test]
    fn malformed_documents_are_bad_requests() {
        assert_eq!(
            patch(r#"{"op":"add","path":"/a","value":1}"#),
            Err(PatchError::BadRequest(
                "json: cannot unmarshal object into Go value of type jsonpatch.Patch".into()
            ))
        );
        assert_eq!(
            patch(r#"["add"]"#),
            Err(PatchError::BadRequest(
                "json: cannot unmarshal string into Go value of type jsonpatch.Operation".into()
            ))
        );
        assert!(matches!(patch("[{"), Err(PatchError::BadRequest(_))));
        assert_eq!(
            patch(""),
            Err(PatchError::BadRequest(
                "unexpected end of JSON input".into()
            ))
        );
    }

    #[test]
    fn null_body_changes_nothing() {
        assert_eq!(patch("null").unwrap(), pod());
        assert_eq!(patch("[]").unwrap(), pod());
    }

    #[test]
    fn copies_that_add_more_than_three_mebibytes_are_refused() {
        // Each copy doubles the labels: 22 of them would make gigabytes.
        let mut ops =
            vec![json!({"op": "add", "path": "/metadata/labels/big", "value": "x".repeat(4096)})];
        for i in 0..22 {
            ops.push(json!({"op": "copy", "from": "/metadata/labels", "path": format!("/metadata/labels/d{i}")}));
        }
        let Err(err) = patch(&Value::Array(ops).to_string()) else {
            panic!("the amplifying patch was applied");
        };
        assert_eq!(err.status_code(), 422);
        assert!(
            err.to_string().starts_with(
                "Unable to complete the copy, the accumulated size increase of copy is "
            ),
            "{err}"
        );
        assert!(
            err.to_string().ends_with("exceeding the limit 3145728"),
            "{err}"
        );
        let small = r#"[{"op":"copy","from":"/metadata/labels","path":"/metadata/annotations"}]"#;
        assert_eq!(
            patch(small).unwrap()["metadata"]["annotations"]["app"],
            "web"
        );
    }

    #[test]
    fn more_than_ten_thousand_operations_is_too_large() {
        let ops: Vec<Value> = (0..10001)
            .map(|_| json!({"op": "test", "path": "/metadata/name", "value": "web"}))
            .collect();
        let body = serde_json::to_vec(&ops).unwrap();
        assert_eq!(
            apply(&pod(), &body),
            Err(PatchError::TooLarge(
                "The allowed maximum operations in a JSON patch is 10000, got 10001".into()
            ))
        );
    }
}
