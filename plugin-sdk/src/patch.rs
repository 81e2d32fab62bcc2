//! A small JSON Patch (RFC 6902) builder with RFC 6901 pointer escaping,
//! for mutating admission responses.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One JSON Patch operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum PatchOp {
    Add { path: String, value: Value },
    Replace { path: String, value: Value },
    Remove { path: String },
}

impl PatchOp {
    /// `add` at a JSON pointer (already escaped; see [`pointer`]).
    pub fn add(path: impl Into<String>, value: Value) -> Self {
        PatchOp::Add {
            path: path.into(),
            value,
        }
    }

    /// `replace` at a JSON pointer.
    pub fn replace(path: impl Into<String>, value: Value) -> Self {
        PatchOp::Replace {
            path: path.into(),
            value,
        }
    }

    /// `remove` at a JSON pointer.
    pub fn remove(path: impl Into<String>) -> Self {
        PatchOp::Remove { path: path.into() }
    }

    /// The operation's JSON pointer.
    pub fn path(&self) -> &str {
        match self {
            PatchOp::Add { path, .. }
            | PatchOp::Replace { path, .. }
            | PatchOp::Remove { path } => path,
        }
    }
}

/// Escapes one reference token: `~` → `~0`, `/` → `~1` (RFC 6901).
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Builds a JSON pointer from unescaped segments: `["metadata", "labels", "a/b"]`
/// → `/metadata/labels/a~1b`. Array indexes are segments too (`"0"`, or `"-"` to append).
pub fn pointer<I, S>(segments: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    segments
        .into_iter()
        .map(|s| format!("/{}", escape(s.as_ref())))
        .collect()
}

/// Collects operations with segment paths: `JsonPatch::new().add(["spec", "x"], v).ops()`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonPatch {
    ops: Vec<PatchOp>,
}

impl JsonPatch {
    /// An empty patch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an `add` operation.
    pub fn add<I: IntoIterator<Item = S>, S: AsRef<str>>(mut self, path: I, value: Value) -> Self {
        self.ops.push(PatchOp::add(pointer(path), value));
        self
    }

    /// Adds a `replace` operation.
    pub fn replace<I: IntoIterator<Item = S>, S: AsRef<str>>(
        mut self,
        path: I,
        value: Value,
    ) -> Self {
        self.ops.push(PatchOp::replace(pointer(path), value));
        self
    }

    /// Adds a `remove` operation.
    pub fn remove<I: IntoIterator<Item = S>, S: AsRef<str>>(mut self, path: I) -> Self {
        self.ops.push(PatchOp::remove(pointer(path)));
        self
    }

    /// Appends an already built operation.
    pub fn push(&mut self, op: PatchOp) {
        self.ops.push(op);
    }

    /// True when no operation was added.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The operations, for `AdmissionResponse::with_patch`.
    pub fn ops(self) -> Vec<PatchOp> {
        self.ops
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escapes_tilde_and_slash() {
        assert_eq!(
            pointer(["metadata", "labels", "example.com/a~b"]),
            "/metadata/labels/example.com~1a~0b"
        );
        assert_eq!(escape("~/"), "~0~1");
    }

    #[test]
    fn serializes_as_rfc6902() {
        let ops = JsonPatch::new()
            .add(["spec", "containers", "-"], json!({"name": "c"}))
            .replace(["spec", "x"], json!(2))
            .remove(["spec", "y"])
            .ops();
        assert_eq!(
            serde_json::to_value(&ops).unwrap(),
            json!([
                {"op": "add", "path": "/spec/containers/-", "value": {"name": "c"}},
                {"op": "replace", "path": "/spec/x", "value": 2},
                {"op": "remove", "path": "/spec/y"}
            ])
        );
    }
}
