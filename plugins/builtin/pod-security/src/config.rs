//! The plugin's configuration (defaults and exemptions) and the policy a
//! namespace's labels select.

use std::collections::BTreeMap;

use capstan_plugin_sdk::{object, AdmissionRequest, Value};
use serde::Deserialize;

use crate::checks;

/// `{"defaults": {...}, "exemptions": {...}}`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub defaults: Defaults,
    #[serde(default)]
    pub exemptions: Exemptions,
}

/// Levels for namespaces without labels.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    #[serde(default = "privileged")]
    pub enforce: String,
    #[serde(default = "privileged")]
    pub warn: String,
    #[serde(default = "privileged")]
    pub audit: String,
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults {
            enforce: privileged(),
            warn: privileged(),
            audit: privileged(),
        }
    }
}

fn privileged() -> String {
    "privileged".to_string()
}

/// Requests never checked.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Exemptions {
    #[serde(default)]
    pub usernames: Vec<String>,
    #[serde(default)]
    pub namespaces: Vec<String>,
    #[serde(default)]
    pub runtime_classes: Vec<String>,
}

impl Config {
    /// Why the request is exempt (kube's `exempt` audit annotation: user,
    /// namespace or runtimeClass), if it is.
    pub fn exemption(&self, req: &AdmissionRequest, spec: &Value) -> Option<&'static str> {
        let e = &self.exemptions;
        let runtime_class = object::get_str(spec, &["runtimeClassName"]).unwrap_or("");
        if e.usernames.contains(&req.user_info.username) {
            Some("user")
        } else if e.namespaces.contains(&req.namespace) {
            Some("namespace")
        } else if !runtime_class.is_empty() && e.runtime_classes.iter().any(|r| r == runtime_class)
        {
            Some("runtimeClass")
        } else {
            None
        }
    }
}

/// A level and version, e.g. restricted:latest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub level: String,
    pub version: String,
}

impl Policy {
    /// From `pod-security.kubernetes.io/<mode>[-version]`; an unknown level
    /// means restricted (kube fails closed), no label means `default`.
    pub fn from_labels(labels: &BTreeMap<String, String>, mode: &str, default: &str) -> Policy {
        let key = format!("pod-security.kubernetes.io/{mode}");
        let level = labels.get(&key).map(String::as_str).unwrap_or(default);
        let level = match level {
            "privileged" | "baseline" | "restricted" => level,
            _ => "restricted",
        };
        let version = labels
            .get(&format!("{key}-version"))
            .cloned()
            .unwrap_or_else(|| "latest".to_string());
        Policy {
            level: level.to_string(),
            version,
        }
    }

    /// `restricted:latest`.
    pub fn label(&self) -> String {
        format!("{}:{}", self.level, self.version)
    }

    /// The failed checks as kube lists them, None when the spec passes.
    pub fn check(&self, spec: &Value) -> Option<String> {
        if self.level == "privileged" {
            return None;
        }
        let violations = checks::evaluate(spec, self.level == "restricted");
        if violations.is_empty() {
            return None;
        }
        let parts: Vec<String> = violations
            .iter()
            .map(|(reason, detail)| format!("{reason} ({detail})"))
            .collect();
        Some(parts.join(", "))
    }
}
