//! The three patch types and server-side apply over hostile objects and
//! patches: never a panic; JSON and merge patches refuse with 400/422/413
//! only (strategic merge and apply may also give kube's own 500s, e.g. a
//! list item without its merge key).

use super::generators::{json_patch, json_value, mutated, object};
use crate::patch::apply::{server_side_apply, Applier, ApplyError};
use crate::patch::{apply_patch, PatchError, PatchType};
use proptest::prelude::*;
use serde_json::Value;

const POD: &str = "io.k8s.api.core.v1.Pod";

fn patched(kind: PatchType, original: &Value, body: &[u8]) -> Result<Value, PatchError> {
    apply_patch(kind, original, body, Some(POD), super::schemas())
}

fn no_internal(result: Result<Value, PatchError>) -> Result<(), TestCaseError> {
    if let Err(PatchError::Internal(m)) = result {
        prop_assert!(false, "500 for a JSON or merge patch: {}", m);
    }
    Ok(())
}

fn applier(force: bool) -> Applier<'static> {
    Applier {
        manager: "fuzz",
        force,
        api_version: "v1",
        skip_status: true,
        subresource: "",
    }
}

proptest! {
    #![proptest_config(super::config())]

    #[test]
    fn json_patches(original in object(), patch in json_patch()) {
        no_internal(patched(PatchType::Json, &original, patch.to_string().as_bytes()))?;
    }

    #[test]
    fn merge_patches(original in object(), patch in json_value()) {
        no_internal(patched(PatchType::Merge, &original, patch.to_string().as_bytes()))?;
    }

    #[test]
    fn strategic_merge_patches(original in object(), patch in prop_oneof![object(), json_value()]) {
        let _ = patched(PatchType::Strategic, &original, patch.to_string().as_bytes());
    }

    #[test]
    fn patch_bodies_that_are_not_json(
        original in object(),
        body in json_value().prop_flat_map(|v| mutated(v.to_string().into_bytes())),
    ) {
        no_internal(patched(PatchType::Json, &original, &body))?;
        no_internal(patched(PatchType::Merge, &original, &body))?;
        let _ = patched(PatchType::Strategic, &original, &body);
    }

    #[test]
    fn server_side_applies(
        current in proptest::option::of(object()),
        applied in prop_oneof![object(), json_value()],
        force in any::<bool>(),
    ) {
        let result = server_side_apply(current.as_ref(), &applied, &applier(force), Some(POD), super::schemas());
        if let Err(ApplyError::Conflicts(list)) = &result {
            prop_assert!(!force && !list.is_empty(), "conflicts {:?} (force {})", list, force);
        }
    }

    /// Two appliers in turn: the second sees the first's managedFields.
    #[test]
    fn server_side_applies_in_turn(first in object(), second in object()) {
        let current = server_side_apply(None, &first, &applier(false), Some(POD), super::schemas());
        if let Ok(current) = current {
            let other = Applier { manager: "other", ..applier(false) };
            let _ = server_side_apply(Some(&current), &second, &other, Some(POD), super::schemas());
        }
    }
}
