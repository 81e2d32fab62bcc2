//! Every replica follows the CustomResourceDefinitions in the store (one
//! list, then a watch) and swaps the live catalogue whenever one changes:
//! a CRD's resources are served from the moment it is Established, on every
//! replica, with no restart; a deleted CRD's resources go with it. The
//! changes that arrive together (a bulk install) are applied in one swap,
//! and a swap costs the CRDs that changed plus one copy of the catalogue's
//! entries, never a rebuild of every CRD.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{FutureExt, StreamExt};
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::custom::conversion::ConversionSetup;
use crate::catalogue::live::{CustomEntry, LiveCatalogue};
use crate::registry::decode;
use crate::storage::{Event, EventKind, RangeRequest, Storage, StorageError};

/// Where CRDs are stored.
pub const CRD_PREFIX: &str = "/registry/apiextensions.k8s.io/customresourcedefinitions/";

/// Follows the CRDs until the server stops; restarts after an error.
pub fn spawn(
    storage: Arc<dyn Storage>,
    live: Arc<LiveCatalogue>,
    setup: Arc<ConversionSetup>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            if let Err(e) = follow(&*storage, &live, &setup).await {
                tracing::warn!(error = %e, "following CustomResourceDefinitions; restarting");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
}

/// Lists the CRDs, serves them, then applies each change as it comes.
pub async fn follow(
    storage: &dyn Storage,
    live: &LiveCatalogue,
    setup: &ConversionSetup,
) -> ApiResult<()> {
    let internal = |e: StorageError| ApiError::internal(e.to_string());
    let page = storage
        .range(RangeRequest {
            prefix: CRD_PREFIX,
            ..Default::default()
        })
        .await
        .map_err(internal)?;
    let mut crds = BTreeMap::new();
    for kv in &page.kvs {
        crds.insert(kv.key.clone(), entries(&decode(kv)?, setup));
    }
    publish(live, &crds, page.revision);
    let mut events = storage
        .watch(CRD_PREFIX, page.revision)
        .await
        .map_err(internal)?;
    while let Some(first) = events.next().await {
        let mut revision = apply(&mut crds, first.map_err(internal)?, setup)?;
        while let Some(Some(next)) = events.next().now_or_never() {
            revision = apply(&mut crds, next.map_err(internal)?, setup)?;
        }
        publish(live, &crds, revision);
    }
    Ok(())
}

/// Applies one CRD change; the revision it was made at.
fn apply(
    crds: &mut BTreeMap<String, Vec<CustomEntry>>,
    event: Event,
    setup: &ConversionSetup,
) -> ApiResult<i64> {
    match event.kind {
        EventKind::Put => crds.insert(event.kv.key.clone(), entries(&decode(&event.kv)?, setup)),
        EventKind::Delete => crds.remove(&event.kv.key),
    };
    Ok(event.revision())
}

/// A CRD's entries, built (schemas and rules compiled) once per change of it.
fn entries(crd: &Value, setup: &ConversionSetup) -> Vec<CustomEntry> {
    crate::cpu::heavy(|| crate::catalogue::custom::resource::entries(crd, setup))
}

fn publish(live: &LiveCatalogue, crds: &BTreeMap<String, Vec<CustomEntry>>, revision: i64) {
    crate::cpu::heavy(|| {
        let entries = crds.values().flatten().cloned().collect();
        live.replace_custom(entries, revision);
    });
}

/// The revision of the stored, Established CRD that serves `group`'s
/// `plural`, if there is one (`None` for built-in groups' misses too).
pub async fn revision_serving(storage: &dyn Storage, group: &str, plural: &str) -> Option<i64> {
    if group.is_empty() || plural.is_empty() {
        return None;
    }
    let key = format!("{CRD_PREFIX}{plural}.{group}");
    let kv = storage.get(&key).await.ok()??;
    let crd = decode(&kv).ok()?;
    crate::catalogue::custom::resource::condition_true(&crd, "Established")
        .then_some(kv.mod_revision)
}
