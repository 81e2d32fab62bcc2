//! Policies written in Python with plugin-sdk/python: componentize-py
//! 0.25.1 and pytest installed privately (`pip install --target` under the
//! target directory, on first use), the SDK's and the examples' pytest
//! tests run, and examples/python/require-labels and
//! examples/python/unique-ingress-host built into components once per run,
//! then called through `capstan plugin run` and in a real server's chain,
//! where kubectl 1.33 sees their messages. Without python3 and pip the tests
//! report themselves skipped (see toolchains.rs); with them, pip must reach
//! its index (or have the packages in its cache) or the tests fail.

use crate::support::{stderr, stdout, Server};
use crate::toolchains::available;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
const COMPONENTIZE_PY: &str = "componentize-py==0.25.1";
/// The private install of componentize-py and pytest.
const TOOLS: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/componentize-py-0.25.1");
/// Where the examples' components are written (not the source tree).
const BUILT: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/python-plugins");

/// Whether `test` can run: python3 with pip (else skipped by name).
fn python_available(test: &str) -> bool {
    let works = Command::new("python3")
        .args(["-m", "pip", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    let missing = if works {
        vec![]
    } else {
        vec!["python3 with pip (python3 -m pip)".to_string()]
    };
    available(test, &missing)
}

/// `python3 <args>` in `dir` with the SDK and the private tools on
/// PYTHONPATH; panics with what it said.
fn python(dir: &str, args: &[&str]) -> String {
    let path = format!("{TOOLS}:{REPO}/plugin-sdk/python");
    let out = Command::new("python3")
        .args(args)
        .current_dir(dir)
        .env("PYTHONPATH", path)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3: {e}"));
    assert!(
        out.status.success(),
        "python3 {} in {dir} failed:\n{}\n{}",
        args.join(" "),
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

/// Installs componentize-py and pytest into TOOLS unless they are there.
fn install_tools() {
    let check =
        "import importlib.metadata as m, pytest; assert m.version('componentize-py') == '0.25.1'";
    let has = Command::new("python3")
        .args(["-c", check])
        .env("PYTHONPATH", TOOLS)
        .status()
        .is_ok_and(|s| s.success());
    if has {
        return;
    }
    let out = Command::new("python3")
        .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
        .args(["--target", TOOLS, "--upgrade", COMPONENTIZE_PY, "pytest"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run pip: {e}"));
    assert!(
        out.status.success(),
        "pip install {COMPONENTIZE_PY} pytest failed (is the Python package index reachable?):\n{}",
        stderr(&out)
    );
}

/// Runs the pytest tests in `dir` (relative to the repository); asserts they passed.
fn pytest(dir: &str) {
    let dir = format!("{REPO}/{dir}");
    let out = python(&dir, &["-m", "pytest", "-q", "-p", "no:cacheprovider"]);
    assert!(out.contains(" passed"), "{out}");
}

/// Builds the example in `examples/python/<name>` (module `<module>.py`).
fn build(name: &str, module: &str) -> PathBuf {
    let wasm = PathBuf::from(format!("{BUILT}/{name}.wasm"));
    let _ = std::fs::remove_file(&wasm);
    let dir = format!("{REPO}/examples/python/{name}");
    let policy = format!("{module}.py");
    let wasm_arg = wasm.to_str().unwrap();
    let out = python(&dir, &["-m", "capstan_plugin", "build", &policy, wasm_arg]);
    assert!(
        wasm.exists(),
        "the build wrote no {}: {out}",
        wasm.display()
    );
    wasm
}

/// The two examples built into components, once per test run, after the
/// SDK's and the examples' unit tests passed: (require-labels, unique-ingress-host).
fn components() -> &'static (PathBuf, PathBuf) {
    static BUILT_ONCE: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BUILT_ONCE.get_or_init(|| {
        install_tools();
        std::fs::create_dir_all(BUILT).unwrap();
        pytest("plugin-sdk/python");
        pytest("examples/python/require-labels");
        pytest("examples/python/unique-ingress-host");
        std::thread::scope(|s| {
            let labels = s.spawn(|| build("require-labels", "require_labels"));
            let hosts = s.spawn(|| build("unique-ingress-host", "unique_ingress_host"));
            (labels.join().unwrap(), hosts.join().unwrap())
        })
    })
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

/// `capstan plugin run` on require-labels with one review and the plugin
/// cache `cache`: (stdout as JSON, stderr with the host's debug log).
fn plugin_run(cache: &Path, name: &str, labels: serde_json::Value) -> (serde_json::Value, String) {
    let path = cache.join(format!("{name}.json"));
    std::fs::write(&path, review(name, labels)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args(["plugin", "run", "--module"])
        .arg(&components().0)
        .arg("--request")
        .arg(&path)
        .arg("--plugin-cache-dir")
        .arg(cache.join("plugins"))
        .args(["--config", r#"{"labels": ["team"]}"#])
        .args(["--timeout-ms", "5000", "--memory-mib", "64"])
        .env("RUST_LOG", "capstan=debug")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let answer =
        serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
    (answer, stderr(&out))
}

#[test]
fn a_python_policy_runs_offline_through_plugin_run_and_compiles_once_per_cache() {
    if !python_available(
        "a_python_policy_runs_offline_through_plugin_run_and_compiles_once_per_cache",
    ) {
        return;
    }
    components();
    let cache = tempfile::tempdir().unwrap();
    let (answer, err) = plugin_run(cache.path(), "bare", serde_json::json!({}));
    assert!(
        err.contains("implements the admission world (capstan:plugin@0.1.0)"),
        "{err}"
    );
    assert!(
        err.contains("source=Compiled"),
        "a fresh cache compiles: {err}"
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
    let (answer, err) = plugin_run(cache.path(), "owned", serde_json::json!({"team": "a"}));
    assert_eq!(answer["response"]["allowed"], true, "{answer}");
    assert_eq!(answer["response"]["uid"], "uid-owned");
    assert!(
        err.contains("source=Cache"),
        "the second run compiled: {err}"
    );
    assert!(!err.contains("source=Compiled"), "{err}");
}

/// A server configuration with both examples in the admission chain.
fn chain_config(dir: &Path) -> PathBuf {
    let (labels, hosts) = components();
    let config = dir.join("capstan.yaml");
    let text = format!(
        r#"admission:
- name: require-labels
  module: {}
  phases: [validating]
  failurePolicy: Fail
  timeoutMs: 5000
  memoryMib: 64
  config: {{labels: [team]}}
  rules: [{{operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}}]
- name: unique-ingress-host
  module: {}
  phases: [validating]
  failurePolicy: Fail
  timeoutMs: 5000
  memoryMib: 64
  rules: [{{operations: [CREATE, UPDATE], apiGroups: [networking.k8s.io], apiVersions: [v1], resources: [ingresses]}}]
"#,
        labels.display(),
        hosts.display()
    );
    std::fs::write(&config, text).unwrap();
    config
}

fn ingress(namespace: &str, name: &str, host: &str) -> String {
    format!(
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: {name}, namespace: {namespace}}}\nspec:\n  rules:\n  - host: {host}\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}\n"
    )
}

#[test]
fn python_policies_in_the_chain_refuse_kubectl_apply_with_their_messages() {
    let test = "python_policies_in_the_chain_refuse_kubectl_apply_with_their_messages";
    if !python_available(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = chain_config(dir.path());
    // A cold plugin cache compiles the components (tens of seconds) before the server serves.
    let s = Server::start_within(
        &["--config", config.to_str().unwrap()],
        Duration::from_secs(600),
    );
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
    assert!(
        s.log().contains("rejecting settings: missing"),
        "the plugin's log line: {}",
        s.log()
    );

    for ns in ["a", "b"] {
        s.ok(&["create", "namespace", ns]);
    }
    let out = s.ok_stdin(
        &["apply", "-f", "-"],
        &ingress("a", "shop", "shop.example.com"),
    );
    assert!(
        out.contains("ingress.networking.k8s.io/shop created"),
        "{out}"
    );
    let taken = ingress("b", "shop", "shop.example.com");
    let err = stderr(&s.kubectl_stdin(&["apply", "-f", "-"], Some(&taken)));
    assert!(
        err.contains(
            r#"admission webhook "unique-ingress-host" denied the request: ingresses.networking.k8s.io "shop" is forbidden: host "shop.example.com" is already used by ingress a/shop"#
        ),
        "{err}"
    );
    assert!(s
        .fails(&["get", "ingress", "shop", "-n", "b"])
        .contains("not found"));
    let other = ingress("b", "shop", "blog.example.com");
    let out = s.ok_stdin(&["apply", "-f", "-"], &other);
    assert!(
        out.contains("ingress.networking.k8s.io/shop created"),
        "{out}"
    );
}

/// Not a check (timing is never asserted): prints the Python component's
/// size, first compile, load from the compiled-code cache (what a second
/// server start pays), first call (instantiate + call) and per-call p50/p99
/// of the require-labels deny decision, for plugin-sdk/README.md.
/// `cargo test -p capstan --test e2e python_policy_costs -- --ignored --nocapture`
#[test]
#[ignore]
fn python_policy_costs() {
    use capstan::plugins::store_reader::EmptyReader;
    use capstan::plugins::{CallContext, Limits, PluginKind, PluginRuntime};
    use std::sync::Arc;
    use std::time::Instant;
    let (wasm, _) = components();
    let bytes = std::fs::read(wasm).unwrap();
    let cache = tempfile::tempdir().unwrap();
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
    rt.block_on(async {
        let runtime = PluginRuntime::new(Some(cache.path().to_path_buf())).unwrap();
        let started = Instant::now();
        runtime
            .load("require-labels", &bytes, PluginKind::Admission)
            .unwrap();
        let compile = started.elapsed();
        let runtime = PluginRuntime::new(Some(cache.path().to_path_buf())).unwrap();
        let started = Instant::now();
        let plugin = runtime
            .load("require-labels", &bytes, PluginKind::Admission)
            .unwrap();
        let cached = started.elapsed();
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
            "python: {} KiB, compile {compile:?}, load from cache {cached:?}, first call {first:?}, call p50 {:?} p99 {:?}",
            bytes.len() / 1024,
            samples[1000],
            samples[1980]
        );
    });
}

#[test]
fn plugin_new_scaffolds_a_python_policy_whose_tests_pass() {
    let test = "plugin_new_scaffolds_a_python_policy_whose_tests_pass";
    if !python_available(test) {
        return;
    }
    install_tools();
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args(["plugin", "new", "--lang", "python", "team-labels"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("build team_labels.py team-labels.wasm"),
        "{}",
        stdout(&out)
    );
    let project = dir.path().join("team-labels");
    let out = python(
        project.to_str().unwrap(),
        &["-m", "pytest", "-q", "-p", "no:cacheprovider"],
    );
    assert!(out.contains(" passed") && !out.contains("failed"), "{out}");
}
