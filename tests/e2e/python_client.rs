//! The official Python client (`kubernetes` from PyPI) against the real binary.

use crate::support::{stderr, stdout, Server};
use std::process::Command;

/// A PYTHONPATH where `import kubernetes` works: the system's, or a private
/// install under the target directory made on first use.
pub(crate) fn python_path() -> String {
    let private = concat!(env!("CARGO_TARGET_TMPDIR"), "/pydeps");
    let has = |path: &str| {
        Command::new("python3")
            .args(["-c", "import kubernetes"])
            .env("PYTHONPATH", path)
            .status()
            .is_ok_and(|s| s.success())
    };
    if has(private) {
        return private.to_string();
    }
    let status = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "--target",
            private,
            "kubernetes",
        ])
        .status()
        .expect("python3 -m pip");
    assert!(
        status.success() && has(private),
        "could not install the Python kubernetes client"
    );
    private.to_string()
}

#[test]
fn python_kubernetes_client_flow() {
    run_script(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/e2e/python/client_flow.py"
    ));
}

#[test]
fn python_custom_objects_flow() {
    run_script(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/e2e/python/custom_objects.py"
    ));
}

/// Runs a client script against a fresh server; it prints "ok" when every check passed.
fn run_script(script: &str) {
    let s = Server::start();
    let out = Command::new("python3")
        .arg(script)
        .arg(s.kubeconfig())
        .env("PYTHONPATH", python_path())
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "python client flow failed:\n{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(stdout(&out).trim(), "ok");
}
