//! Built-in strategy plugin `strategy`: kube-apiserver's per-kind REST
//! strategies for the common kinds, so the host keeps no per-kind rules.
//!
//! - "create": PrepareForCreate (status reset when status is a subresource,
//!   `metadata.generation` 1, initial status such as a pod's Pending phase
//!   and QoS class) plus defaults, then Validate of the prepared object;
//!   answers `{"object", "causes"}`.
//! - "update" (needs `oldObject`, the stored object): defaults, then
//!   `metadata.generation` = old + 1 when the desired state changed (kinds
//!   that keep a generation), then ValidateUpdate against the stored object;
//!   answers `{"object", "causes"}`.
//! - "prepare-for-create" / "prepare-for-update": the preparation alone,
//!   `{"object"}`. "validate": the validation alone, `{"causes"}` (an update
//!   when `oldObject` is set).
//! - "default": the decoded object's defaults alone, `{"object"}` (the
//!   host records managedFields on it).
//! - "table": kube's printers, `{"columnDefinitions", "rows"}` for the
//!   call's `objects` (see `table`).
//!
//! What differs between kinds is each kind's `KindRules` (`kinds`): one
//! `impl` per kind and one catalogue row; the phases above ask it.
//!
//! Causes are empty when the object is valid; subresource writes and kinds
//! without rules get none. Status carried over on updates (a write to the
//! resource keeps the stored status) stays the host's business: the plugin
//! cannot tell a client's write from a controller's status write.

mod common;
mod defaults;
mod initial_status;
mod int_or_percent;
mod json;
mod kinds;
mod metadata;
mod netparse;
mod prepare;
mod selector;
mod table;
mod validation;

use capstan_plugin_sdk::{Phase, StrategyAnswer, StrategyCall, StrategyPlugin};
use serde_json::Value;

/// The plugin.
pub struct Strategy;

impl StrategyPlugin for Strategy {
    fn call(call: &StrategyCall) -> Result<StrategyAnswer, String> {
        let resource = &call.resource;
        Ok(match call.phase {
            Phase::Create | Phase::Update => {
                let (object, old) = prepared(call)?;
                let causes = validation::validate(resource, &object, old);
                StrategyAnswer::Prepared { object, causes }
            }
            Phase::PrepareForCreate | Phase::PrepareForUpdate => {
                StrategyAnswer::Object(prepared(call)?.0)
            }
            Phase::Validate => StrategyAnswer::Causes(validation::validate(
                resource,
                &call.object,
                call.old_object.as_ref(),
            )),
            Phase::Table => StrategyAnswer::Raw(table::answer(call)?),
            Phase::Default => {
                let mut object = call.object.clone();
                prepare::defaults_only(resource, &mut object);
                StrategyAnswer::Object(object)
            }
        })
    }

    /// Create and update without copying the object (a 3 MiB body can be
    /// a million values); the other phases as [`call`](Self::call).
    fn call_owned(mut call: StrategyCall) -> Result<StrategyAnswer, String> {
        let mut object = std::mem::take(&mut call.object);
        match call.phase {
            Phase::Create | Phase::Update => {}
            Phase::Default => {
                prepare::defaults_only(&call.resource, &mut object);
                return Ok(StrategyAnswer::Object(object));
            }
            _ => {
                call.object = object;
                return Self::call(&call);
            }
        }
        let old = prepare_in_place(&call, &mut object)?;
        let causes = validation::validate(&call.resource, &object, old);
        Ok(StrategyAnswer::Prepared { object, causes })
    }
}

capstan_plugin_sdk::strategy_plugin!(Strategy);

/// The call's object prepared for its phase, and the stored object on updates.
fn prepared(call: &StrategyCall) -> Result<(Value, Option<&Value>), String> {
    let mut object = call.object.clone();
    let old = prepare_in_place(call, &mut object)?;
    Ok((object, old))
}

/// Prepares `object` (the call's) for the call's phase; the stored object on updates.
fn prepare_in_place<'a>(
    call: &'a StrategyCall,
    object: &mut Value,
) -> Result<Option<&'a Value>, String> {
    if !object.is_object() {
        return Err(format!("{}: the object is not a JSON object", what(call)));
    }
    let old = stored_object(call)?;
    match old {
        Some(old) => prepare::for_update(&call.resource, object, old),
        None => prepare::for_create(&call.resource, object),
    }
    Ok(old)
}

/// `oldObject` for the update phases (an error when missing), None otherwise.
fn stored_object(call: &StrategyCall) -> Result<Option<&Value>, String> {
    if !call.phase.is_update() {
        return Ok(None);
    }
    match &call.old_object {
        Some(old) => Ok(Some(old)),
        None => Err(format!("{}: an update needs oldObject", what(call))),
    }
}

/// "<phase> of <resource>", for error messages.
fn what(call: &StrategyCall) -> String {
    format!("{} of {}", call.phase.name(), call.resource.resource)
}

#[cfg(test)]
mod tests;
