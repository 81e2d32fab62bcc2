//! The `strategy-call` contract of strategy plugins (see the WIT): which
//! phase is asked for, on which resource, with which objects; and the answer.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The phase a strategy is called for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    PrepareForCreate,
    PrepareForUpdate,
    Validate,
    Table,
}

/// The resource a strategy call is about.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StrategyResource {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub resource: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub subresource: String,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_object: Option<Value>,
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
/// or any other JSON (e.g. a Table) for phases the WIT leaves open.
#[derive(Debug, Clone, PartialEq)]
pub enum StrategyAnswer {
    Object(Value),
    Causes(Vec<Cause>),
    Raw(Value),
}

impl StrategyAnswer {
    /// The answer as the JSON the host expects.
    pub fn to_json(&self) -> Value {
        match self {
            StrategyAnswer::Object(o) => serde_json::json!({ "object": o }),
            StrategyAnswer::Causes(c) => serde_json::json!({ "causes": c }),
            StrategyAnswer::Raw(v) => v.clone(),
        }
    }
}
