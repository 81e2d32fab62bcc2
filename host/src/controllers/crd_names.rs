//! CustomResourceDefinition status, as kube-apiextensions-apiserver's naming
//! and establishing controllers set it (pkg/controller/status and
//! pkg/controller/establish): each CRD's requested names are accepted
//! unless another CRD of its group already accepted them, or a built-in
//! resource of that group has them (condition NamesAccepted, kube's
//! reasons and messages); a CRD whose names are accepted is Established.
//! Every change to any CRD re-checks them all, in name order, so a conflict
//! resolves once the other CRD goes.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio::task::JoinHandle;

use crate::catalogue::ResourceInfo;
use crate::registry::{decode, keys, meta, WriteOptions};
use crate::state::AppState;
use crate::status::{ApiError, ApiResult};
use crate::storage::{RangeRequest, StorageError};

const GROUP: &str = "apiextensions.k8s.io";
const PLURAL: &str = "customresourcedefinitions";

/// Resource and kind names already taken in one group.
#[derive(Default)]
pub struct Taken {
    resources: HashSet<String>,
    kinds: HashSet<String>,
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
        let text = |k: &str| {
            accepted
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        self.resources.insert(text("plural"));
        self.resources.insert(text("singular"));
        self.resources.extend(strings(accepted.get("shortNames")));
        self.kinds.insert(text("kind"));
        self.kinds.insert(text("listKind"));
    }
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
fn fresh(requested: &str, accepted: &str, used: &HashSet<String>) -> Result<(), String> {
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
    used: &HashSet<String>,
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

/// `SetCRDCondition`: replaces the condition of its type (keeping the
/// transition time when the status did not change) or appends it.
pub(crate) fn set_condition(status: &mut Value, mut new: Value) {
    if !status.get("conditions").is_some_and(Value::is_array) {
        status["conditions"] = json!([]);
    }
    let Some(list) = status["conditions"].as_array_mut() else {
        return;
    };
    match list.iter_mut().find(|c| c["type"] == new["type"]) {
        Some(old) => {
            if old["status"] == new["status"] {
                new["lastTransitionTime"] = old["lastTransitionTime"].clone();
            }
            *old = new;
        }
        None => list.push(new),
    }
}

/// Conditions compared without their timestamps.
pub(crate) fn same_status(a: &Value, b: &Value) -> bool {
    let strip = |s: &Value| {
        let mut s = s.clone();
        if let Some(list) = s.get_mut("conditions").and_then(Value::as_array_mut) {
            list.iter_mut()
                .for_each(|c| remove(c, "lastTransitionTime"));
        }
        s
    };
    strip(a) == strip(b)
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
    let revision = reconcile_all(state, &prefix).await?;
    let mut events = state
        .storage
        .watch(&prefix, revision)
        .await
        .map_err(internal)?;
    while let Some(ev) = events.next().await {
        ev.map_err(internal)?;
        reconcile_all(state, &prefix).await?;
    }
    Ok(())
}

/// One pass over every CRD; the revision the list was read at.
async fn reconcile_all(state: &AppState, prefix: &str) -> ApiResult<i64> {
    let page = state
        .storage
        .range(RangeRequest {
            prefix,
            start_after: None,
            limit: None,
            revision: None,
        })
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let mut crds = Vec::with_capacity(page.kvs.len());
    for kv in &page.kvs {
        crds.push(decode(kv)?);
    }
    for i in 0..crds.len() {
        if let Some(updated) = reconcile(state, &crds, i).await? {
            crds[i] = updated;
        }
    }
    Ok(page.revision)
}

/// Brings CRD `i`'s status up to date; the stored object when it changed.
async fn reconcile(state: &AppState, crds: &[Value], i: usize) -> ApiResult<Option<Value>> {
    let crd = &crds[i];
    if meta::is_terminating(crd) {
        return Ok(None);
    }
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut taken = Taken::builtin(state, group);
    for (j, other) in crds.iter().enumerate() {
        if j != i && other.pointer("/spec/group").and_then(Value::as_str) == Some(group) {
            taken.add_accepted(
                other
                    .pointer("/status/acceptedNames")
                    .unwrap_or(&Value::Null),
            );
        }
    }
    let status = desired_status(crd, &calculate(crd, &taken));
    if same_status(&status, crd.get("status").unwrap_or(&Value::Null)) {
        return Ok(None);
    }
    write_status(state, crd, status).await
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
        .guaranteed_update(res, None, name, WriteOptions::default(), &change)
        .await
    {
        Ok(outcome) => Ok(Some(outcome.object().clone())),
        Err(e) if e.code == 404 || e.code == 409 => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests;
