//! The API's admission webhooks (Mutating/ValidatingWebhookConfiguration,
//! admissionregistration.k8s.io/v1) as chain entries: the same matcher and
//! AdmissionReview as Wasm plugins, over HTTPS with the webhook's caBundle.

use super::chain::{CallableEntry, WebhookSource};
use super::config::{FailurePolicy, Phase, PluginEntry};
use super::match_conditions::MatchConditions;
use super::matcher::{Rule, Selector};
use super::Transport;
use crate::catalogue::{Catalogue, ResourceInfo};
use crate::https_webhook::HttpsWebhook;
use crate::registry::{ListQuery, Registry};
use futures_util::future::BoxFuture;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// kube's bound on `timeoutSeconds` (1 to 30), which validation enforces on
/// write; a configuration stored before that is held to it too.
const MAX_TIMEOUT_SECONDS: u64 = 30;

/// Reads webhook configurations from the registry for every request.
pub struct ApiWebhooks {
    pub registry: Registry,
    mutating: ResourceInfo,
    validating: ResourceInfo,
    /// `namespace/name` of a Service → base URL, for webhooks that name a service.
    services: HashMap<String, String>,
    mutating_cache: ConfigCache,
    validating_cache: ConfigCache,
}

async fn list(
    registry: &Registry,
    res: &ResourceInfo,
) -> Result<Vec<Value>, crate::status::ApiError> {
    registry
        .list(res, None, &ListQuery::default())
        .await
        .map(|page| page.items)
}

/// The configurations of one kind, kept current by a watch (as an informer
/// would), so a write does not read them from storage every time.
#[derive(Clone, Default)]
struct ConfigCache(Arc<std::sync::RwLock<Option<Arc<Snapshot>>>>);

/// The configurations as last listed, and the chain entries built from
/// them on the first write that needs them (not again per write).
struct Snapshot {
    items: Vec<Value>,
    entries: OnceLock<Vec<Arc<CallableEntry>>>,
}

impl ConfigCache {
    fn current(&self) -> Option<Arc<Snapshot>> {
        self.0.read().ok().and_then(|c| c.clone())
    }

    fn set(&self, items: Option<Vec<Value>>) {
        let snapshot = items.map(|items| {
            Arc::new(Snapshot {
                items,
                entries: OnceLock::new(),
            })
        });
        if let Ok(mut c) = self.0.write() {
            *c = snapshot;
        }
    }

    /// Starts the watch when a tokio runtime is running; otherwise every read lists.
    fn watching(registry: &Registry, res: &ResourceInfo) -> ConfigCache {
        let cache = ConfigCache::default();
        if tokio::runtime::Handle::try_current().is_ok() {
            let (registry, res, c) = (registry.clone(), res.clone(), cache.clone());
            tokio::spawn(async move {
                loop {
                    if let Err(e) = c.follow(&registry, &res).await {
                        tracing::warn!(error = %e, "webhook configuration watch restarting");
                    }
                    c.set(None);
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            });
        }
        cache
    }

    /// Lists, then re-lists on every change until the watch ends.
    async fn follow(&self, registry: &Registry, res: &ResourceInfo) -> Result<(), String> {
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
        self.set(Some(list(registry, res).await.map_err(|e| e.message)?));
        while let Some(ev) = events.next().await {
            ev.map_err(|e| e.to_string())?;
            self.set(Some(list(registry, res).await.map_err(|e| e.message)?));
        }
        Ok(())
    }
}

impl ApiWebhooks {
    pub fn new(
        registry: Registry,
        catalogue: &Catalogue,
        services: HashMap<String, String>,
    ) -> Option<ApiWebhooks> {
        let g = "admissionregistration.k8s.io";
        let mutating = catalogue
            .lookup(g, "v1", "mutatingwebhookconfigurations")?
            .clone();
        let validating = catalogue
            .lookup(g, "v1", "validatingwebhookconfigurations")?
            .clone();
        let mutating_cache = ConfigCache::watching(&registry, &mutating);
        let validating_cache = ConfigCache::watching(&registry, &validating);
        Some(ApiWebhooks {
            registry,
            mutating,
            validating,
            services,
            mutating_cache,
            validating_cache,
        })
    }

    /// The entries of `phase`'s configurations: built once per change of
    /// the watched configurations, or per call while there is no watch.
    async fn entries(&self, phase: Phase) -> Vec<Arc<CallableEntry>> {
        let (res, cache) = if phase == Phase::Mutating {
            (&self.mutating, &self.mutating_cache)
        } else {
            (&self.validating, &self.validating_cache)
        };
        if let Some(snapshot) = cache.current() {
            return snapshot
                .entries
                .get_or_init(|| self.build(phase, &snapshot.items))
                .clone();
        }
        let items = list(&self.registry, res).await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "could not read webhook configurations");
            Vec::new()
        });
        self.build(phase, &items)
    }

    /// The webhooks of `configs`, ordered by configuration name; those that
    /// cannot be called are left out with a warning.
    fn build(&self, phase: Phase, configs: &[Value]) -> Vec<Arc<CallableEntry>> {
        let mut configs: Vec<&Value> = configs.iter().collect();
        configs.sort_by(|a, b| {
            a.pointer("/metadata/name")
                .and_then(Value::as_str)
                .cmp(&b.pointer("/metadata/name").and_then(Value::as_str))
        });
        let hooks = configs
            .into_iter()
            .filter_map(|c| c.get("webhooks").and_then(Value::as_array))
            .flatten();
        hooks
            .filter_map(|h| match self.entry(phase, h) {
                Ok(e) => Some(Arc::new(e)),
                Err(why) => {
                    tracing::warn!(error = %why, "skipping a webhook that cannot be called");
                    None
                }
            })
            .collect()
    }

    fn entry(&self, phase: Phase, hook: &Value) -> Result<CallableEntry, String> {
        let name = hook
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let client = hook.get("clientConfig").cloned().unwrap_or_default();
        let rules: Vec<Rule> =
            serde_json::from_value(hook.get("rules").cloned().unwrap_or(Value::Array(vec![])))
                .map_err(|e| format!("webhook {name}: rules: {e}"))?;
        // A condition that does not compile fails every call (its
        // failurePolicy decides) rather than silently skipping the webhook.
        let match_conditions = MatchConditions::parse(hook.get("matchConditions"))
            .map_err(|e| format!("webhook {name:?}: {e}"));
        let policy = match hook.get("failurePolicy").and_then(Value::as_str) {
            Some("Ignore") => FailurePolicy::Ignore,
            _ => FailurePolicy::Fail,
        };
        let timeout = hook
            .get("timeoutSeconds")
            .and_then(Value::as_u64)
            .map(|s| Duration::from_secs(s.clamp(1, MAX_TIMEOUT_SECONDS)))
            .unwrap_or(DEFAULT_TIMEOUT);
        let config = PluginEntry {
            name: name.clone(),
            module: "webhook".into(),
            phases: vec![phase],
            failure_policy: policy,
            timeout,
            memory_bytes: 0,
            fuel: None,
            config: "{}".into(),
            rules: Some(rules),
            namespace_selector: Selector::parse(hook.get("namespaceSelector"))?,
            object_selector: Selector::parse(hook.get("objectSelector"))?,
            reinvoke_if_needed: hook.get("reinvocationPolicy").and_then(Value::as_str)
                == Some("IfNeeded"),
            match_conditions: match_conditions.clone().unwrap_or_default(),
        };
        let transport: Arc<dyn Transport> = match match_conditions {
            Err(why) => Arc::new(Broken(why)),
            Ok(_) => Arc::new(HttpsWebhook {
                url: crate::https_webhook::client_config_url(&client, &self.services),
                ca_bundle: client
                    .get("caBundle")
                    .and_then(Value::as_str)
                    .map(String::from),
                timeout,
            }),
        };
        let side_effects = hook
            .get("sideEffects")
            .and_then(Value::as_str)
            .unwrap_or("Unknown");
        let dry_run_safe = matches!(side_effects, "None" | "NoneOnDryRun");
        Ok(CallableEntry {
            config,
            transport,
            verbatim: false,
            dry_run_safe,
        })
    }
}

impl WebhookSource for ApiWebhooks {
    fn webhooks<'a>(&'a self, phase: Phase) -> BoxFuture<'a, Vec<Arc<CallableEntry>>> {
        Box::pin(self.entries(phase))
    }
}

/// A webhook whose configuration cannot be used: every call fails with why.
struct Broken(String);

impl Transport for Broken {
    fn call<'a>(&'a self, _review: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move { Err(self.0.clone()) })
    }
}

impl Transport for HttpsWebhook {
    fn call<'a>(&'a self, review: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(self.post(review))
    }
}
