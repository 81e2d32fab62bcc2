//! The generic registry: one store for every resource, parameterised by the
//! catalogue entry (and, for the per-kind rules, the strategy). It turns API
//! verbs into guarded storage operations, as k8s.io/apiserver's
//! `genericregistry.Store` does.

pub mod admit;
mod allocate;
pub mod crd_finalizer;
pub mod keys;
mod list;
pub mod scale;
pub mod status_write;
pub mod store_reader;
pub mod stored;
pub mod strategy;
mod update;
pub mod wasm_strategy;

use crate::apimachinery::meta;
use crate::apimachinery::names;
use crate::apimachinery::status::{ApiError, ApiResult, Cause};
use crate::catalogue::ResourceInfo;
use crate::storage::MAX_STORED_BYTES;
use crate::storage::{KeyValue, RangeRequest, Storage, StorageError};
pub use admit::{Admit, NoAdmission};
use serde_json::{json, Value};
use std::sync::Arc;

pub use list::{ListPage, ListQuery};
pub use update::UpdateOutcome;

/// Options shared by every write: dry-run, and the admission hooks to run.
#[derive(Clone, Copy)]
pub struct WriteOptions<'a> {
    pub dry_run: bool,
    pub admit: &'a dyn Admit,
    /// For deletes: what the garbage collector does with dependents.
    pub propagation: Propagation,
    /// Who writes, for the `Update` entry in managedFields (None: the
    /// write records none, as a server-side apply keeps its own).
    pub tracking: Option<crate::patch::managed_fields::Tracking<'a>>,
}

/// DeleteOptions.propagationPolicy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Propagation {
    /// The object goes at once; the garbage collector deletes its dependents.
    #[default]
    Background,
    /// The object stays (finalizer `foregroundDeletion`) until the
    /// dependents that block it are gone.
    Foreground,
    /// The dependents lose their owner reference (finalizer `orphan`).
    Orphan,
}

impl Propagation {
    pub const NAMES: [&'static str; 3] = ["Foreground", "Background", "Orphan"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "Foreground" => Some(Propagation::Foreground),
            "Background" => Some(Propagation::Background),
            "Orphan" => Some(Propagation::Orphan),
            _ => None,
        }
    }

    /// The finalizer through which the garbage collector carries it out.
    pub fn finalizer(self) -> Option<&'static str> {
        match self {
            Propagation::Background => None,
            Propagation::Foreground => Some(meta::FOREGROUND_FINALIZER),
            Propagation::Orphan => Some(meta::ORPHAN_FINALIZER),
        }
    }
}

static NO_ADMISSION: NoAdmission = NoAdmission;

impl Default for WriteOptions<'_> {
    fn default() -> Self {
        WriteOptions {
            dry_run: false,
            admit: &NO_ADMISSION,
            propagation: Propagation::Background,
            tracking: None,
        }
    }
}

/// The result of a delete.
pub enum DeleteOutcome {
    /// Gone from storage; the last state of the object.
    Deleted(Value),
    /// Kept until its finalizers are removed; the object with deletionTimestamp set.
    Pending(Value),
}

#[derive(Clone)]
pub struct Registry {
    pub storage: Arc<dyn Storage>,
    /// The per-kind rules (prepare, defaults, validate) of every create and update.
    pub strategy: Arc<dyn strategy::Strategy>,
}

/// Maps a storage failure to the API error a client sees.
/// How an unreachable store is worded (also in plugin failures caused by it).
pub const STORAGE_UNAVAILABLE: &str = "storage is unavailable";

pub fn storage_error(res: &ResourceInfo, name: &str, e: StorageError) -> ApiError {
    match e {
        StorageError::NotFound { .. } => ApiError::not_found(&res.group, &res.plural, name),
        StorageError::AlreadyExists { .. } => {
            ApiError::already_exists(&res.group, &res.plural, name)
        }
        StorageError::Conflict { .. } => ApiError::stale(&res.group, &res.plural, name),
        StorageError::Compacted {
            requested,
            compacted,
        } => ApiError::gone(format!(
            "too old resource version: {requested} ({compacted})"
        )),
        StorageError::FutureRevision { requested, current } => {
            ApiError::too_large_resource_version(requested, current)
        }
        StorageError::Unavailable(msg) => {
            ApiError::unavailable(format!("{STORAGE_UNAVAILABLE}: {msg}"))
        }
        StorageError::TooLarge(msg) => ApiError::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: {msg}"),
        ),
        StorageError::Internal(msg) => ApiError::internal(msg),
    }
}

/// Decodes a stored value into the served object, with resourceVersion set.
pub fn decode(kv: &KeyValue) -> ApiResult<Value> {
    crate::cpu::mark_large(kv.value.len());
    let parsed = crate::cpu::for_request(|| serde_json::from_slice::<Value>(&kv.value));
    let mut obj: Value = parsed.map_err(|e| {
        ApiError::internal(format!(
            "stored object at {} is not valid JSON: {e}",
            kv.key
        ))
    })?;
    if !obj.is_object() {
        return Err(ApiError::internal(format!(
            "stored object at {} is not an object",
            kv.key
        )));
    }
    meta::metadata_mut(&mut obj)
        .insert("resourceVersion".into(), json!(kv.mod_revision.to_string()));
    Ok(obj)
}

/// Encodes an object for storage (resourceVersion is the store's, not the
/// value's; see [`stored`]); an object larger than [`MAX_STORED_BYTES`] is
/// a 413.
pub fn encode(obj: &Value) -> ApiResult<bytes::Bytes> {
    let mut text = crate::cpu::for_request(|| crate::apimachinery::kube_json::to_stored(obj));
    // The cache keeps these bytes: no spare capacity with them.
    text.shrink_to_fit();
    if text.is_empty() {
        return Err(ApiError::internal("the object could not be encoded"));
    }
    if text.len() > MAX_STORED_BYTES {
        return Err(object_too_large(text.len()));
    }
    Ok(bytes::Bytes::from(text))
}

/// The object a write stored, as its response shows it: `obj` itself with
/// the new resourceVersion (a built-in's stored value is `obj` encoded), or,
/// for a custom resource, the stored value in `res`'s version.
pub async fn written(res: &ResourceInfo, mut obj: Value, kv: &KeyValue) -> ApiResult<Value> {
    if !res.served_as_stored() || !obj.is_object() {
        return decode_as(res, kv).await;
    }
    meta::metadata_mut(&mut obj)
        .insert("resourceVersion".into(), json!(kv.mod_revision.to_string()));
    Ok(obj)
}

/// A stored object as `res`'s version shows it.
pub async fn decode_as(res: &ResourceInfo, kv: &KeyValue) -> ApiResult<Value> {
    crate::catalogue::custom::versions::view(res, decode(kv)?).await
}

/// An object encoded in the version `res` stores (a CRD's storage version).
pub async fn encode_as(res: &ResourceInfo, obj: &Value) -> ApiResult<bytes::Bytes> {
    match crate::catalogue::custom::versions::to_storage(res, obj).await? {
        Some(stored) => encode(&stored),
        None => encode(obj),
    }
}

/// A built-in object as kube's Go types encode it (see
/// `catalogue::go_encoding`): what is stored, and what validating
/// admission sees.
pub(super) fn as_go_encodes(res: &ResourceInfo, mut obj: Value) -> Value {
    crate::cpu::for_request(|| crate::catalogue::go_encoding::encode(res, &mut obj));
    obj
}

/// Refuses, before admission and the strategy see it, an object that could
/// not be stored anyway (its encoding is over [`MAX_STORED_BYTES`]).
pub fn check_size(obj: &Value) -> ApiResult<()> {
    match crate::apimachinery::kube_json::encoded_len(obj) {
        size if size > MAX_STORED_BYTES => Err(object_too_large(size)),
        _ => Ok(()),
    }
}

fn object_too_large(size: usize) -> ApiError {
    ApiError::new(
        413,
        "RequestEntityTooLarge",
        format!(
            "Request entity too large: the object would be {size} bytes in storage, more than the limit of {MAX_STORED_BYTES}"
        ),
    )
}

/// How long a read at a revision the store has not reached waits for it
/// (kube's cacher `blockTimeout`).
const FRESHNESS_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

impl Registry {
    /// Waits until the store has reached `revision` (a read asked for data
    /// not older than it); after [`FRESHNESS_WAIT`], kube's 504
    /// ResourceVersionTooLarge, so the client retries instead of trusting
    /// an older snapshot.
    pub async fn wait_for_revision(&self, res: &ResourceInfo, revision: i64) -> ApiResult<()> {
        let deadline = tokio::time::Instant::now() + FRESHNESS_WAIT;
        let mut pause = std::time::Duration::from_millis(5);
        loop {
            let current = self
                .storage
                .current_revision()
                .await
                .map_err(|e| storage_error(res, "", e))?;
            if current >= revision {
                return Ok(());
            }
            if tokio::time::Instant::now() + pause > deadline {
                return Err(ApiError::too_large_resource_version(revision, current));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(std::time::Duration::from_millis(200));
        }
    }

    pub fn new(storage: Arc<dyn Storage>) -> Self {
        Registry {
            storage,
            strategy: Arc::new(strategy::NoStrategy),
        }
    }

    /// The stored entry at `key` and its decoded object (404 when absent).
    async fn read(
        &self,
        res: &ResourceInfo,
        key: &str,
        name: &str,
    ) -> ApiResult<(KeyValue, Value)> {
        let kv = self
            .storage
            .get(key)
            .await
            .map_err(|e| storage_error(res, name, e))?;
        let kv = kv.ok_or_else(|| ApiError::not_found(&res.group, &res.plural, name))?;
        let obj = decode_as(res, &kv).await?;
        Ok((kv, obj))
    }

    /// Every stored object under `prefix`, at the latest revision.
    pub async fn read_all(&self, res: &ResourceInfo, prefix: &str) -> ApiResult<Vec<KeyValue>> {
        let req = RangeRequest {
            prefix,
            start_after: None,
            limit: None,
            revision: None,
        };
        let page = self
            .storage
            .range(req)
            .await
            .map_err(|e| storage_error(res, "", e))?;
        Ok(page.kvs)
    }

    /// [`get`](Self::get) as this server sees the object, not older than
    /// `seen` (see `Storage::get_recent`); an object not found there is read
    /// from the store, so one another server created a moment ago is found
    /// (as kube's NamespaceLifecycle falls back to a live lookup on a miss).
    pub async fn get_recent(
        &self,
        res: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
        seen: i64,
    ) -> ApiResult<Value> {
        let key = keys::key(res, ns, name);
        let seen = self.storage.get_recent(&key, seen).await;
        match seen.map_err(|e| storage_error(res, name, e))? {
            Some(kv) => decode_as(res, &kv).await,
            None => self.get(res, ns, name).await,
        }
    }

    pub async fn get(&self, res: &ResourceInfo, ns: Option<&str>, name: &str) -> ApiResult<Value> {
        let key = keys::key(res, ns, name);
        match self
            .storage
            .get(&key)
            .await
            .map_err(|e| storage_error(res, name, e))?
        {
            Some(kv) => decode_as(res, &kv).await,
            None => Err(ApiError::not_found(&res.group, &res.plural, name)),
        }
    }

    /// An object too large to store is never stored, so admission need not
    /// see it; the client gets kube's validation answer if it is invalid
    /// (kube validates before storage refuses it), else `too_large`.
    async fn refuse_oversized(
        &self,
        res: &ResourceInfo,
        ns: Option<&str>,
        mut obj: Value,
        too_large: ApiError,
    ) -> ApiError {
        meta::set_create_fields(&mut obj, ns);
        // Named as the create would name it, so a generateName is not
        // reported as a missing name.
        let prefix = generate_name_prefix(&obj);
        if !prefix.is_empty() {
            meta::metadata_mut(&mut obj).insert("name".into(), json!(names::generate(&prefix)));
        }
        let named = validate_name(res, &obj);
        // Only a verdict on the object counts; a failing plugin is not one.
        let validated = match self.strategy.create(res, obj).await {
            Err(e) if e.reason == "Invalid" => Err(e),
            _ => Ok(()),
        };
        match (named, validated) {
            (Err(name), Err(other)) => name.and_invalid(other),
            (Err(invalid), Ok(())) | (Ok(()), Err(invalid)) => invalid,
            (Ok(()), Ok(())) => too_large,
        }
    }

    pub async fn create(
        &self,
        res: &ResourceInfo,
        ns: Option<&str>,
        obj: Value,
        opts: WriteOptions<'_>,
    ) -> ApiResult<Value> {
        // Only a request marked large (a body or object of 64 KiB or more)
        // can carry an object over the limit: small ones skip the count.
        let checked = if crate::cpu::is_large() {
            check_size(&obj)
        } else {
            Ok(())
        };
        if let Err(too_large) = checked {
            return Err(self.refuse_oversized(res, ns, obj, too_large).await);
        }
        let obj = crate::catalogue::conversion::as_decoded(res, obj)?;
        let obj = self.track(res, None, obj, &opts).await?;
        let mut obj = opts.admit.mutate(obj, None).await?;
        meta::set_create_fields(&mut obj, ns);
        if res.group.is_empty() && res.plural == "services" {
            self.allocate_service(res, &mut obj).await?;
        }
        let prefix = generate_name_prefix(&obj);
        let generate = !prefix.is_empty();
        for attempt in 0..8 {
            if generate {
                meta::metadata_mut(&mut obj).insert("name".into(), json!(names::generate(&prefix)));
            }
            let named = validate_name(res, &obj);
            if attempt == 0 {
                obj = match (named, self.strategy.create(res, obj).await) {
                    (Ok(()), prepared) => as_go_encodes(res, prepared?),
                    (Err(name), Ok(_)) => return Err(name),
                    (Err(name), Err(other)) => return Err(name.and_invalid(other)),
                };
                opts.admit.validate(Some(&obj), None).await?;
            } else {
                named?;
            }
            let name = meta::name(&obj).unwrap_or_default().to_string();
            let key = keys::key(res, ns, &name);
            if opts.dry_run {
                return self.dry_run_create(res, &key, &name, obj).await;
            }
            match self.storage.create(&key, encode_as(res, &obj).await?).await {
                Ok(kv) => return written(res, obj, &kv).await,
                Err(StorageError::AlreadyExists { .. }) if generate => continue,
                Err(e) => return Err(storage_error(res, &name, e)),
            }
        }
        Err(ApiError::already_exists(
            &res.group,
            &res.plural,
            meta::name(&obj).unwrap_or_default(),
        ))
    }

    /// `obj` defaulted (as kube's decoder leaves it, and admission sees
    /// it) with the managedFields its write records (see
    /// [`crate::patch::managed_fields`]); as it is when nothing is tracked.
    async fn track(
        &self,
        res: &ResourceInfo,
        live: Option<&Value>,
        obj: Value,
        opts: &WriteOptions<'_>,
    ) -> ApiResult<Value> {
        let Some(who) = opts.tracking else {
            return Ok(obj);
        };
        let mut defaulted = self.strategy.defaults(res, obj.clone()).await?;
        let managed = crate::cpu::for_request(|| {
            crate::patch::managed_fields::record(res, live, &obj, &defaulted, &who)
        });
        // Admission sees the object defaulted, as kube's decoder leaves it.
        if let Some(m) = defaulted.get_mut("metadata").and_then(Value::as_object_mut) {
            match managed {
                Some(entries) => m.insert("managedFields".into(), entries),
                None => m.remove("managedFields"),
            };
        }
        Ok(defaulted)
    }

    async fn dry_run_create(
        &self,
        res: &ResourceInfo,
        key: &str,
        name: &str,
        obj: Value,
    ) -> ApiResult<Value> {
        if self
            .storage
            .get(key)
            .await
            .map_err(|e| storage_error(res, name, e))?
            .is_some()
        {
            return Err(ApiError::already_exists(&res.group, &res.plural, name));
        }
        Ok(obj)
    }

    /// Deletes one object, honouring preconditions and finalizers.
    pub async fn delete(
        &self,
        res: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
        preconditions: &Value,
        opts: WriteOptions<'_>,
    ) -> ApiResult<DeleteOutcome> {
        let key = keys::key(res, ns, name);
        loop {
            let (kv, current) = self.read(res, &key, name).await?;
            check_preconditions(res, name, &current, preconditions)?;
            opts.admit.validate(None, Some(&current)).await?;
            let held = !meta::finalizers(&current).is_empty()
                || opts.propagation.finalizer().is_some()
                || crd_finalizer::finalizer_for(res).is_some();
            if held {
                return self.mark_deleting(res, ns, name, current, opts).await;
            }
            if opts.dry_run {
                return Ok(DeleteOutcome::Deleted(current));
            }
            match self.storage.delete(&key, Some(kv.mod_revision)).await {
                Ok(gone) => {
                    let mut last = current;
                    meta::metadata_mut(&mut last).insert(
                        "resourceVersion".into(),
                        json!(gone.mod_revision.to_string()),
                    );
                    return Ok(DeleteOutcome::Deleted(last));
                }
                Err(StorageError::Conflict { .. }) => continue,
                Err(e) => return Err(storage_error(res, name, e)),
            }
        }
    }

    pub async fn mark_deleting(
        &self,
        res: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
        current: Value,
        opts: WriteOptions<'_>,
    ) -> ApiResult<DeleteOutcome> {
        if meta::is_terminating(&current) {
            return Ok(DeleteOutcome::Pending(current));
        }
        let out = self
            .update_loop(
                res,
                ns,
                name,
                opts,
                &|mut obj: Value| {
                    let m = meta::metadata_mut(&mut obj);
                    m.entry("deletionTimestamp")
                        .or_insert_with(|| json!(meta::now()));
                    m.entry("deletionGracePeriodSeconds").or_insert(json!(0));
                    if let Some(finalizer) = opts.propagation.finalizer() {
                        meta::add_finalizer(m, finalizer);
                    }
                    if res.group.is_empty() && res.plural == "namespaces" {
                        obj["status"]["phase"] = json!("Terminating");
                    }
                    if let Some(finalizer) = crd_finalizer::finalizer_for(res) {
                        meta::add_finalizer(meta::metadata_mut(&mut obj), finalizer);
                        crd_finalizer::mark_pending(&mut obj);
                    }
                    Ok(obj)
                },
                update::LoopMode::Deleting,
            )
            .await?;
        Ok(match out {
            UpdateOutcome::Deleted(v) => DeleteOutcome::Deleted(v),
            UpdateOutcome::Updated(v) | UpdateOutcome::Unchanged(v) => DeleteOutcome::Pending(v),
        })
    }
}

/// As kube's BeforeCreate: a name is generated only from a non-empty
/// generateName when there is no name ("" otherwise); with neither,
/// validation answers "name or generateName is required".
fn generate_name_prefix(obj: &Value) -> String {
    match meta::name(obj) {
        Some(name) if !name.is_empty() => String::new(),
        _ => meta::meta_str(obj, "generateName")
            .unwrap_or_default()
            .to_string(),
    }
}

/// Checks `metadata.generateName` and `metadata.name` against the
/// resource's naming rule, in kube's order.
pub fn validate_name(res: &ResourceInfo, obj: &Value) -> ApiResult<()> {
    let name = meta::name(obj).unwrap_or_default();
    let mut causes = match meta::meta_str(obj, "generateName").filter(|g| !g.is_empty()) {
        Some(prefix) => names::validate_prefix(res.name_rule, prefix, "metadata.generateName"),
        None => Vec::new(),
    };
    causes.extend(match name.is_empty() {
        true => vec![Cause::required(
            "metadata.name",
            "name or generateName is required",
        )],
        false => names::validate(res.name_rule, name, "metadata.name"),
    });
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(
            res.internal_group(),
            &res.kind,
            name,
            causes,
        ))
    }
}

/// DeleteOptions.preconditions: uid and resourceVersion must match, or
/// kube's conflict (rest.BeforeDelete: named by the kind, not the resource).
pub fn check_preconditions(
    res: &ResourceInfo,
    name: &str,
    current: &Value,
    pre: &Value,
) -> ApiResult<()> {
    const FIELDS: [(&str, &str, &str); 2] = [
        ("uid", "UID", "deleted and then recreated"),
        ("resourceVersion", "ResourceVersion", "modified"),
    ];
    for (field, label, what) in FIELDS {
        if let Some(want) = pre.get(field).and_then(Value::as_str) {
            let have = meta::meta_str(current, field).unwrap_or_default();
            if want != have {
                let why = format!(
                    "the {label} in the precondition ({want}) does not match the {label} in record ({have}). The object might have been {what}"
                );
                return Err(ApiError::conflict(&res.group, &res.kind, name, &why));
            }
        }
    }
    Ok(())
}
