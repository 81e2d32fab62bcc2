//! The `strategy-call` contract of strategy plugins (see the WIT): which
//! phase is asked for, on which resource, with which objects; and the answer.
//!
//! A write costs one call: "create" and "update" prepare the object
//! (kube's PrepareForCreate / PrepareForUpdate plus defaults) and validate
//! the prepared object, answering `{"object", "causes"}`. The single-step
//! phases ("prepare-for-create", "prepare-for-update", "validate") remain
//! for hosts that need a step on its own.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The phase a strategy is called for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// PrepareForCreate + defaults + Validate: answer `{"object", "causes"}`.
    Create,
    /// PrepareForUpdate + defaults + ValidateUpdate (needs `oldObject`):
    /// answer `{"object", "causes"}`.
    Update,
    /// PrepareForCreate + defaults: answer `{"object"}`.
    PrepareForCreate,
    /// PrepareForUpdate + defaults (needs `oldObject`): answer `{"object"}`.
    PrepareForUpdate,
    /// Validate (ValidateUpdate when `oldObject` is set): answer `{"causes"}`.
    Validate,
    /// The decoded object's defaults alone (what kube's decoder sets, before
    /// admission and the strategy): answer `{"object"}`. The host tracks
    /// the fields a write sets (managedFields) on this object.
    Default,
    /// The rows of a Table (kube's printers) for `objects` at `now`:
    /// answer `{"columnDefinitions", "rows": [{"cells", "conditions"?}]}`,
    /// one row per object in order, or `{}` for a kind without a printer
    /// (the host then prints NAME and CREATED AT).
    Table,
}

impl Phase {
    /// The phase as the call names it ("prepare-for-create").
    pub fn name(self) -> &'static str {
        match self {
            Phase::Create => "create",
            Phase::Update => "update",
            Phase::PrepareForCreate => "prepare-for-create",
            Phase::PrepareForUpdate => "prepare-for-update",
            Phase::Validate => "validate",
            Phase::Default => "default",
            Phase::Table => "table",
        }
    }

    /// Does this phase write over a stored object (and so need `oldObject`)?
    pub fn is_update(self) -> bool {
        matches!(self, Phase::Update | Phase::PrepareForUpdate)
    }
}

/// The resource a strategy call is about.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StrategyResource {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    /// The plural ("pods").
    #[serde(default)]
    pub resource: String,
    #[serde(default)]
    pub kind: String,
    /// "" for the resource itself, else the subresource written ("status").
    #[serde(default)]
    pub subresource: String,
    /// Whether the resource has a `status` subresource: then status is the
    /// server's (a create starts without the client's status). Absent = false.
    #[serde(default)]
    pub has_status: bool,
}

/// The call: `{"phase", "resource", "object", "oldObject"}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StrategyCall {
    pub phase: Phase,
    #[serde(default)]
    pub resource: StrategyResource,
    #[serde(default)]
    pub object: Value,
    /// The stored object, on updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_object: Option<Value>,
    /// The objects to print, for "table".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<Value>,
    /// The time ages are counted to (RFC 3339), for "table".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now: Option<String>,
}

/// One validation failure (`{"type", "field", "message"}`), e.g. type "FieldValueInvalid".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cause {
    #[serde(rename = "type")]
    pub cause_type: String,
    pub field: String,
    pub message: String,
}

/// The answer: `{"object"}` for prepare phases, `{"causes"}` for validate,
/// `{"object", "causes"}` for "create" and "update", or any other JSON (e.g.
/// a Table) for phases the WIT leaves open.
#[derive(Debug, Clone, PartialEq)]
pub enum StrategyAnswer {
    Object(Value),
    Causes(Vec<Cause>),
    /// The prepared object and the causes found validating it (empty = valid).
    Prepared {
        object: Value,
        causes: Vec<Cause>,
    },
    Raw(Value),
}

impl StrategyAnswer {
    /// The answer as the JSON the host expects.
    pub fn to_json(&self) -> Value {
        match self {
            StrategyAnswer::Object(o) => serde_json::json!({ "object": o }),
            StrategyAnswer::Causes(c) => serde_json::json!({ "causes": c }),
            StrategyAnswer::Prepared { object, causes } => {
                serde_json::json!({ "object": object, "causes": causes })
            }
            StrategyAnswer::Raw(v) => v.clone(),
        }
    }

    /// [`to_json`](Self::to_json) without copying the object.
    pub fn into_json(self) -> Value {
        match self {
            StrategyAnswer::Object(o) => serde_json::json!({ "object": o }),
            StrategyAnswer::Causes(c) => serde_json::json!({ "causes": c }),
            StrategyAnswer::Prepared { object, causes } => {
                serde_json::json!({ "object": object, "causes": causes })
            }
            StrategyAnswer::Raw(v) => v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn combined_phases_and_has_status_parse() {
        let call: StrategyCall = serde_json::from_value(json!({"phase": "update",
            "resource": {"resource": "pods", "hasStatus": true},
            "object": {}, "oldObject": {}}))
        .unwrap();
        assert_eq!(call.phase, Phase::Update);
        assert!(call.phase.is_update());
        assert!(call.resource.has_status);
        let call: StrategyCall = serde_json::from_value(json!({"phase": "create"})).unwrap();
        assert_eq!(call.phase, Phase::Create);
        assert!(!call.resource.has_status);
        for phase in [Phase::Create, Phase::PrepareForUpdate, Phase::Table] {
            assert_eq!(serde_json::to_value(phase).unwrap(), json!(phase.name()));
        }
    }

    #[test]
    fn prepared_answer_has_object_and_causes() {
        let answer = StrategyAnswer::Prepared {
            object: json!({"a": 1}),
            causes: Vec::new(),
        };
        assert_eq!(answer.to_json(), json!({"object": {"a": 1}, "causes": []}));
    }
}
