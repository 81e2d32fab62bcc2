//! Build script of `capstan`: builds the guest plugins (the separate cargo
//! workspace in `plugins/`) for wasm32-wasip2 in release mode, and writes
//! `$OUT_DIR/embedded_plugins.rs`, which embeds every resulting component
//! and, beside it, the plugin's manifest (`capstan-plugin.json` next to its
//! crate's Cargo.toml; see `src/wasm/embedded.rs` and
//! `src/admission/manifest.rs`). Every built-in (`plugins/builtin/*`) must
//! have one, naming the plugin; a missing or unreadable one fails the build.
//!
//! Set `CAPSTAN_SKIP_PLUGIN_BUILD=1` to embed no plugins (faster `cargo
//! check`/clippy; the binary then has no built-in plugins).

// A build script reports a broken build environment by panicking: cargo
// shows the message. (The rest of the host never unwraps; see Cargo.toml.)
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const TARGET: &str = "wasm32-wasip2";

/// The binary's ~90,000 relative relocations packed (DT_RELR, glibc 2.36,
/// binutils 2.38; an older linker ignores the option with a warning): the
/// loader reads 2.2 MB less at every start, and that much less stays
/// resident.
fn pack_relative_relocations() {
    let linux_gnu = env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux")
        && env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|e| e == "gnu");
    if linux_gnu {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// The functions a start runs placed together at the front of the text, in
/// release builds for the target whose default linker is LLD
/// (`link/start-functions.txt`, written by `tools/start-order.sh`): spread
/// over the binary, they made most of its text resident, since the kernel
/// maps the 64 KiB around each page a process first touches. A name the
/// binary lacks (a stale file) is skipped, and only orders less.
fn order_start_functions(manifest_dir: &Path) {
    let file = manifest_dir.join("link/start-functions.txt");
    println!("cargo:rerun-if-changed={}", file.display());
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER");
    let release = env::var("PROFILE").is_ok_and(|p| p == "release");
    let lld_default = env::var("TARGET").is_ok_and(|t| t == "x86_64-unknown-linux-gnu");
    let other_linker = env::var("CARGO_ENCODED_RUSTFLAGS").is_ok_and(|f| f.contains("linker"))
        || env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_some();
    if release && lld_default && !other_linker && file.is_file() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            file.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

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
    pack_relative_relocations();
    order_start_functions(&manifest_dir);
    let built = if env::var_os("CAPSTAN_SKIP_PLUGIN_BUILD").is_some_and(|v| v != "0") {
        Vec::new()
    } else {
        check_target_installed();
        build_plugins(
            &repo.join("plugins/Cargo.toml"),
            &plugins_target_dir(&out_dir),
        )
    };
    // The sandbox test plugins (`plugins/sandbox/*`: a loop, a trap, an
    // unbounded allocation, ...) are embedded only into test builds (the
    // `sandbox-plugins` feature, which the package's dev-dependency on
    // itself turns on), never into a binary users run.
    let sandbox = env::var_os("CARGO_FEATURE_SANDBOX_PLUGINS").is_some();
    let embedded: Vec<Built> = built
        .into_iter()
        .filter(|b| sandbox || !b.name.starts_with("sandbox-"))
        .collect();
    write_embedded(&out_dir.join("embedded_plugins.rs"), &embedded);
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

/// One component the plugins build produced.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Built {
    /// The crate name with `-`, e.g. "namespace-lifecycle".
    name: String,
    wasm: PathBuf,
    /// Its `capstan-plugin.json`, when the crate has one.
    manifest: Option<PathBuf>,
}

/// The name of a plugin manifest, beside the plugin crate's Cargo.toml.
const PLUGIN_MANIFEST: &str = "capstan-plugin.json";

/// Runs the nested cargo build and returns each component it produced,
/// sorted by name.
fn build_plugins(manifest: &Path, target_dir: &Path) -> Vec<Built> {
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

/// The `.wasm` files named by cargo's `compiler-artifact` messages, each
/// with its crate's plugin manifest.
fn wasm_artifacts(messages: &str) -> Vec<Built> {
    let mut found = Vec::new();
    for line in messages.lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-artifact" {
            continue;
        }
        let crate_dir = message["manifest_path"]
            .as_str()
            .and_then(|p| Path::new(p).parent())
            .map(Path::to_path_buf);
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
            let name = stem.replace('_', "-");
            let manifest = crate_dir.as_deref().and_then(|d| plugin_manifest(d, &name));
            found.push(Built {
                name,
                wasm: path,
                manifest,
            });
        }
    }
    found
}

/// The manifest in `crate_dir`, checked enough that a broken one fails the
/// build: JSON naming the plugin `name` and its world (the host reads the
/// rest, and its unit tests parse every embedded manifest fully). A crate
/// under `plugins/builtin/` must have one.
fn plugin_manifest(crate_dir: &Path, name: &str) -> Option<PathBuf> {
    let path = crate_dir.join(PLUGIN_MANIFEST);
    if !path.exists() {
        let builtin = crate_dir.parent().is_some_and(|p| p.ends_with("builtin"));
        assert!(
            !builtin,
            "built-in plugin {name:?} has no {}",
            path.display()
        );
        return None;
    }
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let value: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    assert_eq!(
        value["name"].as_str(),
        Some(name),
        "{}: \"name\" must be the crate's name",
        path.display()
    );
    assert!(
        value["world"].is_string(),
        "{}: \"world\" is missing",
        path.display()
    );
    Some(path)
}

/// The SHA-256 of the file at `path`.
fn sha256_of(path: &Path) -> [u8; 32] {
    use sha2::Digest;
    let bytes =
        std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    sha2::Sha256::digest(&bytes).into()
}

/// Writes the `BUILTINS` table that `src/wasm/embedded.rs` includes.
fn write_embedded(path: &Path, built: &[Built]) {
    // The manifests, read at every start, are one text: placed between the
    // components, each one's read made 64 KiB of components resident.
    let mut manifests = String::new();
    let mut code = String::from(
        "/// Generated by host/build.rs: (plugin name, component bytes, the range\n\
         /// of its manifest JSON in MANIFESTS when the plugin has one, SHA-256 of\n\
         /// the component), sorted by name.\n\
         static BUILTINS: &[Builtin] = &[\n",
    );
    for Built {
        name,
        wasm,
        manifest,
    } in built
    {
        let manifest = match manifest {
            Some(file) => {
                let start = manifests.len();
                manifests.push_str(
                    &std::fs::read_to_string(file)
                        .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display())),
                );
                format!("Some({start}..{})", manifests.len())
            }
            None => "None".to_string(),
        };
        code.push_str(&format!(
            "    Builtin {{ name: {name:?}, wasm: include_bytes!({:?}), manifest: {manifest}, sha256: {:?} }},\n",
            wasm.display().to_string(),
            sha256_of(wasm),
        ));
    }
    code.push_str("];\n");
    let manifests_path = path.with_file_name("plugin_manifests.json");
    for (file, text) in [(path, code.as_str()), (&manifests_path, manifests.as_str())] {
        std::fs::write(file, text)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", file.display()));
    }
}
