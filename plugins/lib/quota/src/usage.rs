//! A quota's `status.used` from the objects in its namespace (kube's
//! `quota.CalculateUsage` with each evaluator's `UsageStats`), and which API
//! resources those objects come from.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::evaluate::{resource_for_key, Evaluator};
use crate::group_resource::GroupResource;
use crate::quantity::Quantity;
use crate::resources::{self, ResourceList};
use crate::spec::QuotaSpec;

/// The API resources whose objects the quota's hard keys count, sorted
/// and without duplicates (e.g. `pods` for `requests.cpu`,
/// `deployments.apps` for `count/deployments.apps`). Keys nothing counts,
/// and resources quota ignores (events, reviews), name none.
pub fn resources_to_list(quota: &Value) -> Vec<GroupResource> {
    let spec = QuotaSpec::read(quota);
    let set: BTreeSet<GroupResource> = spec
        .hard_names()
        .filter_map(|key| resource_for_key(key))
        .collect();
    set.into_iter().collect()
}

/// The usage one object of `resource` (`pods`, `deployments.apps`)
/// contributes, under every name its evaluator measures; empty for
/// resources quota ignores. Uses the system clock for pods stuck terminating.
pub fn object_usage(resource: &str, object: &Value) -> ResourceList {
    match Evaluator::for_resource(&GroupResource::parse(resource)) {
        Some(evaluator) => evaluator.usage(object, crate::time::now_unix()),
        None => ResourceList::new(),
    }
}

/// The quota's `status.used`: an entry for every hard key ("0" when nothing
/// counts), summed over `objects`, each paired with its resource as
/// `GroupResource` text (`pods`, `deployments.apps`). Objects outside the
/// quota's scopes are skipped. Uses the system clock (see [`usage_at`]).
pub fn usage(quota: &Value, objects: &[(&str, &Value)]) -> BTreeMap<String, String> {
    usage_at(quota, objects, crate::time::now_unix())
}

/// [`usage`] at `now` (Unix seconds): a pod whose deletion grace period
/// ended before `now` no longer counts its compute resources; None skips
/// that check.
pub fn usage_at(
    quota: &Value,
    objects: &[(&str, &Value)],
    now: Option<i64>,
) -> BTreeMap<String, String> {
    resources::to_strings(&used_list(&QuotaSpec::read(quota), objects, now))
}

/// The usage as quantities, every hard key present.
pub(crate) fn used_list(
    spec: &QuotaSpec,
    objects: &[(&str, &Value)],
    now: Option<i64>,
) -> ResourceList {
    let mut used: ResourceList = spec
        .hard_names()
        .map(|k| (k.clone(), Quantity::ZERO))
        .collect();
    for (resource, object) in objects {
        let Some(evaluator) = Evaluator::for_resource(&GroupResource::parse(resource)) else {
            continue;
        };
        let tracked = evaluator.matching_resources(spec.hard_names());
        if tracked.is_empty() || !evaluator.in_scope(spec, object) {
            continue;
        }
        resources::add_into(
            &mut used,
            &resources::mask(&evaluator.usage(object, now), &tracked),
        );
    }
    used
}
