//! The same require-labels decision (a ConfigMap create without the `team`
//! label, denied with kube's Forbidden wording) in every language a policy
//! can be written in, side by side in one run, next to the same logic as an
//! HTTPS webhook on loopback: the component's size, its first compile (a
//! fresh cache), instantiate + first call, warm p50/p99 of mutate + validate
//! through a chain of that one policy (and what it adds to an empty
//! chain's), and the memory an instance needs (the
//! smallest memory limit, in steps of 256 KiB, under which its first call
//! succeeds).
//!
//! `cargo bench --bench policy_languages` measures the Rust example (built
//! here) and the other languages' require-labels where the end-to-end tests
//! (or the language's own build command) left them;
//! `CAPSTAN_POLICY_MODULES="go=/path/a.wasm,python=/path/b.wasm"` names others.

// A benchmark: a failed assumption fails the run, so unwrapping is fine here
// (the server itself never unwraps; see the workspace lints).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/admission.rs"]
mod admission;

use admission::{chain_of, config_map, register_webhook, start_webhook, state, time};
use capstan::admission::config::Phase;
use capstan::api::state::AppState;
use capstan::auth::Auth;
use capstan::registry::WriteOptions;
use capstan::wasm::EmptyReader;
use capstan::wasm::{CallContext, Limits, Plugin, PluginKind, PluginRuntime};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The other languages' require-labels, where the e2e tests build them.
const BUILT: &[(&str, &str)] = &[
    ("c", "examples/c/require-labels/require-labels.wasm"),
    ("go", "target/tmp/go-plugins/require-labels.wasm"),
    ("js", "examples/js/require-labels/require-labels.wasm"),
    ("python", "target/tmp/python-plugins/require-labels.wasm"),
];

/// The Rust example built for wasm32-wasip2 (release).
fn rust_example() -> PathBuf {
    let target = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/examples-wasm");
    let manifest = format!("{REPO}/examples/rust/require-labels/Cargo.toml");
    let status = std::process::Command::new(env!("CARGO"))
        .args(["build", "-q", "--release", "--target", "wasm32-wasip2"])
        .args(["--manifest-path", &manifest, "--target-dir", target])
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status()
        .expect("cargo");
    assert!(status.success(), "building the Rust example");
    PathBuf::from(format!(
        "{target}/wasm32-wasip2/release/require_labels.wasm"
    ))
}

/// Every language's component: Rust, the built examples, CAPSTAN_POLICY_MODULES.
fn components() -> Vec<(String, PathBuf)> {
    let mut all = vec![("rust".to_string(), rust_example())];
    for (lang, path) in BUILT {
        let path = Path::new(REPO).join(path);
        if path.exists() {
            all.push((lang.to_string(), path));
        }
    }
    let named = std::env::var("CAPSTAN_POLICY_MODULES").unwrap_or_default();
    for pair in named.split(',').filter(|p| !p.is_empty()) {
        let (lang, path) = pair.split_once('=').expect("lang=path");
        all.retain(|(l, _)| l != lang);
        all.push((lang.to_string(), PathBuf::from(path)));
    }
    all
}

/// The chain of one require-labels entry for ConfigMap creates.
fn entry(name: &str, module: &Path) -> String {
    format!(
        "admission:\n- {{name: {name}, module: '{}', phases: [validating], memoryMib: 128, timeoutMs: 10000, config: {{labels: [team]}}, rules: [{{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [configmaps]}}]}}",
        module.display()
    )
}

/// The AdmissionReview of the denied create.
fn review() -> String {
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "u", "operation": "CREATE", "namespace": "default", "name": "c",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "userInfo": {"username": "bench"}, "object": config_map(json!({}))}})
    .to_string()
}

/// The smallest memory limit (MiB, in 1/4 steps) under which a first call succeeds.
async fn memory_per_instance(plugin: &Plugin) -> f64 {
    for quarters in 1..=512usize {
        let ctx = CallContext {
            config: r#"{"labels": ["team"]}"#.into(),
            reader: Arc::new(EmptyReader),
            limits: Limits {
                timeout: Duration::from_secs(10),
                memory_bytes: quarters << 18,
                fuel: None,
            },
        };
        if plugin.call(&review(), ctx).await.is_ok() {
            return quarters as f64 / 4.0;
        }
    }
    f64::NAN
}

/// The webhook's logic: deny a ConfigMap without `team`, in kube's wording.
fn require_labels(request: &Value) -> Value {
    if request["object"]["metadata"]["labels"]
        .get("team")
        .is_some()
    {
        return json!({"allowed": true});
    }
    let message = format!(
        "configmaps \"{}\" is forbidden: missing required label(s): team",
        request["name"].as_str().unwrap_or_default()
    );
    json!({"allowed": false, "status": {"status": "Failure", "message": message, "reason": "Forbidden", "code": 403}})
}

/// The same rule as a ValidatingAdmissionPolicy (CEL in the host), bound
/// to every namespace: its compile (a policy's expressions, as on each
/// change) and its p50/p99 through a chain of the policy entry alone.
async fn admission_policy_row(state: &AppState, added: &dyn Fn(Duration) -> f64) -> Duration {
    use capstan::admission::cel_policy::{compile::Policy, AdmissionPolicies};
    let policy = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "require-labels"},
        "spec": {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": [{"operations": ["CREATE"],
            "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]},
            "validations": [{"expression": "has(object.metadata.labels) && 'team' in object.metadata.labels",
                "message": "missing required label(s): team", "reason": "Forbidden"}]}});
    let binding = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "require-labels"},
        "spec": {"policyName": "require-labels", "validationActions": ["Deny"]}});
    // A fresh expression each time, so nothing comes from the compiled cache.
    let started = Instant::now();
    for i in 0..100 {
        let mut fresh = policy.clone();
        fresh["spec"]["validations"][0]["expression"] =
            json!(format!("{i} >= 0 && 'team' in object.metadata.labels"));
        std::hint::black_box(Policy::read(&fresh));
    }
    let compile = started.elapsed() / 100;
    create_all(
        state,
        "v1",
        [
            ("validatingadmissionpolicies", policy),
            ("validatingadmissionpolicybindings", binding),
        ],
    )
    .await;
    let runtime = PluginRuntime::new(None).expect("runtime");
    let mut chain = chain_of(
        state,
        &runtime,
        Some("admission:\n- module: builtin:validating-admission-policy"),
    );
    chain.admission_policies =
        AdmissionPolicies::new(state.reader(), Arc::new(Auth::closed()), Phase::Validating)
            .map(Arc::new);
    // The policies are read through a watch.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (p50, p99) = time(&chain, &config_map(json!({})), false).await;
    println!(
        "| ValidatingAdmissionPolicy (CEL in the host) | – | {:.3} (compile) | – | {:.0} | {:.0} | {:.0} | – |",
        compile.as_secs_f64() * 1e3,
        p50.as_secs_f64() * 1e6,
        p99.as_secs_f64() * 1e6,
        added(p50) * 1e6,
    );
    p50
}

/// A MutatingAdmissionPolicy setting a ConfigMap's `team` label, as an
/// apply configuration or a JSON Patch: its p50/p99 through a chain of the
/// policy entry alone (the object then passes no validation: allowed).
async fn mutating_policy_row(state: &AppState, patch: &str, added: &dyn Fn(Duration) -> f64) {
    use capstan::admission::cel_policy::AdmissionPolicies;
    let (patch_type, key, expression) = match patch {
        "ApplyConfiguration" => (
            "ApplyConfiguration",
            "applyConfiguration",
            "Object{metadata: Object.metadata{labels: {'team': 'web'}}}",
        ),
        _ => (
            "JSONPatch",
            "jsonPatch",
            "[JSONPatch{op: 'add', path: '/metadata/labels', value: {'team': 'web'}}]",
        ),
    };
    let name = format!("team-{}", patch_type.to_lowercase());
    let policy = json!({"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {"failurePolicy": "Fail", "reinvocationPolicy": "Never",
            "matchConstraints": {"resourceRules": [{"operations": ["CREATE"],
                "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]},
            "mutations": [{"patchType": patch_type, key: {"expression": expression}}]}});
    let binding = json!({"apiVersion": "admissionregistration.k8s.io/v1beta1",
        "kind": "MutatingAdmissionPolicyBinding", "metadata": {"name": name},
        "spec": {"policyName": name}});
    let created = create_all(
        state,
        "v1beta1",
        [
            ("mutatingadmissionpolicies", policy),
            ("mutatingadmissionpolicybindings", binding),
        ],
    )
    .await;
    let runtime = PluginRuntime::new(None).expect("runtime");
    let mut chain = chain_of(
        state,
        &runtime,
        Some("admission:\n- module: builtin:mutating-admission-policy"),
    );
    chain.mutating_policies =
        AdmissionPolicies::new(state.reader(), Arc::new(Auth::closed()), Phase::Mutating)
            .map(Arc::new);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (p50, p99) = time(&chain, &config_map(json!({})), true).await;
    println!(
        "| MutatingAdmissionPolicy, {patch_type} (CEL in the host) | – | – | – | {:.0} | {:.0} | {:.0} | – |",
        p50.as_secs_f64() * 1e6,
        p99.as_secs_f64() * 1e6,
        added(p50) * 1e6,
    );
    for (res, name) in created.into_iter().rev() {
        state
            .registry
            .delete(&res, None, &name, &json!({}), WriteOptions::default())
            .await
            .expect("deleted");
    }
}

/// Creates the admission policy objects (group admissionregistration.k8s.io
/// at `version`); their resources and names.
async fn create_all<const N: usize>(
    state: &AppState,
    version: &str,
    objects: [(&str, Value); N],
) -> Vec<(capstan::catalogue::ResourceInfo, String)> {
    let mut created = Vec::new();
    for (resource, object) in objects {
        let res = state
            .catalogue
            .get()
            .lookup("admissionregistration.k8s.io", version, resource)
            .expect("served")
            .clone();
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        state
            .registry
            .create(&res, None, object, WriteOptions::default())
            .await
            .expect("created");
        created.push((res, name));
    }
    created
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let dir = tempfile::tempdir().expect("temp dir");
        let state = state(dir.path()).await;
        let bare = config_map(json!({}));
        let empty = chain_of(&state, &PluginRuntime::new(None).expect("runtime"), Some("admission: []"));
        let (base, _) = time(&empty, &bare, true).await;
        println!("| require-labels in | component KiB | first compile ms | instantiate + first call ms | warm p50 µs | warm p99 µs | added p50 µs | memory per instance MiB |\n|---|---|---|---|---|---|---|---|");
        println!("| no admission (baseline) | – | – | – | {:.0} | – | – | – |", base.as_secs_f64() * 1e6);
        let added = |d: Duration| (d.as_secs_f64() - base.as_secs_f64()).max(1e-7);
        let mut p50s = Vec::new();
        for (lang, path) in components() {
            let size = std::fs::metadata(&path).expect("component").len() / 1024;
            let runtime = PluginRuntime::new(Some(dir.path().join(format!("cache-{lang}"))))
                .expect("runtime");
            let started = Instant::now();
            let chain = chain_of(&state, &runtime, Some(&entry(&lang, &path)));
            let compile = started.elapsed();
            let req = admission::request();
            let warnings = std::sync::Mutex::new(Vec::new());
            let started = Instant::now();
            let denied = chain.validate(&req, Some(&bare), None, &warnings).await;
            let first = started.elapsed();
            assert!(denied.is_err(), "{lang}: the first call denies");
            let (p50, p99) = time(&chain, &bare, false).await;
            let bytes = std::fs::read(&path).expect("component");
            let plugin = runtime.load(&lang, &bytes, PluginKind::Admission).expect("load");
            let memory = memory_per_instance(&plugin).await;
            println!(
                "| {lang} (in process) | {size} | {} | {:.1} | {:.0} | {:.0} | {:.0} | {memory:.2} |",
                compile.as_millis(),
                first.as_secs_f64() * 1e3,
                p50.as_secs_f64() * 1e6,
                p99.as_secs_f64() * 1e6,
                added(p50) * 1e6,
            );
            p50s.push((lang, p50));
        }
        let vap = admission_policy_row(&state, &added).await;
        p50s.push(("ValidatingAdmissionPolicy".to_string(), vap));
        for patch in ["ApplyConfiguration", "JSONPatch"] {
            mutating_policy_row(&state, patch, &added).await;
        }
        let (url, ca) = start_webhook(require_labels).await;
        register_webhook(&state, &url, &ca, &["configmaps"]).await;
        let runtime = PluginRuntime::new(None).expect("runtime");
        let webhook = chain_of(&state, &runtime, Some("admission:\n- webhooks: validating"));
        let (p50, p99) = time(&webhook, &bare, false).await;
        println!(
            "| Rust HTTPS webhook on loopback | – | – | – | {:.0} | {:.0} | {:.0} | – |",
            p50.as_secs_f64() * 1e6,
            p99.as_secs_f64() * 1e6,
            added(p50) * 1e6
        );
        println!();
        for (lang, wasm) in p50s {
            println!(
                "webhook / {lang} in process, added p50: {:.1}×",
                added(p50) / added(wasm)
            );
        }
    });
}
