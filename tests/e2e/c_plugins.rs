//! Policies written in C with plugin-sdk/c: the examples
//! examples/c/require-labels and examples/c/unique-ingress-host unit-tested
//! natively (`make test`, after the SDK's own `make test`) and built into
//! components (`make`: wit-bindgen's bindings from plugin-sdk/wit, clang
//! with wasi-libc, `capstan plugin componentize`) once per run, then called
//! through `capstan plugin run` and in a real server's chain, where kubectl
//! 1.33 sees their messages. Without clang, wasm-ld, wasi-libc, make or a
//! native cc the tests report themselves skipped (see toolchains.rs);
//! wit-bindgen is used from PATH when it is the pinned version, else
//! installed once with cargo into a private folder of the target directory.

use crate::policy_examples;
use crate::support::{stderr, stdout};
use crate::toolchains::{available, missing_commands};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
/// The wit-bindgen-cli release whose C output the SDK is built and tested with.
const WIT_BINDGEN_VERSION: &str = "0.61.1";

/// What this machine lacks to build C plugins (empty: nothing).
fn missing_toolchain() -> Vec<String> {
    let mut missing = missing_commands(&["clang", "wasm-ld", "make", "cc"]);
    if missing.is_empty() && !links_a_reactor() {
        missing.push(
            "wasi-libc and clang's wasm32 builtins (Debian: wasi-libc libclang-rt-14-dev-wasm32)"
                .into(),
        );
    }
    missing
}

/// Whether clang links a wasm32-wasi reactor here (wasi-libc and compiler-rt present).
fn links_a_reactor() -> bool {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("probe.c");
    std::fs::write(
        &src,
        "#include <stdlib.h>\nint probe(int n) { return (int)(size_t)malloc(n); }\n",
    )
    .unwrap();
    Command::new("clang")
        .args(["--target=wasm32-wasi", "-mexec-model=reactor", "-O2"])
        .arg(&src)
        .arg("-o")
        .arg(dir.path().join("probe.wasm"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether `test` can run here (see toolchains.rs).
fn toolchain_available(test: &str) -> bool {
    available(test, &missing_toolchain())
}

/// wit-bindgen at the pinned version: the one on PATH (`.ci/run` installs it
/// into ~/.cargo/bin), else one installed by cargo into the target
/// directory on first use (several minutes, then cached).
fn wit_bindgen() -> &'static Path {
    static FOUND: OnceLock<PathBuf> = OnceLock::new();
    FOUND.get_or_init(|| {
        let pinned = |exe: &Path| {
            Command::new(exe).arg("--version").output().is_ok_and(|o| {
                stdout(&o).trim() == format!("wit-bindgen-cli {WIT_BINDGEN_VERSION}")
            })
        };
        if pinned(Path::new("wit-bindgen")) {
            return PathBuf::from("wit-bindgen");
        }
        let root = PathBuf::from(concat!(env!("CARGO_TARGET_TMPDIR"), "/wit-bindgen"));
        let exe = root.join("bin/wit-bindgen");
        if !pinned(&exe) {
            let out = Command::new(env!("CARGO"))
                .args(["install", "wit-bindgen-cli", "--locked", "--version", WIT_BINDGEN_VERSION])
                .args(["--no-default-features", "--features", "c", "--root"])
                .arg(&root)
                .env_remove("RUSTFLAGS")
                .env_remove("CARGO_ENCODED_RUSTFLAGS")
                .env_remove("CARGO_TARGET_DIR")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "cargo install wit-bindgen-cli {WIT_BINDGEN_VERSION} failed (is crates.io reachable?):\n{}",
                stderr(&out)
            );
        }
        exe
    })
}

/// Runs `make <args>` in `dir` (relative to the repository); panics with what it said.
fn make(dir: &str, args: &[&str]) -> String {
    let out = Command::new("make")
        .arg("-C")
        .arg(Path::new(REPO).join(dir))
        .args(args)
        .arg(format!("WIT_BINDGEN={}", wit_bindgen().display()))
        .arg(format!("CAPSTAN={}", env!("CARGO_BIN_EXE_capstan")))
        .output()
        .unwrap_or_else(|e| panic!("cannot run make: {e}"));
    assert!(
        out.status.success(),
        "make {} in {dir} failed:\n{}\n{}",
        args.join(" "),
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

/// Unit tests (the SDK's once, then the example's), then the component.
fn build(example: &str) -> PathBuf {
    static SDK_TESTS: OnceLock<()> = OnceLock::new();
    SDK_TESTS.get_or_init(|| {
        let out = make("plugin-sdk/c", &["test"]);
        assert!(out.contains(" passed, 0 failed"), "{out}");
    });
    let dir = format!("examples/c/{example}");
    let out = make(&dir, &["test"]);
    assert!(out.contains(" passed, 0 failed"), "{out}");
    let wasm = Path::new(REPO).join(&dir).join(format!("{example}.wasm"));
    let _ = std::fs::remove_file(&wasm);
    make(&dir, &[]);
    assert!(wasm.exists(), "make wrote no {}", wasm.display());
    wasm
}

fn require_labels() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| build("require-labels"))
}

fn unique_ingress_host() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| build("unique-ingress-host"))
}

#[test]
fn a_c_policy_runs_offline_through_plugin_run() {
    if !toolchain_available("a_c_policy_runs_offline_through_plugin_run") {
        return;
    }
    policy_examples::require_labels_answers_offline(require_labels(), &[]);
}

#[test]
fn c_policies_in_the_chain_refuse_kubectl_apply_with_their_messages() {
    if !toolchain_available("c_policies_in_the_chain_refuse_kubectl_apply_with_their_messages") {
        return;
    }
    let (labels, hosts) = std::thread::scope(|s| {
        let hosts = s.spawn(unique_ingress_host);
        (require_labels(), hosts.join().unwrap())
    });
    let dir = tempfile::tempdir().unwrap();
    let s = policy_examples::start_with_both(dir.path(), labels, hosts);
    policy_examples::both_refuse_kubectl_apply_with_their_messages(&s);
}

#[test]
fn plugin_new_scaffolds_a_c_policy_that_tests_and_builds() {
    let test = "plugin_new_scaffolds_a_c_policy_that_tests_and_builds";
    if !toolchain_available(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let project = policy_examples::plugin_new(dir.path(), "c", "team-labels");
    let project = project.to_str().unwrap();
    let out = make(project, &["test"]);
    assert!(out.contains(" passed, 0 failed"), "{out}");
    make(project, &[]);
    assert!(Path::new(project).join("team-labels.wasm").exists());
}
