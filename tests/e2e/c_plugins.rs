//! Policies written in C with plugin-sdk/c: the examples
//! examples/c/require-labels and examples/c/unique-ingress-host unit-tested
//! natively (`make test`, after the SDK's own `make test`) and built into
//! components (`make`: wit-bindgen's bindings from plugin-sdk/wit, clang
//! with wasi-libc, `capstan plugin componentize`) once per run, then called
//! through `capstan plugin run` and in a real server's chain, where kubectl
//! 1.33 sees their messages. Without clang, wasm-ld, wasi-libc, make or a
//! native cc the tests report themselves skipped (see toolchains.rs);
//! wit-bindgen is the pinned one plugin.mk finds in its version's folder of
//! the user cache (where the SDK's README and `.ci/run` install it), else
//! one installed once with cargo into a private folder of the target
//! directory and passed as WIT_BINDGEN. The last test shows that plugin.mk
//! takes no other wit-bindgen (PATH's, an exported WIT_BINDGEN: the Go
//! SDK's 0.63) and names each missing tool with the command that gets it.

use crate::policy_examples;
use crate::support::{stderr, stdout};
use crate::toolchains::{available, commands_available, missing_commands};
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
pub(crate) fn links_a_reactor() -> bool {
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

/// `${XDG_CACHE_HOME:-$HOME/.cache}`, as plugin.mk reads it.
fn user_cache() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache")
        })
}

/// The wit-bindgen to pass as WIT_BINDGEN: None when plugin.mk's own, the
/// pinned version in the user cache (`.ci/run` installs it there), is
/// installed; else one installed by cargo into the target directory on
/// first use (several minutes, then cached).
fn wit_bindgen() -> Option<&'static Path> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOUND.get_or_init(|| {
        let pinned = |exe: &Path| {
            Command::new(exe).arg("--version").output().is_ok_and(|o| {
                stdout(&o).trim() == format!("wit-bindgen-cli {WIT_BINDGEN_VERSION}")
            })
        };
        let cached = user_cache().join(format!(
            "capstan/wit-bindgen-{WIT_BINDGEN_VERSION}/bin/wit-bindgen"
        ));
        if pinned(&cached) {
            return None;
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
        Some(exe)
    })
    .as_deref()
}

/// Runs `make <args>` in `dir` (relative to the repository); panics with what it said.
fn make(dir: &str, args: &[&str]) -> String {
    let mut make = Command::new("make");
    make.arg("-C").arg(Path::new(REPO).join(dir)).args(args);
    if let Some(wit_bindgen) = wit_bindgen() {
        make.arg(format!("WIT_BINDGEN={}", wit_bindgen.display()));
    }
    let out = make
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

/// Writes an executable `wit-bindgen` into `dir` that says it is `version`
/// and, asked for bindings, records its arguments in `dir/called` and fails.
fn fake_wit_bindgen(dir: &Path, version: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    let exe = dir.join("wit-bindgen");
    let called = dir.join("called");
    std::fs::write(
        &exe,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo wit-bindgen-cli {version}; exit 0; fi\n\
             echo \"$@\" > '{}'\nexit 3\n",
            called.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    exe
}

/// The C SDK's wit-bindgen is the one of its version's folder of the user
/// cache, so the Go SDK's (0.63, on PATH or exported as WIT_BINDGEN, as
/// issue 28 found it after following both READMEs) can never be taken for
/// it; a missing or wrong one, a missing clang, wasi-libc or capstan, each
/// stops the build with the command that gets it, all of them at once before
/// the first compile. Only make runs: the tools are fakes.
#[test]
fn the_c_sdk_takes_only_its_own_wit_bindgen_and_names_what_is_missing() {
    if !commands_available(
        "the_c_sdk_takes_only_its_own_wit_bindgen_and_names_what_is_missing",
        &["make"],
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("policy");
    std::fs::create_dir_all(&project).unwrap();
    let sdk = Path::new(REPO).join("plugin-sdk/c").canonicalize().unwrap();
    std::fs::write(
        project.join("Makefile"),
        format!(
            "PLUGIN := policy\nSOURCES :=\nTESTS :=\ninclude {}/plugin.mk\n",
            sdk.display()
        ),
    )
    .unwrap();
    let cache = dir.path().join("cache");
    let go_sdks = fake_wit_bindgen(&dir.path().join("go-bin"), "0.63.0");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![go_sdks.parent().unwrap().to_path_buf()];
    paths.extend(std::env::split_paths(&path));
    let make = |args: &[&str]| {
        let out = Command::new("make")
            .arg("-C")
            .arg(&project)
            .args(args)
            .env("XDG_CACHE_HOME", &cache)
            .env("PATH", std::env::join_paths(&paths).unwrap())
            .env("WIT_BINDGEN", &go_sdks)
            .output()
            .unwrap();
        assert!(!out.status.success(), "make {args:?} succeeded");
        stderr(&out)
    };
    let root = cache.join(format!("capstan/wit-bindgen-{WIT_BINDGEN_VERSION}"));
    let own = root.join("bin/wit-bindgen");
    let install = format!(
        "  cargo install wit-bindgen-cli --locked --version {WIT_BINDGEN_VERSION} \
         --no-default-features --features c --root {}\n",
        root.display()
    );
    let bindings = "build/bindings/admission.h";

    // Not installed: PATH's and the exported one are not taken.
    let said = make(&[bindings]);
    assert!(
        said.contains(&format!(
            "capstan C SDK: wit-bindgen {WIT_BINDGEN_VERSION} is missing (no {}).\n",
            own.display()
        )),
        "{said}"
    );
    assert!(said.contains(&install), "{said}");
    assert!(!go_sdks.parent().unwrap().join("called").exists());
    // Before the first compile, every missing tool is named at once.
    let said = make(&["build/wasm/.toolchain", "CAPSTAN=/nonexistent/capstan"]);
    assert!(
        said.contains(&format!(
            "capstan C SDK: wit-bindgen {WIT_BINDGEN_VERSION} is missing"
        )) && said.contains(
            "capstan C SDK: capstan is missing (no /nonexistent/capstan here or on PATH)"
        ),
        "{said}"
    );

    // Another version in its place: refused, with the same command.
    fake_wit_bindgen(&root.join("bin"), "0.63.0");
    let said = make(&[bindings]);
    assert!(
        said.contains(&format!(
            "capstan C SDK: {} is wit-bindgen-cli 0.63.0; this SDK needs wit-bindgen-cli {WIT_BINDGEN_VERSION}.\n",
            own.display()
        )),
        "{said}"
    );
    assert!(said.contains(&install), "{said}");
    assert!(!root.join("bin/called").exists());

    // The pinned version: it is the one that generates the bindings.
    fake_wit_bindgen(&root.join("bin"), WIT_BINDGEN_VERSION);
    make(&[bindings]);
    let called = std::fs::read_to_string(root.join("bin/called")).unwrap();
    assert!(
        called.starts_with("c ") && called.contains("--world admission --out-dir build/bindings"),
        "{called}"
    );
    assert!(!go_sdks.parent().unwrap().join("called").exists());

    // clang and capstan, each named with how to get it.
    let said = make(&["build/wasm/.toolchain", "WASM_CC=/nonexistent/clang"]);
    assert!(
        said.contains("capstan C SDK: /nonexistent/clang is missing")
            && said
                .contains("  sudo apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32\n"),
        "{said}"
    );
    // A clang without wasi-libc, its wasm32 builtins and wasm-ld: each named, with its package.
    let bare_clang = dir.path().join("bare-clang");
    std::fs::write(
        &bare_clang,
        "#!/bin/sh\nfor a; do case \"$a\" in\n\
         -dumpversion) echo 14.0.6;;\n\
         -print-file-name=*) echo libc.a;;\n\
         -print-libgcc-file-name) echo /nonexistent/libclang_rt.builtins-wasm32.a;;\n\
         -print-prog-name=*) echo /nonexistent/wasm-ld;;\n\
         esac; done\n",
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bare_clang, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let said = make(&[
        "build/wasm/.toolchain",
        &format!("WASM_CC={}", bare_clang.display()),
    ]);
    assert!(
        said.contains(&format!(
            "capstan C SDK: {} cannot link for wasm32-wasi here; missing: wasi-libc (no libc.a for wasm32-wasi), \
             clang's wasm32 builtins (no /nonexistent/libclang_rt.builtins-wasm32.a), \
             the wasm-ld linker (no /nonexistent/wasm-ld).\n",
            bare_clang.display()
        )) && said.contains("  sudo apt-get install wasi-libc libclang-rt-14-dev-wasm32 lld\n"),
        "{said}"
    );
    // -o: the core module counts as made, so only the componentize step runs.
    let said = make(&[
        "-o",
        "build/policy.core.wasm",
        "policy.wasm",
        "CAPSTAN=/nonexistent/capstan",
    ]);
    let repo = Path::new(REPO).canonicalize().unwrap();
    assert!(
        said.contains(
            "capstan C SDK: capstan is missing (no /nonexistent/capstan here or on PATH)"
        ) && said.contains(&format!(
            "  cargo build --release --bin capstan --manifest-path {}/Cargo.toml\n",
            repo.display()
        )),
        "{said}"
    );
}
