//! Policies written in Rust with the plugin SDK: the examples under
//! examples/rust built for wasm32-wasip2 and run in a real server's chain,
//! and `capstan plugin new` scaffolds whose own tests pass.

use crate::policy_examples;
use crate::support::{stderr, stdout};
use crate::toolchains::commands_available;
use std::path::PathBuf;
use std::process::Command;

/// Builds examples/rust/`example` (release, wasm32-wasip2) into a target
/// folder shared by the tests; answers the component's path.
pub(crate) fn build_example(example: &str) -> PathBuf {
    let manifest = format!(
        "{}/../examples/rust/{example}/Cargo.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let target = concat!(env!("CARGO_TARGET_TMPDIR"), "/examples-wasm");
    let build = Command::new(env!("CARGO"))
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .args(["--manifest-path", &manifest, "--target-dir", target])
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap();
    assert!(build.status.success(), "{}", stderr(&build));
    let file = example.replace('-', "_");
    PathBuf::from(format!("{target}/wasm32-wasip2/release/{file}.wasm"))
}

#[test]
fn a_rust_policy_runs_offline_through_plugin_run() {
    policy_examples::require_labels_answers_offline(&build_example("require-labels"), &[]);
}

#[test]
fn rust_policies_in_the_chain_refuse_kubectl_apply_with_their_messages() {
    let (labels, hosts) = (
        build_example("require-labels"),
        build_example("unique-ingress-host"),
    );
    let dir = tempfile::tempdir().unwrap();
    let s = policy_examples::start_with_both(dir.path(), &labels, &hosts);
    policy_examples::both_refuse_kubectl_apply_with_their_messages(&s);
}

#[test]
fn plugin_new_scaffolds_a_rust_policy_whose_tests_pass() {
    let dir = tempfile::tempdir().unwrap();
    let project = policy_examples::plugin_new(dir.path(), "rust", "team-labels");
    let test = Command::new(env!("CARGO"))
        .args(["test", "--target-dir"])
        .arg(concat!(env!("CARGO_TARGET_TMPDIR"), "/scaffolds"))
        .current_dir(&project)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap();
    let out = stdout(&test);
    assert!(test.status.success(), "{out}\n{}", stderr(&test));
    assert!(out.contains("test result: ok. 3 passed"), "{out}");
}

#[test]
fn plugin_new_scaffolds_a_typescript_policy_whose_tests_pass() {
    let test = "plugin_new_scaffolds_a_typescript_policy_whose_tests_pass";
    if !commands_available(test, &["node", "npm"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let project = policy_examples::plugin_new(dir.path(), "ts", "team-labels");
    let lock = project.join("package-lock.json");
    let locked = std::fs::read(&lock).expect("the TS scaffold has a package-lock.json");
    let npm = |args: &[&str]| {
        let out = Command::new("npm")
            .args(args)
            .current_dir(&project)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "npm {args:?}: {}\n{}",
            stdout(&out),
            stderr(&out)
        );
        (stdout(&out), stderr(&out))
    };
    let (_, said) = npm(&[
        "install",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        "--ignore-scripts",
    ]);
    // The pinned tools (jco 1.34.0 among them) agree on their peers, and
    // the scaffold's lock file is the one npm keeps.
    assert!(
        !said.contains("ERESOLVE") && !said.contains("peer"),
        "npm install warned about peer dependencies:\n{said}"
    );
    assert!(
        std::fs::read(&lock).unwrap() == locked,
        "npm install rewrote the scaffold's package-lock.json"
    );
    let (out, _) = npm(&["test"]);
    assert!(
        out.contains("# fail 0") && !out.contains("# pass 0"),
        "{out}"
    );
}
