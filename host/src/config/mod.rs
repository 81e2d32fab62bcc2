//! The server's configuration file (`capstan serve --config`, kind
//! `ServerConfiguration`): reading it, checking its apiVersion and kind,
//! and handing each section to the module that owns it — the admission
//! chain (`admission::config`), the authentication and authorization chains
//! (`auth::config`), CRD converters (`crd::conversion`) — which parses and
//! defaults its own section. Only the command line imports this module: the
//! layers below get their own section, never the whole file.

use crate::admission::{self, config::EntryConfig};
use crate::auth::config::{AuthConfig, AuthenticationSection, AuthorizationSection};
use serde::Deserialize;
use serde_json::Value;

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
    pub conversion: Vec<crate::catalogue::custom::conversion::ConverterEntry>,
}

/// Reads and checks a configuration file.
pub fn load(path: &std::path::Path) -> Result<ServerConfig, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse_file(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parses a configuration file's text.
pub fn parse_file(text: &str) -> Result<ServerConfig, String> {
    let file: FileConfig = crate::apimachinery::yaml::config_from_str(text)
        .map_err(|e| format!("configuration: {e}"))?;
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
                .map(|(i, v)| admission::config::entry(i, v))
                .collect::<Result<Vec<_>, _>>()?,
        ),
    };
    let builtins = crate::wasm::embedded::public_builtins();
    Ok(ServerConfig {
        admission,
        webhook_services: file.webhook_services.unwrap_or_default(),
        auth: crate::auth::config::parse(file.authentication, file.authorization, &builtins)?,
        conversion: crate::catalogue::custom::conversion::parse_entries(
            file.conversion.as_deref().unwrap_or_default(),
        )?,
    })
}

/// Parses a configuration file's text; `None` admission means "use the default chain".
pub fn parse(text: &str) -> Result<Option<Vec<EntryConfig>>, String> {
    parse_file(text).map(|c| c.admission)
}
