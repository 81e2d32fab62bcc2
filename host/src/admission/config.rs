//! The admission part of `capstan serve --config FILE`: an ordered list of
//! entries, each a plugin (`builtin:<name>` or a path to a component) with its
//! phases, failurePolicy, timeout, configuration and match rules, or a marker
//! `webhooks: mutating|validating` saying where the API's webhooks run, or
//! `policies: mutating|validating` saying where the policies of the API's
//! PolicyBundles run (`policy::resources`).
//! Errors name the entry, so a bad file fails the start with a clear message.
//! What a `builtin:<name>` entry leaves out (phases, rules, failurePolicy,
//! limits) comes from the plugin's manifest (`admission/manifest.rs`); the
//! default chain is only kube-apiserver's order of the built-ins.

use super::manifest::{self, PluginManifest};
use super::match_conditions::MatchConditions;
use super::matcher::{Rule, Selector};
use crate::wasm::{PluginKind, DEFAULT_MEMORY_MIB, DEFAULT_TIMEOUT};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Mutating,
    Validating,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
pub enum FailurePolicy {
    #[default]
    Fail,
    Ignore,
}

/// A plugin entry as written in the file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginEntryConfig {
    pub name: String,
    pub module: String,
    /// Empty: a built-in's declared phases, else validating.
    #[serde(default)]
    pub phases: Vec<Phase>,
    /// Default Fail.
    #[serde(default)]
    pub failure_policy: Option<FailurePolicy>,
    /// Per-call deadline in milliseconds (default 300).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Memory cap per instance in MiB (default 64).
    #[serde(default)]
    pub memory_mib: Option<u64>,
    /// Wasm fuel per call (about one unit per instruction); default unmetered.
    #[serde(default)]
    pub fuel: Option<u64>,
    #[serde(default)]
    pub config: Option<Value>,
    /// None: a built-in's declared rules, else every request.
    #[serde(default)]
    pub rules: Option<Vec<Rule>>,
    #[serde(default)]
    pub namespace_selector: Option<Value>,
    #[serde(default)]
    pub object_selector: Option<Value>,
    #[serde(default)]
    pub reinvocation_policy: ReinvocationPolicy,
    /// CEL conditions, as a webhook's matchConditions.
    #[serde(default)]
    pub match_conditions: Option<Value>,
}

/// As in MutatingWebhookConfiguration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum ReinvocationPolicy {
    #[default]
    Never,
    IfNeeded,
}

/// One checked entry of the chain.
#[derive(Clone, Debug)]
pub enum EntryConfig {
    Plugin(Box<PluginEntry>),
    Webhooks(Phase),
    /// Where the API's PolicyBundles' policies of this phase run.
    Policies(Phase),
    /// Where the API's admission policies of a phase run: the entries
    /// `module: builtin:mutating-admission-policy` (MutatingAdmissionPolicies)
    /// and `module: builtin:validating-admission-policy`.
    AdmissionPolicies(Phase),
}

#[derive(Clone, Debug)]
pub struct PluginEntry {
    pub name: String,
    pub module: String,
    pub phases: Vec<Phase>,
    pub failure_policy: FailurePolicy,
    pub timeout: Duration,
    pub memory_bytes: usize,
    pub fuel: Option<u64>,
    pub config: String,
    pub rules: Option<Vec<Rule>>,
    pub namespace_selector: Selector,
    pub object_selector: Selector,
    /// reinvocationPolicy IfNeeded: called once more when a later mutating
    /// entry changed the object after this one ran.
    pub reinvoke_if_needed: bool,
    pub match_conditions: MatchConditions,
}

/// The module name of the entry where the API's ValidatingAdmissionPolicies run.
pub const VALIDATING_ADMISSION_POLICY: &str = "builtin:validating-admission-policy";
/// ... and of MutatingAdmissionPolicies (served behind their feature gate).
pub const MUTATING_ADMISSION_POLICY: &str = "builtin:mutating-admission-policy";

/// The phase of a `webhooks:` or `policies:` marker.
fn marker_phase(i: usize, key: &str, marker: &Value) -> Result<Phase, String> {
    serde_json::from_value(marker.clone()).map_err(|_| {
        format!("admission[{i}]: {key} must be \"mutating\" or \"validating\", got {marker}")
    })
}

pub fn entry(i: usize, v: &Value) -> Result<EntryConfig, String> {
    if let Some(marker) = v.get("webhooks") {
        return marker_phase(i, "webhooks", marker).map(EntryConfig::Webhooks);
    }
    if let Some(marker) = v.get("policies") {
        return marker_phase(i, "policies", marker).map(EntryConfig::Policies);
    }
    match v.get("module").and_then(Value::as_str) {
        Some(VALIDATING_ADMISSION_POLICY) => {
            return Ok(EntryConfig::AdmissionPolicies(Phase::Validating))
        }
        Some(MUTATING_ADMISSION_POLICY) => {
            return Ok(EntryConfig::AdmissionPolicies(Phase::Mutating))
        }
        _ => {}
    }
    let label = v
        .get("name")
        .and_then(Value::as_str)
        .map(|n| format!("admission[{i}] ({n})"))
        .unwrap_or(format!("admission[{i}]"));
    let raw: PluginEntryConfig =
        serde_json::from_value(v.clone()).map_err(|e| format!("{label}: {e}"))?;
    plugin_entry(&label, raw)
}

/// A plugin entry, with its built-in's declared defaults filled in. A
/// built-in sees every object a client may store, so what neither the
/// entry nor its manifest sets is what any storable object fits in
/// (`Limits::fit_any_object`), not a user plugin's default.
fn plugin_entry(label: &str, raw: PluginEntryConfig) -> Result<EntryConfig, String> {
    let builtin = builtin_manifest(label, &raw.module)?;
    let mut raw = match builtin {
        Some(manifest) => with_manifest_defaults(raw, manifest),
        None => raw,
    };
    if raw.module.starts_with("builtin:") {
        let fits = crate::wasm::Limits::fit_any_object();
        raw.memory_mib = raw.memory_mib.or(Some((fits.memory_bytes >> 20) as u64));
        raw.timeout_ms = raw.timeout_ms.or(Some(fits.timeout.as_millis() as u64));
    }
    check(label, raw).map(|e| EntryConfig::Plugin(Box::new(e)))
}

/// The manifest of a `builtin:` module (None for a path, or a built-in
/// without one); an admission entry may not name a plugin of another world.
fn builtin_manifest(label: &str, module: &str) -> Result<Option<&'static PluginManifest>, String> {
    let Some(name) = module.strip_prefix("builtin:") else {
        return Ok(None);
    };
    let manifest = manifest::builtin(name).map_err(|e| format!("{label}: {e}"))?;
    match manifest {
        Some(m) if m.world != PluginKind::Admission => Err(format!(
            "{label}: {module:?} is a plugin of the {} world, not an admission plugin",
            m.world.world()
        )),
        _ => Ok(manifest),
    }
}

/// A checked entry for a plugin whose manifest is `m` (a bundle's policy):
/// what `raw` leaves out, the manifest declares.
pub fn entry_with_manifest(
    label: &str,
    raw: PluginEntryConfig,
    m: &PluginManifest,
) -> Result<PluginEntry, String> {
    check(label, with_manifest_defaults(raw, m))
}

/// What the entry leaves out, the plugin's manifest declares.
fn with_manifest_defaults(mut raw: PluginEntryConfig, m: &PluginManifest) -> PluginEntryConfig {
    if raw.phases.is_empty() {
        raw.phases = m.phases.clone();
    }
    raw.rules = raw.rules.or_else(|| m.rules.clone());
    raw.failure_policy = raw.failure_policy.or(m.failure_policy);
    raw.timeout_ms = raw.timeout_ms.or(m.timeout_ms);
    raw.memory_mib = raw.memory_mib.or(m.memory_mib);
    raw.fuel = raw.fuel.or(m.fuel);
    raw.config = raw.config.or_else(|| m.settings.clone());
    raw
}

fn check(label: &str, raw: PluginEntryConfig) -> Result<PluginEntry, String> {
    if raw.name.trim().is_empty() {
        return Err(format!("{label}: name must not be empty"));
    }
    for (j, rule) in raw.rules.iter().flatten().enumerate() {
        if let Some(p) = rule.problems().first() {
            return Err(format!("{label}: rules[{j}]: {p}"));
        }
    }
    let namespace_selector = Selector::parse(raw.namespace_selector.as_ref())
        .map_err(|e| format!("{label}: namespaceSelector: {e}"))?;
    let object_selector = Selector::parse(raw.object_selector.as_ref())
        .map_err(|e| format!("{label}: objectSelector: {e}"))?;
    let match_conditions = MatchConditions::parse(raw.match_conditions.as_ref())
        .map_err(|e| format!("{label}: {e}"))?;
    let phases = if raw.phases.is_empty() {
        vec![Phase::Validating]
    } else {
        raw.phases
    };
    Ok(PluginEntry {
        name: raw.name,
        module: raw.module,
        phases,
        failure_policy: raw.failure_policy.unwrap_or_default(),
        timeout: raw
            .timeout_ms
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_TIMEOUT),
        memory_bytes: (raw.memory_mib.unwrap_or(DEFAULT_MEMORY_MIB) * 1024 * 1024) as usize,
        fuel: raw.fuel,
        config: raw
            .config
            .unwrap_or(Value::Object(Default::default()))
            .to_string(),
        rules: raw.rules,
        namespace_selector,
        object_selector,
        reinvoke_if_needed: raw.reinvocation_policy == ReinvocationPolicy::IfNeeded,
        match_conditions,
    })
}

/// kube-apiserver's order (`AllOrderedPlugins`) of the built-in plugins we
/// ship that run before its MutatingAdmissionWebhook and
/// ValidatingAdmissionWebhook; `rbac-escalation` is ours (kube checks
/// escalation in its RBAC storage), last of them.
const BEFORE_WEBHOOKS: [&str; 13] = [
    "namespace-lifecycle",
    "limit-ranger",
    "service-account",
    "taint-nodes-by-condition",
    "pod-security",
    "priority",
    "default-toleration-seconds",
    "default-storage-class",
    "storage-object-in-use-protection",
    "persistent-volume-claim-resize",
    "runtime-class",
    "default-ingress-class",
    "rbac-escalation",
];

/// ... and after them (ResourceQuota is last, as in kube).
const AFTER_WEBHOOKS: [&str; 1] = ["resource-quota"];

/// The chain without a configuration: the built-ins in kube-apiserver's
/// order with the webhook markers where kube runs its webhooks, each
/// preceded by the PolicyBundles' marker of its phase and the entry of the
/// API's admission policies of that phase (kube's positions for its
/// Mutating/ValidatingAdmissionPolicies); each
/// built-in's phases and rules are its manifest's. Names missing from
/// `available` are skipped; a built-in without a (valid) manifest is an error.
pub fn default_chain(available: &[&str]) -> Result<Vec<EntryConfig>, String> {
    let builtin = |name: &&str| available.contains(name).then(|| default_entry(name));
    let mut out = BEFORE_WEBHOOKS
        .iter()
        .filter_map(builtin)
        .collect::<Result<Vec<_>, _>>()?;
    out.push(EntryConfig::Policies(Phase::Mutating));
    out.push(EntryConfig::AdmissionPolicies(Phase::Mutating));
    out.push(EntryConfig::Webhooks(Phase::Mutating));
    out.push(EntryConfig::Policies(Phase::Validating));
    out.push(EntryConfig::AdmissionPolicies(Phase::Validating));
    out.push(EntryConfig::Webhooks(Phase::Validating));
    for entry in AFTER_WEBHOOKS.iter().filter_map(builtin) {
        out.push(entry?);
    }
    Ok(out)
}

/// The default chain's entry for a built-in: as a configuration entry that
/// names only the module.
fn default_entry(name: &str) -> Result<EntryConfig, String> {
    let label = format!("default admission chain ({name})");
    let module = format!("builtin:{name}");
    if builtin_manifest(&label, &module)?.is_none() {
        return Err(format!("{label}: the built-in plugin has no manifest"));
    }
    let raw = PluginEntryConfig {
        name: name.to_string(),
        module,
        ..Default::default()
    };
    plugin_entry(&label, raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole file's parse, its error as the start shows it.
    fn parse(text: &str) -> Result<Option<Vec<EntryConfig>>, String> {
        crate::config::parse(text).map_err(|e| e.to_string())
    }

    #[test]
    fn parses_entries_and_markers_in_order() {
        let text = r#"
admission:
- name: labels
  module: builtin:require-labels
  phases: [validating]
  failurePolicy: Ignore
  timeoutMs: 50
  fuel: 1000000
  reinvocationPolicy: IfNeeded
  config: {labels: [team]}
  rules: [{operations: [CREATE], apiGroups: ["apps"], apiVersions: ["v1"], resources: ["deployments"]}]
- webhooks: mutating
- policies: validating
"#;
        let chain = parse(text).unwrap().unwrap();
        let EntryConfig::Plugin(p) = &chain[0] else {
            panic!("plugin expected")
        };
        assert_eq!(
            (p.failure_policy, p.timeout),
            (FailurePolicy::Ignore, Duration::from_millis(50))
        );
        assert_eq!(p.config, r#"{"labels":["team"]}"#);
        assert_eq!((p.fuel, p.reinvoke_if_needed), (Some(1_000_000), true));
        assert!(matches!(chain[1], EntryConfig::Webhooks(Phase::Mutating)));
        assert!(matches!(chain[2], EntryConfig::Policies(Phase::Validating)));
    }

    #[test]
    fn the_admission_policy_entry_is_named_by_its_module() {
        let text = "admission:\n- module: builtin:mutating-admission-policy\n- module: builtin:validating-admission-policy\n";
        assert!(matches!(
            parse(text).unwrap().as_deref(),
            Some([
                EntryConfig::AdmissionPolicies(Phase::Mutating),
                EntryConfig::AdmissionPolicies(Phase::Validating)
            ])
        ));
    }

    #[test]
    fn errors_name_the_entry() {
        let bad_rule = "admission:\n- name: x\n  module: builtin:x\n  rules: [{operations: [CRATE], apiGroups: ['*'], apiVersions: ['*'], resources: ['*']}]\n";
        let e = parse(bad_rule).unwrap_err();
        assert!(
            e.starts_with("admission[0] (x): rules[0]: unsupported operation \"CRATE\""),
            "{e}"
        );
        let bad_condition = "admission:\n- name: z\n  module: builtin:z\n  matchConditions: [{name: c, expression: 'a =='}]\n";
        let e = parse(bad_condition).unwrap_err();
        assert!(
            e.starts_with("admission[0] (z): matchConditions[0].expression: Invalid value")
                && e.contains("compilation failed"),
            "{e}"
        );
        let unknown_field = "admission:\n- name: y\n  module: builtin:y\n  failurPolicy: Fail\n";
        assert!(parse(unknown_field)
            .unwrap_err()
            .contains("admission[0] (y): unknown field `failurPolicy`"));
        assert!(parse("admission:\n- webhooks: sideways\n")
            .unwrap_err()
            .contains("admission[0]: webhooks must be"));
        assert_eq!(
            parse("admission:\n- webhooks: mutating\n- policies: both\n").unwrap_err(),
            "admission[1]: policies must be \"mutating\" or \"validating\", got \"both\""
        );
    }

    #[test]
    fn default_chain_keeps_kube_order_and_ends_with_webhooks() {
        let chain = default_chain(&["service-account", "namespace-lifecycle"]).unwrap();
        let names: Vec<String> = chain
            .iter()
            .map(|e| match e {
                EntryConfig::Plugin(p) => p.name.clone(),
                EntryConfig::Webhooks(p) => format!("webhooks:{p:?}"),
                EntryConfig::Policies(p) => format!("policies:{p:?}"),
                EntryConfig::AdmissionPolicies(Phase::Mutating) => {
                    MUTATING_ADMISSION_POLICY.to_string()
                }
                EntryConfig::AdmissionPolicies(Phase::Validating) => {
                    VALIDATING_ADMISSION_POLICY.to_string()
                }
            })
            .collect();
        assert_eq!(
            names,
            [
                "namespace-lifecycle",
                "service-account",
                "policies:Mutating",
                MUTATING_ADMISSION_POLICY,
                "webhooks:Mutating",
                "policies:Validating",
                VALIDATING_ADMISSION_POLICY,
                "webhooks:Validating"
            ]
        );
    }

    /// A rule over every group and version.
    fn any_group(operations: &[&str], resources: &[&str]) -> Rule {
        in_group("*", operations, resources)
    }

    /// A rule over the core group, every version.
    fn core(operations: &[&str], resources: &[&str]) -> Rule {
        in_group("", operations, resources)
    }

    /// A rule over one group, every version.
    fn in_group(group: &str, operations: &[&str], resources: &[&str]) -> Rule {
        Rule {
            operations: operations.iter().map(|s| s.to_string()).collect(),
            api_groups: vec![group.into()],
            api_versions: vec!["*".into()],
            resources: resources.iter().map(|s| s.to_string()).collect(),
            scope: None,
        }
    }

    fn plugin(entry: &EntryConfig) -> &PluginEntry {
        match entry {
            EntryConfig::Plugin(p) => p,
            marker => panic!("{marker:?} where a plugin was expected"),
        }
    }

    /// The chain the host listed itself before the built-ins declared their
    /// rules in their manifests, plus what the plugins check and those rules
    /// left out (limit-ranger: claims; pod-security: ephemeral containers).
    #[test]
    fn default_chain_takes_phases_and_rules_from_the_manifests() {
        use Phase::{Mutating, Validating};
        let create_pods = || vec![any_group(&["CREATE"], &["pods"])];
        let expected: Vec<(&str, Vec<Phase>, Vec<Rule>)> = vec![
            (
                "namespace-lifecycle",
                vec![Mutating, Validating],
                vec![
                    any_group(&["CREATE"], &["*", "*/*"]),
                    any_group(&["DELETE"], &["namespaces"]),
                ],
            ),
            (
                "limit-ranger",
                vec![Mutating, Validating],
                vec![
                    any_group(&["CREATE"], &["pods"]),
                    any_group(&["CREATE", "UPDATE"], &["persistentvolumeclaims"]),
                ],
            ),
            ("service-account", vec![Mutating, Validating], create_pods()),
            (
                "taint-nodes-by-condition",
                vec![Mutating],
                vec![core(&["CREATE"], &["nodes"])],
            ),
            (
                "pod-security",
                vec![Validating],
                vec![any_group(
                    &["CREATE", "UPDATE"],
                    &[
                        "pods",
                        "pods/ephemeralcontainers",
                        "namespaces",
                        "deployments",
                        "replicasets",
                        "statefulsets",
                        "daemonsets",
                        "jobs",
                        "cronjobs",
                        "replicationcontrollers",
                        "podtemplates",
                    ],
                )],
            ),
            (
                "priority",
                vec![Mutating, Validating],
                vec![
                    core(&["CREATE", "UPDATE"], &["pods"]),
                    in_group(
                        "scheduling.k8s.io",
                        &["CREATE", "UPDATE"],
                        &["priorityclasses"],
                    ),
                ],
            ),
            ("default-toleration-seconds", vec![Mutating], create_pods()),
            (
                "default-storage-class",
                vec![Mutating],
                vec![any_group(&["CREATE"], &["persistentvolumeclaims"])],
            ),
            (
                "storage-object-in-use-protection",
                vec![Mutating],
                vec![core(
                    &["CREATE"],
                    &["persistentvolumes", "persistentvolumeclaims"],
                )],
            ),
            (
                "persistent-volume-claim-resize",
                vec![Validating],
                vec![core(&["UPDATE"], &["persistentvolumeclaims"])],
            ),
            (
                "runtime-class",
                vec![Mutating, Validating],
                vec![core(&["CREATE"], &["pods"])],
            ),
            (
                "default-ingress-class",
                vec![Mutating],
                vec![in_group("networking.k8s.io", &["CREATE"], &["ingresses"])],
            ),
            (
                "rbac-escalation",
                vec![Validating],
                vec![any_group(
                    &["CREATE", "UPDATE"],
                    &[
                        "roles",
                        "clusterroles",
                        "rolebindings",
                        "clusterrolebindings",
                    ],
                )],
            ),
            (
                "resource-quota",
                vec![Validating],
                vec![any_group(&["CREATE", "UPDATE"], &["*", "pods/resize"])],
            ),
        ];
        let builtins = crate::wasm::embedded::public_builtins();
        let chain = default_chain(&builtins).unwrap();
        assert_eq!(chain.len(), expected.len() + 6);
        assert!(matches!(chain[13], EntryConfig::Policies(Phase::Mutating)));
        assert!(matches!(
            chain[14],
            EntryConfig::AdmissionPolicies(Phase::Mutating)
        ));
        assert!(matches!(chain[15], EntryConfig::Webhooks(Phase::Mutating)));
        assert!(matches!(
            chain[16],
            EntryConfig::Policies(Phase::Validating)
        ));
        assert!(matches!(
            chain[17],
            EntryConfig::AdmissionPolicies(Phase::Validating)
        ));
        assert!(matches!(
            chain[18],
            EntryConfig::Webhooks(Phase::Validating)
        ));
        let plugins = chain.iter().filter(|e| matches!(e, EntryConfig::Plugin(_)));
        for (entry, (name, phases, rules)) in plugins.zip(expected) {
            let p = plugin(entry);
            assert_eq!(p.name, name);
            assert_eq!(p.module, format!("builtin:{name}"));
            assert_eq!(p.phases, phases, "{name}");
            assert_eq!(p.rules.as_ref(), Some(&rules), "{name}");
            assert_eq!(p.failure_policy, FailurePolicy::Fail, "{name}");
            let fits = crate::wasm::Limits::fit_any_object();
            let limits = (p.timeout, p.memory_bytes, p.fuel);
            assert_eq!(limits, (fits.timeout, fits.memory_bytes, None), "{name}");
            assert_eq!(p.config, "{}");
        }
    }

    #[test]
    fn a_builtin_entry_takes_what_it_leaves_out_from_the_manifest() {
        let text = r#"
admission:
- name: plain
  module: builtin:namespace-lifecycle
- name: own-rules
  module: builtin:namespace-lifecycle
  phases: [validating]
  rules: [{operations: [DELETE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
- name: user
  module: ./mine.wasm
"#;
        let chain = parse(text).unwrap().unwrap();
        let declared = manifest::builtin("namespace-lifecycle").unwrap().unwrap();
        let plain = plugin(&chain[0]);
        assert_eq!(plain.rules, declared.rules);
        assert_eq!(plain.phases, [Phase::Mutating, Phase::Validating]);
        let own = plugin(&chain[1]);
        let rules = own.rules.as_ref().unwrap();
        assert_eq!(
            (rules.len(), rules[0].resources.as_slice()),
            (1, &["configmaps".to_string()][..])
        );
        assert_eq!(own.phases, [Phase::Validating]);
        let user = plugin(&chain[2]);
        assert_eq!(
            (user.rules.as_ref(), user.phases.as_slice()),
            (None, &[Phase::Validating][..])
        );
    }

    #[test]
    fn manifest_defaults_give_way_to_the_entry() {
        let m = PluginManifest::parse(
            r#"{"name": "p", "world": "admission", "phases": ["mutating"], "failurePolicy": "Ignore", "timeoutMs": 50, "memoryMib": 8, "fuel": 9}"#,
        )
        .unwrap();
        let raw = |timeout_ms| PluginEntryConfig {
            name: "p".into(),
            module: "builtin:p".into(),
            timeout_ms,
            ..Default::default()
        };
        let e = check("e", with_manifest_defaults(raw(None), &m)).unwrap();
        assert_eq!(
            (e.failure_policy, e.timeout, e.memory_bytes, e.fuel, e.rules),
            (
                FailurePolicy::Ignore,
                Duration::from_millis(50),
                8 << 20,
                Some(9),
                None
            )
        );
        let e = check("e", with_manifest_defaults(raw(Some(70)), &m)).unwrap();
        assert_eq!(e.timeout, Duration::from_millis(70));
    }

    #[test]
    fn an_admission_entry_may_not_name_a_plugin_of_another_world() {
        let e = parse("admission:\n- name: a\n  module: builtin:x509\n").unwrap_err();
        assert_eq!(
            e,
            r#"admission[0] (a): "builtin:x509" is a plugin of the authenticator world, not an admission plugin"#
        );
    }
}
