//! Admission configuration kept current by a watch, as kube's informers keep
//! it: the objects of one resource as last listed, and what is built from
//! them (chain entries, compiled policies) once per change, on the first
//! request that needs it, not again per request.

use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;

use serde_json::Value;

use crate::catalogue::ResourceInfo;
use crate::registry::{ListQuery, Registry};

/// The objects of a resource, listed from the registry.
pub async fn list(registry: &Registry, res: &ResourceInfo) -> Result<Vec<Value>, String> {
    registry
        .list(res, None, &ListQuery::default())
        .await
        .map(|page| page.items)
        .map_err(|e| e.message)
}

/// The objects as last listed, and `T` built from them.
pub struct Snapshot<T> {
    pub items: Vec<Value>,
    built: OnceLock<T>,
}

impl<T> Snapshot<T> {
    /// What `build` makes of the items, built on the first call only.
    pub fn built(&self, build: impl FnOnce(&[Value]) -> T) -> &T {
        self.built.get_or_init(|| build(&self.items))
    }
}

/// The current snapshot of one resource (None while not watching).
pub struct Watched<T>(Arc<RwLock<Option<Arc<Snapshot<T>>>>>);

impl<T> Clone for Watched<T> {
    fn clone(&self) -> Self {
        Watched(self.0.clone())
    }
}

impl<T: Send + Sync + 'static> Watched<T> {
    pub fn current(&self) -> Option<Arc<Snapshot<T>>> {
        self.0.read().ok().and_then(|c| c.clone())
    }

    fn set(&self, items: Option<Vec<Value>>) {
        let snapshot = items.map(|items| {
            Arc::new(Snapshot {
                items,
                built: OnceLock::new(),
            })
        });
        if let Ok(mut c) = self.0.write() {
            *c = snapshot;
        }
    }

    /// Starts the watch when a tokio runtime is running; otherwise
    /// `current` stays None (callers list per request).
    pub fn follow(registry: &Registry, res: &ResourceInfo) -> Watched<T> {
        let watched = Watched(Arc::default());
        if tokio::runtime::Handle::try_current().is_ok() {
            let (registry, res, w) = (registry.clone(), res.clone(), watched.clone());
            tokio::spawn(async move {
                loop {
                    if let Err(e) = w.run(&registry, &res).await {
                        tracing::warn!(resource = %res.plural, error = %e, "admission configuration watch restarting");
                    }
                    w.set(None);
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            });
        }
        watched
    }

    /// Lists, then lists again on every change until the watch ends.
    async fn run(&self, registry: &Registry, res: &ResourceInfo) -> Result<(), String> {
        use futures_util::StreamExt;
        let prefix = crate::registry::keys::prefix(res, None);
        let revision = registry
            .storage
            .current_revision()
            .await
            .map_err(|e| e.to_string())?;
        let mut events = registry
            .storage
            .watch(&prefix, revision)
            .await
            .map_err(|e| e.to_string())?;
        self.set(Some(list(registry, res).await?));
        while let Some(ev) = events.next().await {
            ev.map_err(|e| e.to_string())?;
            self.set(Some(list(registry, res).await?));
        }
        Ok(())
    }
}
