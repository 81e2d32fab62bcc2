//! What every language's two example policies (examples/<lang>/require-labels
//! and examples/<lang>/unique-ingress-host) must do, checked the same way for
//! each language: offline through `capstan plugin run`, and in a real
//! server's chain where kubectl 1.33 sees the policies' messages. The
//! per-language tests (rust_plugins, js_plugins, python_plugins, c_plugins,
//! go_plugins) build the components with the language's own tools and call
//! these.

use crate::support::{stderr, stdout, Server};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// An AdmissionReview creating ConfigMap `name` with `labels`.
pub fn review(name: &str, labels: Value) -> String {
    json!({
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

/// `capstan plugin run` of a require-labels component with one review
/// (written into `dir`), configured `{"labels": ["team"]}`, with the host's
/// debug log on stderr: (stdout as JSON, stderr).
pub fn plugin_run(
    module: &Path,
    dir: &Path,
    name: &str,
    labels: Value,
    extra: &[&str],
) -> (Value, String) {
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, review(name, labels)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args(["plugin", "run", "--module"])
        .arg(module)
        .arg("--request")
        .arg(&path)
        .args(["--config", r#"{"labels": ["team"]}"#])
        .args(["--timeout-ms", "5000", "--memory-mib", "64"])
        .args(extra)
        .env("RUST_LOG", "capstan=debug")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let answer =
        serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
    (answer, stderr(&out))
}

/// require-labels, offline: `bare` denied in kube's Forbidden wording with
/// the policy's log line, `owned` (labelled) allowed; the world is named.
pub fn require_labels_answers_offline(module: &Path, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let (answer, err) = plugin_run(module, dir.path(), "bare", json!({}), extra);
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
    let details = &response["status"]["details"];
    assert_eq!(details["name"], "bare", "{answer}");
    assert_eq!(details["kind"], "configmaps", "{answer}");
    // kube omits an empty group (omitempty); "" says the same.
    assert!(
        details["group"].is_null() || details["group"] == "",
        "{answer}"
    );
    let (answer, _) = plugin_run(module, dir.path(), "owned", json!({"team": "a"}), extra);
    assert_eq!(answer["response"]["allowed"], true, "{answer}");
    assert_eq!(answer["response"]["uid"], "uid-owned");
}

/// A server whose chain holds both examples (`require_labels` for
/// ConfigMaps, `unique_ingress_host` for Ingresses); a cold plugin cache may
/// compile them for tens of seconds before it serves.
pub fn start_with_both(dir: &Path, require_labels: &Path, unique_ingress_host: &Path) -> Server {
    let config = dir.join("capstan.yaml");
    let text = format!(
        r#"admission:
- name: require-labels
  module: {}
  phases: [validating]
  failurePolicy: Fail
  timeoutMs: 5000
  memoryMib: 64
  config: {{labels: [team]}}
  rules: [{{operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}}]
- name: unique-ingress-host
  module: {}
  phases: [validating]
  failurePolicy: Fail
  timeoutMs: 5000
  memoryMib: 64
  rules: [{{operations: [CREATE, UPDATE], apiGroups: [networking.k8s.io], apiVersions: [v1], resources: [ingresses]}}]
"#,
        require_labels.display(),
        unique_ingress_host.display()
    );
    std::fs::write(&config, text).unwrap();
    Server::start_within(
        &["--config", config.to_str().unwrap()],
        Duration::from_secs(600),
    )
}

/// Both examples in the chain of `s`, checked with kubectl.
pub fn both_refuse_kubectl_apply_with_their_messages(s: &Server) {
    refuses_an_unlabelled_config_map(s);
    refuses_a_taken_ingress_host(s);
}

/// require-labels: the bare ConfigMap refused with the policy's message and
/// not stored, the labelled one created, the policy's log line in the server log.
fn refuses_an_unlabelled_config_map(s: &Server) {
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
}

/// An Ingress `name` in `namespace` routing `host` to a Service.
pub fn ingress(namespace: &str, name: &str, host: &str) -> String {
    format!(
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: {name}, namespace: {namespace}}}\n\
         spec:\n  rules:\n  - host: {host}\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, \
         backend: {{service: {{name: {name}, port: {{number: 80}}}}}}}}\n"
    )
}

/// unique-ingress-host reads the server's cache, so it sees the Ingress
/// created a moment before: the same host in another namespace is refused
/// naming its holder, another host is created, the holder may be updated.
fn refuses_a_taken_ingress_host(s: &Server) {
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
    let relabelled = ingress("a", "shop", "shop.example.com")
        .replace("namespace: a}", "namespace: a, labels: {tier: web}}");
    s.ok_stdin(&["apply", "-f", "-"], &relabelled);
}

/// `capstan plugin new --lang <lang> <name>` in `dir`; the project's folder.
pub fn plugin_new(dir: &Path, lang: &str, name: &str) -> PathBuf {
    let out = Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args(["plugin", "new", "--lang", lang, name])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("next, in it:"), "{}", stdout(&out));
    dir.join(name)
}
