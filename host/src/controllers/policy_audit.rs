//! The background audit, run by the leader with the other writing
//! controllers: for each PolicyBundle loaded in Audit or Enforce mode, its
//! policies evaluate the stored objects they select (`policy::reports::scan`, on the
//! plugin runtime) and the results are written per namespace as a
//! PolicyReport and for cluster-scoped objects as a ClusterPolicyReport
//! (`policy::reports::report`), each only when it changed. A scan runs at start, every
//! `--policy-audit-interval`, and [`DEBOUNCE`] after a PolicyBundle's
//! policies were loaded or removed or an Audit-mode admission in this
//! replica found a violation. Reports of Warn-mode, deleted or unknown
//! PolicyBundles are deleted; those of PolicyBundles not loaded yet are
//! left as they are. Errors are logged and retried at the next scan.

use crate::api::state::AppState;
use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::policy_report::{CLUSTER, GROUP, NAMESPACED, VERSION};
use crate::catalogue::{Catalogue, ResourceInfo};
use crate::policy::reports::report::{self, Finding, Owner};
use crate::policy::reports::scan;
use crate::policy::resources::loaded::Audited;
use crate::policy::resources::mode::Mode;
use crate::registry::{ListQuery, WriteOptions};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::task::JoinHandle;

/// How long after a change or a violation the scan starts (changes
/// meanwhile join it).
pub const DEBOUNCE: Duration = Duration::from_secs(1);

/// Scans now, then periodically and after changes, until aborted.
pub fn spawn(state: Arc<AppState>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let set = state.policies.clone();
        loop {
            if let Err(e) = run(&state).await {
                tracing::warn!(error = %e.message, "policy audit failed; retried at the next scan");
            }
            tokio::select! {
                _ = tokio::time::sleep(state.policy_audit_interval.max(DEBOUNCE)) => {}
                _ = set.changed.notified() => tokio::time::sleep(DEBOUNCE).await,
                _ = set.metrics.violations.notified() => tokio::time::sleep(DEBOUNCE).await,
            }
        }
    })
}

/// The report resources and PolicyBundles, as served.
struct Resources {
    namespaced: ResourceInfo,
    cluster: ResourceInfo,
    bundles: ResourceInfo,
}

impl Resources {
    fn of(catalogue: &Catalogue) -> Option<Resources> {
        use crate::catalogue::policy_bundle as pb;
        Some(Resources {
            namespaced: catalogue.lookup(GROUP, VERSION, NAMESPACED)?.clone(),
            cluster: catalogue.lookup(GROUP, VERSION, CLUSTER)?.clone(),
            bundles: catalogue
                .lookup(pb::GROUP, pb::VERSION, pb::PLURAL)?
                .clone(),
        })
    }

    fn report(&self, namespace: Option<&str>) -> &ResourceInfo {
        match namespace {
            Some(_) => &self.namespaced,
            None => &self.cluster,
        }
    }
}

/// One scan of every PolicyBundle.
async fn run(state: &AppState) -> ApiResult<()> {
    let catalogue = state.catalogue.get();
    let Some(res) = Resources::of(&catalogue) else {
        return Ok(());
    };
    let bundles: HashMap<String, String> = state
        .registry
        .list(&res.bundles, None, &ListQuery::default())
        .await?
        .items
        .iter()
        .filter_map(|b| {
            let uid = b.pointer("/metadata/uid").and_then(Value::as_str)?;
            Some((meta::name(b)?.to_string(), uid.to_string()))
        })
        .collect();
    let stored = stored_reports(state, &res).await?;
    let loaded = state.policies.audited();
    let namespaces = scan::namespace_labels(&state.registry, &catalogue).await?;
    for (name, uid) in &bundles {
        let theirs: Vec<&Value> = stored
            .iter()
            .filter(|r| report::bundle_of(r) == Some(name.as_str()))
            .collect();
        match loaded.get(name) {
            Some(a) if a.mode != Mode::Warn => {
                let owner = Owner {
                    name,
                    uid,
                    mode: a.mode.as_str(),
                };
                let scanned = Scanned::of(state, &catalogue, a, &namespaces, &owner).await?;
                write_all(state, &res, &owner, &scanned, &theirs).await;
            }
            Some(_) => delete_all(state, &res, &theirs).await,
            None => {}
        }
    }
    let orphans: Vec<&Value> = stored
        .iter()
        .filter(|r| report::bundle_of(r).is_some_and(|b| !bundles.contains_key(b)))
        .collect();
    delete_all(state, &res, &orphans).await;
    Ok(())
}

/// One PolicyBundle's findings, by namespace (None: cluster-scoped).
struct Scanned(BTreeMap<Option<String>, Vec<Finding>>);

impl Scanned {
    async fn of(
        state: &AppState,
        catalogue: &Catalogue,
        audited: &Audited,
        namespaces: &scan::NamespaceLabels,
        owner: &Owner<'_>,
    ) -> ApiResult<Scanned> {
        let started = std::time::Instant::now();
        let targets = scan::targets(catalogue, &audited.entries);
        let (objects, capped) = scan::objects(&state.registry, &targets).await?;
        let scanned = objects.len();
        if capped {
            tracing::warn!(policy_bundle = %owner.name, max = scan::MAX_OBJECTS, "policy audit scanned only the first objects");
        }
        let job = scan::evaluate(audited.entries.clone(), objects, namespaces.clone());
        let findings = crate::wasm::run_on_pool(job)
            .await
            .map_err(|e| ApiError::internal(format!("policy audit: {e}")))?;
        tracing::info!(
            policy_bundle = %owner.name,
            objects = scanned,
            results = findings.len(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "policy audit scanned"
        );
        let mut groups: BTreeMap<Option<String>, Vec<Finding>> = BTreeMap::new();
        for f in findings {
            groups
                .entry(f.namespace().map(String::from))
                .or_default()
                .push(f);
        }
        Ok(Scanned(groups))
    }
}

/// Every report Capstan manages, namespaced and cluster-scoped.
async fn stored_reports(state: &AppState, res: &Resources) -> ApiResult<Vec<Value>> {
    let managed = |r: &Value| report::bundle_of(r).is_some();
    let query = ListQuery {
        filter: Some(&managed),
        ..ListQuery::default()
    };
    let mut out = state
        .registry
        .list(&res.namespaced, None, &query)
        .await?
        .items;
    out.extend(state.registry.list(&res.cluster, None, &query).await?.items);
    Ok(out)
}

fn now() -> (i64, u32) {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (d.as_secs() as i64, d.subsec_nanos())
}

fn namespace_of(r: &Value) -> Option<&str> {
    r.pointer("/metadata/namespace").and_then(Value::as_str)
}

/// Writes each namespace's report that changed; deletes the PolicyBundle's
/// reports of namespaces without findings now.
async fn write_all(
    state: &AppState,
    res: &Resources,
    owner: &Owner<'_>,
    scanned: &Scanned,
    theirs: &[&Value],
) {
    let name = report::name_for(owner.name);
    let at = now();
    for (ns, findings) in &scanned.0 {
        let old = theirs
            .iter()
            .find(|r| namespace_of(r) == ns.as_deref() && meta::name(r) == Some(name.as_str()))
            .copied();
        let refs: Vec<&Finding> = findings.iter().collect();
        // Up to a MiB of results: built, and then written, as a large
        // request's steps are (`cpu`), not inline on an async worker.
        let (desired, size) = crate::cpu::heavy(|| {
            let d = report::desired(owner, ns.as_deref(), &refs, old, at);
            let size = d.to_string().len();
            (d, size)
        });
        let written = crate::cpu::request_scope(async {
            crate::cpu::mark_large(size);
            write(state, res.report(ns.as_deref()), old, desired).await
        });
        if let Err(e) = written.await {
            tracing::warn!(policy_bundle = %owner.name, namespace = ns.as_deref().unwrap_or_default(), error = %e.message, "policy report not written");
        }
    }
    let stale: Vec<&Value> = theirs
        .iter()
        .filter(|r| {
            meta::name(r) != Some(name.as_str())
                || !scanned.0.contains_key(&namespace_of(r).map(String::from))
        })
        .copied()
        .collect();
    delete_all(state, res, &stale).await;
}

/// Creates the report, or updates the stored one when it says otherwise.
async fn write(
    state: &AppState,
    res: &ResourceInfo,
    old: Option<&Value>,
    desired: Value,
) -> ApiResult<()> {
    let ns = desired
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .map(String::from);
    let name = meta::name(&desired).unwrap_or_default().to_string();
    let summary = desired["summary"].to_string();
    let result = match old {
        Some(old) if report::up_to_date(old, &desired) => return Ok(()),
        Some(_) => {
            let change = |current: Value| Ok(report::updated(current, &desired));
            state
                .registry
                .guaranteed_update(res, ns.as_deref(), &name, WriteOptions::default(), &change)
                .await
                .map(|_| ())
        }
        None => state
            .registry
            .create(res, ns.as_deref(), desired.clone(), WriteOptions::default())
            .await
            .map(|_| ()),
    };
    match result {
        // Gone or taken meanwhile, or its namespace is terminating: the
        // next scan sees the store as it is then.
        Err(e) if matches!(e.code, 403 | 404 | 409) => {
            tracing::debug!(report = %name, error = %e.message, "policy report left for the next scan");
            Ok(())
        }
        Err(e) => Err(e),
        Ok(()) => {
            tracing::info!(report = %name, namespace = ns.as_deref().unwrap_or_default(), %summary, "policy report written");
            Ok(())
        }
    }
}

async fn delete_all(state: &AppState, res: &Resources, reports: &[&Value]) {
    for r in reports {
        let ns = namespace_of(r);
        let name = meta::name(r).unwrap_or_default();
        let deleted = state
            .registry
            .delete(
                res.report(ns),
                ns,
                name,
                &Value::Null,
                WriteOptions::default(),
            )
            .await;
        match deleted {
            Ok(_) => {
                tracing::info!(report = %name, namespace = ns.unwrap_or_default(), "policy report deleted")
            }
            Err(e) if e.code == 404 => {}
            Err(e) => {
                tracing::warn!(report = %name, error = %e.message, "policy report not deleted")
            }
        }
    }
}
