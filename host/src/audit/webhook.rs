//! The webhook backend (`--audit-webhook-config-file`, a kubeconfig naming
//! the server and the CA it is trusted with): events batched as kube's
//! batch mode batches them, an audit.k8s.io/v1 EventList POSTed once
//! `--audit-webhook-batch-max-size` events are waiting or the oldest has
//! waited `--audit-webhook-batch-max-wait`. A bounded queue in front
//! (kube's buffer of 10 000): a full queue drops and counts the event; a
//! failed POST counts its events as errors (kube retries with backoff, we
//! try once more).

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};
use tokio::sync::mpsc::{channel, error::TrySendError, Receiver, Sender};

use super::Sink;
use crate::transport::https::HttpsWebhook;

/// kube's `--audit-webhook-batch-buffer-size` default.
const QUEUE: usize = 10_000;
/// How long one POST may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// How events are batched.
#[derive(Clone, Copy, Debug)]
pub struct Batching {
    pub max_size: usize,
    pub max_wait: Duration,
}

pub struct WebhookSink {
    queue: Sender<Arc<Value>>,
}

impl Sink for WebhookSink {
    fn send(&self, event: Arc<Value>) -> bool {
        match self.queue.try_send(event) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) | Err(TrySendError::Closed(_)) => false,
        }
    }

    fn name(&self) -> &'static str {
        "webhook"
    }
}

impl WebhookSink {
    /// The webhook of the kubeconfig at `path`; its sender task is started.
    /// `errors` counts the events a failed POST lost.
    pub fn start(
        path: &std::path::Path,
        batching: Batching,
        errors: impl Fn(u64) + Send + 'static,
    ) -> anyhow::Result<WebhookSink> {
        let config = crate::kube_client::kubeconfig::load(path, None)?;
        let ca_bundle = config
            .ca_pem
            .map(|pem| base64::engine::general_purpose::STANDARD.encode(pem));
        let hook = HttpsWebhook {
            url: Ok(config.server.to_string()),
            ca_bundle,
            timeout: TIMEOUT,
        };
        let (queue, events) = channel(QUEUE);
        tokio::spawn(send_batches(events, hook, batching, errors));
        Ok(WebhookSink { queue })
    }
}

async fn send_batches(
    mut events: Receiver<Arc<Value>>,
    hook: HttpsWebhook,
    batching: Batching,
    errors: impl Fn(u64),
) {
    let max_size = batching.max_size.max(1);
    while let Some(first) = events.recv().await {
        let mut batch = vec![first];
        let deadline = tokio::time::Instant::now() + batching.max_wait;
        while batch.len() < max_size {
            match tokio::time::timeout_at(deadline, events.recv()).await {
                Ok(Some(event)) => batch.push(event),
                Ok(None) | Err(_) => break,
            }
        }
        let list = json!({
            "kind": "EventList", "apiVersion": "audit.k8s.io/v1", "metadata": {},
            "items": batch.iter().map(|e| e.as_ref().clone()).collect::<Vec<_>>(),
        });
        let body = list.to_string();
        let mut sent = hook.post_plain(&body, 1 << 20).await;
        if sent.is_err() {
            sent = hook.post_plain(&body, 1 << 20).await;
        }
        if let Err(e) = sent {
            tracing::error!(error = %e, events = batch.len(), "could not send audit events to the webhook");
            errors(batch.len() as u64);
        }
    }
}
