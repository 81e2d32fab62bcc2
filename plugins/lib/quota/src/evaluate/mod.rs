//! Usage evaluators, one per kind of API resource, as kube's
//! `pkg/quota/v1/evaluator/core` (pods, services, persistentvolumeclaims)
//! and the generic object-count evaluator for everything else.

mod claims;
mod count;
mod pod_resources;
mod pods;
mod services;

use std::collections::BTreeSet;

use serde_json::Value;

use crate::group_resource::{is_ignored, GroupResource};
use crate::resources::ResourceList;
use crate::spec::{QuotaSpec, ScopeRequirement};

/// A write that may change usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
}

/// The evaluator for one API resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Evaluator {
    Pods,
    Services,
    Claims,
    /// Object counting under these quota names (`count/<resource>[.<group>]`
    /// and, for a few core resources, a legacy alias such as `configmaps`).
    Count(Vec<String>),
}

impl Evaluator {
    /// The evaluator for `gr`; None for resources quota ignores.
    pub fn for_resource(gr: &GroupResource) -> Option<Evaluator> {
        if is_ignored(gr) {
            return None;
        }
        Some(match (gr.group.as_str(), gr.resource.as_str()) {
            ("", "pods") => Evaluator::Pods,
            ("", "services") => Evaluator::Services,
            ("", "persistentvolumeclaims") => Evaluator::Claims,
            _ => Evaluator::Count(count::names(gr)),
        })
    }

    /// The quota resource names among `names` this evaluator measures
    /// (`MatchingResources`).
    pub fn matching_resources<'a>(
        &self,
        names: impl IntoIterator<Item = &'a String>,
    ) -> BTreeSet<String> {
        names
            .into_iter()
            .filter(|name| self.tracks(name))
            .cloned()
            .collect()
    }

    fn tracks(&self, name: &str) -> bool {
        match self {
            Evaluator::Pods => pods::tracks(name),
            Evaluator::Services => services::tracks(name),
            Evaluator::Claims => claims::tracks(name),
            Evaluator::Count(names) => names.iter().any(|n| n == name),
        }
    }

    /// The usage one object contributes (`Usage`); `now` (Unix seconds)
    /// decides whether a pod stuck terminating still counts.
    pub fn usage(&self, object: &Value, now: Option<i64>) -> ResourceList {
        match self {
            Evaluator::Pods => pods::usage(object, now),
            Evaluator::Services => services::usage(object),
            Evaluator::Claims => claims::usage(object),
            Evaluator::Count(names) => count::usage(names),
        }
    }

    /// Whether a write can change usage (`Handles`).
    pub fn handles(
        &self,
        operation: Operation,
        subresource: &str,
        object: &Value,
        old_object: Option<&Value>,
    ) -> bool {
        match self {
            Evaluator::Pods => pods::handles(operation, subresource, object, old_object),
            Evaluator::Services | Evaluator::Claims => true,
            Evaluator::Count(_) => operation == Operation::Create,
        }
    }

    /// Checks what the object must specify when a quota tracks `required`
    /// (`Constraints`); the error is the reason, without the quota's name.
    pub fn constraints(&self, required: &BTreeSet<String>, object: &Value) -> Result<(), String> {
        match self {
            Evaluator::Pods => pods::constraints(required, object),
            _ => Ok(()),
        }
    }

    /// Whether the object falls in one scope requirement; only pods have scopes.
    fn matches_scope(&self, requirement: &ScopeRequirement, object: &Value) -> bool {
        match self {
            Evaluator::Pods => pods::matches_scope(requirement, object),
            _ => false,
        }
    }

    /// Whether the object falls in every scope of the quota.
    pub fn in_scope(&self, quota: &QuotaSpec, object: &Value) -> bool {
        quota
            .selectors
            .iter()
            .all(|s| self.matches_scope(s, object))
    }

    /// kube's `generic.Matches`: the quota tracks something this evaluator
    /// measures and the object is in all of its scopes.
    pub fn applies(&self, quota: &QuotaSpec, object: &Value) -> bool {
        !self.matching_resources(quota.hard_names()).is_empty() && self.in_scope(quota, object)
    }
}

/// The API resource whose objects a quota key counts, if any.
pub(crate) fn resource_for_key(key: &str) -> Option<GroupResource> {
    let gr = if pods::tracks(key) {
        GroupResource::new("", "pods")
    } else if services::tracks(key) {
        GroupResource::new("", "services")
    } else if claims::tracks(key) {
        GroupResource::new("", "persistentvolumeclaims")
    } else {
        count::resource_for_key(key)?
    };
    (!is_ignored(&gr)).then_some(gr)
}

#[cfg(test)]
mod tests;
