//! How an authenticator or authorizer entry is reached: a Wasm plugin or an
//! HTTPS webhook, both sent the same review (TokenReview,
//! SubjectAccessReview) and answering it with `status` set.

use crate::transport::https::HttpsWebhook;
use crate::wasm::{CallContext, Limits, ObjectReader, Plugin};
use serde_json::Value;
use std::sync::Arc;

pub enum ReviewTransport {
    Wasm {
        plugin: Plugin,
        config: String,
        reader: Arc<dyn ObjectReader>,
        limits: Limits,
    },
    Webhook(HttpsWebhook),
}

impl ReviewTransport {
    /// Sends `review` and returns the answer, which must be a JSON object.
    pub async fn call(&self, review: &Value) -> Result<Value, String> {
        let text = review.to_string();
        let answer = match self {
            ReviewTransport::Wasm {
                plugin,
                config,
                reader,
                limits,
            } => {
                let ctx = CallContext {
                    config: config.clone(),
                    reader: reader.clone(),
                    limits: limits.clone(),
                };
                plugin.call(&text, ctx).await.map_err(|f| f.to_string())?
            }
            ReviewTransport::Webhook(webhook) => webhook.post(&text).await?,
        };
        match serde_json::from_str::<Value>(&answer) {
            Ok(v) if v.is_object() => Ok(v),
            _ => Err("the answer is not a JSON object".to_string()),
        }
    }
}

/// A named entry of the authentication or authorization chain.
pub struct Entry {
    pub name: String,
    pub transport: ReviewTransport,
}
