//! Updates: read, change, write guarded by the read's mod_revision (the
//! `GuaranteedUpdate` loop), and PUT semantics for an object and its status.

use super::{as_go_encodes, encode_as, keys, storage_error, written, Registry, WriteOptions};
use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
use crate::storage::StorageError;
use serde_json::{json, Value};

/// What an update did.
pub enum UpdateOutcome {
    Updated(Value),
    /// Nothing changed; no revision was consumed.
    Unchanged(Value),
    /// The last finalizer was removed from a terminating object, which is now gone.
    Deleted(Value),
}

impl UpdateOutcome {
    pub fn object(&self) -> &Value {
        match self {
            UpdateOutcome::Updated(v) | UpdateOutcome::Unchanged(v) | UpdateOutcome::Deleted(v) => {
                v
            }
        }
    }
}

/// What the update loop runs besides the change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LoopMode {
    /// A client's write: admission and the kind's strategy.
    Write,
    /// The server marks the object deleted: neither.
    Deleting,
    /// A subresource with its own rules: admission only.
    OwnRules,
    /// A subresource whose strategy is the kind's strategy plugin's (pods'
    /// `resize`): admission and that strategy.
    Subresource(&'static str),
}

pub type Mutation<'a> = dyn Fn(Value) -> ApiResult<Value> + Send + Sync + 'a;

impl Registry {
    /// Applies `change` to the current object and stores the result. A
    /// resourceVersion in the changed object is a precondition (409 when it is
    /// not the current object's); a concurrent write makes the loop read again
    /// and retry, as kube's GuaranteedUpdate does, checking it again.
    pub async fn guaranteed_update(
        &self,
        res: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
        opts: WriteOptions<'_>,
        change: &Mutation<'_>,
    ) -> ApiResult<UpdateOutcome> {
        self.update_loop(res, ns, name, opts, change, LoopMode::Write)
            .await
    }

    /// [`Registry::guaranteed_update`] for subresources with rules of their
    /// own (pods/binding, pods/ephemeralcontainers, as kube's REST for them
    /// has its own strategy): admission runs, the kind's strategy does not.
    pub async fn guaranteed_update_own_rules(
        &self,
        res: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
        opts: WriteOptions<'_>,
        change: &Mutation<'_>,
    ) -> ApiResult<UpdateOutcome> {
        self.update_loop(res, ns, name, opts, change, LoopMode::OwnRules)
            .await
    }

    /// [`Registry::guaranteed_update`] through `subresource`, whose rules
    /// the strategy keeps (kube's ResizeREST and its podResizeStrategy).
    pub async fn guaranteed_update_subresource(
        &self,
        (res, subresource): (&ResourceInfo, &'static str),
        ns: Option<&str>,
        name: &str,
        opts: WriteOptions<'_>,
        change: &Mutation<'_>,
    ) -> ApiResult<UpdateOutcome> {
        let mode = LoopMode::Subresource(subresource);
        self.update_loop(res, ns, name, opts, change, mode).await
    }

    /// The update loop; `LoopMode::Deleting` lets the server itself set the deletion fields.
    pub(super) async fn update_loop(
        &self,
        res: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
        opts: WriteOptions<'_>,
        change: &Mutation<'_>,
        mode: LoopMode,
    ) -> ApiResult<UpdateOutcome> {
        let deleting = mode == LoopMode::Deleting;
        let key = keys::key(res, ns, name);
        loop {
            let (kv, current) = self.read(res, &key, name).await?;
            let desired = change(current.clone())?;
            let precondition = meta::resource_version(&desired).map(String::from);
            if precondition
                .as_deref()
                .is_some_and(|rv| Some(rv) != meta::resource_version(&current))
            {
                return Err(ApiError::stale(&res.group, &res.plural, name));
            }
            let mut desired = if deleting {
                desired
            } else {
                let desired = crate::catalogue::conversion::as_decoded(res, desired)?;
                let tracked = self.track(res, Some(&current), desired, &opts).await?;
                opts.admit.mutate(tracked, Some(&current)).await?
            };
            finish_update(&current, &mut desired, deleting, opts.tracking.is_some());
            // kube's strategy compares typed objects: the change as Go
            // decodes it, against the stored (encoded) object.
            match mode {
                LoopMode::Write => {
                    desired = as_go_encodes(res, desired);
                    desired = self.strategy.update(res, desired, &current).await?;
                    if res.group.is_empty() && res.plural == "services" {
                        self.allocate_service_update(res, &mut desired).await?;
                    }
                }
                LoopMode::Subresource(sub) => {
                    desired = as_go_encodes(res, desired);
                    let strategy = &self.strategy;
                    desired = strategy
                        .update_subresource(res, sub, desired, &current)
                        .await?;
                }
                LoopMode::Deleting | LoopMode::OwnRules => {}
            }
            if !deleting {
                desired = as_go_encodes(res, desired);
            }
            if !deleting {
                opts.admit.validate(Some(&desired), Some(&current)).await?;
            }
            if meta::is_terminating(&desired) && finalized(res, &current, &desired) {
                if opts.dry_run {
                    return Ok(UpdateOutcome::Deleted(desired));
                }
                match self.storage.delete(&key, Some(kv.mod_revision)).await {
                    Ok(gone) => {
                        return Ok(UpdateOutcome::Deleted(with_rv(desired, gone.mod_revision)))
                    }
                    // The precondition, if any, is checked again on the fresh object.
                    Err(StorageError::Conflict { .. }) => continue,
                    Err(e) => return Err(storage_error(res, name, e)),
                }
            }
            let bytes = encode_as(res, &desired).await?;
            if super::stored::same_object(&kv.value, &bytes) {
                return Ok(UpdateOutcome::Unchanged(current));
            }
            if opts.dry_run {
                return Ok(UpdateOutcome::Updated(desired));
            }
            match self.storage.update(&key, bytes, kv.mod_revision).await {
                Ok(stored) => {
                    return Ok(UpdateOutcome::Updated(
                        written(res, desired, &stored).await?,
                    ))
                }
                // The precondition, if any, is checked again on the fresh object.
                Err(StorageError::Conflict { .. }) => continue,
                Err(e) => return Err(storage_error(res, name, e)),
            }
        }
    }

    /// PUT of an object (`subresource` None) or of its status.
    pub async fn update(
        &self,
        res: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
        subresource: Option<&str>,
        body: Value,
        opts: WriteOptions<'_>,
    ) -> ApiResult<UpdateOutcome> {
        let body_name = meta::name(&body).unwrap_or_default();
        if body_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        if subresource == Some("finalize") {
            // kube's namespace finalize strategy: only spec.finalizers change.
            let finalizers = body.pointer("/spec/finalizers").cloned();
            let rv = meta::resource_version(&body).map(String::from);
            return self
                .guaranteed_update_own_rules(res, ns, name, opts, &|mut current: Value| {
                    current["spec"]["finalizers"] = finalizers.clone().unwrap_or(Value::Null);
                    if let Some(rv) = &rv {
                        meta::metadata_mut(&mut current)
                            .insert("resourceVersion".into(), json!(rv));
                    }
                    Ok(current)
                })
                .await;
        }
        let status_only = subresource == Some("status");
        self.guaranteed_update(res, ns, name, opts, &|current: Value| {
            Ok(if status_only {
                with_status_of(res, current, &body)
            } else {
                keep_status(res, &current, body.clone())
            })
        })
        .await
    }
}

/// Whether an update of a terminating object removes the last finalizer
/// holding it, so that the update deletes it (kube's
/// ShouldDeleteDuringUpdate; for a namespace, its `spec.finalizers` hold it
/// too, as kube-controller-manager's namespace controller empties them
/// through `finalize` once the content is gone).
fn finalized(res: &ResourceInfo, current: &Value, desired: &Value) -> bool {
    let namespace = res.group.is_empty() && res.plural == "namespaces";
    let holds = |obj: &Value| {
        let spec = obj.pointer("/spec/finalizers").and_then(Value::as_array);
        !meta::finalizers(obj).is_empty() || (namespace && spec.is_some_and(|f| !f.is_empty()))
    };
    holds(current) && !holds(desired)
}

fn with_rv(mut obj: Value, rv: i64) -> Value {
    meta::metadata_mut(&mut obj).insert("resourceVersion".into(), json!(rv.to_string()));
    obj
}

/// A status write (see `status_write`; the precondition comes from the body).
fn with_status_of(res: &ResourceInfo, current: Value, body: &Value) -> Value {
    let mut current = super::status_write::merge(res, &current, body);
    let rv = meta::resource_version(body).map(String::from);
    let m = meta::metadata_mut(&mut current);
    match rv {
        Some(rv) => m.insert("resourceVersion".into(), json!(rv)),
        None => m.remove("resourceVersion"),
    };
    current
}

/// A write to the main resource leaves status as it was (when status is a subresource).
fn keep_status(res: &ResourceInfo, current: &Value, mut body: Value) -> Value {
    if res.has_subresource("status") {
        match current.get("status") {
            Some(s) => body["status"] = s.clone(),
            None => {
                if let Some(o) = body.as_object_mut() {
                    o.remove("status");
                }
            }
        }
    }
    body
}

/// System fields the client cannot change (defaults and the generation bump
/// are the strategy's).
fn finish_update(current: &Value, desired: &mut Value, deleting: bool, tracked: bool) {
    let deletion = meta::metadata(desired).map(|m| {
        (
            m.get("deletionTimestamp").cloned(),
            m.get("deletionGracePeriodSeconds").cloned(),
        )
    });
    meta::keep_system_fields(desired, current, !tracked);
    if let (true, Some((Some(ts), grace))) = (deleting, deletion) {
        let m = meta::metadata_mut(desired);
        m.insert("deletionTimestamp".into(), ts);
        if let Some(g) = grace {
            m.insert("deletionGracePeriodSeconds".into(), g);
        }
    }
    if let (Some(rv), Some(m)) = (
        meta::resource_version(current),
        desired.get_mut("metadata").and_then(Value::as_object_mut),
    ) {
        m.insert("resourceVersion".into(), json!(rv));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Catalogue;
    use crate::storage::{CachedStorage, SqliteStorage};
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test]
    async fn concurrent_server_updates_retry_instead_of_conflicting() {
        let dir = tempfile::tempdir().expect("temp dir");
        let sqlite = SqliteStorage::open(&dir.path().join("db")).expect("store");
        let cache = CachedStorage::start(Arc::new(sqlite));
        assert!(cache.wait_synced(Duration::from_secs(5)).await);
        let registry = Arc::new(Registry::new(Arc::new(cache)));
        let res = Catalogue::builtin()
            .lookup("", "v1", "configmaps")
            .expect("served")
            .clone();
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "d"}});
        registry
            .create(&res, Some("d"), cm, WriteOptions::default())
            .await
            .expect("created");
        let writers = (0..8).map(|i| {
            let (registry, res) = (registry.clone(), res.clone());
            tokio::spawn(async move {
                let label = |mut current: Value| {
                    current["metadata"]["labels"][format!("w{i}")] = json!("x");
                    Ok(current)
                };
                let opts = WriteOptions::default();
                registry
                    .guaranteed_update(&res, Some("d"), "c", opts, &label)
                    .await
                    .map(|_| ())
            })
        });
        for writer in writers.collect::<Vec<_>>() {
            let result = writer.await.expect("joined");
            assert!(
                result.is_ok(),
                "a server-side update must not conflict: {:?}",
                result.err()
            );
        }
        let stored = registry.get(&res, Some("d"), "c").await.expect("read");
        assert_eq!(
            stored["metadata"]["labels"].as_object().map(|m| m.len()),
            Some(8)
        );
    }
}
