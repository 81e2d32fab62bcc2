//! A plugin's manifest: what a plugin declares about itself, as data. Its
//! world and, for an admission plugin, the phases it runs in and the
//! requests it looks at (webhook rules), plus optional defaults for its
//! failurePolicy and limits. Every built-in has one
//! (`plugins/builtin/<name>/capstan-plugin.json`, embedded beside its
//! component by `host/build.rs`); an admission entry `builtin:<name>` takes
//! from it what the configuration leaves out (`admission/config.rs`). The
//! format is described in `plugins/README.md`; a policy bundle carries the
//! same document per policy, beside the component it names
//! (`policy/bundles/manifest.rs`).

use super::config::{FailurePolicy, Phase};
use super::matcher::Rule;
use crate::wasm::{embedded, PluginKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// `capstan-plugin.json`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginManifest {
    pub name: String,
    pub world: PluginKind,
    /// Admission only: the phases it runs in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<Phase>,
    /// Admission only: the requests it looks at; None: every request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<Vec<Rule>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<FailurePolicy>,
    /// Per-call deadline in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Memory cap per instance in MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<u64>,
    /// Wasm fuel per call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel: Option<u64>,
    /// The shape of its settings (the configuration it reads with
    /// `host::config`): an OpenAPI v3 schema as a CRD's `openAPIV3Schema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings_schema: Option<Value>,
    /// The settings it runs with when nothing overrides them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Value>,
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
        if let Some(settings) = &self.settings {
            self.check_settings(settings)
                .map_err(|e| format!("settings: {e}"))?;
        }
        Ok(())
    }

    /// Checks `settings` against the declared settings schema (anything
    /// goes without one); the error lists every problem, kube-style
    /// (`<field>: <message>`).
    pub fn check_settings(&self, settings: &Value) -> Result<(), String> {
        let Some(schema) = &self.settings_schema else {
            return Ok(());
        };
        let compiled = crate::catalogue::custom::schema::CompiledSchema::new(schema)
            .map_err(|e| format!("settingsSchema does not compile: {e}"))?;
        let problems: Vec<String> = compiled
            .validate(settings)
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        match problems.is_empty() {
            true => Ok(()),
            false => Err(problems.join("; ")),
        }
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
            (
                r#"{"name": "x", "world": "admission", "phases": ["validating"],
                    "settingsSchema": {"type": "object", "properties": {"registries": {"type": "array", "items": {"type": "string"}}}},
                    "settings": {"registries": "ghcr.io"}}"#,
                "settings: registries: Invalid value: \"string\": registries in body must be of type array",
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
