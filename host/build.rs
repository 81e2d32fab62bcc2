//! Build script of `capstan`: builds the guest plugins (the separate cargo
//! workspace in `plugins/`) for wasm32-wasip2 in release mode, and writes
//! `$OUT_DIR/embedded_plugins.rs`, which embeds every resulting component
//! (see `src/plugins/embedded.rs`).
//!
//! Set `CAPSTAN_SKIP_PLUGIN_BUILD=1` to embed no plugins (faster `cargo
//! check`/clippy; the binary then has no built-in plugins).

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const TARGET: &str = "wasm32-wasip2";

fn main() {
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let repo = manifest_dir
        .parent()
        .expect("host/ has a parent")
        .to_path_buf();
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    for watched in ["plugins", "plugin-sdk", "plugin-sdk/wit/capstan.wit"] {
        println!("cargo:rerun-if-changed={}", repo.join(watched).display());
    }
    println!("cargo:rerun-if-env-changed=CAPSTAN_SKIP_PLUGIN_BUILD");
    let wasm_files = if env::var_os("CAPSTAN_SKIP_PLUGIN_BUILD").is_some_and(|v| v != "0") {
        Vec::new()
    } else {
        check_target_installed();
        build_plugins(
            &repo.join("plugins/Cargo.toml"),
            &plugins_target_dir(&out_dir),
        )
    };
    write_embedded(&out_dir.join("embedded_plugins.rs"), &wasm_files);
}

/// `<target>/<profile>/build/plugins-wasm`: beside the build scripts' own
/// directories, so it survives changes of this script's hash, and separate
/// from the outer build's target directory (sharing it would deadlock on its
/// lock).
fn plugins_target_dir(out_dir: &Path) -> PathBuf {
    match out_dir.ancestors().nth(2) {
        Some(build_dir) if build_dir.ends_with("build") => build_dir.join("plugins-wasm"),
        _ => out_dir.join("plugins-wasm"),
    }
}

/// Makes sure the standard library for wasm32-wasip2 is there: rustup adds
/// the targets of rust-toolchain.toml only where it auto-installs, so when
/// the target is missing this asks rustup for it, and fails with
/// instructions only when that is impossible.
fn check_target_installed() {
    if target_installed() {
        return;
    }
    println!(
        "cargo:warning=the Rust target {TARGET} is missing; running `rustup target add {TARGET}`"
    );
    let mut rustup = Command::new("rustup");
    rustup.args(["target", "add", TARGET]);
    if let Some(toolchain) = env::var_os("RUSTUP_TOOLCHAIN") {
        rustup.arg("--toolchain").arg(toolchain);
    }
    let added = rustup.status().is_ok_and(|status| status.success());
    if !added || !target_installed() {
        panic!(
            "the Rust target {TARGET} is not installed and `rustup target add {TARGET}` failed; \
             the built-in plugins need it. Install it (rust-toolchain.toml lists it), \
             or set CAPSTAN_SKIP_PLUGIN_BUILD=1 to build without plugins."
        );
    }
}

/// Whether the active toolchain's sysroot has the standard library for TARGET.
fn target_installed() -> bool {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
    sysroot.is_some_and(|root| root.join("lib/rustlib").join(TARGET).is_dir())
}

/// Runs the nested cargo build and returns `(plugin name, wasm path)` for
/// each component it produced, sorted by name.
fn build_plugins(manifest: &Path, target_dir: &Path) -> Vec<(String, PathBuf)> {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args([
            "build",
            "--release",
            "--message-format=json-render-diagnostics",
        ])
        .args(["--target", TARGET])
        .arg("--manifest-path")
        .arg(manifest)
        .arg("--target-dir")
        .arg(target_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    // Settings meant for the host build must not leak into the guest build.
    for var in [
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_LLVM_COV",
        "CARGO_LLVM_COV_TARGET_DIR",
    ] {
        command.env_remove(var);
    }
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run cargo to build the plugins: {e}"));
    if !output.status.success() {
        panic!(
            "building the plugins ({}) for {TARGET} failed; see the errors above",
            manifest.display()
        );
    }
    let mut wasm = wasm_artifacts(&String::from_utf8_lossy(&output.stdout));
    wasm.sort();
    wasm.dedup();
    wasm
}

/// The `.wasm` files named by cargo's `compiler-artifact` messages.
fn wasm_artifacts(messages: &str) -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    for line in messages.lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-artifact" {
            continue;
        }
        let files = message["filenames"].as_array().into_iter().flatten();
        for file in files
            .filter_map(|f| f.as_str())
            .filter(|f| f.ends_with(".wasm"))
        {
            let path = PathBuf::from(file);
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            found.push((stem.replace('_', "-"), path));
        }
    }
    found
}

/// Writes the `BUILTINS` table that `src/plugins/embedded.rs` includes.
fn write_embedded(path: &Path, wasm_files: &[(String, PathBuf)]) {
    let mut code = String::from(
        "/// Generated by host/build.rs: (plugin name, component bytes), sorted by name.\n\
         static BUILTINS: &[(&str, &[u8])] = &[\n",
    );
    for (name, file) in wasm_files {
        code.push_str(&format!(
            "    ({name:?}, include_bytes!({:?})),\n",
            file.display().to_string()
        ));
    }
    code.push_str("];\n");
    std::fs::write(path, code).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}
