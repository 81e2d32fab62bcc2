//! The API's admission webhooks (Mutating/ValidatingWebhookConfiguration,
//! admissionregistration.k8s.io/v1) as chain entries: the same matcher and
//! AdmissionReview as Wasm plugins, over HTTPS with the webhook's caBundle.

use super::chain::{CallableEntry, WebhookSource};
use super::config::{FailurePolicy, Phase, PluginEntry};
use super::match_conditions::MatchConditions;
use super::matcher::{Rule, Selector};
use super::watched::{list, Watched};
use crate::catalogue::{Catalogue, ResourceInfo};
use crate::registry::Registry;
use crate::transport::https::HttpsWebhook;
use crate::transport::ReviewTransport;
use futures_util::future::BoxFuture;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
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
    mutating_cache: Watched<Vec<Arc<CallableEntry>>>,
    validating_cache: Watched<Vec<Arc<CallableEntry>>>,
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
        let mutating_cache = Watched::follow(&registry, &mutating);
        let validating_cache = Watched::follow(&registry, &validating);
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
            return snapshot.built(|items| self.build(phase, items)).clone();
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
        let transport: Arc<dyn ReviewTransport> = match match_conditions {
            Err(why) => Arc::new(Broken(why)),
            Ok(_) => Arc::new(HttpsWebhook {
                url: crate::transport::https::client_config_url(&client, &self.services),
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

impl ReviewTransport for Broken {
    fn call<'a>(&'a self, _review: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move { Err(self.0.clone()) })
    }
}
