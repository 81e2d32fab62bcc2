//! What a caller hands to a plugin call: the plugin's configuration, a
//! read-only view of the server's objects, and the call's resource limits.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;

/// Read-only access to the server's objects, offered to plugins through the
/// `get-object` and `list-objects` host imports. Errors are plain text that
/// the plugin receives as `err(...)`.
pub trait ObjectReader: Send + Sync {
    /// One object as JSON text, or `None` when it does not exist.
    /// `api_version` is "v1" or "<group>/<version>", `resource` the plural.
    fn get(
        &self,
        api_version: &str,
        resource: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> BoxFuture<'_, Result<Option<String>, String>>;

    /// A token that changes with every write of `resource` (the `watermark` import).
    fn watermark(&self, api_version: &str, resource: &str) -> Result<String, String>;

    /// The JSON text of a List, filtered like `kubectl get -l ... --field-selector ...`.
    fn list(
        &self,
        api_version: &str,
        resource: &str,
        namespace: Option<&str>,
        label_selector: Option<&str>,
        field_selector: Option<&str>,
    ) -> BoxFuture<'_, Result<String, String>>;
}

/// A plugin call's deadline when its configuration names none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(300);
/// An instance's memory cap (MiB) when its configuration names none.
pub const DEFAULT_MEMORY_MIB: u64 = 64;

/// Resource limits of one plugin call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time the call may take, host imports included.
    pub timeout: Duration,
    /// Largest linear memory the instance may grow to. Capped by the runtime's
    /// pool (256 MiB).
    pub memory_bytes: usize,
    /// Wasm fuel (roughly one unit per instruction); `None` = unmetered.
    pub fuel: Option<u64>,
}

impl Limits {
    /// Limits in which any object the store accepts fits: for the built-in
    /// plugins (the strategy, the built-in admission plugins), which see
    /// every written object. A review carries up to two objects of the
    /// store's 1.5 MiB limit (the object and the old object); parsed, a JSON
    /// value takes up to 32 bytes plus its container's spare capacity, so a
    /// 1.5 MiB object of 750,000 tiny values takes about 48 MiB and two of
    /// them about 100 MiB: the runtime's largest memory (256 MiB) fits that
    /// with room to spare. Memory is only committed as the guest grows it,
    /// and an instance that grew large is not kept idle (`warm.rs`).
    pub fn fit_any_object() -> Limits {
        Limits {
            memory_bytes: super::engine::MAX_MEMORY_BYTES,
            timeout: Duration::from_secs(5),
            fuel: None,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: Duration::from_millis(300),
            memory_bytes: 64 << 20,
            fuel: None,
        }
    }
}

/// Everything one call needs besides its input.
#[derive(Clone)]
pub struct CallContext {
    /// The plugin's configuration as JSON text ("{}" when none); returned by
    /// the `config` import.
    pub config: String,
    /// Backs the `get-object` / `list-objects` imports.
    pub reader: Arc<dyn ObjectReader>,
    pub limits: Limits,
}

impl CallContext {
    /// A context with default limits.
    pub fn new(config: impl Into<String>, reader: Arc<dyn ObjectReader>) -> Self {
        CallContext {
            config: config.into(),
            reader,
            limits: Limits::default(),
        }
    }
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("config", &self.config)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// A reader with no objects, for `capstan plugin run` outside a server.
pub struct EmptyReader;

impl ObjectReader for EmptyReader {
    fn watermark(&self, _: &str, _: &str) -> Result<String, String> {
        Ok("0".to_string())
    }

    fn get(
        &self,
        _: &str,
        _: &str,
        _: Option<&str>,
        _: &str,
    ) -> BoxFuture<'_, Result<Option<String>, String>> {
        Box::pin(async { Ok(None) })
    }

    fn list(
        &self,
        api_version: &str,
        _: &str,
        _: Option<&str>,
        _: Option<&str>,
        _: Option<&str>,
    ) -> BoxFuture<'_, Result<String, String>> {
        let list = serde_json::json!({"kind": "List", "apiVersion": api_version, "metadata": {}, "items": []})
            .to_string();
        Box::pin(async move { Ok(list) })
    }
}
