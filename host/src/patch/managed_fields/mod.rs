//! kube's field manager for every write that is not a server-side apply: a
//! create, update or patch (of the object or a subresource) records an
//! `Update` entry in `metadata.managedFields` naming its manager and the
//! fields it set or changed; other managers lose the fields it took over or
//! removed; past ten Update entries the oldest are merged into
//! `ancient-changes`. The fields are found on the object as kube's decoder
//! leaves it (defaulted, before admission and the strategy's preparation),
//! by one comparison with the live object (a create's: the kind's Go zero
//! value). Server-side apply (`patch::apply`) keeps its own entries.

mod compare;
mod entries;
mod manager;
pub mod schema;
mod set;
mod typed;
mod zero;

#[cfg(test)]
mod tests;

use serde_json::Value;

use crate::catalogue::ResourceInfo;
use crate::patch::SchemaLookup;

pub use entries::sort_encoded;
pub use manager::from_user_agent;

use entries::Entry;
use schema::Type;
use set::Fields;

/// Who writes: the manager an Update entry names, the subresource written
/// ("" for the object itself), and the schemas its fields are found by.
#[derive(Clone, Copy)]
pub struct Tracking<'a> {
    pub manager: &'a str,
    pub subresource: &'a str,
    pub schemas: &'a (dyn SchemaLookup + Sync),
}

/// The manager kube-apiserver's own writes are recorded under (its
/// bootstrap namespaces, RBAC policy and `kubernetes` Service).
pub const APISERVER: &str = "kube-apiserver";

/// A server-internal write as `manager` records it, found by the
/// built-in schemas of `catalogue`.
pub fn internal<'a>(manager: &'a str, catalogue: &'a crate::catalogue::Catalogue) -> Tracking<'a> {
    Tracking {
        manager,
        subresource: "",
        schemas: catalogue.schemas(),
    }
}

/// The `managedFields` after `who` writes `new` over `live` (None: a
/// create); `defaulted` is `new` as kube's decoder leaves it. None when
/// the object keeps no entries (an existing object that had none, as kube
/// starts tracking only on create or apply).
pub fn record(
    res: &ResourceInfo,
    live: Option<&Value>,
    new: &Value,
    defaulted: &Value,
    who: &Tracking<'_>,
) -> Option<Value> {
    let mut entries = starting_entries(live, new, who);
    let existing = live.and_then(|l| l.pointer("/metadata/uid")).is_some();
    if entries.is_empty() && existing {
        return None;
    }
    let ty = Type::root(&res.schema_name, who.schemas);
    let zero = match (live, &res.custom) {
        (Some(_), _) => None,
        (None, Some(_)) => Some(Value::Object(Default::default())),
        (None, None) => Some(typed::zero(res, zero::zero_object(&res.schema_name))),
    };
    let defaulted = typed::written(res, defaulted);
    let cmp = compare::compare(live.or(zero.as_ref()), Some(&defaulted), ty);
    let ignored = ignored_fields(res, who.subresource);
    let changed = cmp.changed.recursive_difference(&ignored);
    let removed = cmp.removed.recursive_difference(&ignored);
    for entry in &mut entries {
        entry.fields = entry.fields.difference(&changed).difference(&removed);
    }
    entries.retain(|e| !e.fields.is_empty());
    add_own(&mut entries, strip_meta(changed), res, who);
    entries::cap_updates(&mut entries);
    if entries.is_empty() {
        return None;
    }
    Some(entries::encode(entries))
}

/// The entries a write starts from: the written object's own when it sets
/// valid ones (not for a subresource), none when it clears them (`[]`),
/// else the live object's.
fn starting_entries(live: Option<&Value>, new: &Value, who: &Tracking<'_>) -> Vec<Entry> {
    let of_live = || {
        let managed = live.and_then(|l| l.pointer("/metadata/managedFields"));
        entries::decode(managed).unwrap_or_default()
    };
    if !who.subresource.is_empty() {
        return of_live();
    }
    let written = new.pointer("/metadata/managedFields");
    if entries::is_reset(written) {
        return Vec::new();
    }
    match entries::decode(written) {
        Some(own) if !own.is_empty() => own,
        _ => of_live(),
    }
}

/// Resources whose strategy resets more than status on writes of the
/// object itself (kube's `GetResetFields`): (group, resource, field).
const ALSO_RESET: [(&str, &str, &str); 1] =
    [("certificates.k8s.io", "certificatesigningrequests", "spec")];

/// The fields a write of this (sub)resource does not own (kube's reset
/// fields): status on the object when status is a subresource (and what
/// [`ALSO_RESET`] adds), spec on the status subresource.
fn ignored_fields(res: &ResourceInfo, subresource: &str) -> Fields {
    let mut ignored = Fields::default();
    let field = |name: &str| [format!("f:{name}")];
    match subresource {
        "" if res.has_subresource("status") => {
            ignored.insert(&field("status"));
            let extra = ALSO_RESET
                .iter()
                .filter(|(g, r, _)| *g == res.group && *r == res.plural);
            for (_, _, name) in extra {
                ignored.insert(&field(name));
            }
        }
        "status" => ignored.insert(&field("spec")),
        _ => {}
    }
    ignored
}

/// What no manager owns: kube's `stripMetaManager` set.
const STRIPPED: [&[&str]; 12] = [
    &["f:apiVersion"],
    &["f:kind"],
    &["f:metadata"],
    &["f:metadata", "f:name"],
    &["f:metadata", "f:namespace"],
    &["f:metadata", "f:creationTimestamp"],
    &["f:metadata", "f:selfLink"],
    &["f:metadata", "f:uid"],
    &["f:metadata", "f:clusterName"],
    &["f:metadata", "f:generation"],
    &["f:metadata", "f:managedFields"],
    &["f:metadata", "f:resourceVersion"],
];

fn strip_meta(mut fields: Fields) -> Fields {
    for path in STRIPPED {
        fields.remove(path);
    }
    fields
}

/// This write's fields, merged into its manager's entry (made when absent).
fn add_own(entries: &mut Vec<Entry>, fields: Fields, res: &ResourceInfo, who: &Tracking<'_>) {
    if fields.is_empty() {
        return;
    }
    let mine = Entry {
        manager: who.manager.to_string(),
        operation: "Update".into(),
        api_version: res.api_version(),
        time: Some(crate::apimachinery::meta::now()),
        subresource: who.subresource.to_string(),
        fields,
    };
    let id = mine.identity();
    match entries.iter_mut().find(|e| e.identity() == id) {
        Some(entry) => {
            entry.fields.union(&mine.fields);
            entry.time = mine.time;
        }
        None => entries.push(mine),
    }
}
