//! The catalogue as it changes at run time: the built-in resources plus the
//! custom resources of every served CustomResourceDefinition. A request takes
//! one snapshot (`get`) and uses it throughout, so a CRD that changes while
//! a request runs never gives it two views; `replace_custom` swaps in a new
//! snapshot (and the OpenAPI documents of the group-versions that changed).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;

use super::openapi::OpenApiCache;
use super::{group_version, Catalogue, ResourceInfo};

/// One resource a CRD serves, with its kind schema (a complete OpenAPI v3
/// component, named by `info.schema_name`).
#[derive(Clone, Debug)]
pub struct CustomEntry {
    pub info: ResourceInfo,
    pub schema: Value,
    /// The resourceVersion of the CRD it comes from: a different one may
    /// mean different documents.
    pub source_version: String,
}

struct Snapshot {
    catalogue: Arc<Catalogue>,
    openapi: Arc<OpenApiCache>,
    custom: Vec<CustomEntry>,
}

pub struct LiveCatalogue {
    builtin: Arc<Catalogue>,
    current: RwLock<Snapshot>,
    /// The store revision whose CRDs the current snapshot reflects (-1
    /// until the stored CRDs were first read).
    applied: watch::Sender<i64>,
}

impl LiveCatalogue {
    pub fn new(builtin: Catalogue) -> LiveCatalogue {
        let builtin = Arc::new(builtin);
        let openapi = Arc::new(OpenApiCache::new(&builtin));
        let snapshot = Snapshot {
            catalogue: builtin.clone(),
            openapi,
            custom: Vec::new(),
        };
        LiveCatalogue {
            builtin,
            current: RwLock::new(snapshot),
            applied: watch::channel(-1).0,
        }
    }

    /// The catalogue as it is now.
    pub fn get(&self) -> Arc<Catalogue> {
        self.read(|s| s.catalogue.clone())
    }

    /// The OpenAPI v3 documents of the catalogue as it is now.
    pub fn openapi(&self) -> Arc<OpenApiCache> {
        self.read(|s| s.openapi.clone())
    }

    /// The built-in resources only (what no CRD can change).
    pub fn builtin(&self) -> &Catalogue {
        &self.builtin
    }

    fn read<T>(&self, f: impl FnOnce(&Snapshot) -> T) -> T {
        match self.current.read() {
            Ok(s) => f(&s),
            Err(poisoned) => f(&poisoned.into_inner()),
        }
    }

    /// Serves exactly `entries` as the custom resources, as of store
    /// `revision`; OpenAPI documents are rebuilt only for group-versions
    /// whose entries changed.
    pub fn replace_custom(&self, entries: Vec<CustomEntry>, revision: i64) {
        let (old_entries, old_openapi) = self.read(|s| (s.custom.clone(), s.openapi.clone()));
        let changed = changed_group_versions(&old_entries, &entries);
        let catalogue = Arc::new(self.with_custom(&entries));
        let openapi = if changed.is_empty() {
            old_openapi
        } else {
            Arc::new(old_openapi.rebuilt(&catalogue, &changed))
        };
        let snapshot = Snapshot {
            catalogue,
            openapi,
            custom: entries,
        };
        match self.current.write() {
            Ok(mut s) => *s = snapshot,
            Err(poisoned) => *poisoned.into_inner() = snapshot,
        }
        self.applied.send_replace(revision);
    }

    fn with_custom(&self, entries: &[CustomEntry]) -> Catalogue {
        let mut cat = (*self.builtin).clone();
        cat.insert_custom(entries.to_vec());
        cat
    }

    /// Notified after every change of the custom resources served.
    pub fn subscribe(&self) -> watch::Receiver<i64> {
        self.applied.subscribe()
    }

    /// The resources CRDs serve now.
    pub fn custom(&self) -> Vec<ResourceInfo> {
        self.read(|s| s.custom.iter().map(|e| e.info.clone()).collect())
    }

    /// Marks the CRDs of store `revision` as applied, with no change.
    pub fn mark_applied(&self, revision: i64) {
        self.applied.send_if_modified(|r| {
            let newer = revision > *r;
            if newer {
                *r = revision;
            }
            newer
        });
    }

    /// Waits (at most `limit`) until the snapshot reflects the CRDs as of
    /// store `revision`: a request for a resource that a CRD made servable a
    /// moment ago finds it even if this server learned of it just now.
    pub async fn caught_up(&self, revision: i64, limit: Duration) -> bool {
        let mut rx = self.applied.subscribe();
        let reached = async move { rx.wait_for(|r| *r >= revision).await.is_ok() };
        matches!(tokio::time::timeout(limit, reached).await, Ok(true))
    }
}

/// Group-versions (`group/version`) whose custom entries differ.
fn changed_group_versions(old: &[CustomEntry], new: &[CustomEntry]) -> BTreeSet<String> {
    let by_key = |entries: &[CustomEntry]| -> HashMap<(String, String, String), String> {
        entries
            .iter()
            .map(|e| {
                let i = &e.info;
                let key = (i.group.clone(), i.version.clone(), i.plural.clone());
                (key, e.source_version.clone())
            })
            .collect()
    };
    let (before, after) = (by_key(old), by_key(new));
    let mut changed = BTreeSet::new();
    for (key, source) in &before {
        if after.get(key) != Some(source) {
            changed.insert(group_version(&key.0, &key.1));
        }
    }
    for key in after.keys().filter(|k| !before.contains_key(*k)) {
        changed.insert(group_version(&key.0, &key.1));
    }
    changed
}

/// kube-aggregator's `aggregator_unavailable_apiservice{name}`: every
/// group-version this server serves is a local APIService (`v1.apps`,
/// `v1.` for the core group), always available (0).
pub struct ApiServiceAvailability(pub Arc<LiveCatalogue>);

impl crate::telemetry::metrics::MetricSource for ApiServiceAvailability {
    fn render(&self, out: &mut crate::telemetry::metrics::Exposition) {
        let gauge = "aggregator_unavailable_apiservice";
        out.family(gauge, "gauge", "[ALPHA] Gauge of APIServices which are marked as unavailable broken down by APIService name.");
        let mut names: Vec<String> = self
            .0
            .get()
            .groups()
            .into_iter()
            .flat_map(|(group, versions)| versions.into_iter().map(move |v| format!("{v}.{group}")))
            .collect();
        names.sort();
        for name in names {
            out.sample(gauge, &[("name", name.as_str())], 0.0);
        }
        out.family(
            "aggregator_unavailable_apiservice_total",
            "counter",
            "[ALPHA] Counter of APIServices which are marked as unavailable broken down by APIService name and reason.",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(version: &str, resource_version: &str) -> Value {
        json!({
            "metadata": {"name": "widgets.example.com", "resourceVersion": resource_version},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "kind": "Widget"},
                     "versions": [{"name": version, "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object"}}}]},
            "status": {"conditions": [{"type": "Established", "status": "True"}]}
        })
    }

    #[test]
    fn custom_entries_come_and_go_with_their_documents() {
        let live = LiveCatalogue::new(Catalogue::builtin());
        let before = live.get();
        live.replace_custom(
            crate::catalogue::custom::resource::entries(&crd("v1", "5"), &Default::default()),
            5,
        );
        let cat = live.get();
        assert!(cat.lookup("example.com", "v1", "widgets").is_some());
        assert!(cat.schemas().contains_key("com.example.v1.WidgetList"));
        assert!(cat.lookup("", "v1", "pods").is_some(), "built-ins stay");
        assert!(
            before.lookup("example.com", "v1", "widgets").is_none(),
            "snapshots do not change"
        );
        let doc = live.openapi();
        assert!(doc.document("apis/example.com/v1").is_some());
        assert!(doc.index()["paths"].get("apis/example.com/v1").is_some());
        live.replace_custom(
            crate::catalogue::custom::resource::entries(&crd("v2", "6"), &Default::default()),
            6,
        );
        assert!(live.get().lookup("example.com", "v1", "widgets").is_none());
        assert!(live.openapi().document("apis/example.com/v1").is_none());
        assert!(live.openapi().document("apis/example.com/v2").is_some());
        live.replace_custom(Vec::new(), 7);
        assert!(live.openapi().document("apis/example.com/v2").is_none());
    }

    #[test]
    fn unchanged_group_versions_keep_their_documents() {
        let live = LiveCatalogue::new(Catalogue::builtin());
        let apps = live.openapi().hash("apis/apps/v1").map(String::from);
        live.replace_custom(
            crate::catalogue::custom::resource::entries(&crd("v1", "5"), &Default::default()),
            5,
        );
        assert_eq!(live.openapi().hash("apis/apps/v1").map(String::from), apps);
    }

    #[tokio::test]
    async fn waiting_for_a_revision_ends_when_it_is_applied() {
        let live = Arc::new(LiveCatalogue::new(Catalogue::builtin()));
        assert!(!live.caught_up(3, Duration::from_millis(10)).await);
        let waiter = {
            let live = live.clone();
            tokio::spawn(async move { live.caught_up(3, Duration::from_secs(5)).await })
        };
        live.mark_applied(2);
        live.replace_custom(Vec::new(), 3);
        assert!(waiter.await.unwrap());
    }
}
