//! Policies written in Rust with the plugin SDK: the examples under
//! examples/rust built for wasm32-wasip2 and run in a real server's chain,
//! and `capstan plugin new` scaffolds whose own tests pass.

use crate::support::{stderr, stdout, Server};
use crate::toolchains::commands_available;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

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

/// An Ingress for `host` as YAML.
fn ingress(namespace: &str, name: &str, host: &str) -> String {
    format!(
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: {name}, namespace: {namespace}}}\nspec:\n  rules:\n  - host: {host}\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}\n"
    )
}

#[test]
fn a_rust_policy_reading_the_cache_refuses_a_host_taken_a_moment_before() {
    let wasm = build_example("unique-ingress-host");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("capstan.yaml");
    let text = format!(
        "admission:\n- name: unique-ingress-host\n  module: {}\n  phases: [validating]\n  failurePolicy: Fail\n  rules: [{{operations: [CREATE, UPDATE], apiGroups: [networking.k8s.io], apiVersions: [v1], resources: [ingresses]}}]\n",
        wasm.display()
    );
    std::fs::write(&config, text).unwrap();
    let s = Server::start_within(
        &["--config", config.to_str().unwrap()],
        Duration::from_secs(120),
    );
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
    // The holder itself may be updated with its host.
    let relabelled = ingress("a", "shop", "shop.example.com")
        .replace("namespace: a}", "namespace: a, labels: {tier: web}}");
    s.ok_stdin(&["apply", "-f", "-"], &relabelled);
    assert!(s
        .fails(&["get", "ingress", "copy", "-n", "b"])
        .contains("not found"));
}

/// Runs `capstan plugin new` in `dir`; answers the project's folder.
fn plugin_new(dir: &Path, lang: &str, name: &str) -> PathBuf {
    let out = Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args(["plugin", "new", "--lang", lang, name])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("next, in it:"), "{}", stdout(&out));
    dir.join(name)
}

#[test]
fn plugin_new_scaffolds_a_rust_policy_whose_tests_pass() {
    let dir = tempfile::tempdir().unwrap();
    let project = plugin_new(dir.path(), "rust", "team-labels");
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
    let project = plugin_new(dir.path(), "ts", "team-labels");
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
        stdout(&out)
    };
    npm(&[
        "install",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        "--ignore-scripts",
    ]);
    let out = npm(&["test"]);
    assert!(
        out.contains("# fail 0") && !out.contains("# pass 0"),
        "{out}"
    );
}
