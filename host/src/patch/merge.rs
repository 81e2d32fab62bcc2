//! `application/merge-patch+json` (RFC 7386) on top of `json_patch::merge`,
//! with the quirks of the evanphx/json-patch v4 library kube-apiserver uses.

use serde_json::Value;

use super::PatchError;
use crate::apimachinery::gofmt;

/// evanphx's `ErrBadJSONPatch`, which kube returns as a 400.
const BAD_MERGE_PATCH: &str = "Invalid JSON Patch";

/// Applies a JSON merge patch body to `original`.
pub(super) fn apply(original: &Value, body: &[u8]) -> Result<Value, PatchError> {
    let mut patch: Value =
        serde_json::from_slice(body).map_err(|_| PatchError::BadRequest(BAD_MERGE_PATCH.into()))?;
    match patch {
        Value::Object(_) => {}
        // evanphx turns an array patch into the new document; decoding that
        // into the object then fails, which kube reports as Invalid.
        Value::Array(_) => {
            return Err(PatchError::Invalid(gofmt::unmarshal_error(
                &patch,
                "map[string]interface {}",
            )))
        }
        _ => return Err(PatchError::BadRequest(BAD_MERGE_PATCH.into())),
    }
    prune_nulls_inside_arrays(&mut patch);
    let mut doc = original.clone();
    json_patch::merge(&mut doc, &patch);
    Ok(doc)
}

/// Objects inside arrays of a merge patch lose their null fields (evanphx
/// prunes them); top-level nulls stay, they mean "delete".
fn prune_nulls_inside_arrays(v: &mut Value) {
    match v {
        Value::Object(map) => map.values_mut().for_each(prune_nulls_inside_arrays),
        Value::Array(items) => items.iter_mut().for_each(prune_all_nulls),
        _ => {}
    }
}

fn prune_all_nulls(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.retain(|_, value| !value.is_null());
            map.values_mut().for_each(prune_all_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(prune_all_nulls),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment() -> Value {
        json!({
            "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"}},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [
                {"name": "web", "image": "nginx"},
                {"name": "log", "image": "busybox"}
            ]}}}
        })
    }

    #[test]
    fn kubectl_scale_sets_replicas_and_keeps_the_rest() {
        let out = apply(&deployment(), br#"{"spec":{"replicas":3}}"#).unwrap();
        assert_eq!(out["spec"]["replicas"], 3);
        assert_eq!(out["spec"]["template"], deployment()["spec"]["template"]);
    }

    #[test]
    fn kubectl_label_adds_and_null_removes_a_label() {
        let out = apply(
            &deployment(),
            br#"{"metadata":{"labels":{"tier":null,"env":"prod"}}}"#,
        )
        .unwrap();
        assert_eq!(
            out["metadata"]["labels"],
            json!({"app": "web", "env": "prod"})
        );
        assert_eq!(out["metadata"]["name"], "web");
    }

    #[test]
    fn lists_are_replaced_and_nulls_inside_them_dropped() {
        let body = br#"{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:2","args":null}]}}}}"#;
        let out = apply(&deployment(), body).unwrap();
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"],
            json!([{"name": "web", "image": "nginx:2"}])
        );
    }

    #[test]
    fn kubectl_annotate_creates_missing_map() {
        let out = apply(
            &json!({"metadata": {"name": "x"}}),
            br#"{"metadata":{"annotations":{"a":"b","c":null}}}"#,
        )
        .unwrap();
        assert_eq!(out["metadata"]["annotations"], json!({"a": "b"}));
    }

    #[test]
    fn malformed_bodies_are_bad_requests() {
        for body in [&b"{not json"[..], b"", b"null", b"42", b"\"s\""] {
            assert_eq!(
                apply(&deployment(), body),
                Err(PatchError::BadRequest("Invalid JSON Patch".into())),
                "body {:?}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn array_body_is_invalid() {
        let err = apply(&deployment(), b"[1]").unwrap_err();
        assert_eq!(err.status_code(), 422);
    }
}
