//! The generic object-count evaluator (`generic.NewObjectCountEvaluator`):
//! every object counts 1 under `count/<resource>[.<group>]`, and under the
//! legacy alias for configmaps, secrets, replicationcontrollers and
//! resourcequotas.

use crate::group_resource::GroupResource;
use crate::quantity::Quantity;
use crate::resources::ResourceList;

/// Core resources counted under a plain name too (`legacyObjectCountAliases`).
const LEGACY_ALIASES: [&str; 4] = [
    "configmaps",
    "resourcequotas",
    "replicationcontrollers",
    "secrets",
];

/// `count/<resource>` or `count/<resource>.<group>` (`ObjectCountQuotaResourceNameFor`).
pub(crate) fn count_name(gr: &GroupResource) -> String {
    format!("count/{gr}")
}

/// The quota names objects of `gr` are counted under.
pub(super) fn names(gr: &GroupResource) -> Vec<String> {
    let mut names = vec![count_name(gr)];
    if gr.group.is_empty() && LEGACY_ALIASES.contains(&gr.resource.as_str()) {
        names.push(gr.resource.clone());
    }
    names
}

/// One of each name.
pub(super) fn usage(names: &[String]) -> ResourceList {
    names
        .iter()
        .map(|n| (n.clone(), Quantity::from_units(1)))
        .collect()
}

/// The resource a counting key names: `count/...` or a legacy alias.
pub(super) fn resource_for_key(key: &str) -> Option<GroupResource> {
    if LEGACY_ALIASES.contains(&key) {
        return Some(GroupResource::new("", key));
    }
    let target = key.strip_prefix("count/")?;
    (!target.is_empty()).then(|| GroupResource::parse(target))
}
