//! The C and Go SDKs' toolchains cannot collide (issue 28): in a fresh HOME
//! and XDG_CACHE_HOME, the C SDK's README install, then the Go SDK's, then
//! the C SDK's again each leave every example built so far building, and
//! no install replaces another's tool. `tools/sdk-install-sequence.sh` does
//! it (its header tells what it checks); here it runs in its quick mode,
//! which lets the READMEs' `cargo install` lines find the pinned
//! wit-bindgens (0.61.1 for C, 0.63.0 for Go) already built in the user
//! cache, where `.ci/run` installs them: ~20 s instead of the ten minutes
//! of building both from source (run the script without
//! CAPSTAN_SEQUENCE_REUSE for that). Without those builds, the C
//! toolchain, pip or git, the test reports itself skipped (see
//! toolchains.rs).

use crate::c_plugins::links_a_reactor;
use crate::support::{stderr, stdout};
use crate::toolchains::{available, missing_commands};
use std::path::PathBuf;
use std::process::Command;

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// `${XDG_CACHE_HOME:-$HOME/.cache}/capstan/wit-bindgen-<version>/bin/wit-bindgen`.
fn pinned_wit_bindgen(version: &str) -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache")
        });
    cache.join(format!("capstan/wit-bindgen-{version}/bin/wit-bindgen"))
}

/// What this machine lacks for the quick sequence (empty: nothing).
fn missing() -> Vec<String> {
    let mut missing = missing_commands(&[
        "bash", "git", "python3", "clang", "wasm-ld", "make", "cargo",
    ]);
    let pip = Command::new("python3")
        .args(["-m", "pip", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !pip {
        missing.push("python3 with pip".into());
    }
    if missing.is_empty() && !links_a_reactor() {
        missing.push(
            "wasi-libc and clang's wasm32 builtins (Debian: wasi-libc libclang-rt-14-dev-wasm32)"
                .into(),
        );
    }
    for (version, feature) in [("0.61.1", "c"), ("0.63.0", "go")] {
        let exe = pinned_wit_bindgen(version);
        let right = Command::new(&exe)
            .arg("--version")
            .output()
            .is_ok_and(|o| stdout(&o).trim() == format!("wit-bindgen-cli {version}"));
        if !right {
            let root = exe.parent().and_then(|bin| bin.parent()).unwrap();
            missing.push(format!(
                "wit-bindgen {version} in the user cache (cargo install wit-bindgen-cli --locked \
                 --version {version} --no-default-features --features {feature} --root {}, as .ci/run does)",
                root.display()
            ));
        }
    }
    missing
}

#[test]
fn c_then_go_then_c_sdk_installs_leave_every_example_building() {
    let test = "c_then_go_then_c_sdk_installs_leave_every_example_building";
    if !available(test, &missing()) {
        return;
    }
    let out = Command::new("bash")
        .arg(format!("{REPO}/tools/sdk-install-sequence.sh"))
        .env("CAPSTAN_SEQUENCE_REUSE", "1")
        .env("CAPSTAN_BIN", env!("CARGO_BIN_EXE_capstan"))
        .output()
        .unwrap();
    let said = stdout(&out);
    let verdict = said.lines().last().unwrap_or_default();
    assert!(
        out.status.success() && verdict.starts_with("PASS: "),
        "tools/sdk-install-sequence.sh failed:\n{said}\n{}",
        stderr(&out)
    );
}
