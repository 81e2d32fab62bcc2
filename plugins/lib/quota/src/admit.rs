//! The admission check of one object against one quota, as kube-apiserver's
//! ResourceQuota plugin (`CheckRequest`) does it, with the usage of the
//! other objects computed by the caller instead of read from `status.used`.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::evaluate::{Evaluator, Operation};
use crate::group_resource::GroupResource;
use crate::json;
use crate::messages;
use crate::resources::{self, ResourceList};
use crate::spec::QuotaSpec;

/// Whether a write to `resource` (`pods`, `deployments.apps`) can change
/// usage at all (the evaluator's `Handles`): creates; updates of pods that
/// move between the Terminating scopes, of pods' `resize` subresource, of
/// services and of persistentvolumeclaims. False for ignored resources.
pub fn handles(
    resource: &str,
    subresource: &str,
    operation: Operation,
    object: &Value,
    old_object: Option<&Value>,
) -> bool {
    Evaluator::for_resource(&GroupResource::parse(resource))
        .is_some_and(|e| e.handles(operation, subresource, object, old_object))
}

/// Whether the quota constrains this object (kube's `Matches`): it tracks
/// something the object's evaluator measures, and the object is in every
/// one of its scopes.
pub fn applies(quota: &Value, resource: &str, object: &Value) -> bool {
    Evaluator::for_resource(&GroupResource::parse(resource))
        .is_some_and(|e| e.applies(&QuotaSpec::read(quota), object))
}

/// What the object must specify under this quota: a pod needs every
/// tracked cpu/memory request or limit on each container. Err is
/// `failed quota: <name>: must specify ...`. Ok when the quota does not apply.
pub fn check_constraints(quota: &Value, resource: &str, object: &Value) -> Result<(), String> {
    let Some(evaluator) = Evaluator::for_resource(&GroupResource::parse(resource)) else {
        return Ok(());
    };
    let spec = QuotaSpec::read(quota);
    if !evaluator.applies(&spec, object) {
        return Ok(());
    }
    constraints(&spec, &evaluator, object)
}

fn constraints(spec: &QuotaSpec, evaluator: &Evaluator, object: &Value) -> Result<(), String> {
    let required = evaluator.matching_resources(spec.hard_names());
    evaluator
        .constraints(&required, object)
        .map_err(|reason| messages::failed(&spec.name, &reason))
}

/// Admits `new_object` of `resource` against one quota. `used` is the
/// quota's usage by every other object (e.g. [`usage`](crate::usage) over
/// the namespace's objects without this one); on update, `old_object` (the
/// stored version) is what the object uses now. Err is kube's message
/// (`failed quota: ...`, `exceeded quota: ...` or `quota usage is
/// negative ...`), to be returned as 403 Forbidden. Uses the system clock
/// (see [`admit_at`]).
pub fn admit(
    quota: &Value,
    resource: &str,
    used: &BTreeMap<String, String>,
    new_object: &Value,
    old_object: Option<&Value>,
) -> Result<(), String> {
    admit_at(
        quota,
        resource,
        used,
        new_object,
        old_object,
        crate::time::now_unix(),
    )
}

/// [`admit`] at `now` (Unix seconds, for pods stuck terminating).
pub fn admit_at(
    quota: &Value,
    resource: &str,
    used: &BTreeMap<String, String>,
    new_object: &Value,
    old_object: Option<&Value>,
    now: Option<i64>,
) -> Result<(), String> {
    let Some(evaluator) = Evaluator::for_resource(&GroupResource::parse(resource)) else {
        return Ok(());
    };
    let spec = QuotaSpec::read(quota);
    if !evaluator.applies(&spec, new_object) {
        return Ok(());
    }
    constraints(&spec, &evaluator, new_object)?;
    let input = evaluator.usage(new_object, now);
    let negative = resources::negative_names(&input);
    if !negative.is_empty() {
        return Err(messages::negative_usage(&negative));
    }
    let previous = counted_previous(&spec, &evaluator, old_object, now);
    let mut used = resources::from_strings(used);
    if let Some(previous) = &previous {
        used = resources::add(&used, &resources::mask(previous, spec.hard_names()));
    }
    check(&spec, &used, &charged(&spec, input, previous.as_ref()))
}

/// What this write adds to the quota's usage: the non-zero growth under
/// the quota's hard keys; empty when the quota does not apply (so a write
/// that requests nothing needs no usage listing). Uses the system clock.
pub fn requested(
    quota: &Value,
    resource: &str,
    new_object: &Value,
    old_object: Option<&Value>,
) -> ResourceList {
    let Some(evaluator) = Evaluator::for_resource(&GroupResource::parse(resource)) else {
        return ResourceList::new();
    };
    let spec = QuotaSpec::read(quota);
    if !evaluator.applies(&spec, new_object) {
        return ResourceList::new();
    }
    let now = crate::time::now_unix();
    let previous = counted_previous(&spec, &evaluator, old_object, now);
    charged(&spec, evaluator.usage(new_object, now), previous.as_ref())
}

/// On an update of a stored object the quota already counts, the old
/// version's usage (which is then part of the quota's usage).
fn counted_previous(
    spec: &QuotaSpec,
    evaluator: &Evaluator,
    old_object: Option<&Value>,
    now: Option<i64>,
) -> Option<ResourceList> {
    let stored = |old: &&Value| {
        json::get_str(old, &["metadata", "resourceVersion"]).is_some_and(|rv| !rv.is_empty())
    };
    old_object
        .filter(stored)
        .filter(|old| evaluator.applies(spec, old))
        .map(|old| evaluator.usage(old, now))
}

/// The non-zero charge under the quota's hard keys: only growth over the
/// counted old version (`SubtractWithNonNegativeResult`), else everything.
fn charged(spec: &QuotaSpec, input: ResourceList, previous: Option<&ResourceList>) -> ResourceList {
    let delta = match previous {
        Some(previous) => resources::subtract_non_negative(&input, previous),
        None => input,
    };
    resources::mask(&resources::remove_zeros(&delta), spec.hard_names())
}

/// used + requested must stay within every hard limit it touches.
fn check(spec: &QuotaSpec, used: &ResourceList, requested: &ResourceList) -> Result<(), String> {
    let new_usage = resources::add(used, requested);
    let over = resources::exceeded(&resources::mask(&new_usage, requested.keys()), &spec.hard);
    if over.is_empty() {
        return Ok(());
    }
    Err(messages::exceeded(
        &spec.name,
        &resources::mask(requested, &over),
        &resources::mask(used, &over),
        &resources::mask(&spec.hard, &over),
    ))
}
