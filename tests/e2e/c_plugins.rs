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

use crate::support::{stderr, stdout, Server};
use crate::toolchains::{available, missing_commands};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

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

/// `capstan plugin run` of require-labels with one review: (stdout as JSON, stderr).
fn plugin_run(dir: &Path, name: &str, labels: serde_json::Value) -> (serde_json::Value, String) {
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, review(name, labels)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args(["plugin", "run", "--module"])
        .arg(require_labels())
        .arg("--request")
        .arg(&path)
        .args([
            "--config",
            r#"{"labels": ["team"]}"#,
            "--timeout-ms",
            "5000",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let answer =
        serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
    (answer, stderr(&out))
}

#[test]
fn a_c_policy_runs_offline_through_plugin_run() {
    if !toolchain_available("a_c_policy_runs_offline_through_plugin_run") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (answer, err) = plugin_run(dir.path(), "bare", serde_json::json!({}));
    assert!(
        err.contains("implements the admission world (capstan:plugin@0.1.0)"),
        "{err}"
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
    assert_eq!(
        response["status"]["details"],
        serde_json::json!({"name": "bare", "group": "", "kind": "configmaps"})
    );
    let (answer, _) = plugin_run(dir.path(), "owned", serde_json::json!({"team": "a"}));
    assert_eq!(answer["response"]["allowed"], true, "{answer}");
    assert_eq!(answer["response"]["uid"], "uid-owned");
}

/// An Ingress `name` in `namespace` routing `host` to a Service.
fn ingress(namespace: &str, name: &str, host: &str) -> String {
    format!(
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: {name}, namespace: {namespace}}}\n\
         spec:\n  rules:\n  - host: {host}\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, \
         backend: {{service: {{name: {name}, port: {{number: 80}}}}}}}}\n"
    )
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
    let config = dir.path().join("capstan.yaml");
    let text = format!(
        "admission:\n\
         - name: require-labels\n  module: {}\n  phases: [validating]\n  failurePolicy: Fail\n  timeoutMs: 5000\n  config: {{labels: [team]}}\n  rules: [{{operations: [CREATE, UPDATE], apiGroups: [\"\"], apiVersions: [v1], resources: [configmaps]}}]\n\
         - name: unique-ingress-host\n  module: {}\n  phases: [validating]\n  failurePolicy: Fail\n  timeoutMs: 5000\n  rules: [{{operations: [CREATE, UPDATE], apiGroups: [networking.k8s.io], apiVersions: [v1], resources: [ingresses]}}]\n",
        labels.display(),
        hosts.display()
    );
    std::fs::write(&config, text).unwrap();
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
        s.log().contains(r#"rejecting settings: missing ["team"]"#),
        "the plugin's log line: {}",
        s.log()
    );

    s.ok(&["create", "namespace", "a"]);
    s.ok(&["create", "namespace", "b"]);
    let out = s.ok_stdin(
        &["apply", "-f", "-"],
        &ingress("a", "shop", "shop.example.com"),
    );
    assert!(
        out.contains("ingress.networking.k8s.io/shop created"),
        "{out}"
    );
    let err = stderr(&s.kubectl_stdin(
        &["apply", "-f", "-"],
        Some(&ingress("b", "shop", "shop.example.com")),
    ));
    assert!(
        err.contains(
            r#"admission webhook "unique-ingress-host" denied the request: ingresses.networking.k8s.io "shop" is forbidden: host "shop.example.com" is already used by ingress a/shop"#
        ),
        "{err}"
    );
    assert!(s
        .fails(&["get", "ingress", "shop", "-n", "b"])
        .contains("not found"));
    let out = s.ok_stdin(
        &["apply", "-f", "-"],
        &ingress("b", "shop", "books.example.com"),
    );
    assert!(
        out.contains("ingress.networking.k8s.io/shop created"),
        "{out}"
    );
}

/// Not a check (timing is never asserted): prints the C component's size,
/// first compile, first call (instantiate + call) and per-call p50/p99 of
/// the require-labels deny decision, for plugin-sdk/README.md.
/// `cargo test -p capstan --test e2e c_policy_costs -- --ignored --nocapture`
#[test]
#[ignore]
fn c_policy_costs() {
    use capstan::plugins::store_reader::EmptyReader;
    use capstan::plugins::{CallContext, Limits, PluginKind, PluginRuntime};
    use std::sync::Arc;
    use std::time::Instant;
    if !toolchain_available("c_policy_costs") {
        return;
    }
    let bytes = std::fs::read(require_labels()).unwrap();
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
        let runtime = PluginRuntime::new(None).unwrap();
        let started = Instant::now();
        let plugin = runtime
            .load("require-labels", &bytes, PluginKind::Admission)
            .unwrap();
        let compile = started.elapsed();
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
            "c: {} KiB, compile {compile:?}, first call {first:?}, call p50 {:?} p99 {:?}",
            bytes.len() / 1024,
            samples[1000],
            samples[1980]
        );
    });
}

#[test]
fn plugin_new_scaffolds_a_c_policy_that_tests_and_builds() {
    let test = "plugin_new_scaffolds_a_c_policy_that_tests_and_builds";
    if !toolchain_available(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args(["plugin", "new", "--lang", "c", "team-labels"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let project = dir.path().join("team-labels");
    let project = project.to_str().unwrap();
    let out = make(project, &["test"]);
    assert!(out.contains(" passed, 0 failed"), "{out}");
    make(project, &[]);
    assert!(Path::new(project).join("team-labels.wasm").exists());
}
