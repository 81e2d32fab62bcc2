//! A plugin's manifest: what a plugin declares about itself, as data. Its
//! world and, for an admission plugin, the phases it runs in and the
//! requests it looks at (webhook rules), plus optional defaults for its
//! failurePolicy and limits. Every built-in has one
//! (`plugins/builtin/<name>/capstan-plugin.json`, embedded beside its
//! component by `host/build.rs`); an admission entry `builtin:<name>` takes
//! from it what the configuration leaves out (`admission/config.rs`). The
//! format is described in `plugins/README.md`; policy bundles are meant to
//! carry the same document per policy.

use super::{embedded, PluginKind};
use crate::admission::config::{FailurePolicy, Phase};
use crate::admission::matcher::Rule;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// `capstan-plugin.json`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginManifest {
    pub name: String,
    pub world: PluginKind,
    /// Admission only: the phases it runs in.
    #[serde(default)]
    pub phases: Vec<Phase>,
    /// Admission only: the requests it looks at; None: every request.
    #[serde(default)]
    pub rules: Option<Vec<Rule>>,
    #[serde(default)]
    pub failure_policy: Option<FailurePolicy>,
    /// Per-call deadline in milliseconds.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Memory cap per instance in MiB.
    #[serde(default)]
    pub memory_mib: Option<u64>,
    /// Wasm fuel per call.
    #[serde(default)]
    pub fuel: Option<u64>,
}

impl PluginManifest {
    /// Parses and checks a manifest's text.
    pub fn parse(text: &str) -> Result<PluginManifest, String> {
        let manifest: PluginManifest = serde_json::from_str(text).map_err(|e| e.to_string())?;
        manifest.check()?;
        Ok(manifest)
    }

    fn check(&self) -> Result<(), String> {
        for (i, rule) in self.rules.iter().flatten().enumerate() {
            if let Some(p) = rule.problems().first() {
                return Err(format!("rules[{i}]: {p}"));
            }
        }
        let admission = self.world == PluginKind::Admission;
        if admission && self.phases.is_empty() {
            return Err("an admission plugin must declare its phases".into());
        }
        if !admission && (!self.phases.is_empty() || self.rules.is_some()) {
            return Err(format!(
                "phases and rules are for admission plugins, not the {} world",
                self.world.world()
            ));
        }
        Ok(())
    }
}

/// Every embedded manifest, parsed on first use.
static BUILTIN: LazyLock<BTreeMap<&'static str, Result<PluginManifest, String>>> =
    LazyLock::new(|| {
        embedded::builtin_names()
            .into_iter()
            .filter_map(|name| Some((name, parse_builtin(name, embedded::manifest_text(name)?))))
            .collect()
    });

fn parse_builtin(name: &str, text: &str) -> Result<PluginManifest, String> {
    let parsed = PluginManifest::parse(text).and_then(|m| match m.name == name {
        true => Ok(m),
        false => Err(format!("\"name\" is {:?}", m.name)),
    });
    parsed.map_err(|e| {
        let e = format!("the manifest of built-in plugin {name:?} is broken: {e}");
        tracing::error!("{e}");
        e
    })
}

/// The manifest of the built-in plugin `name`: None when it has none (a
/// sandbox test plugin, or no such built-in); an error when it is broken.
pub fn builtin(name: &str) -> Result<Option<&'static PluginManifest>, String> {
    match BUILTIN.get(name) {
        None => Ok(None),
        Some(Ok(manifest)) => Ok(Some(manifest)),
        Some(Err(e)) => Err(e.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_has_a_manifest_that_parses() {
        let builtins: Vec<_> = embedded::builtin_names()
            .into_iter()
            .filter(|n| !n.starts_with("sandbox-"))
            .collect();
        assert!(builtins.contains(&"namespace-lifecycle"), "{builtins:?}");
        for name in builtins {
            let manifest = builtin(name)
                .unwrap_or_else(|e| panic!("{e}"))
                .unwrap_or_else(|| panic!("{name} has no manifest"));
            assert_eq!(manifest.name, name);
        }
        let strategy = builtin("strategy").unwrap().unwrap();
        assert_eq!(strategy.world, PluginKind::Strategy);
        assert_eq!(builtin("sandbox-echo"), Ok(None));
        assert_eq!(builtin("no-such-plugin"), Ok(None));
    }

    #[test]
    fn broken_manifests_are_errors() {
        let cases = [
            (r#"{"name": "x"}"#, "missing field `world`"),
            (
                r#"{"name": "x", "world": "gateway"}"#,
                "unknown variant `gateway`",
            ),
            (
                r#"{"name": "x", "world": "admission", "phases": ["validating"], "rules": [{"operations": ["CRATE"]}]}"#,
                "rules[0]: unsupported operation \"CRATE\"",
            ),
            (
                r#"{"name": "x", "world": "admission"}"#,
                "must declare its phases",
            ),
            (
                r#"{"name": "x", "world": "authorizer", "phases": ["validating"]}"#,
                "not the authorizer world",
            ),
            (
                r#"{"name": "x", "world": "authorizer", "priority": 1}"#,
                "unknown field `priority`",
            ),
        ];
        for (text, expected) in cases {
            let e = PluginManifest::parse(text).unwrap_err();
            assert!(e.contains(expected), "{text}: {e}");
        }
        let e = parse_builtin("y", r#"{"name": "x", "world": "strategy"}"#).unwrap_err();
        assert_eq!(
            e,
            r#"the manifest of built-in plugin "y" is broken: "name" is "x""#
        );
    }
}
