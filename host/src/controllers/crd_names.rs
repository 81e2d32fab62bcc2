//! CustomResourceDefinition status, as kube-apiextensions-apiserver's naming
//! and establishing controllers set it (pkg/controller/status and
//! pkg/controller/establish): each CRD's requested names are accepted
//! unless another CRD of its group already accepted them, or a built-in
//! resource of that group has them (condition NamesAccepted, kube's
//! reasons and messages); a CRD whose names are accepted is Established.
//! A change to a CRD re-checks the CRDs of its group, in name order (as
//! kube requeues a group's CRDs), so a conflict resolves once the other CRD
//! goes; the changes that arrive together are checked in one pass, over
//! CRDs kept decoded from the watch, so a bulk install costs each CRD's own
//! work, not a pass over every CRD per change.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{FutureExt, StreamExt};
use serde_json::{json, Value};
use tokio::task::JoinHandle;

use crate::api::state::AppState;
use crate::apimachinery::conditions::{same_status, set_condition};
use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
use crate::registry::{decode, keys};
use crate::storage::StorageError;

const GROUP: &str = "apiextensions.k8s.io";
const PLURAL: &str = "customresourcedefinitions";

/// Resource and kind names already taken in one group, each with the
/// number of CRDs (or built-ins) that hold it, so a CRD's own names can be
/// set aside while it is checked.
#[derive(Default)]
pub struct Taken {
    resources: Names,
    kinds: Names,
}

/// Names with how many hold each.
#[derive(Default)]
struct Names(HashMap<String, u32>);

impl Names {
    fn insert(&mut self, name: String) {
        *self.0.entry(name).or_default() += 1;
    }

    fn extend(&mut self, names: impl IntoIterator<Item = String>) {
        names.into_iter().for_each(|n| self.insert(n));
    }

    fn remove(&mut self, name: &str) {
        if let Some(n) = self.0.get_mut(name) {
            *n -= 1;
            if *n == 0 {
                self.0.remove(name);
            }
        }
    }

    fn contains(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }
}

impl Taken {
    /// The names the built-in resources of `group` use.
    fn builtin(state: &AppState, group: &str) -> Taken {
        let mut taken = Taken::default();
        let builtins = state
            .catalogue
            .builtin()
            .resources()
            .iter()
            .filter(|r| r.group == group);
        for r in builtins.filter(|r| r.plural != PLURAL) {
            taken.add_builtin(r);
        }
        taken
    }

    fn add_builtin(&mut self, r: &ResourceInfo) {
        self.resources.insert(r.plural.clone());
        self.resources.insert(r.singular.clone());
        self.resources.extend(r.short_names.iter().cloned());
        self.kinds.insert(r.kind.clone());
        self.kinds.insert(r.list_kind.clone());
    }

    /// Adds a CRD's accepted names (`getAcceptedNamesForGroup`).
    fn add_accepted(&mut self, accepted: &Value) {
        let (resources, kinds) = accepted_names(accepted);
        self.resources.extend(resources);
        self.kinds.extend(kinds);
    }

    /// Takes back what [`Taken::add_accepted`] added for `accepted`.
    fn remove_accepted(&mut self, accepted: &Value) {
        let (resources, kinds) = accepted_names(accepted);
        resources.iter().for_each(|n| self.resources.remove(n));
        kinds.iter().for_each(|n| self.kinds.remove(n));
    }
}

/// The resource names (plural, singular, short names) and kind names (kind,
/// listKind) of a CRD's accepted names.
fn accepted_names(accepted: &Value) -> (Vec<String>, [String; 2]) {
    let text = |k: &str| {
        accepted
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut resources = vec![text("plural"), text("singular")];
    resources.extend(strings(accepted.get("shortNames")));
    (resources, [text("kind"), text("listKind")])
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// `equalToAcceptedOrFresh`.
fn fresh(requested: &str, accepted: &str, used: &Names) -> Result<(), String> {
    if requested == accepted || !used.contains(requested) {
        Ok(())
    } else {
        Err(format!("{requested:?} is already in use"))
    }
}

/// What the naming controller computes for one CRD: the accepted names and
/// the NamesAccepted condition's status, reason and message.
pub struct Naming {
    pub accepted: Value,
    pub status: &'static str,
    pub reason: String,
    pub message: String,
}

/// `calculateNamesAndConditions` for `crd` against the names `taken` in its group.
pub fn calculate(crd: &Value, taken: &Taken) -> Naming {
    let requested = crd.pointer("/spec/names").cloned().unwrap_or(json!({}));
    let accepted = crd
        .pointer("/status/acceptedNames")
        .cloned()
        .unwrap_or(json!({}));
    let mut names = accepted.clone();
    let mut conflict: Option<(String, String)> = None;
    let pairs = (&requested, &accepted);
    let scalars = [
        ("plural", "PluralConflict", &taken.resources),
        ("singular", "SingularConflict", &taken.resources),
    ];
    for (key, reason, used) in scalars {
        take(pairs, key, reason, used, &mut names, &mut conflict);
    }
    short_names(&requested, &accepted, taken, &mut names, &mut conflict);
    take(
        pairs,
        "kind",
        "KindConflict",
        &taken.kinds,
        &mut names,
        &mut conflict,
    );
    take(
        pairs,
        "listKind",
        "ListKindConflict",
        &taken.kinds,
        &mut names,
        &mut conflict,
    );
    match requested.get("categories") {
        Some(c) => names["categories"] = c.clone(),
        None => remove(&mut names, "categories"),
    }
    match conflict {
        Some((reason, message)) => Naming {
            accepted: names,
            status: "False",
            reason,
            message,
        },
        None => Naming {
            accepted: names,
            status: "True",
            reason: "NoConflicts".into(),
            message: "no conflicts found".into(),
        },
    }
}

/// One requested name: accepted into `names`, or the conflict recorded.
fn take(
    (requested, accepted): (&Value, &Value),
    key: &str,
    reason: &str,
    used: &Names,
    names: &mut Value,
    conflict: &mut Option<(String, String)>,
) {
    let text = |v: &Value| {
        v.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match fresh(&text(requested), &text(accepted), used) {
        Ok(()) => names[key] = json!(text(requested)),
        Err(e) => *conflict = Some((reason.to_string(), e)),
    }
}

fn short_names(
    requested: &Value,
    accepted: &Value,
    taken: &Taken,
    names: &mut Value,
    conflict: &mut Option<(String, String)>,
) {
    let (wanted, had) = (
        strings(requested.get("shortNames")),
        strings(accepted.get("shortNames")),
    );
    if wanted == had {
        return;
    }
    let errs: Vec<String> = wanted
        .iter()
        .filter(|s| !had.contains(s))
        .filter_map(|s| fresh(s, "", &taken.resources).err())
        .collect();
    match errs.len() {
        0 => match requested.get("shortNames") {
            Some(s) => names["shortNames"] = s.clone(),
            None => remove(names, "shortNames"),
        },
        1 => *conflict = Some(("ShortNamesConflict".into(), errs[0].clone())),
        _ => {
            *conflict = Some((
                "ShortNamesConflict".into(),
                format!("[{}]", errs.join(", ")),
            ))
        }
    }
}

fn remove(value: &mut Value, key: &str) {
    if let Some(fields) = value.as_object_mut() {
        fields.remove(key);
    }
}

/// The status `crd` should have given `naming`: NamesAccepted, then
/// Established (True once names are accepted: the establishing controller),
/// each keeping its lastTransitionTime while its status stays.
pub fn desired_status(crd: &Value, naming: &Naming) -> Value {
    let mut status = crd.get("status").cloned().unwrap_or(json!({}));
    status["acceptedNames"] = naming.accepted.clone();
    let names = condition(
        "NamesAccepted",
        naming.status,
        &naming.reason,
        &naming.message,
    );
    set_condition(&mut status, names);
    let established = if naming.status == "True" || is_true(&status, "Established") {
        condition(
            "Established",
            "True",
            "InitialNamesAccepted",
            "the initial names have been accepted",
        )
    } else {
        condition(
            "Established",
            "False",
            "NotAccepted",
            "not all names are accepted",
        )
    };
    set_condition(&mut status, established);
    status
}

fn condition(kind: &str, status: &str, reason: &str, message: &str) -> Value {
    json!({"type": kind, "status": status, "lastTransitionTime": meta::now(),
           "reason": reason, "message": message})
}

fn is_true(status: &Value, kind: &str) -> bool {
    status
        .get("conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == kind && c["status"] == "True")
        })
}

/// Watches CRDs and reconciles all of them on every change; restarts on errors.
pub fn spawn(state: Arc<AppState>) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            if let Err(e) = run(&state).await {
                tracing::warn!(error = %e, "CRD naming controller restarting");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    })
}

/// The built-in CustomResourceDefinition resource.
pub(crate) fn resource(state: &AppState) -> ApiResult<&ResourceInfo> {
    state
        .catalogue
        .builtin()
        .lookup(GROUP, "v1", PLURAL)
        .ok_or_else(|| ApiError::internal("customresourcedefinitions are not served"))
}

async fn run(state: &AppState) -> ApiResult<()> {
    let internal = |e: StorageError| ApiError::internal(e.to_string());
    let prefix = keys::prefix(resource(state)?, None);
    let (kvs, mut events) = super::list_and_watch(state, &prefix).await?;
    let mut crds = BTreeMap::new();
    for kv in &kvs {
        crds.insert(kv.key.clone(), decode(kv)?);
    }
    let groups: BTreeSet<String> = crds.values().map(|c| group_of(c).to_string()).collect();
    reconcile_groups(state, &mut crds, &groups).await?;
    while let Some(first) = events.next().await {
        let mut groups = BTreeSet::new();
        apply(&mut crds, first.map_err(internal)?, &mut groups)?;
        // The changes already here join this pass (a bulk install's).
        while let Some(Some(next)) = events.next().now_or_never() {
            apply(&mut crds, next.map_err(internal)?, &mut groups)?;
        }
        reconcile_groups(state, &mut crds, &groups).await?;
    }
    Ok(())
}

fn group_of(crd: &Value) -> &str {
    crd.pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Applies one watch event to the decoded CRDs, noting the groups it touches.
fn apply(
    crds: &mut BTreeMap<String, Value>,
    event: crate::storage::Event,
    groups: &mut BTreeSet<String>,
) -> ApiResult<()> {
    let previous = match event.kind {
        crate::storage::EventKind::Put => crds.insert(event.kv.key.clone(), decode(&event.kv)?),
        crate::storage::EventKind::Delete => crds.remove(&event.kv.key),
    };
    let current = crds.get(&event.kv.key);
    for crd in previous.iter().chain(current) {
        groups.insert(group_of(crd).to_string());
    }
    Ok(())
}

/// One pass over the CRDs of each of `groups`, in name order.
async fn reconcile_groups(
    state: &AppState,
    crds: &mut BTreeMap<String, Value>,
    groups: &BTreeSet<String>,
) -> ApiResult<()> {
    for group in groups {
        let keys: Vec<String> = crds
            .iter()
            .filter(|(_, c)| group_of(c) == group)
            .map(|(k, _)| k.clone())
            .collect();
        let mut taken = Taken::builtin(state, group);
        for key in &keys {
            taken.add_accepted(accepted_of(&crds[key]));
        }
        for key in &keys {
            if let Some(updated) = reconcile(state, &crds[key], &mut taken).await? {
                crds.insert(key.clone(), updated);
            }
        }
    }
    Ok(())
}

fn accepted_of(crd: &Value) -> &Value {
    crd.pointer("/status/acceptedNames").unwrap_or(&Value::Null)
}

/// Brings `crd`'s status up to date against the names `taken` in its group
/// (its own included, and updated when they change); the stored object
/// when it changed.
async fn reconcile(state: &AppState, crd: &Value, taken: &mut Taken) -> ApiResult<Option<Value>> {
    if meta::is_terminating(crd) {
        return Ok(None);
    }
    taken.remove_accepted(accepted_of(crd));
    let status = desired_status(crd, &calculate(crd, taken));
    let written = if same_status(&status, crd.get("status").unwrap_or(&Value::Null)) {
        None
    } else {
        write_status(state, crd, status).await?
    };
    taken.add_accepted(accepted_of(written.as_ref().unwrap_or(crd)));
    Ok(written)
}

async fn write_status(state: &AppState, crd: &Value, status: Value) -> ApiResult<Option<Value>> {
    let name = meta::name(crd).unwrap_or_default();
    let uid = |o: &Value| o.pointer("/metadata/uid").cloned();
    let wanted = uid(crd);
    let change = |mut current: Value| {
        if uid(&current) != wanted {
            let why = "the object was replaced";
            return Err(ApiError::conflict(GROUP, PLURAL, name, why));
        }
        current["status"] = status.clone();
        Ok(current)
    };
    let res = resource(state)?;
    match state
        .registry
        .guaranteed_update(res, None, name, status_writer(state), &change)
        .await
    {
        Ok(outcome) => Ok(Some(outcome.object().clone())),
        Err(e) if e.code == 404 || e.code == 409 => Ok(None),
        Err(e) => Err(e),
    }
}

/// The naming controller's status writes, recorded as kube-apiserver's
/// (apiextensions' controllers run inside it).
fn status_writer(state: &AppState) -> crate::registry::WriteOptions<'_> {
    super::written_by(state, crate::patch::managed_fields::APISERVER, "status")
}

#[cfg(test)]
mod tests;
