//! The policies in effect: per PolicyBundle, the chain entries of its
//! selected policies, swapped as a whole. A request takes the set once per
//! phase (`PolicySource::policies`), so it finishes with the set it started
//! with while a new one is swapped in, and no request waits for a load.
//! Beside them, each PolicyBundle's policies with their own answers (no
//! mode applied), for the background audit (`policy::reports`).

use super::metrics::PolicyMetrics;
use super::mode::{Mode, ModeTransport};
use super::spec::{Override, Spec};
use crate::admission::chain::{CallableEntry, PolicySource};
use crate::admission::config::{self, FailurePolicy, Phase, PluginEntryConfig};
use crate::policy::bundles::admission_policies::CelTransport;
use crate::policy::bundles::components::{self, Runs};
use crate::policy::bundles::Bundle;
use crate::transport::ReviewTransport;
use crate::wasm::WasmTransport;
use crate::wasm::{Limits, ObjectReader, PluginRuntime};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// One PolicyBundle's policies, ready to run.
pub type Entries = Arc<Vec<Arc<CallableEntry>>>;

#[derive(Default)]
pub struct PolicySet {
    current: RwLock<Arc<BTreeMap<String, Entries>>>,
    audited: RwLock<Arc<BTreeMap<String, Arc<Audited>>>>,
    pub metrics: Arc<PolicyMetrics>,
    /// Notified when a PolicyBundle's policies are loaded or removed.
    pub changed: tokio::sync::Notify,
}

/// What the background audit runs of one PolicyBundle: its mode, and its
/// policies as chain entries whose transport answers as the policy does.
pub struct Audited {
    pub mode: Mode,
    pub entries: Vec<Arc<CallableEntry>>,
}

/// A PolicyBundle's policies as built: the chain's entries and the audit's.
pub struct Built {
    pub entries: Vec<Arc<CallableEntry>>,
    pub audited: Audited,
}

impl PolicySet {
    fn snapshot(&self) -> Arc<BTreeMap<String, Entries>> {
        match self.current.read() {
            Ok(c) => c.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn change(&self, f: impl FnOnce(&mut BTreeMap<String, Entries>)) {
        let mut guard = match self.current.write() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let mut next = (**guard).clone();
        f(&mut next);
        *guard = Arc::new(next);
    }

    /// `bundle`'s policies are now `entries`.
    pub fn replace(&self, bundle: &str, entries: Entries) {
        self.change(|m| {
            m.insert(bundle.to_string(), entries);
        });
    }

    /// `bundle`'s policies no longer run.
    pub fn remove(&self, bundle: &str) {
        self.change(|m| {
            m.remove(bundle);
        });
        self.change_audited(|m| {
            m.remove(bundle);
        });
        self.changed.notify_one();
    }

    /// `bundle`'s policies are now `built`'s, in the chain and the audit.
    pub fn load(&self, bundle: &str, built: Built) {
        self.replace(bundle, Arc::new(built.entries));
        self.change_audited(|m| {
            m.insert(bundle.to_string(), Arc::new(built.audited));
        });
        self.changed.notify_one();
    }

    /// Each loaded PolicyBundle's policies as the audit runs them.
    pub fn audited(&self) -> Arc<BTreeMap<String, Arc<Audited>>> {
        match self.audited.read() {
            Ok(c) => c.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn change_audited(&self, f: impl FnOnce(&mut BTreeMap<String, Arc<Audited>>)) {
        let mut guard = match self.audited.write() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let mut next = (**guard).clone();
        f(&mut next);
        *guard = Arc::new(next);
    }

    /// The PolicyBundles whose policies are in effect.
    pub fn bundles(&self) -> Vec<String> {
        self.snapshot().keys().cloned().collect()
    }
}

impl PolicySource for PolicySet {
    /// PolicyBundles in name order, each's policies in its manifest's order.
    fn policies(&self, phase: Phase) -> Vec<Arc<CallableEntry>> {
        self.snapshot()
            .values()
            .flat_map(|entries| entries.iter())
            .filter(|e| e.config.phases.contains(&phase))
            .cloned()
            .collect()
    }
}

/// Why a PolicyBundle's bundle could not be put in effect: a condition's
/// reason and message.
#[derive(Debug, PartialEq)]
pub struct Refusal {
    pub reason: &'static str,
    pub message: String,
}

fn refusal(reason: &'static str, message: impl Into<String>) -> Refusal {
    Refusal {
        reason,
        message: message.into(),
    }
}

/// What a build needs besides the bundle.
pub struct Context<'a> {
    pub runtime: &'a PluginRuntime,
    pub reader: Arc<dyn ObjectReader>,
    pub metrics: Arc<PolicyMetrics>,
    /// What bundled admission policies read (params, namespaces) and ask
    /// (`authorizer`).
    pub cel: CelContext,
}

/// Where bundled admission policies read and who answers their
/// `authorizer` checks (None: they fail).
#[derive(Clone)]
pub struct CelContext {
    pub lookups: Arc<dyn crate::admission::cel_policy::Lookups>,
    pub auth: Option<Arc<crate::auth::Auth>>,
}

impl Default for CelContext {
    fn default() -> Self {
        CelContext {
            lookups: Arc::new(crate::wasm::EmptyReader),
            auth: None,
        }
    }
}

/// The entries of PolicyBundle `name` (spec `spec`) over `bundle`: its
/// components compiled (CPU-heavy: run it off the async workers).
pub fn build(
    ctx: &Context<'_>,
    name: &str,
    spec: &Spec,
    bundle: &Bundle,
) -> Result<Built, Refusal> {
    let selected = select(spec, bundle)?;
    let loaded = components::load_all(ctx.runtime, bundle)
        .map_err(|e| refusal("InvalidComponent", format!("{e:#}")))?;
    let pairs = loaded
        .into_iter()
        .filter(|l| selected.contains(&l.policy.manifest.name.as_str()))
        .map(|l| {
            let manifest = &l.policy.manifest;
            let over = spec.overrides.iter().find(|o| o.name == manifest.name);
            let mut entry = entry_config(name, spec, bundle, manifest, over)?;
            let inner = transport(ctx, &mut entry, l.runs);
            Ok(callable(ctx, spec, entry, inner))
        })
        .collect::<Result<Vec<_>, Refusal>>()?;
    let (entries, audit) = pairs.into_iter().unzip();
    Ok(Built {
        entries,
        audited: Audited {
            mode: spec.mode,
            entries: audit,
        },
    })
}

/// What answers one policy's reviews: its plugin with the entry's settings
/// and limits, or its admission policy (whose matchConstraints' rules are
/// the entry's unless the PolicyBundle overrides them).
fn transport(
    ctx: &Context<'_>,
    entry: &mut config::PluginEntry,
    runs: Runs,
) -> Arc<dyn ReviewTransport> {
    match runs {
        Runs::Plugin(plugin) => {
            let limits = Limits {
                timeout: entry.timeout,
                memory_bytes: entry.memory_bytes,
                fuel: entry.fuel,
            };
            Arc::new(WasmTransport {
                plugin,
                config: entry.config.clone(),
                reader: ctx.reader.clone(),
                limits,
            })
        }
        Runs::AdmissionPolicy(bundled) => {
            entry.rules.get_or_insert_with(|| bundled.rules.clone());
            Arc::new(CelTransport {
                bundled,
                lookups: ctx.cel.lookups.clone(),
                auth: ctx.cel.auth.clone(),
            })
        }
    }
}

/// The chain entry of one policy: its transport with the PolicyBundle's
/// mode applied to its answers; and the same entry answering as the policy
/// does, for the audit.
fn callable(
    ctx: &Context<'_>,
    spec: &Spec,
    entry: config::PluginEntry,
    wasm: Arc<dyn ReviewTransport>,
) -> (Arc<CallableEntry>, Arc<CallableEntry>) {
    let transport = ModeTransport {
        inner: wasm.clone(),
        policy: entry.name.clone(),
        mode: spec.mode,
        metrics: ctx.metrics.clone(),
    };
    let audited = Arc::new(CallableEntry {
        config: entry.clone(),
        transport: wasm,
        verbatim: true,
        dry_run_safe: true,
    });
    let entry = Arc::new(CallableEntry {
        config: entry,
        transport: Arc::new(transport) as Arc<dyn ReviewTransport>,
        verbatim: true,
        dry_run_safe: true,
    });
    (entry, audited)
}

/// The names of the policies the spec takes (checked against the bundle,
/// as are the overrides' names).
fn select<'a>(spec: &'a Spec, bundle: &'a Bundle) -> Result<Vec<&'a str>, Refusal> {
    let have: Vec<&str> = bundle
        .manifest
        .policies
        .iter()
        .map(|p| p.manifest.name.as_str())
        .collect();
    let missing = |what: &str, n: &str| {
        refusal(
            "PolicyNotFound",
            format!(
                "bundle {}: {what} names policy {n:?}, which it does not have (its policies: {})",
                bundle.source,
                have.join(", ")
            ),
        )
    };
    let wanted: Vec<&str> = match &spec.policies {
        Some(names) => names.iter().map(String::as_str).collect(),
        None => have.clone(),
    };
    if let Some(n) = wanted.iter().find(|n| !have.contains(n)) {
        return Err(missing("spec.policies", n));
    }
    if let Some(o) = spec
        .overrides
        .iter()
        .find(|o| !have.contains(&o.name.as_str()))
    {
        return Err(missing("spec.overrides", &o.name));
    }
    Ok(wanted)
}

/// A policy's chain entry: its manifest's defaults, the override's
/// settings, rules and failurePolicy, the spec's selectors. Outside
/// Enforce a failing policy never denies (failurePolicy Ignore).
fn entry_config(
    name: &str,
    spec: &Spec,
    bundle: &Bundle,
    manifest: &crate::admission::manifest::PluginManifest,
    over: Option<&Override>,
) -> Result<config::PluginEntry, Refusal> {
    let label = format!("bundle {}: policy {}", bundle.source, manifest.name);
    let settings = over.and_then(|o| o.settings.clone());
    if let Some(s) = &settings {
        manifest
            .check_settings(s)
            .map_err(|e| refusal("InvalidSettings", format!("{label}: settings: {e}")))?;
    }
    let failure_policy = match spec.mode {
        super::mode::Mode::Enforce => over.and_then(|o| o.failure_policy),
        _ => Some(FailurePolicy::Ignore),
    };
    let raw = PluginEntryConfig {
        name: format!("{name}/{}", manifest.name),
        module: format!("bundle:{}", bundle.manifest_digest),
        failure_policy,
        config: settings,
        rules: over.and_then(|o| o.rules.clone()),
        namespace_selector: spec.namespace_selector.clone(),
        object_selector: spec.object_selector.clone(),
        match_conditions: over
            .and_then(|o| o.match_conditions.clone())
            .or_else(|| spec.match_conditions.clone()),
        ..Default::default()
    };
    config::entry_with_manifest(&label, raw, manifest).map_err(|e| refusal("InvalidSpec", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::config::PluginEntry;
    use crate::admission::matcher::Selector;
    use futures_util::future::BoxFuture;

    struct Silent;

    impl ReviewTransport for Silent {
        fn call<'a>(&'a self, _review: &'a str) -> BoxFuture<'a, Result<String, String>> {
            Box::pin(async { Err("not called".to_string()) })
        }
    }

    fn entry(name: &str, phase: Phase) -> Arc<CallableEntry> {
        let config = PluginEntry {
            name: name.into(),
            module: "bundle:sha256:00".into(),
            phases: vec![phase],
            failure_policy: FailurePolicy::Fail,
            timeout: crate::wasm::DEFAULT_TIMEOUT,
            memory_bytes: 1 << 20,
            fuel: None,
            config: "{}".into(),
            rules: None,
            namespace_selector: Selector::parse(None).unwrap(),
            object_selector: Selector::parse(None).unwrap(),
            reinvoke_if_needed: false,
            match_conditions: Default::default(),
        };
        Arc::new(CallableEntry {
            config,
            transport: Arc::new(Silent),
            verbatim: true,
            dry_run_safe: true,
        })
    }

    fn names(entries: &[Arc<CallableEntry>]) -> Vec<&str> {
        entries.iter().map(|e| e.config.name.as_str()).collect()
    }

    /// The test bundle of `policy/bundles/tests.rs` (policies `first`, mutating,
    /// and `second`, validating, with settings `{n: 1}` of schema `{n: integer}`).
    fn bundle() -> (tempfile::TempDir, Bundle) {
        let dir = tempfile::tempdir().unwrap();
        crate::policy::bundles::tests::source(dir.path(), "deny-service-external-ips", "admission");
        let out = dir.path().join("b.tar");
        crate::policy::bundles::build(dir.path(), None, &out).unwrap();
        let bundle = crate::policy::bundles::load(&out).unwrap();
        (dir, bundle)
    }

    fn spec(yaml: &str) -> Spec {
        let v: serde_json::Value = crate::apimachinery::yaml::config_from_str(yaml).unwrap();
        Spec::of(&serde_json::json!({ "spec": v })).unwrap()
    }

    fn refused(spec: &Spec, bundle: &Bundle) -> Refusal {
        match built(spec, bundle) {
            Ok(entries) => panic!("built {:?}", names(&entries)),
            Err(r) => r,
        }
    }

    fn built(spec: &Spec, bundle: &Bundle) -> Result<Vec<Arc<CallableEntry>>, Refusal> {
        let runtime = PluginRuntime::new(None).unwrap();
        let ctx = Context {
            runtime: &runtime,
            reader: Arc::new(crate::wasm::EmptyReader),
            metrics: Arc::default(),
            cel: CelContext::default(),
        };
        build(&ctx, "pb", spec, bundle).map(|b| b.entries)
    }

    #[test]
    fn entries_take_the_manifest_then_the_spec() {
        let (_dir, bundle) = bundle();
        let all = built(&spec("bundle: b.tar\nmode: Warn"), &bundle).unwrap();
        assert_eq!(names(&all), ["pb/first", "pb/second"]);
        assert_eq!(all[0].config.phases, [Phase::Mutating]);
        assert_eq!(all[1].config.config, r#"{"n":1}"#);
        assert_eq!(
            all[1].config.failure_policy,
            FailurePolicy::Ignore,
            "never denies outside Enforce"
        );
        let text = "bundle: b.tar\npolicies: [second]\noverrides:\n- name: second\n  settings: {n: 2}\n  failurePolicy: Ignore\n  rules: [{operations: [DELETE], apiGroups: [''], apiVersions: ['*'], resources: [secrets]}]\nobjectSelector: {matchLabels: {team: a}}";
        let one = built(&spec(text), &bundle).unwrap();
        assert_eq!(names(&one), ["pb/second"]);
        let e = &one[0].config;
        assert_eq!(
            (e.config.as_str(), e.failure_policy),
            (r#"{"n":2}"#, FailurePolicy::Ignore)
        );
        assert_eq!(e.rules.as_ref().unwrap()[0].resources, ["secrets"]);
        assert!(!e.object_selector.is_everything());
    }

    #[test]
    fn unknown_policies_and_bad_settings_are_refused_naming_the_bundle() {
        let (_dir, bundle) = bundle();
        let r = refused(&spec("bundle: b.tar\npolicies: [third]"), &bundle);
        assert_eq!(r.reason, "PolicyNotFound");
        assert!(r.message.contains("b.tar: spec.policies names policy \"third\", which it does not have (its policies: first, second)"), "{}", r.message);
        let bad = "bundle: b.tar\noverrides: [{name: second, settings: {n: many}}]";
        let r = refused(&spec(bad), &bundle);
        assert_eq!(r.reason, "InvalidSettings");
        assert!(
            r.message
                .contains("policy second: settings: n: Invalid value"),
            "{}",
            r.message
        );
    }

    #[test]
    fn match_conditions_come_from_the_spec_or_the_policys_override() {
        let (_dir, bundle) = bundle();
        let text = "bundle: b.tar\nmatchConditions: [{name: not-system, expression: \"request.namespace != 'kube-system'\"}]\noverrides:\n- name: second\n  matchConditions: [{name: labelled, expression: \"has(object.metadata.labels)\"}]";
        let all = built(&spec(text), &bundle).unwrap();
        let conditions: Vec<String> = all
            .iter()
            .map(|e| format!("{:?}", e.config.match_conditions))
            .collect();
        assert_eq!(
            conditions,
            [
                r#"MatchConditions(["not-system"])"#,
                r#"MatchConditions(["labelled"])"#
            ]
        );
        let bad = "bundle: b.tar\nmatchConditions: [{name: broken, expression: 'object.'}]";
        let r = refused(&spec(bad), &bundle);
        assert_eq!(r.reason, "InvalidSpec");
        assert!(
            r.message
                .contains("matchConditions[0].expression: Invalid value"),
            "{}",
            r.message
        );
    }

    #[test]
    fn a_request_keeps_the_set_it_took_while_another_is_swapped_in() {
        let set = PolicySet::default();
        set.replace("b", Arc::new(vec![entry("b/one", Phase::Validating)]));
        set.replace(
            "a",
            Arc::new(vec![
                entry("a/fix", Phase::Mutating),
                entry("a/check", Phase::Validating),
            ]),
        );
        let taken = set.policies(Phase::Validating);
        assert_eq!(
            names(&taken),
            ["a/check", "b/one"],
            "PolicyBundles in name order"
        );
        assert_eq!(names(&set.policies(Phase::Mutating)), ["a/fix"]);
        set.replace("b", Arc::new(vec![entry("b/two", Phase::Validating)]));
        set.remove("a");
        assert_eq!(names(&taken), ["a/check", "b/one"]);
        assert_eq!(names(&set.policies(Phase::Validating)), ["b/two"]);
        assert_eq!(set.bundles(), ["b"]);
    }
}
