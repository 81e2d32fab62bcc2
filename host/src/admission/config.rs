//! The admission part of `capstan serve --config FILE`: an ordered list of
//! entries, each a plugin (`builtin:<name>` or a path to a component) with its
//! phases, failurePolicy, timeout, configuration and match rules, or a marker
//! `webhooks: mutating|validating` saying where the API's webhooks run.
//! Errors name the entry, so a bad file fails the start with a clear message.

use super::match_conditions::MatchConditions;
use super::matcher::{Rule, Selector};
use crate::auth::config::{AuthConfig, AuthenticationSection, AuthorizationSection};
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Mutating,
    Validating,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum FailurePolicy {
    #[default]
    Fail,
    Ignore,
}

/// A plugin entry as written in the file.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginEntryConfig {
    pub name: String,
    pub module: String,
    #[serde(default)]
    pub phases: Vec<Phase>,
    #[serde(default)]
    pub failure_policy: FailurePolicy,
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
    /// None: every request.
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

pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(300);
pub const DEFAULT_MEMORY_MIB: u64 = 64;

/// The optional apiVersion of a configuration file.
pub const CONFIG_API_VERSION: &str = "capstan.dev/v1alpha1";

/// The server configuration file: admission, authentication, authorization.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FileConfig {
    #[serde(default)]
    api_version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    admission: Option<Vec<Value>>,
    /// `namespace/name` of a webhook's Service → the URL it is reached at.
    #[serde(default)]
    webhook_services: Option<std::collections::HashMap<String, String>>,
    #[serde(default)]
    authentication: Option<AuthenticationSection>,
    #[serde(default)]
    authorization: Option<AuthorizationSection>,
    /// Converter plugins CRDs may name (`crd::conversion::config`).
    #[serde(default)]
    conversion: Option<Vec<Value>>,
}

/// The checked configuration of a server.
#[derive(Clone, Debug, Default)]
pub struct ServerConfig {
    /// None: the default chain.
    pub admission: Option<Vec<EntryConfig>>,
    pub webhook_services: std::collections::HashMap<String, String>,
    /// The authentication and authorization chains.
    pub auth: AuthConfig,
    /// The converter plugins CRDs may name.
    pub conversion: Vec<crate::crd::conversion::ConverterEntry>,
}

/// Reads and checks a configuration file.
pub fn load(path: &std::path::Path) -> Result<ServerConfig, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse_file(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parses a configuration file's text.
pub fn parse_file(text: &str) -> Result<ServerConfig, String> {
    let file: FileConfig =
        crate::yaml::config_from_str(text).map_err(|e| format!("configuration: {e}"))?;
    if let Some(kind) = file.kind.as_deref().filter(|k| *k != "ServerConfiguration") {
        return Err(format!(
            "configuration: kind must be ServerConfiguration, got {kind:?}"
        ));
    }
    if let Some(v) = file
        .api_version
        .as_deref()
        .filter(|v| *v != CONFIG_API_VERSION)
    {
        return Err(format!(
            "configuration: apiVersion must be {CONFIG_API_VERSION}, got {v:?}"
        ));
    }
    let admission = match &file.admission {
        None => None,
        Some(entries) => Some(
            entries
                .iter()
                .enumerate()
                .map(|(i, v)| entry(i, v))
                .collect::<Result<Vec<_>, _>>()?,
        ),
    };
    let builtins = super::assemble::public_builtins();
    Ok(ServerConfig {
        admission,
        webhook_services: file.webhook_services.unwrap_or_default(),
        auth: crate::auth::config::parse(file.authentication, file.authorization, &builtins)?,
        conversion: crate::crd::conversion::parse_entries(
            file.conversion.as_deref().unwrap_or_default(),
        )?,
    })
}

/// Parses a configuration file's text; `None` admission means "use the default chain".
pub fn parse(text: &str) -> Result<Option<Vec<EntryConfig>>, String> {
    parse_file(text).map(|c| c.admission)
}

fn entry(i: usize, v: &Value) -> Result<EntryConfig, String> {
    if let Some(marker) = v.get("webhooks") {
        let phase: Phase = serde_json::from_value(marker.clone()).map_err(|_| {
            format!("admission[{i}]: webhooks must be \"mutating\" or \"validating\", got {marker}")
        })?;
        return Ok(EntryConfig::Webhooks(phase));
    }
    let label = v
        .get("name")
        .and_then(Value::as_str)
        .map(|n| format!("admission[{i}] ({n})"))
        .unwrap_or(format!("admission[{i}]"));
    let raw: PluginEntryConfig =
        serde_json::from_value(v.clone()).map_err(|e| format!("{label}: {e}"))?;
    check(&label, raw).map(|e| EntryConfig::Plugin(Box::new(e)))
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
        failure_policy: raw.failure_policy,
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

/// kube-apiserver's default order of the built-in plugins we ship, with the
/// webhook markers where kube runs MutatingAdmissionWebhook and
/// ValidatingAdmissionWebhook, then ResourceQuota (last, as in kube).
/// Names missing from `available` are skipped.
/// A built-in entry of the default chain: its name, phases and default rules.
type DefaultEntry<'a> = (&'a str, &'a [Phase], Option<Vec<Rule>>);

pub fn default_chain(available: &[&str]) -> Vec<EntryConfig> {
    use Phase::{Mutating, Validating};
    let pods = || rule(&["CREATE", "UPDATE"], &["pods"]);
    let order: [DefaultEntry; 7] = [
        (
            "namespace-lifecycle",
            &[Validating],
            Some(vec![
                rule(&["CREATE"], &["*", "*/*"]),
                rule(&["DELETE"], &["namespaces"]),
            ]),
        ),
        (
            "service-account",
            &[Mutating, Validating],
            Some(vec![rule(&["CREATE"], &["pods"])]),
        ),
        (
            "default-toleration-seconds",
            &[Mutating],
            Some(vec![rule(&["CREATE"], &["pods"])]),
        ),
        ("limit-ranger", &[Mutating, Validating], Some(vec![pods()])),
        (
            "default-storage-class",
            &[Mutating],
            Some(vec![rule(&["CREATE"], &["persistentvolumeclaims"])]),
        ),
        (
            "pod-security",
            &[Validating],
            Some(vec![rule(&["CREATE", "UPDATE"], &POD_SECURITY_RESOURCES)]),
        ),
        (
            "rbac-escalation",
            &[Validating],
            Some(vec![rule(&["CREATE", "UPDATE"], &RBAC_RESOURCES)]),
        ),
    ];
    let mut out = Vec::new();
    for (name, phases, rules) in order {
        if available.contains(&name) {
            let mut entry = builtin_entry(name, phases);
            entry.rules = rules;
            out.push(EntryConfig::Plugin(Box::new(entry)));
        }
    }
    out.push(EntryConfig::Webhooks(Phase::Mutating));
    out.push(EntryConfig::Webhooks(Phase::Validating));
    if available.contains(&"resource-quota") {
        let mut quota = builtin_entry("resource-quota", &[Validating]);
        quota.rules = Some(vec![rule(&["CREATE", "UPDATE"], &["*", "pods/resize"])]);
        out.push(EntryConfig::Plugin(Box::new(quota)));
    }
    out
}

/// Roles and bindings: where RBAC escalation prevention applies.
const RBAC_RESOURCES: [&str; 4] = [
    "roles",
    "clusterroles",
    "rolebindings",
    "clusterrolebindings",
];

/// What PodSecurity admission looks at: pods, namespaces (their labels), and
/// the kinds that carry pod templates (for warnings).
const POD_SECURITY_RESOURCES: [&str; 10] = [
    "pods",
    "namespaces",
    "deployments",
    "replicasets",
    "statefulsets",
    "daemonsets",
    "jobs",
    "cronjobs",
    "replicationcontrollers",
    "podtemplates",
];

/// A rule over every group and version (what a built-in plugin looks at).
fn rule(operations: &[&str], resources: &[&str]) -> Rule {
    let all = || vec!["*".to_string()];
    Rule {
        operations: operations.iter().map(|s| s.to_string()).collect(),
        api_groups: all(),
        api_versions: all(),
        resources: resources.iter().map(|s| s.to_string()).collect(),
        scope: None,
    }
}

fn builtin_entry(name: &str, phases: &[Phase]) -> PluginEntry {
    PluginEntry {
        name: name.to_string(),
        module: format!("builtin:{name}"),
        phases: phases.to_vec(),
        failure_policy: FailurePolicy::Fail,
        timeout: DEFAULT_TIMEOUT,
        memory_bytes: (DEFAULT_MEMORY_MIB * 1024 * 1024) as usize,
        fuel: None,
        config: "{}".into(),
        rules: None,
        namespace_selector: Selector::parse(None)
            .unwrap_or_else(|_| unreachable!("an absent selector always parses")),
        object_selector: Selector::parse(None)
            .unwrap_or_else(|_| unreachable!("an absent selector always parses")),
        reinvoke_if_needed: false,
        match_conditions: MatchConditions::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }

    #[test]
    fn default_chain_keeps_kube_order_and_ends_with_webhooks() {
        let chain = default_chain(&["service-account", "namespace-lifecycle"]);
        let names: Vec<String> = chain
            .iter()
            .map(|e| match e {
                EntryConfig::Plugin(p) => p.name.clone(),
                EntryConfig::Webhooks(p) => format!("webhooks:{p:?}"),
            })
            .collect();
        assert_eq!(
            names,
            [
                "namespace-lifecycle",
                "service-account",
                "webhooks:Mutating",
                "webhooks:Validating"
            ]
        );
    }
}
