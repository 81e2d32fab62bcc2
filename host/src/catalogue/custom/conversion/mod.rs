//! Conversion of custom resources between the versions of their CRD, as
//! kube-apiserver's apiextensions conversion (converter.go,
//! nop_converter.go, webhook_converter.go):
//!
//! - `None`: only apiVersion is rewritten;
//! - `Webhook`: a ConversionReview POSTed to the CRD's
//!   `spec.conversion.webhook.clientConfig` (`webhook.rs`);
//! - a Wasm plugin of the `converter` world, named by the CRD's annotation
//!   `conversion.capstan.dev/plugin` (strategy `None`) among the plugins the
//!   configuration lists under `conversion:` (`plugin.rs`, `config.rs`): the
//!   same ConversionReview in process.
//!
//! Both review transports are validated alike (`review.rs`, `metadata.rs`).
//! Every failure is what kube-apiserver answers for one: a 500 without a
//! reason carrying the converter's message, on reads and on writes alike
//! (kube's storage codec returns the bare error, which its handlers answer
//! as an unknown 500).
//!
//! ```ignore
//! let setup = ConversionSetup::load(&config.conversion, &config.webhook_services, &runtime, reader)?;
//! let converter = Converter::from_crd(&crd, &setup)?;
//! let stored = converter.convert(vec![object], "example.com/v2").await?;
//! ```

mod config;
mod metadata;
mod plugin;
mod review;
mod webhook;

#[cfg(test)]
mod test_server;
#[cfg(test)]
mod tests;

pub use config::{parse_entries, ConverterEntry};
pub use plugin::{ConversionSetup, ConverterPlugins, PLUGIN_ANNOTATION};

use crate::apimachinery::status::{ApiError, ApiResult};
use review::{Endpoint, ReviewVersion};
use serde_json::Value;
use std::collections::HashSet;

impl std::fmt::Debug for Converter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Converter").finish_non_exhaustive()
    }
}

/// The converter of one CRD: its valid group/versions and its strategy.
pub struct Converter {
    /// `<group>/<version>` of every version in `spec.versions`.
    versions: HashSet<String>,
    strategy: Strategy,
}

enum Strategy {
    /// Only apiVersion changes.
    None,
    /// A ConversionReview to a webhook or a plugin.
    Review {
        endpoint: Endpoint,
        version: ReviewVersion,
    },
}

impl Converter {
    /// The converter `crd` (a CustomResourceDefinition, apiextensions.k8s.io/v1)
    /// asks for. Errors say why the CRD's conversion cannot be set up (an
    /// unknown strategy or plugin, a webhook without clientConfig).
    pub fn from_crd(crd: &Value, setup: &ConversionSetup) -> Result<Converter, String> {
        let group = str_at(crd, "/spec/group");
        let versions = crd
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.get("name").and_then(Value::as_str))
            .map(|v| format!("{group}/{v}"))
            .collect();
        let strategy = match crd
            .pointer("/spec/conversion/strategy")
            .and_then(Value::as_str)
        {
            None | Some("None") => match plugin::annotated(crd) {
                None => Strategy::None,
                Some(name) => Strategy::Review {
                    endpoint: Endpoint::Plugin(setup.plugins.get(name)?),
                    version: ReviewVersion::V1,
                },
            },
            Some("Webhook") => webhook::strategy(crd, &setup.webhook_services)?,
            Some(other) => {
                let name = str_at(crd, "/metadata/name");
                return Err(format!(
                    "unknown conversion strategy {other:?} for CRD {name}"
                ));
            }
        };
        Ok(Converter { versions, strategy })
    }

    /// Objects (each with its own apiVersion) to `desired` (`group/version`),
    /// in the same order; objects already in it are left untouched (no call).
    pub async fn convert(&self, objects: Vec<Value>, desired: &str) -> ApiResult<Vec<Value>> {
        self.check_versions(&objects, desired)?;
        let pending: Vec<usize> = (0..objects.len())
            .filter(|&i| api_version(&objects[i]) != desired)
            .collect();
        match &self.strategy {
            _ if pending.is_empty() => Ok(objects),
            Strategy::None => Ok(set_api_versions(objects, &pending, desired)),
            Strategy::Review { endpoint, version } => {
                let (empty, sent): (Vec<usize>, Vec<usize>) =
                    pending.into_iter().partition(|&i| is_empty(&objects[i]));
                let objects = set_api_versions(objects, &empty, desired);
                if sent.is_empty() {
                    return Ok(objects);
                }
                let single = objects.len() == 1;
                let call = review::Call::new(*version, &objects, &sent, desired, single);
                call.run(endpoint, objects).await.map_err(ApiError::unknown)
            }
        }
    }

    /// kube's crConverter checks: the target and every source version must
    /// be one of the CRD's.
    fn check_versions(&self, objects: &[Value], desired: &str) -> ApiResult<()> {
        if !self.versions.contains(desired) {
            return Err(ApiError::unknown(format!(
                "request to convert CR to an invalid group/version: {desired}"
            )));
        }
        for (i, object) in objects.iter().enumerate() {
            let from = api_version(object);
            if self.versions.contains(from) {
                continue;
            }
            let message = if objects.len() == 1 {
                format!("request to convert CR from an invalid group/version: {from}")
            } else {
                format!("request to convert CR list failed, list index {i} has invalid group/version: {from}")
            };
            return Err(ApiError::unknown(message));
        }
        Ok(())
    }
}

/// An object with only apiVersion and kind: kube converts it without
/// calling the webhook.
fn is_empty(object: &Value) -> bool {
    object
        .as_object()
        .is_some_and(|m| m.len() == 2 && m.contains_key("apiVersion") && m.contains_key("kind"))
}

/// The None strategy (and empty objects): apiVersion rewritten, nothing else.
fn set_api_versions(mut objects: Vec<Value>, pending: &[usize], desired: &str) -> Vec<Value> {
    for &i in pending {
        if let Some(map) = objects[i].as_object_mut() {
            map.insert("apiVersion".into(), Value::String(desired.to_string()));
        }
    }
    objects
}

fn api_version(object: &Value) -> &str {
    object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn str_at<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}
