//! Built-in APIs kube-apiserver serves only when asked, and how to ask:
//! `--feature-gates` (`Name=true,...`) turns a feature on and
//! `--runtime-config` (`group/version=true,...`, or `api/alpha`,
//! `api/beta`, `api/all`) serves an API version that is off by default.
//! As in kube 1.34, MutatingAdmissionPolicy needs both: the gate
//! `MutatingAdmissionPolicy` and `admissionregistration.k8s.io/v1beta1`
//! (or `/v1alpha1`). Every replica must be started with the same flags.

use std::collections::BTreeMap;

/// The features Capstan implements; every other gate of kube-apiserver
/// 1.32 (`kube-feature-gates.txt`) is accepted and has no effect.
pub const IMPLEMENTED: &[&str] = &["MutatingAdmissionPolicy", "APIServerTracing"];

/// kube-apiserver 1.32's gates: name → (default, locked to it: GA).
fn kube_gates() -> &'static BTreeMap<&'static str, (bool, bool)> {
    static GATES: std::sync::OnceLock<BTreeMap<&'static str, (bool, bool)>> =
        std::sync::OnceLock::new();
    GATES.get_or_init(|| {
        include_str!("kube-feature-gates.txt")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut fields = l.split_whitespace();
                let (name, default, stage) = (fields.next()?, fields.next()?, fields.next()?);
                Some((name, (default == "true", stage == "GA")))
            })
            .collect()
    })
}

/// The group-versions that are served only when `--runtime-config` asks.
pub const GATED_VERSIONS: &[(&str, &str)] = &[
    ("admissionregistration.k8s.io", "v1beta1"),
    ("admissionregistration.k8s.io", "v1alpha1"),
];

/// The parsed flags.
#[derive(Debug, Clone, Default)]
pub struct ApiGates {
    features: BTreeMap<String, bool>,
    /// `group/version` or `api/all|alpha|beta` → enabled.
    runtime: BTreeMap<String, bool>,
}

impl ApiGates {
    /// `--feature-gates` and `--runtime-config` items, each `key=bool`
    /// (a runtime-config key alone means true), as kube reads them.
    pub fn parse(feature_gates: &[String], runtime_config: &[String]) -> Result<ApiGates, String> {
        let mut gates = ApiGates::default();
        for item in feature_gates.iter().filter(|i| !i.trim().is_empty()) {
            let (name, value) = item
                .split_once('=')
                .ok_or_else(|| format!("--feature-gates: missing bool value for {item}"))?;
            let name = name.trim();
            let name = name.strip_prefix("kube:").unwrap_or(name);
            let Some((_, locked)) = kube_gates().get(name) else {
                return Err(format!(
                    "--feature-gates: unrecognized feature gate: {name}"
                ));
            };
            let value = parse_bool(value)
                .ok_or_else(|| format!("--feature-gates: invalid value of {name}: {value}"))?;
            if *locked && !value {
                return Err(format!("--feature-gates: cannot set feature gate {name} to false, feature is locked to true"));
            }
            gates.features.insert(name.to_string(), value);
        }
        for item in runtime_config.iter().filter(|i| !i.trim().is_empty()) {
            let (key, value) = item.split_once('=').unwrap_or((item.as_str(), "true"));
            let key = key.trim().trim_end_matches('/');
            let known = matches!(key, "api/all" | "api/alpha" | "api/beta")
                || GATED_VERSIONS
                    .iter()
                    .any(|(g, v)| format!("{g}/{v}") == key);
            if !known {
                let names: Vec<String> = GATED_VERSIONS
                    .iter()
                    .map(|(g, v)| format!("{g}/{v}"))
                    .collect();
                return Err(format!(
                    "--runtime-config: {key}: Capstan turns on only {}, api/alpha, api/beta and api/all",
                    names.join(", ")
                ));
            }
            let value = parse_bool(value)
                .ok_or_else(|| format!("--runtime-config: invalid value of {key}: {value}"))?;
            gates.runtime.insert(key.to_string(), value);
        }
        Ok(gates)
    }

    /// Whether feature `name` is on (as set, else kube's default).
    pub fn feature(&self, name: &str) -> bool {
        let default = kube_gates().get(name).map(|(d, _)| *d);
        self.features
            .get(name)
            .copied()
            .unwrap_or(default.unwrap_or(false))
    }

    /// The gates set that Capstan accepts but does not implement.
    pub fn without_effect(&self) -> Vec<&str> {
        self.features
            .keys()
            .map(String::as_str)
            .filter(|name| !IMPLEMENTED.contains(name))
            .collect()
    }

    /// Whether `--runtime-config` turns on the gated `group/version`: its
    /// own key, else `api/alpha` or `api/beta` by its level, else `api/all`.
    fn version_on(&self, group: &str, version: &str) -> bool {
        let level = if version.contains("alpha") {
            "api/alpha"
        } else {
            "api/beta"
        };
        [
            format!("{group}/{version}"),
            level.to_string(),
            "api/all".into(),
        ]
        .iter()
        .find_map(|k| self.runtime.get(k).copied())
        .unwrap_or(false)
    }

    /// Whether the MutatingAdmissionPolicy kinds are served at `version`.
    pub fn serves(&self, group: &str, version: &str) -> bool {
        self.feature("MutatingAdmissionPolicy")
            && GATED_VERSIONS.contains(&(group, version))
            && self.version_on(group, version)
    }
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.trim() {
        "true" | "True" | "TRUE" | "t" | "T" | "1" => Some(true),
        "false" | "False" | "FALSE" | "f" | "F" | "0" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gates(features: &[&str], runtime: &[&str]) -> Result<ApiGates, String> {
        let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        ApiGates::parse(&strings(features), &strings(runtime))
    }

    #[test]
    fn mutating_admission_policies_need_the_gate_and_the_version() {
        let g = "admissionregistration.k8s.io";
        let none = gates(&[], &[]).unwrap();
        assert!(!none.serves(g, "v1beta1"));
        let gate_only = gates(&["MutatingAdmissionPolicy=true"], &[]).unwrap();
        assert!(!gate_only.serves(g, "v1beta1"));
        let both = gates(
            &["MutatingAdmissionPolicy=true"],
            &[&format!("{g}/v1beta1=true")],
        )
        .unwrap();
        assert!(both.serves(g, "v1beta1") && !both.serves(g, "v1alpha1"));
        let all = gates(&["MutatingAdmissionPolicy=true"], &["api/all=true"]).unwrap();
        assert!(all.serves(g, "v1beta1") && all.serves(g, "v1alpha1"));
        let beta = gates(&["MutatingAdmissionPolicy=true"], &["api/beta"]).unwrap();
        assert!(beta.serves(g, "v1beta1") && !beta.serves(g, "v1alpha1"));
    }

    #[test]
    fn kube_s_other_gates_are_accepted_without_effect_and_defaults_are_kube_s() {
        let g = gates(
            &[
                "kube:InPlacePodVerticalScaling=true",
                "APIServerTracing=false",
            ],
            &[],
        )
        .unwrap();
        assert_eq!(g.without_effect(), ["InPlacePodVerticalScaling"]);
        assert!(!g.feature("APIServerTracing"));
        assert!(gates(&[], &[]).unwrap().feature("APIServerTracing"));
    }

    #[test]
    fn unknown_names_and_values_are_refused() {
        assert_eq!(
            gates(&["NoSuchGate=true"], &[]).unwrap_err(),
            "--feature-gates: unrecognized feature gate: NoSuchGate"
        );
        assert!(gates(&["MutatingAdmissionPolicy=maybe"], &[]).is_err());
        assert_eq!(
            gates(&["WatchBookmark=false"], &[]).unwrap_err(),
            "--feature-gates: cannot set feature gate WatchBookmark to false, feature is locked to true"
        );
        assert!(gates(&[], &["apps/v1beta1=true"])
            .unwrap_err()
            .contains("apps/v1beta1"));
    }
}
