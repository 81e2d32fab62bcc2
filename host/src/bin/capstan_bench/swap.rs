//! Swapping a policy chain under a stream of creates: while a create phase
//! runs, the named PolicyBundle (which must exist, with a policy whose
//! rules match the created objects and allow them) has its mode flipped
//! between Enforce and Warn at a fixed interval. Each flip is a new
//! generation that the server loads and swaps into its admission chain
//! while creates are in flight. The create phase's errors then count what
//! a swap failed, and the `get` phase after it reads every acknowledged
//! object back, so a create lost across a swap is an error there.
//! The swaps themselves are reported as a phase of their own.

use super::client::Client;
use super::stats::PhaseResult;
use bytes::Bytes;
use http::Method;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// A swapping task, running until [`Swapper::stop`].
pub struct Swapper {
    stop: Arc<AtomicBool>,
    task: JoinHandle<PhaseResult>,
}

const MODES: [&str; 2] = ["Warn", "Enforce"];

/// Starts flipping PolicyBundle `name` every `every`.
pub fn start(client: Client, name: String, every: Duration, concurrency: usize) -> Swapper {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let task = tokio::spawn(async move {
        let path = format!("/apis/policies.capstan.dev/v1alpha1/policybundles/{name}");
        let started = Instant::now();
        let (mut latencies, mut errors, mut first_error) = (Vec::new(), 0, None);
        for i in 0.. {
            if flag.load(Ordering::Relaxed) {
                break;
            }
            let body = format!(r#"{{"spec":{{"mode":"{}"}}}}"#, MODES[i % 2]);
            let sent = Instant::now();
            let reply = client
                .request_as(
                    Method::PATCH,
                    &path,
                    Some(Bytes::from(body)),
                    "application/merge-patch+json",
                )
                .await
                .and_then(|r| r.check());
            match reply {
                Ok(_) => latencies.push(sent.elapsed()),
                Err(e) => {
                    errors += 1;
                    first_error.get_or_insert_with(|| format!("{e:#}"));
                }
            }
            tokio::time::sleep(every).await;
        }
        let mut result =
            PhaseResult::new("swap", concurrency, latencies, errors, started.elapsed());
        result.first_error = first_error;
        result
    });
    Swapper { stop, task }
}

impl Swapper {
    /// Stops flipping; the swaps as a phase (ops: mode changes written).
    pub async fn stop(self) -> PhaseResult {
        self.stop.store(true, Ordering::Relaxed);
        match self.task.await {
            Ok(result) => result,
            Err(e) => PhaseResult::failed("swap", 0, 0, e.to_string()),
        }
    }
}
