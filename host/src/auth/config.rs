//! The `authentication` and `authorization` parts of the configuration file:
//!
//! ```yaml
//! authentication:
//!   anonymous: true                  # requests without credentials are system:anonymous
//!   authenticators:                  # in order; the first that recognises the credentials wins
//!   - {name: x509, module: "builtin:x509"}
//!   - {name: tokens, module: "builtin:static-token", tokenFile: /etc/capstan/tokens.csv}
//!   - {name: sso, webhook: {url: "https://sso.example:8443/review", caBundle: <base64 PEM>}}
//! authorization:
//!   authorizers:                     # in order; the first allow or deny decides
//!   - {name: rbac, module: "builtin:rbac"}
//! ```
//!
//! Without a section, kube-apiserver's defaults: anonymous on; x509,
//! service-account tokens, bootstrap tokens; RBAC.

use crate::wasm::{DEFAULT_MEMORY_MIB, DEFAULT_TIMEOUT};
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;

/// Where an entry's answer comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    Module {
        module: String,
        config: Value,
    },
    Webhook {
        url: String,
        ca_bundle: Option<String>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct AuthEntry {
    pub name: String,
    pub source: Source,
    pub timeout: Duration,
    pub memory_bytes: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AuthConfig {
    pub anonymous: bool,
    pub authenticators: Vec<AuthEntry>,
    pub authorizers: Vec<AuthEntry>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuthenticationSection {
    #[serde(default)]
    anonymous: Option<bool>,
    #[serde(default)]
    authenticators: Option<Vec<RawEntry>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuthorizationSection {
    #[serde(default)]
    authorizers: Option<Vec<RawEntry>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawEntry {
    name: String,
    #[serde(default)]
    module: Option<String>,
    #[serde(default)]
    webhook: Option<RawWebhook>,
    #[serde(default)]
    config: Option<Value>,
    /// For `builtin:static-token`: a kube-apiserver token file (CSV).
    #[serde(default)]
    token_file: Option<String>,
    #[serde(default)]
    timeout_ms: Option<u64>,
    #[serde(default)]
    memory_mib: Option<u64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawWebhook {
    url: String,
    #[serde(default)]
    ca_bundle: Option<String>,
}

const DEFAULT_AUTHENTICATORS: [&str; 3] = ["x509", "service-account-token", "bootstrap-token"];
const DEFAULT_AUTHORIZERS: [&str; 1] = ["rbac"];

impl Default for AuthConfig {
    /// kube-apiserver's defaults, from the plugins this binary embeds.
    fn default() -> Self {
        let builtins = crate::wasm::embedded::public_builtins();
        AuthConfig {
            anonymous: true,
            authenticators: defaults(&DEFAULT_AUTHENTICATORS, &builtins),
            authorizers: defaults(&DEFAULT_AUTHORIZERS, &builtins),
        }
    }
}

fn defaults(names: &[&str], builtins: &[&str]) -> Vec<AuthEntry> {
    names
        .iter()
        .filter(|d| builtins.contains(d))
        .map(|d| builtin_entry(d))
        .collect()
}

/// Checks both sections (either may be absent); `builtins` are the embedded
/// plugin names, from which the defaults are taken.
pub fn parse(
    authn: Option<AuthenticationSection>,
    authz: Option<AuthorizationSection>,
    builtins: &[&str],
) -> Result<AuthConfig, String> {
    let authn = authn.unwrap_or_default();
    let authz = authz.unwrap_or_default();
    Ok(AuthConfig {
        anonymous: authn.anonymous.unwrap_or(true),
        authenticators: entries(
            "authentication",
            authn.authenticators,
            &DEFAULT_AUTHENTICATORS,
            builtins,
        )?,
        authorizers: entries(
            "authorization",
            authz.authorizers,
            &DEFAULT_AUTHORIZERS,
            builtins,
        )?,
    })
}

fn entries(
    section: &str,
    raw: Option<Vec<RawEntry>>,
    defaults: &[&str],
    builtins: &[&str],
) -> Result<Vec<AuthEntry>, String> {
    let Some(raw) = raw else {
        return Ok(self::defaults(defaults, builtins));
    };
    raw.into_iter()
        .enumerate()
        .map(|(i, e)| entry(&format!("{section}[{i}] ({})", e.name), e))
        .collect()
}

fn builtin_entry(name: &str) -> AuthEntry {
    AuthEntry {
        name: name.to_string(),
        source: Source::Module {
            module: format!("builtin:{name}"),
            config: Value::Object(Default::default()),
        },
        timeout: DEFAULT_TIMEOUT,
        memory_bytes: (DEFAULT_MEMORY_MIB << 20) as usize,
    }
}

fn entry(label: &str, raw: RawEntry) -> Result<AuthEntry, String> {
    if raw.name.trim().is_empty() {
        return Err(format!("{label}: name must not be empty"));
    }
    let source = match (raw.module, raw.webhook) {
        (Some(module), None) => Source::Module {
            module,
            config: module_config(label, raw.config, raw.token_file.as_deref())?,
        },
        (None, Some(w)) => Source::Webhook {
            url: w.url,
            ca_bundle: w.ca_bundle,
        },
        _ => return Err(format!("{label}: give exactly one of module or webhook")),
    };
    Ok(AuthEntry {
        name: raw.name,
        source,
        timeout: raw
            .timeout_ms
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_TIMEOUT),
        memory_bytes: (raw.memory_mib.unwrap_or(DEFAULT_MEMORY_MIB) << 20) as usize,
    })
}

/// The entry's configuration, with a token file's contents as `csv`.
fn module_config(
    label: &str,
    config: Option<Value>,
    token_file: Option<&str>,
) -> Result<Value, String> {
    let mut config = config.unwrap_or(Value::Object(Default::default()));
    if let Some(path) = token_file {
        let csv = std::fs::read_to_string(path)
            .map_err(|e| format!("{label}: cannot read tokenFile {path:?}: {e}"))?;
        match config.as_object_mut() {
            Some(map) => map.insert("csv".into(), Value::String(csv)),
            None => return Err(format!("{label}: config must be an object")),
        };
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section<T: serde::de::DeserializeOwned>(yaml: &str) -> T {
        crate::apimachinery::yaml::config_from_str(yaml).unwrap()
    }

    #[test]
    fn defaults_are_the_embedded_ones_in_kube_order() {
        let c = parse(None, None, &["rbac", "x509", "bootstrap-token"]).unwrap();
        assert!(c.anonymous);
        let names: Vec<_> = c.authenticators.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["x509", "bootstrap-token"]);
        assert_eq!(c.authorizers[0].name, "rbac");
    }

    #[test]
    fn entries_take_a_module_or_a_webhook_and_token_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tokens.csv");
        std::fs::write(&file, "t0k3n,alice,1\n").unwrap();
        let authn: AuthenticationSection = section(&format!(
            "anonymous: false\nauthenticators:\n- {{name: t, module: 'builtin:static-token', tokenFile: {}}}\n- {{name: w, webhook: {{url: 'https://x'}}}}",
            file.display()
        ));
        let c = parse(Some(authn), None, &[]).unwrap();
        assert!(!c.anonymous);
        match &c.authenticators[0].source {
            Source::Module { config, .. } => assert_eq!(config["csv"], "t0k3n,alice,1\n"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(c.authenticators[1].source, Source::Webhook { .. }));
        assert!(c.authorizers.is_empty());
    }

    #[test]
    fn bad_entries_name_themselves() {
        let both: AuthorizationSection = section(
            "authorizers:\n- {name: x, module: 'builtin:rbac', webhook: {url: 'https://x'}}",
        );
        let err = parse(None, Some(both), &[]).unwrap_err();
        assert_eq!(
            err,
            "authorization[0] (x): give exactly one of module or webhook"
        );
        let missing: AuthenticationSection = section(
            "authenticators:\n- {name: t, module: 'builtin:static-token', tokenFile: /nope}",
        );
        assert!(parse(Some(missing), None, &[])
            .unwrap_err()
            .contains("cannot read tokenFile"));
    }
}
