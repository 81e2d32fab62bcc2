//! The heavy-load phase: `clients` connections each send, back to back, the
//! heaviest requests the limits allow while a probe on its own connection
//! times `/readyz` and a small GET, first with no load (the baseline) and
//! then under it, side by side in one run. The [`Load`] is either large
//! bodies (a create with a ~3 MB label map, one with a 1.4 MB label map
//! that is stored, a JSON patch whose copies grow an object to the 3 MiB
//! copy limit) or custom objects as costly to validate as CEL's limits
//! allow (`hostile_cel.rs`).

use super::client::Client;
use super::hostile_cel;
use super::kubeconfig::Kubeconfig;
use super::phases::Scope;
use super::stats::PhaseResult;
use anyhow::{anyhow, Result};
use bytes::Bytes;
use http::{Method, StatusCode};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the probe asks.
const PROBE_EVERY: Duration = Duration::from_millis(20);
/// How long the unloaded baseline is probed.
const BASELINE: Duration = Duration::from_secs(5);
const JSON_PATCH: &str = "application/json-patch+json";
/// The request body limit the heavy bodies stay just under.
const BODY_LIMIT: usize = 3 * 1024 * 1024;
/// The largest object the server stores (its 1.5 MiB limit), less a margin.
const STORE_LIMIT: usize = 1400 * 1024;

/// What the heavy clients send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Load {
    /// Bodies at the size limits.
    Bodies,
    /// Custom objects at CEL's cost limits.
    Cel,
}

/// Runs the baseline probe, then `clients` heavy senders of `load` for
/// `duration` with the probe beside them. Returns the probe's and the
/// senders' phases.
pub async fn run(
    scope: &Arc<Scope>,
    kc: &Kubeconfig,
    allow_h2: bool,
    (clients, load): (usize, Load),
    duration: Duration,
) -> Result<Vec<PhaseResult>> {
    let seed = format!("{}-heavy-seed", scope.prefix);
    create_seed(scope, &seed).await?;
    let installed = match load {
        Load::Cel => hostile_cel::install(&scope.client, &scope.namespace).await?,
        Load::Bodies => false,
    };
    let probe = Client::connect(kc, allow_h2).await?;
    let mut out = probe_phases(&probe, scope, &seed, "idle", 0, BASELINE).await;
    let deadline = Instant::now() + duration;
    let mut senders = Vec::new();
    for i in 0..clients {
        let client = Client::connect(kc, allow_h2).await?;
        let (scope, seed) = (scope.clone(), seed.clone());
        senders.push(tokio::spawn(async move {
            match load {
                Load::Bodies => send_heavy(&client, &scope, &seed, i, deadline).await,
                Load::Cel => send_hostile_cel(&client, &scope, i, deadline).await,
            }
        }));
    }
    out.extend(probe_phases(&probe, scope, &seed, "loaded", clients, duration).await);
    let started = Instant::now();
    let (mut latencies, mut errors, mut first_error) = (Vec::new(), 0, None);
    for sender in senders {
        if let Ok(tally) = sender.await {
            latencies.extend(tally.latencies);
            errors += tally.errors;
            first_error = first_error.or(tally.first_error);
        }
    }
    if installed {
        hostile_cel::remove(&scope.client).await;
    }
    let name = match load {
        Load::Bodies => "heavy requests",
        Load::Cel => "costly custom objects",
    };
    let mut heavy = PhaseResult::new(
        name,
        clients,
        latencies,
        errors,
        duration.max(started.elapsed()),
    );
    heavy.first_error = first_error;
    out.push(heavy);
    Ok(out)
}

async fn create_seed(scope: &Scope, name: &str) -> Result<()> {
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name}, "data": {"seed": "x".repeat(4096)}});
    let path = scope.collection_path();
    let reply = scope
        .client
        .request(Method::POST, &path, Some(Bytes::from(body.to_string())))
        .await?;
    reply.check().map(|_| ())
}

/// `/readyz` and a small GET, every [`PROBE_EVERY`] for `duration`.
async fn probe_phases(
    probe: &Client,
    scope: &Scope,
    seed: &str,
    label: &str,
    clients: usize,
    duration: Duration,
) -> Vec<PhaseResult> {
    let paths = [
        ("/readyz".to_string(), "readyz"),
        (scope.object_path(seed), "small get"),
    ];
    let mut samples: Vec<(Vec<Duration>, usize)> = vec![(Vec::new(), 0); paths.len()];
    let started = Instant::now();
    while started.elapsed() < duration {
        for ((path, _), (latencies, errors)) in paths.iter().zip(samples.iter_mut()) {
            let sent = Instant::now();
            match probe.request(Method::GET, path, None).await {
                Ok(reply) if reply.status == StatusCode::OK => latencies.push(sent.elapsed()),
                _ => *errors += 1,
            }
        }
        tokio::time::sleep(PROBE_EVERY).await;
    }
    let wall = started.elapsed();
    paths
        .iter()
        .zip(samples)
        .map(|((_, name), (latencies, errors))| {
            PhaseResult::new(
                &format!("{name} ({label})"),
                clients,
                latencies,
                errors,
                wall,
            )
        })
        .collect()
}

#[derive(Default)]
struct Tally {
    latencies: Vec<Duration>,
    errors: usize,
    first_error: Option<String>,
}

impl Tally {
    /// One request sent at `sent`: its latency, or its error.
    fn record(&mut self, sent: Instant, outcome: Result<()>) {
        match outcome {
            Ok(()) => self.latencies.push(sent.elapsed()),
            Err(e) => {
                self.errors += 1;
                self.first_error.get_or_insert(e.to_string());
            }
        }
    }
}

/// Sends heavy requests until `deadline`. The server must answer each
/// without a 5xx (stored, or refused as too large or invalid); a 5xx or a
/// broken connection counts as an error.
async fn send_heavy(
    client: &Client,
    scope: &Scope,
    seed: &str,
    who: usize,
    deadline: Instant,
) -> Tally {
    let mut tally = Tally::default();
    let over_store = label_flood(&format!("{}-flood-{who}", scope.prefix), BODY_LIMIT);
    let under_store = label_flood(&format!("{}-big-{who}", scope.prefix), STORE_LIMIT);
    let (over_store, under_store) = (Bytes::from(over_store), Bytes::from(under_store));
    let patch = Bytes::from(copy_flood());
    let mut n = 0usize;
    while Instant::now() < deadline {
        let sent = Instant::now();
        let collection = scope.collection_path();
        let reply = match n % 3 {
            0 => {
                client
                    .request(Method::POST, &collection, Some(over_store.clone()))
                    .await
            }
            // Stored the first time (then 409): the whole admission chain
            // and the strategy see a 1.4 MB object.
            1 => {
                client
                    .request(Method::POST, &collection, Some(under_store.clone()))
                    .await
            }
            _ => {
                let path = scope.object_path(seed);
                client
                    .request_as(Method::PATCH, &path, Some(patch.clone()), JSON_PATCH)
                    .await
            }
        };
        tally.record(sent, reply.and_then(refused_cleanly));
        n += 1;
    }
    tally
}

/// Sends costly custom objects until `deadline`; each must be answered
/// without a 5xx (they are refused: 422).
async fn send_hostile_cel(client: &Client, scope: &Scope, who: usize, deadline: Instant) -> Tally {
    let mut tally = Tally::default();
    let mut n = 0usize;
    while Instant::now() < deadline {
        let name = format!("{}-cel-{who}-{n}", scope.prefix);
        let sent = Instant::now();
        let reply = hostile_cel::send(client, &scope.namespace, &name).await;
        tally.record(sent, reply.and_then(refused_cleanly));
        n += 1;
    }
    tally
}

fn refused_cleanly(reply: super::client::Reply) -> Result<()> {
    if !reply.status.is_server_error() {
        Ok(())
    } else {
        Err(anyhow!("heavy request answered {}", reply.status))
    }
}

/// A ConfigMap whose labels make its JSON just under `limit` bytes.
fn label_flood(name: &str, limit: usize) -> String {
    let mut labels = serde_json::Map::new();
    let mut size = 200;
    let mut i = 0usize;
    while size < limit - 64 {
        let key = format!("k{i}");
        size += key.len() + 7; // "key":"v",
        labels.insert(key, Value::String("v".into()));
        i += 1;
    }
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}})
        .to_string()
}

/// 22 copies that each double `data` (refused at the 3 MiB copy limit).
fn copy_flood() -> String {
    let ops: Vec<Value> = (0..22)
        .map(|i| json!({"op": "copy", "from": "/data", "path": format!("/data/d{i}")}))
        .collect();
    Value::Array(ops).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heavy_bodies_stay_under_the_request_limit_but_near_it() {
        let flood = label_flood("x", BODY_LIMIT);
        assert!(
            flood.len() < BODY_LIMIT && flood.len() > BODY_LIMIT - 64 * 1024,
            "{}",
            flood.len()
        );
        let ops: Value = serde_json::from_str(&copy_flood()).unwrap();
        assert_eq!(ops.as_array().map(Vec::len), Some(22));
    }
}
