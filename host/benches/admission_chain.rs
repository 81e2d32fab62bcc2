//! Added latency per request of admission, in process and side by side in
//! one run: (a) one trivial Wasm plugin (deny-service-external-ips, with
//! rules that reach ConfigMaps, so it is called and admits at once), the same
//! entry with its own rules (Services only: never called for a ConfigMap),
//! (b) the default chain of built-ins and, alone, the two of them a
//! ConfigMap create reaches, (c) the same trivial logic as an HTTPS webhook
//! on loopback (registered through a ValidatingWebhookConfiguration, as a
//! user would). The store is SQLite behind the watch cache, as the server
//! runs it. Each figure is the p50 and p99 of mutate + validate for one
//! ConfigMap create: the empty chain is printed as the baseline.
//! `cargo bench --bench admission_chain`.

// A benchmark: a failed assumption fails the run, so unwrapping is fine here
// (the server itself never unwraps; see the workspace lints).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/admission.rs"]
mod admission;

use admission::{chain_of, config_map, register_webhook, start_webhook, state, time};
use capstan::wasm::PluginRuntime;
use serde_json::{json, Value};
use std::time::Duration;

/// The trivial webhook: admits everything but Services with externalIPs.
fn no_external_ips(request: &Value) -> Value {
    let allowed = request["object"]["spec"]["externalIPs"]
        .as_array()
        .is_none_or(|a| a.is_empty());
    json!({"allowed": allowed})
}

/// Rules that make the trivial plugin see ConfigMap creates (the webhook's).
const TRIVIAL_RULES: &str = ", rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [configmaps, services]}]";

/// A chain of the trivial plugin with `rules` ("": its manifest's).
fn trivial(rules: &str) -> String {
    format!("admission:\n- {{name: trivial, module: 'builtin:deny-service-external-ips', phases: [validating]{rules}}}")
}

/// A chain of one built-in with its manifest's phases and rules.
fn alone(name: &str) -> String {
    format!("admission:\n- {{name: {name}, module: 'builtin:{name}'}}")
}

fn print(label: &str, (p50, p99): (Duration, Duration), base: Duration) {
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "| {label} | {:.0} | {:.0} | {:.0} |",
        us(p50),
        us(p99),
        us(p50) - us(base)
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let dir = tempfile::tempdir().expect("temp dir");
        let state = state(dir.path()).await;
        let cm = config_map(json!({}));
        let runtime = PluginRuntime::new(Some(dir.path().join("cache"))).expect("runtime");
        let none = chain_of(&state, &runtime, Some("admission: []"));
        let one = chain_of(&state, &runtime, Some(&trivial(TRIVIAL_RULES)));
        let unmatched = chain_of(&state, &runtime, Some(&trivial("")));
        let default = chain_of(&state, &runtime, None);
        let lifecycle = chain_of(&state, &runtime, Some(&alone("namespace-lifecycle")));
        let quota = chain_of(&state, &runtime, Some(&alone("resource-quota")));
        let base = time(&none, &cm, true).await;
        println!("| admission | p50 µs | p99 µs | added p50 µs |\n|---|---|---|---|");
        print("none", base, base.0);
        let wasm = time(&one, &cm, true).await;
        print("(a) one trivial Wasm plugin", wasm, base.0);
        print(
            "(a) the same, rules not matching",
            time(&unmatched, &cm, true).await,
            base.0,
        );
        print("(b) default chain", time(&default, &cm, true).await, base.0);
        print(
            "(b) namespace-lifecycle alone",
            time(&lifecycle, &cm, true).await,
            base.0,
        );
        print(
            "(b) resource-quota alone",
            time(&quota, &cm, true).await,
            base.0,
        );
        let (url, ca) = start_webhook(no_external_ips).await;
        register_webhook(&state, &url, &ca, &["configmaps", "services"]).await;
        let webhook = chain_of(&state, &runtime, Some("admission:\n- webhooks: validating"));
        let https = time(&webhook, &cm, true).await;
        print("(c) trivial HTTPS webhook", https, base.0);
        let added = |d: Duration| (d.as_secs_f64() - base.0.as_secs_f64()).max(1e-7);
        println!(
            "\n(c) / (a), added p50: {:.1}×",
            added(https.0) / added(wasm.0)
        );
    });
}
