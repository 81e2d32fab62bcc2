//! PATCH bodies applied to stored objects the way kube-apiserver applies them:
//! JSON patch (RFC 6902), JSON merge patch (RFC 7386) and strategic merge patch,
//! with kube's status codes and error wording; server-side apply and the
//! field manager that records every write's `managedFields`
//! ([`managed_fields`]). Below the registry (every write records its
//! fields), above the catalogue (the schemas say how lists merge).

pub mod apply;
mod error;
pub mod field_set;
mod json;
pub mod managed_fields;
mod merge;
mod strategic;

pub(crate) use strategic::schema::resolve as resolve_schema;

pub use apply::merge_apply_configuration;
pub use error::PatchError;
pub use json::apply_policy_patch;
pub use strategic::strategic_merge;

use serde_json::Value;

/// OpenAPI v3 component schemas by name (`io.k8s.api.core.v1.Pod`), the
/// source of `x-kubernetes-patch-strategy` / `x-kubernetes-patch-merge-key`.
pub trait SchemaLookup {
    /// The component schema called `name`, if known.
    fn schema(&self, name: &str) -> Option<&Value>;
}

/// The `components.schemas` object of an OpenAPI v3 document.
impl SchemaLookup for serde_json::Map<String, Value> {
    fn schema(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}

/// A catalogue's component schemas.
impl SchemaLookup for crate::catalogue::Schemas {
    fn schema(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}

/// The PATCH flavours this module applies, named by their request content type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/json-patch+json`
    Json,
    /// `application/merge-patch+json`
    Merge,
    /// `application/strategic-merge-patch+json`
    Strategic,
}

impl PatchType {
    /// Every type, in the order kube lists them in a 415 message.
    pub const ALL: [PatchType; 3] = [PatchType::Json, PatchType::Merge, PatchType::Strategic];

    /// The patch type of a `Content-Type` header; parameters such as
    /// `; charset=utf-8` are ignored. `None` for anything else (415 upstream).
    pub fn from_content_type(ct: &str) -> Option<PatchType> {
        let base = ct.split(';').next().unwrap_or_default().trim();
        PatchType::ALL
            .into_iter()
            .find(|t| t.content_type().eq_ignore_ascii_case(base))
    }

    /// The media type that selects this patch type.
    pub fn content_type(self) -> &'static str {
        match self {
            PatchType::Json => "application/json-patch+json",
            PatchType::Merge => "application/merge-patch+json",
            PatchType::Strategic => "application/strategic-merge-patch+json",
        }
    }
}

/// Applies `patch_body` (JSON) of type `kind` to `original` and returns the
/// patched object. `root_schema` names the object's component schema, used only
/// by strategic merge patch (without it lists are replaced and maps merged).
pub fn apply_patch(
    kind: PatchType,
    original: &Value,
    patch_body: &[u8],
    root_schema: Option<&str>,
    schemas: &dyn SchemaLookup,
) -> Result<Value, PatchError> {
    match kind {
        PatchType::Json => json::apply(original, patch_body),
        PatchType::Merge => merge::apply(original, patch_body),
        PatchType::Strategic => {
            let patch = strategic::parse_body(patch_body)?;
            strategic_merge(original, &patch, root_schema, schemas)
        }
    }
}

/// kube decodes a JSON or merge patch strictly before applying it unless
/// the request's fieldValidation is Ignore: what does not decode into its Go
/// type (`[]jsonPatchOp`, `map[string]interface{}`) is a 400 `error decoding
/// patch: …` with Go's text.
pub fn check_decodes(kind: PatchType, body: &[u8]) -> Result<(), PatchError> {
    let bad = |why: String| {
        Err(PatchError::BadRequest(format!(
            "error decoding patch: {why}"
        )))
    };
    if let Some(why) = crate::apimachinery::go_json::syntax_error(body) {
        return bad(why);
    }
    let Ok(doc) = serde_json::from_slice::<Value>(body) else {
        return Ok(());
    };
    let unmarshal = |v: &Value, into: &str| {
        format!(
            "json: cannot unmarshal {} into Go value of type {into}",
            kube_rules::gofmt::json_kind(v)
        )
    };
    match (kind, &doc) {
        (PatchType::Merge, Value::Object(_) | Value::Null) => Ok(()),
        (PatchType::Merge, other) => bad(unmarshal(other, "map[string]interface {}")),
        (PatchType::Json, Value::Array(ops)) => match ops.iter().find_map(op_decode_error) {
            Some(why) => bad(why),
            None => Ok(()),
        },
        (PatchType::Json, Value::Null) => Ok(()),
        (PatchType::Json, other) => bad(unmarshal(other, "[]handlers.jsonPatchOp")),
        (PatchType::Strategic, _) => Ok(()),
    }
}

/// Why one JSON patch operation does not decode into kube's `jsonPatchOp`.
fn op_decode_error(op: &Value) -> Option<String> {
    let Value::Object(fields) = op else {
        return (!op.is_null()).then(|| {
            format!(
                "json: cannot unmarshal {} into Go value of type handlers.jsonPatchOp",
                kube_rules::gofmt::json_kind(op)
            )
        });
    };
    ["op", "path", "from"].iter().find_map(|f| {
        let v = fields.get(*f).filter(|v| !v.is_string() && !v.is_null())?;
        Some(format!(
            "json: cannot unmarshal {} into Go struct field jsonPatchOp.{f} of type string",
            kube_rules::gofmt::json_kind(v)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn patches_are_decoded_as_kube_decodes_them_first() {
        let err = |kind, body: &str| {
            check_decodes(kind, body.as_bytes())
                .unwrap_err()
                .to_string()
        };
        // kube-apiserver 1.32's answers (tests/golden/answers/errors/merge-patch-not-json.json).
        assert_eq!(
            err(PatchType::Merge, "["),
            "error decoding patch: unexpected end of JSON input"
        );
        assert_eq!(
            err(PatchType::Merge, "[]"),
            "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"
        );
        assert_eq!(
            err(PatchType::Json, r#"[{"op": 1}]"#),
            "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string"
        );
        assert!(check_decodes(PatchType::Json, br#"[{"op":"test","path":"/a"}]"#).is_ok());
        assert!(check_decodes(PatchType::Merge, b"null").is_ok());
    }

    #[test]
    fn content_type_ignores_parameters_and_case() {
        assert_eq!(
            PatchType::from_content_type("application/merge-patch+json; charset=utf-8"),
            Some(PatchType::Merge)
        );
        assert_eq!(
            PatchType::from_content_type("Application/Strategic-Merge-Patch+JSON"),
            Some(PatchType::Strategic)
        );
        assert_eq!(
            PatchType::from_content_type("application/json-patch+json"),
            Some(PatchType::Json)
        );
    }

    #[test]
    fn apply_and_unknown_content_types_are_not_patch_types() {
        assert_eq!(
            PatchType::from_content_type("application/apply-patch+yaml"),
            None
        );
        assert_eq!(PatchType::from_content_type("application/json"), None);
        assert_eq!(PatchType::from_content_type(""), None);
    }

    #[test]
    fn apply_patch_dispatches_on_type() {
        let schemas = serde_json::Map::new();
        let pod = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"args": ["x"]}});
        let merged = apply_patch(
            PatchType::Merge,
            &pod,
            br#"{"metadata":{"labels":{"b":"2"}}}"#,
            None,
            &schemas,
        )
        .unwrap();
        assert_eq!(merged["metadata"]["labels"], json!({"a": "1", "b": "2"}));

        let patched = apply_patch(
            PatchType::Json,
            &pod,
            br#"[{"op":"add","path":"/spec/args/-","value":"y"}]"#,
            None,
            &schemas,
        )
        .unwrap();
        assert_eq!(patched["spec"]["args"], json!(["x", "y"]));

        let strategic = apply_patch(
            PatchType::Strategic,
            &pod,
            br#"{"spec":{"args":["z"]}}"#,
            None,
            &schemas,
        )
        .unwrap();
        assert_eq!(strategic["spec"]["args"], json!(["z"]));
    }
}
