//! The structural-schema engine of custom resources: one CRD version's
//! `schema.openAPIV3Schema`, compiled once, validates, prunes and defaults
//! objects as kube-apiserver 1.33 does (apiextensions-apiserver's
//! pkg/apiserver/{validation,schema/pruning,schema/defaulting,
//! schema/objectmeta,schema/listtype} over kube-openapi's validator).
//!
//! A write runs, in kube's order: `prune` (the decoder; its paths are the
//! strict field validation's `unknown field "<path>"`), `apply_defaults`,
//! then `validate` (after the caller's own TypeMeta and ObjectMeta checks of
//! the root, which are not the schema's). A read from storage runs `prune`
//! and `apply_defaults`.
//!
//! Every walk is linear in the object times the schema nodes that apply to
//! each value; the schema is a tree (no `$ref`) of bounded depth.

mod defaults;
mod embedded;
mod formats;
mod list_types;
mod node;
mod problems;
mod prune;
mod validate;

#[cfg(test)]
mod tests;

use crate::apimachinery::status::Cause;
use node::Node;
use serde_json::Value;

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledSchema").finish_non_exhaustive()
    }
}

/// One CRD version's schema, compiled once (regexes, formats, defaults
/// parsed) and then used by every request.
pub struct CompiledSchema {
    root: Node,
}

impl CompiledSchema {
    /// Compiles `openAPIV3Schema` (already checked structural by the CRD's
    /// own validation). Err only for what cannot be compiled: a pattern the
    /// regex engine rejects, or nesting deeper than 128 levels.
    pub fn new(open_api_v3_schema: &Value) -> Result<CompiledSchema, String> {
        let mut root = node::compile(open_api_v3_schema)?;
        prune_defaults(&mut root);
        Ok(CompiledSchema { root })
    }

    /// Every problem of `obj` against the schema on create, as kube reports
    /// them in one 422: the openapi validation's field errors, then
    /// embedded resources' apiVersion/kind/metadata, then list-type set and
    /// map uniqueness. Paths and messages are kube's; where kube walks a Go
    /// map (properties), the order here is the properties' names sorted.
    /// (kube puts the scale subresource's replica checks between the first
    /// part and the rest: see `validate_schema` and `validate_structure`.)
    pub fn validate(&self, obj: &Value) -> Vec<Cause> {
        let mut causes = self.validate_schema(obj, None);
        causes.extend(self.validate_structure(obj, None));
        causes
    }

    /// The same on update: kube ratchets, so a value equal to its old value
    /// (same field, list-type map items by their keys) reports nothing, and
    /// list-type uniqueness is checked only when `old` passed it.
    pub fn validate_update(&self, obj: &Value, old: &Value) -> Vec<Cause> {
        let mut causes = self.validate_schema(obj, Some(old));
        causes.extend(self.validate_structure(obj, Some(old)));
        causes
    }

    /// The openapi validation alone (kube's ValidateCustomResource, or
    /// ValidateCustomResourceUpdate with `old`).
    pub fn validate_schema(&self, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
        to_causes(validate::validate(&self.root, obj, "", old), "")
    }

    /// Embedded resources and list types (kube's strategy checks after the
    /// openapi validation); with `old`, list types only when `old` passed.
    pub fn validate_structure(&self, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
        let mut causes = Vec::new();
        embedded::validate(obj, &self.root, "", &mut causes);
        let old_passed = || {
            let mut old_causes = Vec::new();
            if let Some(Value::Object(map)) = old {
                list_types::validate(&self.root, map, "", &mut old_causes);
            }
            old_causes.is_empty()
        };
        if let (Value::Object(map), true) = (obj, old_passed()) {
            list_types::validate(&self.root, map, "", &mut causes);
        }
        causes
    }

    /// A write to the status subresource: `status` against the schema's
    /// `status` property (its paths relative to it in the messages, under
    /// `status` in the fields, as kube's status validator has them),
    /// ratcheted against `old`'s status, then the structure checks of the
    /// whole object.
    pub fn validate_status_update(&self, obj: &Value, old: &Value) -> Vec<Cause> {
        let mut causes = Vec::new();
        if let (Some(schema), Some(status)) =
            (self.root.properties.get("status"), obj.get("status"))
        {
            let outcome = validate::validate(schema, status, "", old.get("status"));
            causes = to_causes(outcome, "status");
        }
        causes.extend(self.validate_structure(obj, Some(old)));
        causes
    }

    /// Drops the fields the schema does not know, as kube's decoder does
    /// (x-kubernetes-preserve-unknown-fields and embedded resources
    /// honoured; the root's apiVersion and kind kept, its metadata pruned
    /// to ObjectMeta's fields), and non-nullable nulls without a default.
    /// Returns the dropped paths as kube names them (`spec.foo`, for the
    /// message `unknown field "spec.foo"`), in kube's order: root metadata
    /// first, then the schema's (sorted), then embedded metadata (sorted).
    pub fn prune(&self, obj: &mut Value) -> Vec<String> {
        prune::prune_resource(obj, &self.root)
    }

    /// Applies `default`s as kube does (on write and on read from storage),
    /// inside list items and map values too; a null where the schema is
    /// not nullable takes the default.
    pub fn apply_defaults(&self, obj: &mut Value) {
        defaults::apply(obj, &self.root);
    }
}

fn to_causes(outcome: validate::Outcome, prefix: &str) -> Vec<Cause> {
    outcome
        .problems
        .into_iter()
        .map(|p| p.into_cause(prefix))
        .collect()
}

/// Defaults are pruned by the schema they sit at, as kube does when it
/// builds the structural schema.
fn prune_defaults(node: &mut Node) {
    if let Some(mut default) = node.default.take() {
        prune::prune_default(&mut default, node);
        node.default = Some(default);
    }
    let children = node
        .properties
        .values_mut()
        .chain(node.items.as_deref_mut())
        .chain(match &mut node.additional {
            Some(node::Additional::Schema(s)) => Some(s.as_mut()),
            _ => None,
        });
    for child in children {
        prune_defaults(child);
    }
}
