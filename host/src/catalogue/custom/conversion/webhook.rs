//! The Webhook strategy: the CRD's `spec.conversion.webhook` (clientConfig
//! resolved as admission webhooks' are, caBundle-only trust) and the
//! ConversionReview version it speaks.

use super::review::{Endpoint, ReviewVersion};
use super::Strategy;
use crate::transport::https::{client_config_url, HttpsWebhook};
use serde_json::Value;
use std::collections::HashMap;
use std::time::Duration;

/// kube's conversion webhook client timeout.
const TIMEOUT: Duration = Duration::from_secs(30);

pub(super) fn strategy(
    crd: &Value,
    services: &HashMap<String, String>,
) -> Result<Strategy, String> {
    if super::plugin::annotated(crd).is_some() {
        return Err(format!(
            "{}: a converter plugin needs spec.conversion.strategy None, not Webhook",
            super::PLUGIN_ANNOTATION
        ));
    }
    let webhook = crd
        .pointer("/spec/conversion/webhook")
        .filter(|w| w.is_object())
        .ok_or("spec.conversion.webhook is required when strategy is Webhook")?;
    let client = webhook
        .get("clientConfig")
        .filter(|c| c.is_object())
        .ok_or("spec.conversion.webhook.clientConfig is required when strategy is Webhook")?;
    let review_versions = webhook
        .get("conversionReviewVersions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    let version = ReviewVersion::first_supported(review_versions)
        .ok_or("no supported conversion review versions")?;
    let hook = HttpsWebhook {
        url: client_config_url(client, services),
        ca_bundle: client
            .get("caBundle")
            .and_then(Value::as_str)
            .map(String::from),
        timeout: TIMEOUT,
    };
    Ok(Strategy::Review {
        endpoint: Endpoint::Webhook(hook),
        version,
    })
}
