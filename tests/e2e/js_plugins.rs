//! A policy written in JavaScript with plugin-sdk/js: the example
//! examples/js/require-labels installed (`npm ci`), unit-tested (`npm
//! test`) and built into a component (`npm run build`) once per run, then
//! called through `capstan plugin run` and in a real server's chain, where
//! kubectl 1.33 sees its message. Without node and npm the tests report
//! themselves skipped (see toolchains.rs); with them, npm must reach its
//! registry (or have the packages in its cache) or the tests fail.

use crate::support::{stderr, stdout, Server};
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

/// An AdmissionReview creating ConfigMap `name` with `labels`.
fn review(name: &str, labels: serde_json::Value) -> String {
    serde_json::json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": format!("uid-{name}"),
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "name": name, "namespace": "default", "operation": "CREATE",
            "userInfo": {"username": "alice"},
            "object": {"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": name, "namespace": "default", "labels": labels}}
        }
    })
    .to_string()
}

/// `capstan plugin run` on the built component with one review: (stdout as JSON, stderr).
fn plugin_run(dir: &Path, name: &str, labels: serde_json::Value) -> (serde_json::Value, String) {
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, review(name, labels)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args(["plugin", "run", "--module"])
        .arg(component())
        .arg("--request")
        .arg(&path)
        .args([
            "--config",
            r#"{"labels": ["team"]}"#,
            "--timeout-ms",
            "5000",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let answer =
        serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
    (answer, stderr(&out))
}

#[test]
fn a_js_policy_runs_offline_through_plugin_run() {
    if !commands_available(
        "a_js_policy_runs_offline_through_plugin_run",
        &["node", "npm"],
    ) {
        return;
    }
    component();
    let dir = tempfile::tempdir().unwrap();
    let (denied, allowed) = std::thread::scope(|s| {
        let denied = s.spawn(|| plugin_run(dir.path(), "bare", serde_json::json!({})));
        let allowed = s.spawn(|| plugin_run(dir.path(), "owned", serde_json::json!({"team": "a"})));
        (denied.join().unwrap(), allowed.join().unwrap())
    });
    let (answer, err) = denied;
    assert!(
        err.contains("implements the admission world (capstan:plugin@0.1.0)"),
        "{err}"
    );
    assert!(err.contains(r#"rejecting bare: missing ["team"]"#), "{err}");
    let response = &answer["response"];
    assert_eq!(response["uid"], "uid-bare");
    assert_eq!(response["allowed"], false, "{answer}");
    assert_eq!(response["status"]["code"], 403);
    assert_eq!(response["status"]["reason"], "Forbidden");
    assert_eq!(
        response["status"]["message"],
        r#"configmaps "bare" is forbidden: missing required label(s): team"#
    );
    let (answer, _) = allowed;
    assert_eq!(answer["response"]["allowed"], true, "{answer}");
    assert_eq!(answer["response"]["uid"], "uid-owned");
}

#[test]
fn js_policies_in_the_chain_refuse_kubectl_apply_with_their_messages() {
    let test = "js_policies_in_the_chain_refuse_kubectl_apply_with_their_messages";
    if !commands_available(test, &["node", "npm"]) {
        return;
    }
    let (labels, ingresses) = std::thread::scope(|s| {
        let labels = s.spawn(component);
        let ingresses = ingress_component();
        (labels.join().unwrap(), ingresses)
    });
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("capstan.yaml");
    let text = format!(
        "admission:\n- name: require-labels\n  module: {}\n  phases: [validating]\n  failurePolicy: Fail\n  timeoutMs: 5000\n  config: {{labels: [team]}}\n  rules: [{{operations: [CREATE, UPDATE], apiGroups: [\"\"], apiVersions: [v1], resources: [configmaps]}}]\n- name: unique-ingress-host\n  module: {}\n  phases: [validating]\n  failurePolicy: Fail\n  timeoutMs: 5000\n  rules: [{{operations: [CREATE, UPDATE], apiGroups: [networking.k8s.io], apiVersions: [v1], resources: [ingresses]}}]\n",
        labels.display(),
        ingresses.display()
    );
    std::fs::write(&config, text).unwrap();
    // A cold plugin cache compiles the components (tens of seconds) before the server serves.
    let s = Server::start_within(
        &["--config", config.to_str().unwrap()],
        Duration::from_secs(600),
    );
    refuses_an_unlabelled_config_map(&s);
    refuses_a_taken_ingress_host(&s);
}

/// require-labels in the chain of `s`.
fn refuses_an_unlabelled_config_map(s: &Server) {
    let bare = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n";
    let err = stderr(&s.kubectl_stdin(&["apply", "-f", "-"], Some(bare)));
    assert!(
        err.contains(
            r#"Error from server (Forbidden): error when creating "STDIN": admission webhook "require-labels" denied the request: configmaps "settings" is forbidden: missing required label(s): team"#
        ),
        "{err}"
    );
    assert!(s
        .fails(&["get", "configmap", "settings"])
        .contains("not found"));
    let labelled = bare.replace("{name: settings}", "{name: settings, labels: {team: shop}}");
    let out = s.ok_stdin(&["apply", "-f", "-"], &labelled);
    assert!(out.contains("configmap/settings created"), "{out}");
    assert_eq!(
        s.json(&["get", "configmap", "settings"])["metadata"]["labels"]["team"],
        "shop"
    );
    assert!(
        s.log().contains("rejecting settings: missing"),
        "the plugin's log line: {}",
        s.log()
    );
}

/// unique-ingress-host in the chain of `s`: it reads the server's cache,
/// so it sees the Ingress created a moment before.
fn refuses_a_taken_ingress_host(s: &Server) {
    let ingress = |namespace: &str, name: &str, host: &str| {
        format!("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: {name}, namespace: {namespace}}}\nspec:\n  rules: [{{host: {host}}}]\n")
    };
    s.ok(&["create", "namespace", "a"]);
    s.ok(&["create", "namespace", "b"]);
    s.ok_stdin(
        &["apply", "-f", "-"],
        &ingress("a", "shop", "shop.example.com"),
    );
    let err = stderr(&s.kubectl_stdin(
        &["apply", "-f", "-"],
        Some(&ingress("b", "copy", "shop.example.com")),
    ));
    assert!(
        err.contains(r#"admission webhook "unique-ingress-host" denied the request: ingresses.networking.k8s.io "copy" is forbidden: host "shop.example.com" is already used by ingress a/shop"#),
        "{err}"
    );
    s.ok_stdin(
        &["apply", "-f", "-"],
        &ingress("b", "blog", "blog.example.com"),
    );
}

/// A JS instance grows by about 0.3 KiB a call; the runtime recycles warm
/// instances, so 100 000 calls run within a memory limit that a single
/// instance would outgrow (9 MiB at start + 100 000 × 0.3 KiB ≈ 38 MiB).
#[test]
fn a_js_policy_survives_100_000_calls_within_its_memory_limit() {
    use capstan::plugins::store_reader::EmptyReader;
    use capstan::plugins::{CallContext, Limits, PluginKind, PluginRuntime};
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
        let input = review("owned", serde_json::json!({"team": "a"}));
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

/// Not a check (timing is never asserted): prints the JS component's size,
/// first compile, first call (instantiate + call) and per-call p50/p99
/// next to the Rust example's, for plugin-sdk/README.md.
/// `cargo test -p capstan --test e2e js_policy_costs -- --ignored --nocapture`
#[test]
#[ignore]
fn js_policy_costs() {
    use capstan::plugins::store_reader::EmptyReader;
    use capstan::plugins::{CallContext, Limits, PluginKind, PluginRuntime};
    use std::sync::Arc;
    use std::time::Instant;
    let rust = crate::rust_plugins::build_example("require-labels");
    let ctx = || CallContext {
        config: r#"{"labels": ["team"]}"#.to_string(),
        reader: Arc::new(EmptyReader),
        limits: Limits {
            timeout: Duration::from_secs(10),
            memory_bytes: 64 << 20,
            fuel: None,
        },
    };
    let input = review("bare", serde_json::json!({}));
    let rt = tokio::runtime::Runtime::new().unwrap();
    for (lang, path) in [("js", component().to_path_buf()), ("rust", rust)] {
        let bytes = std::fs::read(&path).unwrap();
        rt.block_on(async {
            let runtime = PluginRuntime::new(None).unwrap();
            let started = Instant::now();
            let plugin = runtime
                .load("require-labels", &bytes, PluginKind::Admission)
                .unwrap();
            let compile = started.elapsed();
            let started = Instant::now();
            plugin.call(&input, ctx()).await.unwrap();
            let first = started.elapsed();
            let mut samples: Vec<Duration> = Vec::new();
            for _ in 0..2000 {
                let started = Instant::now();
                plugin.call(&input, ctx()).await.unwrap();
                samples.push(started.elapsed());
            }
            samples.sort();
            println!(
                "{lang}: {} KiB, compile {compile:?}, first call {first:?}, call p50 {:?} p99 {:?}",
                bytes.len() / 1024,
                samples[1000],
                samples[1980]
            );
        });
    }
}
