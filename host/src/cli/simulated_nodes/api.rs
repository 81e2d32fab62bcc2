//! The simulator's connection to the API server: JSON in and out, opened
//! again after a transport error (a restarted server, a dropped HTTP/2
//! connection).

use crate::kube_client::{Client, Kubeconfig};
use anyhow::{bail, Result};
use bytes::Bytes;
use http::{Method, StatusCode};
use serde_json::Value;
use tokio::sync::Mutex;

pub const MERGE_PATCH: &str = "application/merge-patch+json";
pub const JSON: &str = "application/json";

pub struct Api {
    kc: Kubeconfig,
    client: Mutex<Option<Client>>,
}

impl Api {
    pub fn new(kc: Kubeconfig) -> Api {
        Api {
            kc,
            client: Mutex::new(None),
        }
    }

    /// The object at `path`; None when it does not exist.
    pub async fn get(&self, path: &str) -> Result<Option<Value>> {
        match self.call(Method::GET, path, None, JSON).await? {
            (StatusCode::NOT_FOUND, _) => Ok(None),
            (code, body) if code.is_success() => Ok(Some(body)),
            (code, body) => bail!("GET {path}: {code}: {}", message(&body)),
        }
    }

    /// Sends `body`; the answer when it is a success, else an error naming
    /// the Status (`allowed` codes count as success too).
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: &Value,
        content_type: &'static str,
        allowed: &[StatusCode],
    ) -> Result<Value> {
        let what = format!("{method} {path}");
        let bytes = Bytes::from(serde_json::to_vec(body)?);
        match self.call(method, path, Some(bytes), content_type).await? {
            (code, body) if code.is_success() || allowed.contains(&code) => Ok(body),
            (code, body) => bail!("{what}: {code}: {}", message(&body)),
        }
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Bytes>,
        content_type: &'static str,
    ) -> Result<(StatusCode, Value)> {
        let mut slot = self.client.lock().await;
        let client = match slot.as_ref() {
            Some(client) => client.clone(),
            None => slot.insert(Client::connect(&self.kc, true).await?).clone(),
        };
        drop(slot);
        match client.request_as(method, path, body, content_type).await {
            Ok(reply) => {
                let value = serde_json::from_slice(&reply.body).unwrap_or(Value::Null);
                Ok((reply.status, value))
            }
            Err(e) => {
                *self.client.lock().await = None;
                Err(e)
            }
        }
    }
}

/// The message of a Status answer.
fn message(body: &Value) -> String {
    body["message"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| body.to_string().chars().take(200).collect())
}
