//! Running the chain for one request: matching each entry, calling it,
//! applying patches (mutating) and denials, and the failurePolicy when an
//! entry cannot give an answer.

use super::cel_policy::mutating::Reinvocation;
use super::cel_policy::AdmissionPolicies;
use super::config::{
    FailurePolicy, Phase, PluginEntry, MUTATING_ADMISSION_POLICY, VALIDATING_ADMISSION_POLICY,
};
use super::match_conditions::Outcome;
use super::matcher::{labels_of, RequestAttributes};
use super::review::{apply_patch, read_response, EncodedReview, ReviewRequest, Verdict};
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
use crate::registry::Admit;
use crate::registry::{Registry, STORAGE_UNAVAILABLE};
use crate::transport::ReviewTransport;
use futures_util::future::BoxFuture;
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// A callable entry: its configuration and transport.
pub struct CallableEntry {
    pub config: PluginEntry,
    pub transport: Arc<dyn ReviewTransport>,
    /// Built-in plugins speak as kube-apiserver's own admission does.
    pub verbatim: bool,
    /// May be called for dry-run requests (Wasm plugins always: they cannot
    /// write anything; webhooks when sideEffects is None or NoneOnDryRun).
    pub dry_run_safe: bool,
}

pub enum ChainEntry {
    Plugin(Box<CallableEntry>),
    /// Where the API's webhooks of this phase run.
    Webhooks(Phase),
    /// Where the policies of the API's PolicyBundles of this phase run.
    Policies(Phase),
    /// Where the API's admission policies of this phase run (Mutating- or
    /// ValidatingAdmissionPolicies).
    AdmissionPolicies(Phase),
}

/// Source of the API's webhooks (admissionregistration.k8s.io), asked per
/// request; the entries are shared while their configurations do not change.
pub trait WebhookSource: Send + Sync {
    fn webhooks<'a>(&'a self, phase: Phase) -> BoxFuture<'a, Vec<Arc<CallableEntry>>>;
}

/// Source of the policies of the API's PolicyBundles: the set loaded when
/// the request asks, so a request runs the set it started with while a new
/// one is swapped in (`policy::resources`).
pub trait PolicySource: Send + Sync {
    fn policies(&self, phase: Phase) -> Vec<Arc<CallableEntry>>;
}

/// The configured chain, shared by all requests.
pub struct Chain {
    pub entries: Vec<ChainEntry>,
    pub registry: Registry,
    pub namespaces: ResourceInfo,
    pub webhooks: Option<Arc<dyn WebhookSource>>,
    pub policies: Option<Arc<dyn PolicySource>>,
    pub admission_policies: Option<Arc<AdmissionPolicies>>,
    /// The MutatingAdmissionPolicies (None unless served).
    pub mutating_policies: Option<Arc<AdmissionPolicies>>,
    /// What matchConditions' `authorizer` asks (None: checks fail).
    pub auth: Option<Arc<crate::auth::Auth>>,
    /// kube's admission latency metrics.
    pub metrics: Arc<super::metrics::AdmissionMetrics>,
}

impl Chain {
    /// A chain with no entries (every write is admitted as is).
    pub fn empty(registry: Registry, catalogue: &crate::catalogue::Catalogue) -> Chain {
        let namespaces = catalogue
            .lookup("", "v1", "namespaces")
            .cloned()
            .unwrap_or_else(|| unreachable!("the built-in catalogue serves namespaces"));
        Chain {
            entries: Vec::new(),
            registry,
            namespaces,
            webhooks: None,
            policies: None,
            admission_policies: None,
            mutating_policies: None,
            auth: None,
            metrics: Arc::default(),
        }
    }

    /// A chain of `entries` whose webhook markers run the API's webhooks.
    pub fn new(
        entries: Vec<ChainEntry>,
        registry: Registry,
        catalogue: &crate::catalogue::Catalogue,
        services: std::collections::HashMap<String, String>,
    ) -> Chain {
        let mut chain = Chain::empty(registry.clone(), catalogue);
        chain.entries = entries;
        chain.webhooks = super::webhook::ApiWebhooks::new(registry, catalogue, services)
            .map(|w| Arc::new(w) as Arc<dyn WebhookSource>);
        chain
    }

    pub fn names(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|e| match e {
                ChainEntry::Plugin(p) => p.config.name.clone(),
                ChainEntry::Webhooks(Phase::Mutating) => "webhooks: mutating".into(),
                ChainEntry::Webhooks(Phase::Validating) => "webhooks: validating".into(),
                ChainEntry::Policies(Phase::Mutating) => "policies: mutating".into(),
                ChainEntry::Policies(Phase::Validating) => "policies: validating".into(),
                ChainEntry::AdmissionPolicies(Phase::Mutating) => MUTATING_ADMISSION_POLICY.into(),
                ChainEntry::AdmissionPolicies(Phase::Validating) => {
                    VALIDATING_ADMISSION_POLICY.into()
                }
            })
            .collect()
    }

    /// The entries of `phase` in order, with the API's webhooks and
    /// PolicyBundles' policies expanded in place; neither is expanded for a
    /// write of admission configuration (see [`configures_admission`]).
    async fn entries_for(&self, phase: Phase, req: &ReviewRequest) -> Vec<EntryRef<'_>> {
        let exempt = configures_admission(req);
        let mut out = Vec::new();
        for e in &self.entries {
            match e {
                ChainEntry::Plugin(p) if p.config.phases.contains(&phase) => {
                    out.push(EntryRef::Borrowed(p))
                }
                ChainEntry::Webhooks(ph) if *ph == phase && !exempt => {
                    if let Some(src) = &self.webhooks {
                        out.extend(src.webhooks(phase).await.into_iter().map(EntryRef::Shared));
                    }
                }
                ChainEntry::AdmissionPolicies(ph) if *ph == phase && !exempt => {
                    let policies = match phase {
                        Phase::Mutating => &self.mutating_policies,
                        Phase::Validating => &self.admission_policies,
                    };
                    if let Some(p) = policies {
                        out.push(EntryRef::AdmissionPolicies(p.clone()));
                    }
                }
                ChainEntry::Policies(ph) if *ph == phase && !exempt => {
                    if let Some(src) = &self.policies {
                        out.extend(src.policies(phase).into_iter().map(EntryRef::Shared));
                    }
                }
                _ => {}
            }
        }
        out
    }

    async fn namespace_labels(
        &self,
        req: &ReviewRequest,
        obj: Option<&Value>,
        old: Option<&Value>,
    ) -> serde_json::Map<String, Value> {
        if req.group.is_empty() && req.resource == "namespaces" {
            return labels_of(obj.or(old));
        }
        match &req.namespace {
            Some(ns) => match self.registry.get(&self.namespaces, None, ns).await {
                Ok(n) => labels_of(Some(&n)),
                Err(_) => Default::default(),
            },
            None => Default::default(),
        }
    }

    /// Whether the entry's rules and selectors take the request: nothing is
    /// encoded or called for an entry they leave out.
    async fn applies(
        &self,
        e: &CallableEntry,
        req: &ReviewRequest,
        attrs: &RequestAttributes,
        obj: Option<&Value>,
        old: Option<&Value>,
    ) -> bool {
        let rules_ok = e
            .config
            .rules
            .as_ref()
            .is_none_or(|rs| rs.iter().any(|r| r.matches(attrs)));
        if !rules_ok {
            return false;
        }
        let selector = &e.config.object_selector;
        let object_ok = selector.is_everything()
            || selector.matches(&labels_of(obj))
            || selector.matches(&labels_of(old));
        if !object_ok {
            return false;
        }
        let namespaced_or_ns =
            req.namespace.is_some() || (req.group.is_empty() && req.resource == "namespaces");
        e.config.namespace_selector.is_everything()
            || !namespaced_or_ns
            || e.config
                .namespace_selector
                .matches(&self.namespace_labels(req, obj, old).await)
    }

    /// Whether the entry is called for this request: its rules and
    /// selectors match, then its matchConditions hold.
    async fn is_called(
        &self,
        e: &CallableEntry,
        (req, attrs): (&ReviewRequest, &RequestAttributes),
        obj: Option<&Value>,
        old: Option<&Value>,
        warnings: &Mutex<Vec<String>>,
    ) -> ApiResult<bool> {
        Ok(self.applies(e, req, attrs, obj, old).await
            && self.conditions_allow(e, req, obj, old, warnings)?)
    }

    /// Whether the entry's matchConditions let it be called; a condition
    /// that cannot be evaluated is the entry's failure (its policy decides).
    fn conditions_allow(
        &self,
        e: &CallableEntry,
        req: &ReviewRequest,
        obj: Option<&Value>,
        old: Option<&Value>,
        warnings: &Mutex<Vec<String>>,
    ) -> ApiResult<bool> {
        if e.config.match_conditions.is_empty() {
            return Ok(true);
        }
        let request = req.request_value();
        let null = Value::Null;
        let authorizer = self
            .auth
            .as_ref()
            .map(|auth| super::cel_policy::authorizer_for(auth.clone(), req));
        let outcome = e.config.match_conditions.evaluate(
            obj.unwrap_or(&null),
            old.unwrap_or(&null),
            &request,
            authorizer,
        );
        match outcome {
            Outcome::Call => Ok(true),
            Outcome::Skip => Ok(false),
            Outcome::Error(why) => failure(e, &why, warnings).map(|_| false),
        }
    }

    /// Calls one entry with the review of the object as it stands (its own
    /// uid); Ok(None) when it failed and its policy is Ignore.
    async fn call(
        &self,
        e: &CallableEntry,
        req: &ReviewRequest,
        review: &EncodedReview,
        warnings: &Mutex<Vec<String>>,
    ) -> ApiResult<Option<Verdict>> {
        if req.dry_run && !e.dry_run_safe {
            return Err(ApiError::bad_request(format!(
                "admission webhook \"{}\" does not support dry run",
                e.config.name
            )));
        }
        let uid = uuid::Uuid::new_v4().to_string();
        let text = crate::cpu::for_request(|| review.with_uid(&uid));
        let answer = e.transport.call(&text).await;
        let verdict = answer.and_then(|text| {
            crate::cpu::for_request(|| read_response(&text, &uid, &e.config.name, e.verbatim))
        });
        match verdict {
            Ok(v) => {
                push(warnings, v.warnings.iter().cloned());
                for (k, val) in &v.audit_annotations {
                    tracing::info!(entry = %e.config.name, key = %k, value = %val, "admission audit annotation");
                    // kube prefixes a webhook's keys with its name; the
                    // built-ins speak as kube's own plugins.
                    match e.verbatim {
                        true => crate::audit::annotate(k, val),
                        false => crate::audit::annotate(&format!("{}/{k}", e.config.name), val),
                    }
                }
                Ok(Some(v))
            }
            Err(why) => failure(e, &why, warnings).map(|_| None),
        }
    }

    /// Runs the mutating entries in order, then once more those with
    /// reinvocationPolicy IfNeeded whose output a later entry changed (and
    /// the MutatingAdmissionPolicies marked to run again).
    pub async fn mutate(
        &self,
        req: &ReviewRequest,
        obj: Value,
        old: Option<&Value>,
        warnings: &Mutex<Vec<String>>,
    ) -> ApiResult<Value> {
        let started = std::time::Instant::now();
        let out = self.mutate_all(req, obj, old, warnings).await;
        let step = super::metrics::step_type(true);
        let rejected = out.is_err();
        (self.metrics).step(req.operation, rejected, step, started.elapsed());
        out
    }

    async fn mutate_all(
        &self,
        req: &ReviewRequest,
        mut obj: Value,
        old: Option<&Value>,
        warnings: &Mutex<Vec<String>>,
    ) -> ApiResult<Value> {
        let entries = self.entries_for(Phase::Mutating, req).await;
        let (attrs, mut review) = (attributes(req), SharedReview::default());
        let mut left_as: Vec<Option<Value>> = vec![None; entries.len()];
        let mut policies = Reinvocation::default();
        for (i, e) in entries.iter().enumerate() {
            if let EntryRef::AdmissionPolicies(p) = e {
                let before = obj.clone();
                obj = p
                    .mutate(req, obj, old, warnings, (&mut policies, false))
                    .await?;
                if obj != before {
                    review.object_changed();
                }
                continue;
            }
            let Some(e) = e.get() else { continue };
            if !self
                .is_called(e, (req, &attrs), Some(&obj), old, warnings)
                .await?
            {
                continue;
            }
            obj = self
                .mutate_with(e, req, obj, old, &mut review, warnings)
                .await?;
            if e.config.reinvoke_if_needed {
                left_as[i] = Some(obj.clone());
            }
        }
        for (e, seen) in entries.iter().zip(left_as) {
            if let EntryRef::AdmissionPolicies(p) = e {
                if policies.wanted(&obj) {
                    obj = p
                        .mutate(req, obj, old, warnings, (&mut policies, true))
                        .await?;
                    review.object_changed();
                }
                continue;
            }
            if let (Some(e), Some(seen)) = (e.get(), seen) {
                if seen != obj {
                    obj = self
                        .mutate_with(e, req, obj, old, &mut review, warnings)
                        .await?;
                }
            }
        }
        Ok(obj)
    }

    /// One mutating call: `obj` with the entry's patch applied (the review
    /// is encoded again for the next entry once a patch changed it).
    async fn mutate_with(
        &self,
        e: &CallableEntry,
        req: &ReviewRequest,
        obj: Value,
        old: Option<&Value>,
        review: &mut SharedReview,
        warnings: &Mutex<Vec<String>>,
    ) -> ApiResult<Value> {
        let started = std::time::Instant::now();
        let out = self.patched_by(e, req, obj, old, review, warnings).await;
        self.timed(e, req, (true, out.is_err()), started);
        out
    }

    /// One entry's call, counted in kube's admission metrics.
    fn timed(
        &self,
        e: &CallableEntry,
        req: &ReviewRequest,
        (mutating, rejected): (bool, bool),
        started: std::time::Instant,
    ) {
        use super::metrics::{step_type, Family};
        let family = match e.config.module.as_str() {
            "webhook" => Family::Webhook,
            _ => Family::Controller,
        };
        let key = (req.operation, rejected, step_type(mutating));
        let took = started.elapsed();
        if let Family::Webhook = family {
            crate::telemetry::webhook_time::webhook_called(took.as_secs_f64());
        }
        (self.metrics).entry(family, &e.config.name, key, took);
    }

    async fn patched_by(
        &self,
        e: &CallableEntry,
        req: &ReviewRequest,
        obj: Value,
        old: Option<&Value>,
        review: &mut SharedReview,
        warnings: &Mutex<Vec<String>>,
    ) -> ApiResult<Value> {
        let encoded = review.get(req, Some(&obj), old);
        let span = super::trace::entry_span(e, req, true);
        let called = span.run(self.call(e, req, encoded, warnings)).await;
        super::trace::record_verdict(&span, &called);
        let Some(v) = called? else {
            return Ok(obj);
        };
        if let Some(denial) = v.denial {
            return Err(denial);
        }
        match v.patch.map(|p| apply_patch(&obj, &p)) {
            Some(Ok(patched)) => {
                review.object_changed();
                Ok(patched)
            }
            Some(Err(why)) => failure(e, &why, warnings).map(|_| obj),
            None => Ok(obj),
        }
    }

    pub async fn validate(
        &self,
        req: &ReviewRequest,
        obj: Option<&Value>,
        old: Option<&Value>,
        warnings: &Mutex<Vec<String>>,
    ) -> ApiResult<()> {
        let started = std::time::Instant::now();
        let out = self.validate_all(req, obj, old, warnings).await;
        let step = super::metrics::step_type(false);
        (self.metrics).step(req.operation, out.is_err(), step, started.elapsed());
        out
    }

    async fn validate_all(
        &self,
        req: &ReviewRequest,
        obj: Option<&Value>,
        old: Option<&Value>,
        warnings: &Mutex<Vec<String>>,
    ) -> ApiResult<()> {
        let (attrs, mut review) = (attributes(req), SharedReview::default());
        for e in self.entries_for(Phase::Validating, req).await {
            if let EntryRef::AdmissionPolicies(p) = &e {
                p.validate(req, obj, old, warnings).await?;
                continue;
            }
            let Some(e) = e.get() else { continue };
            if !self.is_called(e, (req, &attrs), obj, old, warnings).await? {
                continue;
            }
            let encoded = review.get(req, obj, old);
            let started = std::time::Instant::now();
            let span = super::trace::entry_span(e, req, false);
            let verdict = span.run(self.call(e, req, encoded, warnings)).await;
            super::trace::record_verdict(&span, &verdict);
            let denial = match verdict {
                Ok(v) => v.and_then(|v| v.denial),
                Err(e) => Some(e),
            };
            self.timed(e, req, (false, denial.is_some()), started);
            if let Some(denial) = denial {
                return Err(denial);
            }
        }
        Ok(())
    }
}

/// The review of the object as it stands: encoded when the first entry is
/// called, then shared by every entry called with the same object, until a
/// mutating entry's patch changes it.
#[derive(Default)]
struct SharedReview(Option<EncodedReview>);

impl SharedReview {
    fn get(
        &mut self,
        req: &ReviewRequest,
        obj: Option<&Value>,
        old: Option<&Value>,
    ) -> &EncodedReview {
        self.0
            .get_or_insert_with(|| crate::cpu::for_request(|| req.encode(obj, old)))
    }

    fn object_changed(&mut self) {
        self.0 = None;
    }
}

/// kube's `IsExemptAdmissionConfigurationResource`: writes of the objects
/// that configure admission (webhook configurations, admission policies and
/// their bindings) are never sent to the API's webhooks, so a broken webhook
/// can always be removed. By the same reasoning PolicyBundles are exempt
/// from webhooks and from the policies they load: a bundle whose policy
/// denies every write can still be changed or deleted. Decided by the kind
/// under review, as kube does (so also their subresources). The configured
/// plugins (built-ins, `--config` entries) still see these writes: only an
/// operator can change those, not the API.
fn configures_admission(req: &ReviewRequest) -> bool {
    match req.kind_group.as_str() {
        "admissionregistration.k8s.io" => matches!(
            req.kind.as_str(),
            "ValidatingWebhookConfiguration"
                | "MutatingWebhookConfiguration"
                | "ValidatingAdmissionPolicy"
                | "ValidatingAdmissionPolicyBinding"
                | "MutatingAdmissionPolicy"
                | "MutatingAdmissionPolicyBinding"
        ),
        crate::catalogue::policy_bundle::GROUP => req.kind == "PolicyBundle",
        _ => false,
    }
}

/// What the rules of the entries match against.
pub fn attributes(req: &ReviewRequest) -> RequestAttributes {
    RequestAttributes {
        operation: req.operation,
        group: req.group.clone(),
        version: req.version.clone(),
        resource: req.resource.clone(),
        subresource: req.subresource.clone(),
        namespaced: req.namespace.is_some(),
    }
}

enum EntryRef<'a> {
    Borrowed(&'a CallableEntry),
    Shared(Arc<CallableEntry>),
    /// Not a callable entry: the API's admission policies, evaluated in
    /// the host.
    AdmissionPolicies(Arc<AdmissionPolicies>),
}

impl EntryRef<'_> {
    /// The entry to call (None for the admission policies, run in place).
    fn get(&self) -> Option<&CallableEntry> {
        match self {
            EntryRef::Borrowed(e) => Some(e),
            EntryRef::Shared(e) => Some(e),
            EntryRef::AdmissionPolicies(_) => None,
        }
    }
}

fn push(warnings: &Mutex<Vec<String>>, items: impl Iterator<Item = String>) {
    if let Ok(mut w) = warnings.lock() {
        w.extend(items);
    }
}

/// An entry gave no usable answer: Fail rejects the request, Ignore warns.
fn failure(e: &CallableEntry, why: &str, warnings: &Mutex<Vec<String>>) -> ApiResult<()> {
    // kube-apiserver's words for webhooks; ours for plugins.
    let what = if e.config.module == "webhook" {
        "webhook"
    } else {
        "admission plugin"
    };
    tracing::warn!(entry = %e.config.name, failure_policy = ?e.config.failure_policy, error = %why, "admission entry failed");
    match e.config.failure_policy {
        // The store, not the plugin, failed (a read through its imports).
        FailurePolicy::Fail if why.contains(STORAGE_UNAVAILABLE) => {
            Err(ApiError::unavailable(format!(
                "admission plugin \"{}\" could not read: {why}",
                e.config.name
            )))
        }
        FailurePolicy::Fail => Err(ApiError::internal(format!(
            "failed calling {what} \"{}\": {why}",
            e.config.name
        ))),
        FailurePolicy::Ignore => {
            push(
                warnings,
                std::iter::once(format!(
                    "{what} \"{}\" failed and was ignored: {why}",
                    e.config.name
                )),
            );
            Ok(())
        }
    }
}

/// The chain bound to one request: what the registry calls.
pub struct RequestAdmission {
    pub chain: Arc<Chain>,
    pub request: ReviewRequest,
    pub warnings: Mutex<Vec<String>>,
}

impl RequestAdmission {
    pub fn new(chain: Arc<Chain>, request: ReviewRequest) -> Self {
        RequestAdmission {
            chain,
            request,
            warnings: Mutex::new(Vec::new()),
        }
    }

    pub fn take_warnings(&self) -> Vec<String> {
        self.warnings
            .lock()
            .map(|mut w| std::mem::take(&mut *w))
            .unwrap_or_default()
    }
}

impl Admit for RequestAdmission {
    fn mutate<'a>(&'a self, obj: Value, old: Option<&'a Value>) -> BoxFuture<'a, ApiResult<Value>> {
        Box::pin(async move {
            let mut req = self.request.clone();
            if let Some(name) = obj.pointer("/metadata/name").and_then(Value::as_str) {
                req.name = name.to_string();
            }
            self.chain.mutate(&req, obj, old, &self.warnings).await
        })
    }

    fn validate<'a>(
        &'a self,
        obj: Option<&'a Value>,
        old: Option<&'a Value>,
    ) -> BoxFuture<'a, ApiResult<()>> {
        Box::pin(async move {
            let mut req = self.request.clone();
            if let Some(name) = obj
                .or(old)
                .and_then(|o| o.pointer("/metadata/name"))
                .and_then(Value::as_str)
            {
                req.name = name.to_string();
            }
            self.chain.validate(&req, obj, old, &self.warnings).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::config::{FailurePolicy, Phase, PluginEntry};
    use crate::admission::matcher::{Rule, Selector};
    use crate::wasm::DEFAULT_TIMEOUT;
    use base64::Engine;
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A transport answering with a closure over the review.
    type Answer = Box<dyn Fn(&Value) -> Result<Value, String> + Send + Sync>;
    struct Fake(Answer);

    impl ReviewTransport for Fake {
        fn call<'a>(&'a self, review: &'a str) -> BoxFuture<'a, Result<String, String>> {
            Box::pin(async move {
                let v: Value = serde_json::from_str(review).map_err(|e| e.to_string())?;
                (self.0)(&v).map(|r| r.to_string())
            })
        }
    }

    fn answer(review: &Value, allowed: bool, patch: Option<&str>) -> Value {
        let mut resp = json!({"uid": review["request"]["uid"], "allowed": allowed});
        if let Some(p) = patch {
            resp["patch"] = json!(base64::engine::general_purpose::STANDARD.encode(p));
            resp["patchType"] = json!("JSONPatch");
        }
        if !allowed {
            resp["status"] = json!({"code": 403, "message": "not today"});
        }
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp})
    }

    fn entry(
        name: &str,
        phase: Phase,
        policy: FailurePolicy,
        f: impl Fn(&Value) -> Result<Value, String> + Send + Sync + 'static,
    ) -> ChainEntry {
        let config = PluginEntry {
            name: name.into(),
            module: "test".into(),
            phases: vec![phase],
            failure_policy: policy,
            timeout: DEFAULT_TIMEOUT,
            memory_bytes: 1 << 20,
            fuel: None,
            config: "{}".into(),
            rules: None,
            namespace_selector: Selector::parse(None).unwrap(),
            object_selector: Selector::parse(None).unwrap(),
            reinvoke_if_needed: name.ends_with("-again"),
            match_conditions: Default::default(),
        };
        ChainEntry::Plugin(Box::new(CallableEntry {
            config,
            transport: Arc::new(Fake(Box::new(f))),
            verbatim: false,
            dry_run_safe: false,
        }))
    }

    fn chain(entries: Vec<ChainEntry>) -> (Chain, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let storage =
            Arc::new(crate::storage::sqlite::SqliteStorage::open(&dir.path().join("db")).unwrap());
        let cat = crate::catalogue::Catalogue::builtin();
        let mut c = Chain::empty(Registry::new(storage), &cat);
        c.entries = entries;
        (c, dir)
    }

    fn request() -> ReviewRequest {
        ReviewRequest {
            operation: "CREATE",
            group: String::new(),
            version: "v1".into(),
            kind_group: String::new(),
            kind_version: "v1".into(),
            kind: "ConfigMap".into(),
            resource: "configmaps".into(),
            subresource: String::new(),
            namespace: None,
            name: "c".into(),
            user: json!({}),
            dry_run: false,
        }
    }

    #[tokio::test]
    async fn mutations_apply_in_order_and_validators_see_the_result() {
        let (c, _dir) = chain(vec![
            entry("first", Phase::Mutating, FailurePolicy::Fail, |r| {
                Ok(answer(
                    r,
                    true,
                    Some(r#"[{"op":"add","path":"/data","value":{"a":"1"}}]"#),
                ))
            }),
            entry("second", Phase::Mutating, FailurePolicy::Fail, |r| {
                Ok(answer(
                    r,
                    true,
                    Some(r#"[{"op":"add","path":"/data/b","value":"2"}]"#),
                ))
            }),
            entry("check", Phase::Validating, FailurePolicy::Fail, |r| {
                Ok(answer(r, r["request"]["object"]["data"]["b"] == "2", None))
            }),
        ]);
        let w = Mutex::new(Vec::new());
        let out = c
            .mutate(&request(), json!({"metadata": {"name": "c"}}), None, &w)
            .await
            .unwrap();
        assert_eq!(out["data"], json!({"a": "1", "b": "2"}));
        c.validate(&request(), Some(&out), None, &w).await.unwrap();
        let denied = c
            .validate(&request(), Some(&json!({})), None, &w)
            .await
            .unwrap_err();
        assert_eq!(denied.code, 403);
        assert_eq!(
            denied.message,
            "admission webhook \"check\" denied the request: not today"
        );
    }

    /// An entry that records, in `data.seen`, the labels it saw.
    fn recorder(name: &str) -> ChainEntry {
        entry(name, Phase::Mutating, FailurePolicy::Fail, |r| {
            let labels = r["request"]["object"]["metadata"]["labels"].to_string();
            let patch = json!([{"op": "add", "path": "/data", "value": {"seen": labels}}]);
            Ok(answer(r, true, Some(&patch.to_string())))
        })
    }

    fn labeller() -> ChainEntry {
        entry("labeller", Phase::Mutating, FailurePolicy::Fail, |r| {
            let patch = r#"[{"op":"add","path":"/metadata/labels","value":{"team":"a"}}]"#;
            Ok(answer(r, true, Some(patch)))
        })
    }

    #[tokio::test]
    async fn if_needed_entries_run_again_after_a_later_change() {
        let obj = || json!({"metadata": {"name": "c"}});
        let w = Mutex::new(Vec::new());
        let (c, _dir) = chain(vec![recorder("record-again"), labeller()]);
        let out = c.mutate(&request(), obj(), None, &w).await.unwrap();
        assert_eq!(out["data"]["seen"], r#"{"team":"a"}"#);
        let (c, _dir) = chain(vec![recorder("record"), labeller()]);
        let out = c.mutate(&request(), obj(), None, &w).await.unwrap();
        assert_eq!(out["data"]["seen"], "null");
    }

    #[tokio::test]
    async fn each_entry_sees_the_object_as_the_entries_before_it_left_it() {
        let uids = Arc::new(Mutex::new(Vec::new()));
        let seen = uids.clone();
        let noop = entry("noop", Phase::Mutating, FailurePolicy::Fail, move |r| {
            seen.lock().unwrap().push(r["request"]["uid"].clone());
            Ok(answer(r, true, None))
        });
        let (c, _dir) = chain(vec![noop, labeller(), recorder("record")]);
        let w = Mutex::new(Vec::new());
        let obj = json!({"metadata": {"name": "c"}});
        let out = c.mutate(&request(), obj.clone(), None, &w).await.unwrap();
        assert_eq!(out["data"]["seen"], r#"{"team":"a"}"#);
        // Every call has a uid of its own, also when the review is shared.
        c.mutate(&request(), obj, None, &w).await.unwrap();
        let uids = uids.lock().unwrap();
        assert_eq!(uids.len(), 2);
        assert!(uids[0].is_string() && uids[0] != uids[1], "{uids:?}");
    }

    /// A validating entry that denies everything, limited to `rules` and
    /// `labels` (an objectSelector), counting its calls.
    fn denier(rules: &[&str], labels: Option<Value>, calls: Arc<AtomicUsize>) -> ChainEntry {
        let mut e = entry("denier", Phase::Validating, FailurePolicy::Fail, move |r| {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok(answer(r, false, None))
        });
        if let ChainEntry::Plugin(p) = &mut e {
            p.config.rules = Some(vec![Rule {
                operations: vec!["CREATE".into()],
                api_groups: vec!["".into()],
                api_versions: vec!["*".into()],
                resources: rules.iter().map(|r| r.to_string()).collect(),
                scope: None,
            }]);
            p.config.object_selector = Selector::parse(labels.as_ref()).unwrap();
        }
        e
    }

    #[tokio::test]
    async fn entries_the_request_does_not_match_are_never_called() {
        let calls = Arc::new(AtomicUsize::new(0));
        let w = Mutex::new(Vec::new());
        let team_b = json!({"matchLabels": {"team": "b"}});
        let obj = json!({"metadata": {"name": "c", "labels": {"team": "a"}}});
        for skipped in [
            denier(&["pods", "secrets"], None, calls.clone()),
            denier(&["configmaps"], Some(team_b), calls.clone()),
        ] {
            let (c, _dir) = chain(vec![skipped]);
            c.validate(&request(), Some(&obj), None, &w).await.unwrap();
        }
        assert_eq!(calls.load(Ordering::SeqCst), 0);
        let (c, _dir) = chain(vec![denier(&["configmaps"], None, calls.clone())]);
        let denied = c.validate(&request(), Some(&obj), None, &w).await;
        assert_eq!(denied.unwrap_err().code, 403);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    /// PolicyBundles' policies as a `PolicySource` gives them.
    struct Loaded(Vec<Arc<CallableEntry>>);

    impl PolicySource for Loaded {
        fn policies(&self, phase: Phase) -> Vec<Arc<CallableEntry>> {
            let of_phase = |e: &&Arc<CallableEntry>| e.config.phases.contains(&phase);
            self.0.iter().filter(of_phase).cloned().collect()
        }
    }

    #[tokio::test]
    async fn policies_run_only_where_a_marker_of_their_phase_is() {
        let calls = Arc::new(AtomicUsize::new(0));
        let ChainEntry::Plugin(policy) = denier(&["configmaps"], None, calls.clone()) else {
            unreachable!()
        };
        let source: Arc<dyn PolicySource> = Arc::new(Loaded(vec![Arc::from(policy)]));
        let w = Mutex::new(Vec::new());
        let obj = json!({"metadata": {"name": "c"}});
        for markers in [vec![], vec![ChainEntry::Policies(Phase::Mutating)]] {
            let (mut c, _dir) = chain(markers);
            c.policies = Some(source.clone());
            c.validate(&request(), Some(&obj), None, &w).await.unwrap();
        }
        assert_eq!(calls.load(Ordering::SeqCst), 0);
        let (mut c, _dir) = chain(vec![ChainEntry::Policies(Phase::Validating)]);
        c.policies = Some(source);
        assert_eq!(c.names(), ["policies: validating"]);
        let denied = c.validate(&request(), Some(&obj), None, &w).await;
        assert_eq!(denied.unwrap_err().code, 403);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    /// The API's webhooks as a `WebhookSource` gives them.
    struct Hooks(Vec<Arc<CallableEntry>>);

    impl WebhookSource for Hooks {
        fn webhooks<'a>(&'a self, _phase: Phase) -> BoxFuture<'a, Vec<Arc<CallableEntry>>> {
            Box::pin(async move { self.0.clone() })
        }
    }

    /// A validating entry without rules that denies everything, counting its calls.
    fn deny_all(calls: &Arc<AtomicUsize>) -> Box<CallableEntry> {
        let calls = calls.clone();
        let e = entry(
            "deny-all",
            Phase::Validating,
            FailurePolicy::Fail,
            move |r| {
                calls.fetch_add(1, Ordering::SeqCst);
                Ok(answer(r, false, None))
            },
        );
        let ChainEntry::Plugin(e) = e else {
            unreachable!()
        };
        e
    }

    fn of_kind(group: &str, kind: &str, operation: &'static str) -> ReviewRequest {
        let mut req = request();
        (req.kind_group, req.kind, req.operation) = (group.into(), kind.into(), operation);
        req
    }

    #[tokio::test]
    async fn admission_configuration_skips_webhooks_and_policies_but_not_plugins() {
        let calls = Arc::new(AtomicUsize::new(0));
        let (mut c, _dir) = chain(vec![
            ChainEntry::Webhooks(Phase::Validating),
            ChainEntry::Policies(Phase::Validating),
        ]);
        c.webhooks = Some(Arc::new(Hooks(vec![Arc::from(deny_all(&calls))])));
        c.policies = Some(Arc::new(Loaded(vec![Arc::from(deny_all(&calls))])));
        let w = Mutex::new(Vec::new());
        let admission = "admissionregistration.k8s.io";
        let exempt = [
            (admission, "ValidatingWebhookConfiguration"),
            (admission, "MutatingWebhookConfiguration"),
            (admission, "ValidatingAdmissionPolicyBinding"),
            (admission, "MutatingAdmissionPolicy"),
            ("policies.capstan.dev", "PolicyBundle"),
        ];
        for (group, kind) in exempt {
            for operation in ["CREATE", "DELETE"] {
                let req = of_kind(group, kind, operation);
                c.validate(&req, Some(&json!({})), None, &w).await.unwrap();
            }
        }
        assert_eq!(calls.load(Ordering::SeqCst), 0);
        let denied = c.validate(&request(), Some(&json!({})), None, &w).await;
        assert_eq!(denied.unwrap_err().code, 403);
        let (plugin, _dir) = chain(vec![ChainEntry::Plugin(deny_all(&calls))]);
        let req = of_kind("policies.capstan.dev", "PolicyBundle", "DELETE");
        let denied = plugin.validate(&req, None, Some(&json!({})), &w).await;
        assert_eq!(
            denied.unwrap_err().code,
            403,
            "configured plugins still run"
        );
    }

    #[tokio::test]
    async fn dry_run_is_refused_by_entries_with_side_effects() {
        let (c, _dir) = chain(vec![entry(
            "effects",
            Phase::Validating,
            FailurePolicy::Ignore,
            |r| Ok(answer(r, true, None)),
        )]);
        let w = Mutex::new(Vec::new());
        let mut req = request();
        req.dry_run = true;
        let e = c
            .validate(&req, Some(&json!({})), None, &w)
            .await
            .unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                400,
                "admission webhook \"effects\" does not support dry run"
            )
        );
    }

    #[tokio::test]
    async fn failure_policy_decides_when_an_entry_breaks() {
        let (c, _dir) = chain(vec![entry(
            "flaky",
            Phase::Validating,
            FailurePolicy::Ignore,
            |_| Err("plugin timed out after 300ms".into()),
        )]);
        let w = Mutex::new(Vec::new());
        c.validate(&request(), Some(&json!({})), None, &w)
            .await
            .unwrap();
        assert_eq!(
            w.lock().unwrap()[0],
            "admission plugin \"flaky\" failed and was ignored: plugin timed out after 300ms"
        );
        let (c, _dir) = chain(vec![entry(
            "strict",
            Phase::Validating,
            FailurePolicy::Fail,
            |_| Ok(json!("garbage")),
        )]);
        let e = c
            .validate(&request(), Some(&json!({})), None, &w)
            .await
            .unwrap_err();
        assert_eq!(e.code, 500);
        assert!(
            e.message
                .contains("failed calling admission plugin \"strict\""),
            "{}",
            e.message
        );
    }
}
