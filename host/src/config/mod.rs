//! The server's configuration file (`capstan serve --config`, kind
//! `ServerConfiguration`): reading it, checking its apiVersion and kind,
//! and handing each section to the module that owns it — the admission
//! chain (`admission::config`), the authentication and authorization chains
//! (`auth::config`), CRD converters (`catalogue::custom::conversion`) — which parses and
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
    /// Converter plugins CRDs may name (`catalogue::custom::conversion::config`).
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

/// Why a configuration file was refused; its text names the file, the
/// section and the entry, as the start's error shows it.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    // (`cause`, not `source`: the text already says it, and anyhow would
    // print it a second time as the cause.)
    #[error("cannot read {}: {cause}", path.display())]
    Read {
        path: std::path::PathBuf,
        cause: std::io::Error,
    },
    #[error("{}: {error}", path.display())]
    InFile {
        path: std::path::PathBuf,
        error: Box<ConfigError>,
    },
    /// Not YAML, or not the file's shape (an unknown field, a wrong type).
    #[error("configuration: {0}")]
    Syntax(String),
    #[error("configuration: kind must be ServerConfiguration, got {0:?}")]
    Kind(String),
    #[error("configuration: apiVersion must be {CONFIG_API_VERSION}, got {0:?}")]
    ApiVersion(String),
    /// A section its owner refused (`admission[2] (name): ...`,
    /// `authentication...`, `conversion[0] ...`).
    #[error("{0}")]
    Section(String),
}

/// Reads and checks a configuration file.
pub fn load(path: &std::path::Path) -> Result<ServerConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|cause| ConfigError::Read {
        path: path.to_path_buf(),
        cause,
    })?;
    parse_file(&text).map_err(|error| ConfigError::InFile {
        path: path.to_path_buf(),
        error: Box::new(error),
    })
}

/// Parses a configuration file's text.
pub fn parse_file(text: &str) -> Result<ServerConfig, ConfigError> {
    let file: FileConfig = crate::apimachinery::yaml::config_from_str(text)
        .map_err(|e| ConfigError::Syntax(e.to_string()))?;
    if let Some(kind) = file.kind.filter(|k| k != "ServerConfiguration") {
        return Err(ConfigError::Kind(kind));
    }
    if let Some(v) = file.api_version.filter(|v| v != CONFIG_API_VERSION) {
        return Err(ConfigError::ApiVersion(v));
    }
    let admission = match &file.admission {
        None => None,
        Some(entries) => Some(
            entries
                .iter()
                .enumerate()
                .map(|(i, v)| admission::config::entry(i, v))
                .collect::<Result<Vec<_>, _>>()
                .map_err(ConfigError::Section)?,
        ),
    };
    let builtins = crate::wasm::embedded::public_builtins();
    let auth = crate::auth::config::parse(file.authentication, file.authorization, &builtins);
    let conversion = file.conversion.as_deref().unwrap_or_default();
    Ok(ServerConfig {
        admission,
        webhook_services: file.webhook_services.unwrap_or_default(),
        auth: auth.map_err(ConfigError::Section)?,
        conversion: crate::catalogue::custom::conversion::parse_entries(conversion)
            .map_err(ConfigError::Section)?,
    })
}

/// Parses a configuration file's text; `None` admission means "use the default chain".
pub fn parse(text: &str) -> Result<Option<Vec<EntryConfig>>, ConfigError> {
    parse_file(text).map(|c| c.admission)
}
