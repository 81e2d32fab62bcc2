//! Sandbox tests of the plugin runtime, run against the `sandbox-*` guest
//! plugins that host/build.rs builds and embeds: each misbehaving plugin
//! fails in its own way (timeout, out of memory, trap, garbage, escape
//! attempts) and the runtime keeps serving good calls afterwards.

// A test harness: a failed assumption fails the run, so unwrapping is fine here
// (the server itself never unwraps; see the workspace lints).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use capstan::wasm::embedded::builtin;
use capstan::wasm::{
    CallContext, Limits, ObjectReader, Plugin, PluginFailure, PluginKind, PluginRuntime,
};
use futures_util::future::BoxFuture;
use serde_json::{json, Value};

/// One runtime for the whole test binary, as in the server; its cache lives
/// in a temporary directory.
static RUNTIME: LazyLock<(Arc<PluginRuntime>, tempfile::TempDir)> = LazyLock::new(|| {
    let _ = tracing_subscriber::fmt().with_test_writer().try_init();
    let dir = tempfile::tempdir().unwrap();
    let runtime = PluginRuntime::new(Some(dir.path().to_path_buf())).unwrap();
    (runtime, dir)
});

fn load(name: &str) -> Plugin {
    let wasm = builtin(name).unwrap_or_else(|| panic!("{name} is not embedded"));
    RUNTIME.0.load(name, wasm, PluginKind::Admission).unwrap()
}

/// An in-memory store with one namespace, answering like the server would.
struct FakeReader {
    objects: BTreeMap<(String, String, Option<String>, String), String>,
}

impl FakeReader {
    fn new() -> Arc<Self> {
        let mut objects = BTreeMap::new();
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}});
        objects.insert(
            ("v1".into(), "namespaces".into(), None, "default".into()),
            ns.to_string(),
        );
        Arc::new(FakeReader { objects })
    }
}

impl ObjectReader for FakeReader {
    fn watermark(&self, _: &str, _: &str) -> Result<String, String> {
        Ok("0".to_string())
    }

    fn get(
        &self,
        api_version: &str,
        resource: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> BoxFuture<'_, Result<Option<String>, String>> {
        let key = (
            api_version.to_string(),
            resource.to_string(),
            namespace.map(str::to_string),
            name.to_string(),
        );
        Box::pin(async move { Ok(self.objects.get(&key).cloned()) })
    }

    fn list(
        &self,
        api_version: &str,
        resource: &str,
        _namespace: Option<&str>,
        label_selector: Option<&str>,
        _field_selector: Option<&str>,
    ) -> BoxFuture<'_, Result<String, String>> {
        let list = json!({
            "apiVersion": api_version,
            "kind": "List",
            "metadata": {"selector": label_selector, "resource": resource},
            "items": [],
        });
        Box::pin(async move { Ok(list.to_string()) })
    }
}

fn review(uid: &str) -> String {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": uid, "operation": "CREATE", "object": {"kind": "Pod"}},
    })
    .to_string()
}

fn ctx(limits: Limits) -> CallContext {
    CallContext {
        config: r#"{"greeting":"hello"}"#.to_string(),
        reader: FakeReader::new(),
        limits,
    }
}

/// A good call must still succeed: the runtime keeps serving after a failure.
async fn assert_echo_still_answers() {
    let answer = load("sandbox-echo")
        .call(&review("after-failure"), ctx(Limits::default()))
        .await
        .unwrap();
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["response"]["allowed"], true);
    assert_eq!(answer["response"]["uid"], "after-failure");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn echo_allows_and_reaches_every_host_import() {
    let answer = load("sandbox-echo")
        .call(&review("7f0c-uid"), ctx(Limits::default()))
        .await
        .unwrap();
    let answer: Value = serde_json::from_str(&answer).unwrap();
    let response = &answer["response"];
    assert_eq!(response["allowed"], true);
    assert_eq!(response["uid"], "7f0c-uid");
    let notes = &response["auditAnnotations"];
    assert_eq!(notes["config"], r#"{"greeting":"hello"}"#);
    let got: Value = serde_json::from_str(notes["get"].as_str().unwrap()).unwrap();
    assert_eq!(got["metadata"]["name"], "default");
    let listed: Value = serde_json::from_str(notes["list"].as_str().unwrap()).unwrap();
    assert_eq!(listed["metadata"]["selector"], "app=web");
    assert_eq!(listed["metadata"]["resource"], "pods");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_loop_times_out() {
    let spin = load("sandbox-loop");
    let limits = Limits {
        timeout: Duration::from_millis(200),
        ..Limits::default()
    };
    for _ in 0..2 {
        let failure = spin
            .call(&review("u"), ctx(limits.clone()))
            .await
            .unwrap_err();
        assert_eq!(failure, PluginFailure::Timeout(Duration::from_millis(200)));
        assert_eq!(failure.to_string(), "plugin timed out after 200ms");
    }
    assert_echo_still_answers().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuel_bounds_an_endless_loop() {
    let limits = Limits {
        fuel: Some(1_000_000),
        timeout: Duration::from_secs(10),
        ..Limits::default()
    };
    let failure = load("sandbox-loop")
        .call(&review("u"), ctx(limits))
        .await
        .unwrap_err();
    assert_eq!(failure, PluginFailure::OutOfFuel);
    assert_echo_still_answers().await;
}

/// On a single-threaded executor a spinning plugin must not starve others:
/// the runtime yields every epoch tick.
#[tokio::test(flavor = "current_thread")]
async fn a_spinning_plugin_does_not_block_other_calls() {
    let spin = load("sandbox-loop");
    let echo = load("sandbox-echo");
    let limits = Limits {
        timeout: Duration::from_millis(500),
        ..Limits::default()
    };
    let started = Instant::now();
    let slow_review = review("slow");
    let slow = spin.call(&slow_review, ctx(limits));
    let fast = async {
        let answer = echo.call(&review("fast"), ctx(Limits::default())).await;
        (answer, started.elapsed())
    };
    let (slow, (fast, fast_took)) = tokio::join!(slow, fast);
    assert!(matches!(slow, Err(PluginFailure::Timeout(_))), "{slow:?}");
    assert!(fast.is_ok(), "{fast:?}");
    tracing::info!(?fast_took, "echo answered while the loop spun");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unbounded_allocation_hits_the_memory_limit() {
    let hog = load("sandbox-alloc");
    let limits = Limits {
        memory_bytes: 16 << 20,
        ..Limits::default()
    };
    let failure = hog
        .call(&review("u"), ctx(limits.clone()))
        .await
        .unwrap_err();
    assert_eq!(failure, PluginFailure::OutOfMemory(16 << 20));
    assert_eq!(
        failure.to_string(),
        "plugin exceeded its memory limit of 16 MiB"
    );
    let again = hog.call(&review("u"), ctx(limits)).await.unwrap_err();
    assert_eq!(again, PluginFailure::OutOfMemory(16 << 20));
    assert_echo_still_answers().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_is_a_trap_with_its_message() {
    let failure = load("sandbox-trap")
        .call(&review("u"), ctx(Limits::default()))
        .await
        .unwrap_err();
    match &failure {
        PluginFailure::Trap(text) => {
            assert!(text.contains("sandbox-trap panicked on purpose"), "{text}")
        }
        other => panic!("expected a trap, got {other:?}"),
    }
    assert!(failure.to_string().starts_with("plugin trapped: "));
    assert_echo_still_answers().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_is_passed_through_and_does_not_parse() {
    let answer = load("sandbox-garbage")
        .call(&review("u"), ctx(Limits::default()))
        .await
        .unwrap();
    assert_eq!(answer, "not json");
    assert!(serde_json::from_str::<Value>(&answer).is_err());
    assert_echo_still_answers().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_and_sockets_are_out_of_reach() {
    let answer = load("sandbox-file")
        .call(&review("u"), ctx(Limits::default()))
        .await
        .unwrap();
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["response"]["allowed"], false);
    let message = answer["response"]["status"]["message"].as_str().unwrap();
    tracing::info!(message, "what the escaping plugin got");
    assert!(message.contains("file: denied"), "{message}");
    assert!(message.contains("socket: denied"), "{message}");
    assert!(!message.contains("READ") && !message.contains("CONNECTED"));
    assert_echo_still_answers().await;
}

#[test]
fn a_core_module_is_refused_with_a_clear_message() {
    // The smallest valid core module: header and version 1, no sections.
    let core_module = b"\0asm\x01\0\0\0";
    let err = RUNTIME
        .0
        .load("legacy", core_module, PluginKind::Admission)
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"legacy\""), "{err}");
    assert!(err.contains("not a component"), "{err}");
}

#[test]
fn a_plugin_of_another_kind_is_refused_with_a_clear_message() {
    let wasm = builtin("sandbox-echo").unwrap();
    let err = RUNTIME
        .0
        .load("echo", wasm, PluginKind::Authorizer)
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"echo\""), "{err}");
    assert!(err.contains("authorizer world"), "{err}");
    assert!(err.contains("authorize"), "{err}");
}

/// Waits (at most a minute) for the optimizer to swap Cranelift's code in.
fn wait_optimized(plugin: &Plugin) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !plugin.optimized() {
        assert!(Instant::now() < deadline, "never optimized");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A component not in the cache serves at once with the baseline
/// compiler's code, is optimized in the background (its calls answer the
/// same before and after), and a restart loads the optimized code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_component_serves_at_once_and_is_optimized_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let wasm = builtin("sandbox-echo").unwrap();
    let runtime = PluginRuntime::new(Some(dir.path().to_path_buf())).unwrap();
    let started = Instant::now();
    let first = runtime.load("echo", wasm, PluginKind::Admission).unwrap();
    let baseline_took = started.elapsed();
    assert!(!first.loaded_from_cache());
    let answer = first
        .call(&review("before"), ctx(Limits::default()))
        .await
        .unwrap();
    assert!(answer.contains(r#""uid":"before""#), "{answer}");
    wait_optimized(&first);
    let answer = first
        .call(&review("after"), ctx(Limits::default()))
        .await
        .unwrap();
    assert!(answer.contains(r#""uid":"after""#), "{answer}");

    // A new runtime, as after a restart, finds the optimized code.
    let restarted = PluginRuntime::new(Some(dir.path().to_path_buf())).unwrap();
    let started = Instant::now();
    let second = restarted.load("echo", wasm, PluginKind::Admission).unwrap();
    let cache_took = started.elapsed();
    assert!(second.loaded_from_cache() && second.optimized());
    tracing::info!(?baseline_took, ?cache_took, "sandbox-echo load times");
}

/// An entry wasmtime would refuse (compiled with another engine
/// configuration, under the name this engine looks for) is compiled again
/// and replaced, never loaded.
#[test]
fn an_incompatible_cache_entry_is_recompiled_not_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let wasm = builtin("sandbox-echo").unwrap();
    let runtime = PluginRuntime::new(Some(dir.path().to_path_buf())).unwrap();
    wait_optimized(&runtime.load("echo", wasm, PluginKind::Admission).unwrap());
    let mut config = wasmtime::Config::new();
    config.wasm_component_model(true);
    let foreign = wasmtime::Engine::new(&config).unwrap();
    let artifact = foreign.precompile_component(wasm).unwrap();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        std::fs::write(entry.unwrap().path(), &artifact).unwrap();
    }

    let restarted = PluginRuntime::new(Some(dir.path().to_path_buf())).unwrap();
    let reloaded = restarted.load("echo", wasm, PluginKind::Admission).unwrap();
    assert!(!reloaded.loaded_from_cache());
    wait_optimized(&reloaded);
    let again = PluginRuntime::new(Some(dir.path().to_path_buf())).unwrap();
    assert!(again
        .load("echo", wasm, PluginKind::Admission)
        .unwrap()
        .loaded_from_cache());
}

/// Every embedded plugin links against the host: it is a component that
/// imports only what the runtime offers and exports one of the worlds.
#[test]
fn every_embedded_plugin_loads() {
    let names = capstan::wasm::embedded::builtin_names();
    assert!(names.contains(&"sandbox-echo"), "{names:?}");
    let kinds = [
        PluginKind::Admission,
        PluginKind::Authenticator,
        PluginKind::Authorizer,
        PluginKind::Strategy,
        PluginKind::Converter,
    ];
    for name in names {
        let wasm = builtin(name).unwrap();
        let loaded = kinds
            .iter()
            .any(|kind| RUNTIME.0.load(name, wasm, *kind).is_ok());
        assert!(loaded, "built-in plugin {name} does not load as any kind");
    }
}
