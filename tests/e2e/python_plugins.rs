//! Policies written in Python with plugin-sdk/python: componentize-py
//! 0.25.1 and pytest installed privately (`pip install --target` under the
//! target directory, on first use), the SDK's and the examples' pytest
//! tests run, and examples/python/require-labels and
//! examples/python/unique-ingress-host built into components once per run,
//! then called through `capstan plugin run` and in a real server's chain,
//! where kubectl 1.33 sees their messages. Without python3 and pip the tests
//! report themselves skipped (see toolchains.rs); with them, pip must reach
//! its index (or have the packages in its cache) or the tests fail.

use crate::policy_examples;
use crate::support::{stderr, stdout};
use crate::toolchains::available;
use serde_json::json;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

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

#[test]
fn a_python_policy_runs_offline_through_plugin_run_and_compiles_once_per_cache() {
    if !python_available(
        "a_python_policy_runs_offline_through_plugin_run_and_compiles_once_per_cache",
    ) {
        return;
    }
    let module = &components().0;
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("plugins");
    let extra = ["--plugin-cache-dir", cache.to_str().unwrap()];
    let (_, err) = policy_examples::plugin_run(module, dir.path(), "first", json!({}), &extra);
    // A fresh cache: compiled by the baseline compiler (seconds, not the
    // optimizing compiler's tens), and cached.
    assert!(
        err.contains("source=Baseline "),
        "a fresh cache compiles: {err}"
    );
    policy_examples::require_labels_answers_offline(module, &extra);
    let (_, err) = policy_examples::plugin_run(module, dir.path(), "again", json!({}), &extra);
    assert!(
        (err.contains("source=BaselineCache ") || err.contains("source=Cache "))
            && !err.contains("source=Baseline "),
        "the second run compiled: {err}"
    );
}

#[test]
fn python_policies_in_the_chain_refuse_kubectl_apply_with_their_messages() {
    let test = "python_policies_in_the_chain_refuse_kubectl_apply_with_their_messages";
    if !python_available(test) {
        return;
    }
    let (labels, hosts) = components();
    let dir = tempfile::tempdir().unwrap();
    let s = policy_examples::start_with_both(dir.path(), labels, hosts);
    policy_examples::both_refuse_kubectl_apply_with_their_messages(&s);
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
