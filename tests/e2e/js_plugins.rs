//! A policy written in JavaScript with plugin-sdk/js: the example
//! examples/js/require-labels installed (`npm ci`), unit-tested (`npm
//! test`) and built into a component (`npm run build`) once per run, then
//! called through `capstan plugin run` and in a real server's chain, where
//! kubectl 1.33 sees its message. Without node and npm the tests report
//! themselves skipped (see toolchains.rs); with them, npm must reach its
//! registry (or have the packages in its cache) or the tests fail.

use crate::policy_examples;
use crate::support::{stderr, stdout};
use crate::toolchains::commands_available;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/js");

/// Runs `npm <args>` in the folder of `example`; panics with what npm said.
fn npm(example: &str, args: &[&str]) -> String {
    let out = Command::new("npm")
        .args(args)
        .current_dir(Path::new(EXAMPLES).join(example))
        .output()
        .unwrap_or_else(|e| panic!("cannot run npm (node and npm must be installed): {e}"));
    let hint = if args[0] == "ci" {
        " (npm ci needs the npm registry, or its packages in npm's cache: is the registry reachable?)"
    } else {
        ""
    };
    assert!(
        out.status.success(),
        "npm {} failed{hint}:\n{}\n{}",
        args.join(" "),
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

/// examples/js/`example` installed, unit-tested and built into a component.
fn build(example: &str) -> PathBuf {
    npm(
        example,
        &["ci", "--no-audit", "--no-fund", "--prefer-offline"],
    );
    let tests = npm(example, &["test"]);
    assert!(tests.contains("# fail 0"), "{tests}");
    let wasm = Path::new(EXAMPLES)
        .join(example)
        .join(format!("{example}.wasm"));
    let _ = std::fs::remove_file(&wasm);
    npm(example, &["run", "build"]);
    assert!(wasm.exists(), "npm run build wrote no {}", wasm.display());
    wasm
}

/// The require-labels example built, once per test run.
fn component() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| build("require-labels"))
}

/// The unique-ingress-host example built, once per test run.
fn ingress_component() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| build("unique-ingress-host"))
}

#[test]
fn a_js_policy_runs_offline_through_plugin_run() {
    if !commands_available(
        "a_js_policy_runs_offline_through_plugin_run",
        &["node", "npm"],
    ) {
        return;
    }
    policy_examples::require_labels_answers_offline(component(), &[]);
}

#[test]
fn js_policies_in_the_chain_refuse_kubectl_apply_with_their_messages() {
    let test = "js_policies_in_the_chain_refuse_kubectl_apply_with_their_messages";
    if !commands_available(test, &["node", "npm"]) {
        return;
    }
    let (labels, hosts) = std::thread::scope(|s| {
        let labels = s.spawn(component);
        let hosts = ingress_component();
        (labels.join().unwrap(), hosts)
    });
    let dir = tempfile::tempdir().unwrap();
    let s = policy_examples::start_with_both(dir.path(), labels, hosts);
    policy_examples::both_refuse_kubectl_apply_with_their_messages(&s);
}

/// A JS instance grows by about 0.3 KiB a call; the runtime recycles warm
/// instances, so 100 000 calls run within a memory limit that a single
/// instance would outgrow (9 MiB at start + 100 000 × 0.3 KiB ≈ 38 MiB).
#[test]
fn a_js_policy_survives_100_000_calls_within_its_memory_limit() {
    use capstan::wasm::EmptyReader;
    use capstan::wasm::{CallContext, Limits, PluginKind, PluginRuntime};
    use std::sync::Arc;
    let test = "a_js_policy_survives_100_000_calls_within_its_memory_limit";
    if !commands_available(test, &["node", "npm"]) {
        return;
    }
    let bytes = std::fs::read(component()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let runtime = PluginRuntime::new(Some(cache.path().to_path_buf())).unwrap();
        let plugin = runtime
            .load("require-labels", &bytes, PluginKind::Admission)
            .unwrap();
        let ctx = || CallContext {
            config: r#"{"labels": ["team"]}"#.to_string(),
            reader: Arc::new(EmptyReader),
            limits: Limits {
                timeout: Duration::from_secs(10),
                memory_bytes: 16 << 20,
                fuel: None,
            },
        };
        let input = policy_examples::review("owned", serde_json::json!({"team": "a"}));
        for call in 0..100_000 {
            let answer = plugin
                .call(&input, ctx())
                .await
                .unwrap_or_else(|e| panic!("call {call}: {e}"));
            assert!(
                answer.contains(r#""allowed":true"#),
                "call {call}: {answer}"
            );
        }
    });
}
