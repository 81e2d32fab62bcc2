//! Per-decision cost of the authentication and authorization plugins, in
//! process (no HTTP): the RBAC authorizer with 1k and 10k RoleBindings,
//! always-allow (the bare cost of a reused Wasm instance), and the x509
//! authenticator. Run with `cargo bench --bench auth_chain`; prints p50/p99
//! per call and the ratios measured side by side in this one run.

// A benchmark: a failed assumption fails the run, so unwrapping is fine here
// (the server itself never unwraps; see the workspace lints).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use capstan::wasm::embedded::builtin;
use capstan::wasm::{CallContext, Limits, ObjectReader, Plugin, PluginKind, PluginRuntime};
use futures_util::future::BoxFuture;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The RBAC objects of a cluster with `n` RoleBindings, one per user, each
/// to the `view` ClusterRole in one of 100 namespaces.
struct Cluster {
    lists: std::collections::HashMap<&'static str, String>,
}

impl Cluster {
    fn new(n: usize) -> Arc<Self> {
        let view = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "view"},
            "rules": [{"apiGroups": [""], "resources": ["pods", "configmaps"], "verbs": ["get", "list", "watch"]}]});
        let bindings: Vec<Value> = (0..n)
            .map(|i| json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": format!("b{i}"), "namespace": format!("ns{}", i % 100)},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
                "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": format!("user{i}")}]}))
            .collect();
        let list = |items: Vec<Value>| json!({"kind": "List", "items": items}).to_string();
        let mut lists = std::collections::HashMap::new();
        lists.insert("clusterroles", list(vec![view]));
        lists.insert("rolebindings", list(bindings));
        lists.insert("roles", list(vec![]));
        lists.insert("clusterrolebindings", list(vec![]));
        Arc::new(Cluster { lists })
    }
}

impl Cluster {
    /// The bootstrap policy of a fresh server plus `bob` bound to cluster-admin.
    fn bootstrap() -> Arc<Self> {
        let text = include_str!("../src/controllers/rbac/bootstrap-policy.json");
        let objects: Vec<Value> = serde_json::from_str(text).expect("bootstrap policy");
        let of = |kind: &str| -> Vec<Value> {
            objects
                .iter()
                .filter(|o| o["kind"] == kind)
                .cloned()
                .collect()
        };
        let mut crbs = of("ClusterRoleBinding");
        crbs.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "bob-admin"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "bob"}]}));
        let list = |items: Vec<Value>| json!({"kind": "List", "items": items}).to_string();
        let mut lists = std::collections::HashMap::new();
        lists.insert("clusterroles", list(of("ClusterRole")));
        lists.insert("clusterrolebindings", list(crbs));
        lists.insert("roles", list(of("Role")));
        lists.insert("rolebindings", list(of("RoleBinding")));
        Arc::new(Cluster { lists })
    }
}

impl ObjectReader for Cluster {
    fn get(
        &self,
        _: &str,
        _: &str,
        _: Option<&str>,
        _: &str,
    ) -> BoxFuture<'_, Result<Option<String>, String>> {
        Box::pin(async { Ok(None) })
    }

    fn watermark(&self, _: &str, _: &str) -> Result<String, String> {
        Ok("1".into())
    }

    fn list(
        &self,
        _: &str,
        resource: &str,
        _: Option<&str>,
        _: Option<&str>,
        _: Option<&str>,
    ) -> BoxFuture<'_, Result<String, String>> {
        let text = self
            .lists
            .get(resource)
            .cloned()
            .unwrap_or_else(|| r#"{"items":[]}"#.into());
        Box::pin(async move { Ok(text) })
    }
}

fn review(user: &str) -> String {
    json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": user, "groups": ["system:authenticated"],
                 "resourceAttributes": {"namespace": "ns42", "verb": "list", "resource": "pods", "version": "v1"}}})
    .to_string()
}

struct Timing {
    p50: Duration,
    p99: Duration,
}

async fn time_calls(
    plugin: &Plugin,
    input: &str,
    reader: Arc<dyn ObjectReader>,
    calls: usize,
) -> Timing {
    let ctx = || CallContext {
        config: "{}".into(),
        reader: reader.clone(),
        limits: Limits::default(),
    };
    let mut samples = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        let answer = plugin.call(input, ctx()).await.expect("plugin call");
        samples.push(started.elapsed());
        std::hint::black_box(answer);
    }
    samples.sort();
    Timing {
        p50: samples[calls / 2],
        p99: samples[calls * 99 / 100],
    }
}

fn load(runtime: &PluginRuntime, name: &str, kind: PluginKind) -> Plugin {
    let wasm = builtin(name).unwrap_or_else(|| panic!("{name} is not embedded"));
    runtime.load(name, wasm, kind).expect("load plugin")
}

fn row(what: &str, t: &Timing, base: &Timing) {
    let ratio = t.p50.as_secs_f64() / base.p50.as_secs_f64();
    println!(
        "| {what} | {:.1} | {:.1} | {ratio:.2} |",
        t.p50.as_secs_f64() * 1e6,
        t.p99.as_secs_f64() * 1e6
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let cache = tempfile::tempdir().expect("temp dir");
        let runtime = PluginRuntime::new(Some(cache.path().to_path_buf())).expect("plugin runtime");
        let allow = load(&runtime, "always-allow", PluginKind::Authorizer);
        let rbac = load(&runtime, "rbac", PluginKind::Authorizer);
        let calls = 2000;
        let small: Arc<dyn ObjectReader> = Cluster::new(1_000);
        let large: Arc<dyn ObjectReader> = Cluster::new(10_000);
        let base = time_calls(&allow, &review("user42"), small.clone(), calls).await;
        println!("| call | p50 µs | p99 µs | p50 vs always-allow |\n|---|---|---|---|");
        row("always-allow", &base, &base);
        let bootstrap: Arc<dyn ObjectReader> = Cluster::bootstrap();
        let cases = [
            ("rbac, 1k bindings", small, "user42"),
            ("rbac, 10k bindings", large, "user42"),
            (
                "rbac, bootstrap policy, cluster-admin user",
                bootstrap,
                "bob",
            ),
        ];
        for (label, reader, user) in cases {
            let rbac_fresh = load(&runtime, "rbac", PluginKind::Authorizer);
            let started = Instant::now();
            time_calls(&rbac_fresh, &review(user), reader.clone(), 1).await;
            let build = started.elapsed();
            let t = time_calls(&rbac_fresh, &review(user), reader.clone(), calls).await;
            row(label, &t, &base);
            println!(
                "|   (first call, building the policy) | {:.1} | | |",
                build.as_secs_f64() * 1e6
            );
        }
        drop(rbac);
    });
}
