//! What the server offers a plugin (the WIT `host` interface): logging, the
//! plugin's configuration, and read-only access to stored objects.
//!
//! In a wasm32 build these call the component imports; in a native build
//! (unit tests) they read the thread-local fake in [`crate::testing`].

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Log levels, as in the WIT `level` enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// Writes a line into the server's log, tagged with the plugin's name.
pub fn log(level: Level, message: &str) {
    imp::log(level, message)
}

/// The plugin's configuration (`{}` when none), decoded into `T`.
pub fn config<T: DeserializeOwned>() -> Result<T, String> {
    let text = imp::config();
    let text = if text.trim().is_empty() {
        "{}".to_string()
    } else {
        text
    };
    serde_json::from_str(&text).map_err(|e| format!("invalid plugin configuration: {e}"))
}

/// Reads one object (`api_version` "v1" or "group/version", `resource` plural);
/// `Ok(None)` when it does not exist.
pub fn get_object(
    api_version: &str,
    resource: &str,
    namespace: Option<&str>,
    name: &str,
) -> Result<Option<Value>, String> {
    let text = imp::get_object(api_version, resource, namespace, name)?;
    text.map(|t| serde_json::from_str(&t).map_err(|e| format!("host returned invalid JSON: {e}")))
        .transpose()
}

/// Lists objects (selectors as with `kubectl get -l ... --field-selector ...`)
/// and returns the List's `items`.
pub fn list_objects(
    api_version: &str,
    resource: &str,
    namespace: Option<&str>,
    label_selector: Option<&str>,
    field_selector: Option<&str>,
) -> Result<Vec<Value>, String> {
    let text = imp::list_objects(
        api_version,
        resource,
        namespace,
        label_selector,
        field_selector,
    )?;
    let list: Value =
        serde_json::from_str(&text).map_err(|e| format!("host returned invalid JSON: {e}"))?;
    match list.get("items") {
        Some(Value::Array(items)) => Ok(items.clone()),
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(_) => Err("host returned a List whose items is not an array".to_string()),
    }
}

/// A token that changes whenever an object of `resource` is created, updated
/// or deleted: authenticators and authorizers (whose instances live across
/// calls) compare it to decide whether a list they cached is still current.
pub fn watermark(api_version: &str, resource: &str) -> Result<String, String> {
    imp::watermark(api_version, resource)
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use super::Level;
    use crate::bindings::admission::capstan::plugin::host as wit;

    pub fn log(level: Level, message: &str) {
        let level = match level {
            Level::Trace => wit::Level::Trace,
            Level::Debug => wit::Level::Debug,
            Level::Info => wit::Level::Info,
            Level::Warn => wit::Level::Warn,
            Level::Error => wit::Level::Error,
        };
        wit::log(level, message)
    }

    pub fn config() -> String {
        wit::config()
    }

    pub fn get_object(
        api_version: &str,
        resource: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<String>, String> {
        wit::get_object(api_version, resource, namespace, name)
    }

    pub fn watermark(api_version: &str, resource: &str) -> Result<String, String> {
        wit::watermark(api_version, resource)
    }

    pub fn list_objects(
        api_version: &str,
        resource: &str,
        namespace: Option<&str>,
        label_selector: Option<&str>,
        field_selector: Option<&str>,
    ) -> Result<String, String> {
        wit::list_objects(
            api_version,
            resource,
            namespace,
            label_selector,
            field_selector,
        )
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    pub use crate::testing::host_impl::{config, get_object, list_objects, log, watermark};
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::testing;
    use serde_json::json;

    #[test]
    fn reads_config_and_objects_from_the_fake() {
        testing::reset();
        testing::set_config(json!({"seconds": 5}));
        testing::put_object("v1", "namespaces", json!({"metadata": {"name": "a"}}));
        let cfg: Value = config().unwrap();
        assert_eq!(cfg["seconds"], 5);
        assert!(get_object("v1", "namespaces", None, "a").unwrap().is_some());
        assert!(get_object("v1", "namespaces", None, "b").unwrap().is_none());
        assert_eq!(
            list_objects("v1", "namespaces", None, None, None)
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn watermark_moves_on_every_change_of_its_resource_only() {
        testing::reset();
        let before = watermark("v1", "pods").unwrap();
        testing::put_object(
            "v1",
            "pods",
            json!({"metadata": {"name": "p", "namespace": "n"}}),
        );
        let after_put = watermark("v1", "pods").unwrap();
        assert_ne!(before, after_put);
        testing::put_object("v1", "configmaps", json!({"metadata": {"name": "c"}}));
        assert_eq!(watermark("v1", "pods").unwrap(), after_put);
        testing::remove_object("v1", "pods", "n", "p");
        assert_ne!(watermark("v1", "pods").unwrap(), after_put);
        assert!(get_object("v1", "pods", Some("n"), "p").unwrap().is_none());
    }

    #[test]
    fn bad_config_is_an_error_and_missing_config_is_empty() {
        testing::reset();
        let empty: Value = config().unwrap();
        assert_eq!(empty, json!({}));
        testing::set_config_text("not json");
        assert!(config::<Value>()
            .unwrap_err()
            .contains("invalid plugin configuration"));
    }

    #[test]
    fn store_failures_surface_as_errors() {
        testing::reset();
        testing::fail_reads(Some("store down"));
        assert_eq!(
            get_object("v1", "pods", Some("ns"), "p").unwrap_err(),
            "store down"
        );
        log(Level::Warn, "hello");
        assert_eq!(testing::logs(), vec![(Level::Warn, "hello".to_string())]);
    }
}
