//! The admission chain with Wasm plugins: the built-ins in their default
//! order, a user's plugin from a path, the sandbox (misbehaving plugins get
//! their failurePolicy and the server keeps serving), and `capstan plugin run`.

use crate::support::{eventually, stderr, stdout, Server};
use std::time::Duration;

/// Starts a server with the given admission configuration text.
fn start_with_config(text: &str) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("capstan.yaml");
    std::fs::write(&path, text).unwrap();
    let s = Server::start_with(&["--config", path.to_str().unwrap()]);
    drop(dir);
    s
}

#[test]
fn default_chain_runs_the_builtin_plugins() {
    let s = Server::start();
    let err = s.fails(&["create", "configmap", "x", "-n", "nowhere"]);
    assert!(err.contains(r#"namespaces "nowhere" not found"#), "{err}");
    let err = s.fails(&["delete", "namespace", "kube-system"]);
    assert!(err.contains("this namespace may not be deleted"), "{err}");
    s.ok(&["create", "namespace", "team"]);
    assert!(eventually(Duration::from_secs(10), || s
        .kubectl(&["get", "sa", "default", "-n", "team"])
        .status
        .success()));
    s.ok(&["run", "web", "--image=nginx:1.27", "-n", "team"]);
    let pod = s.json(&["get", "pod", "web", "-n", "team"]);
    assert_eq!(pod["spec"]["serviceAccountName"], "default");
    let tolerations = pod["spec"]["tolerations"].as_array().unwrap();
    assert!(tolerations
        .iter()
        .any(|t| t["key"] == "node.kubernetes.io/not-ready" && t["tolerationSeconds"] == 300));
    let err = s.fails(&[
        "run",
        "orphan",
        "--image=nginx",
        "-n",
        "team",
        "--overrides",
        r#"{"spec":{"serviceAccountName":"ghost"}}"#,
    ]);
    assert!(err.contains(r#"serviceaccount "ghost" not found"#), "{err}");
}

#[test]
fn pod_security_enforces_namespace_levels() {
    let s = Server::start();
    s.ok(&["create", "namespace", "locked"]);
    s.ok(&[
        "label",
        "namespace",
        "locked",
        "pod-security.kubernetes.io/enforce=restricted",
    ]);
    assert!(eventually(Duration::from_secs(10), || s
        .kubectl(&["get", "sa", "default", "-n", "locked"])
        .status
        .success()));
    let err = s.fails(&["run", "root", "--image=nginx", "-n", "locked"]);
    assert!(
        err.contains(r#"violates PodSecurity "restricted:latest""#),
        "{err}"
    );
    assert!(s
        .fails(&["get", "pod", "root", "-n", "locked"])
        .contains("not found"));
}

#[test]
fn pod_security_checks_ephemeral_containers() {
    let s = Server::start();
    s.ok(&["create", "namespace", "guarded"]);
    s.ok(&[
        "label",
        "namespace",
        "guarded",
        "pod-security.kubernetes.io/enforce=baseline",
    ]);
    assert!(eventually(Duration::from_secs(10), || s
        .kubectl(&["get", "sa", "default", "-n", "guarded"])
        .status
        .success()));
    s.ok(&["run", "web", "--image=nginx:1.27", "-n", "guarded"]);
    let debug = |name: &str, profile: &str| {
        s.kubectl(&[
            "debug",
            "web",
            "-n",
            "guarded",
            "--image=busybox:1.36",
            "-c",
            name,
            "--profile",
            profile,
        ])
    };
    let err = stderr(&debug("root", "sysadmin"));
    assert!(
        err.contains(r#"violates PodSecurity "baseline:latest": privileged (container "root" must not set securityContext.privileged=true)"#),
        "{err}"
    );
    let allowed = debug("plain", "legacy");
    assert!(allowed.status.success(), "{}", stderr(&allowed));
    let pod = s.json(&["get", "pod", "web", "-n", "guarded"]);
    let names: Vec<_> = pod["spec"]["ephemeralContainers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].clone())
        .collect();
    assert_eq!(names, ["plain"]);
}

#[test]
fn limit_ranger_checks_persistent_volume_claims() {
    let s = Server::start();
    let range = "apiVersion: v1\nkind: LimitRange\nmetadata: {name: storage}\nspec: {limits: [{type: PersistentVolumeClaim, max: {storage: 10Gi}}]}\n";
    s.ok_stdin(&["create", "-f", "-"], range);
    let claim = |name: &str, size: &str| {
        format!("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}}}\nspec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: {size}}}}}}}\n")
    };
    let err = stderr(&s.kubectl_stdin(&["create", "-f", "-"], Some(&claim("big", "20Gi"))));
    assert!(
        err.contains(r#"persistentvolumeclaims "big" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi"#),
        "{err}"
    );
    s.ok_stdin(&["create", "-f", "-"], &claim("small", "5Gi"));
}

#[test]
fn a_bad_configuration_fails_the_start_naming_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("admission:\n- name: nope\n  module: builtin:does-not-exist\n", "admission[0] (nope): unknown module \"builtin:does-not-exist\""),
        ("admission:\n- name: notwasm\n  module: /etc/hostname\n", "admission[0] (notwasm)"),
        ("admission:\n- name: r\n  module: builtin:namespace-lifecycle\n  rules: [{operations: [CRATE], apiGroups: ['*'], apiVersions: ['*'], resources: ['*']}]\n", "admission[0] (r): rules[0]: unsupported operation \"CRATE\""),
        ("conversion:\n- name: widgets\n  module: builtin:no-converter\n", "conversion[0] (widgets): unknown module \"builtin:no-converter\""),
        ("conversion:\n- name: echo\n  module: builtin:sandbox-echo\n", "conversion[0] (echo): plugin \"echo\" implements the admission world, not the converter world"),
    ];
    for (text, expected) in cases {
        let path = dir.path().join("c.yaml");
        std::fs::write(&path, text).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_capstan"))
            .args(["serve", "--secure-port", "0", "--data-dir"])
            .arg(dir.path().join("data"))
            .arg("--config")
            .arg(&path)
            .output()
            .unwrap();
        assert!(!out.status.success());
        assert!(
            stderr(&out).contains(expected),
            "expected {expected:?} in:\n{}",
            stderr(&out)
        );
    }
}

const SANDBOX: &str = r#"
admission:
- name: looping
  module: builtin:sandbox-loop
  timeoutMs: 100
  failurePolicy: Ignore
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
- name: hungry
  module: builtin:sandbox-alloc
  memoryMib: 16
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [secrets]}]
- name: trapping
  module: builtin:sandbox-trap
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [serviceaccounts]}]
- name: babbling
  module: builtin:sandbox-garbage
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [limitranges]}]
- name: snooping
  module: builtin:sandbox-file
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [podtemplates]}]
"#;

#[test]
fn misbehaving_plugins_get_their_failure_policy_and_the_server_keeps_serving() {
    let s = start_with_config(SANDBOX);
    let out = s.kubectl(&["create", "configmap", "slow"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            r#"admission plugin "looping" failed and was ignored: plugin timed out after 100ms"#
        ),
        "{}",
        stderr(&out)
    );
    let err = s.fails(&["create", "secret", "generic", "big", "--from-literal=a=b"]);
    assert!(
        err.contains(r#"failed calling admission plugin "hungry""#) && err.contains("memory limit"),
        "{err}"
    );
    let err = s.fails(&["create", "serviceaccount", "boom"]);
    assert!(
        err.contains(r#"failed calling admission plugin "trapping""#) && err.contains("trapped"),
        "{err}"
    );
    let lr = "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\nspec: {limits: [{type: Container}]}\n";
    let err = stderr(&s.kubectl_stdin(&["create", "-f", "-"], Some(lr)));
    assert!(
        err.contains(r#"failed calling admission plugin "babbling""#),
        "{err}"
    );
    let pt = "apiVersion: v1\nkind: PodTemplate\nmetadata: {name: pt}\ntemplate: {spec: {containers: [{name: c, image: i}]}}\n";
    let err = stderr(&s.kubectl_stdin(&["create", "-f", "-"], Some(pt)));
    assert!(
        err.contains("file: denied") && err.contains("socket: denied") && !err.contains("root:"),
        "{err}"
    );
    for _ in 0..3 {
        s.ok(&["get", "ns"]);
        s.ok(&["create", "configmap", &format!("again-{}", rand_suffix())]);
    }
    assert!(s.fails(&["get", "secret", "big"]).contains("not found"));
}

fn rand_suffix() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

#[test]
fn plugin_run_answers_offline() {
    let dir = tempfile::tempdir().unwrap();
    let review = r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1","kind":{"group":"","version":"v1","kind":"Namespace"},"resource":{"group":"","version":"v1","resource":"namespaces"},"name":"default","operation":"DELETE","userInfo":{"username":"alice"},"oldObject":{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}}}}"#;
    let path = dir.path().join("review.json");
    std::fs::write(&path, review).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args([
            "plugin",
            "run",
            "--module",
            "builtin:namespace-lifecycle",
            "--request",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(answer["response"]["uid"], "u-1");
    assert_eq!(answer["response"]["allowed"], false);
    assert!(answer["response"]["status"]["message"]
        .as_str()
        .unwrap()
        .contains("may not be deleted"));
    let declared = stderr(&out);
    assert!(
        declared.contains(
            "builtin:namespace-lifecycle implements the admission world (capstan:plugin@0.1.0)."
        ),
        "{declared}"
    );
    assert!(
        declared.contains("builtin:namespace-lifecycle declares (capstan-plugin.json)")
            && declared.contains(r#""resources": ["namespaces"]"#)
            && declared.contains("Its rules cover this request."),
        "{declared}"
    );
}

/// `capstan plugin run` runs a plugin of any world with that world's input
/// and says which world it found.
#[test]
fn plugin_run_runs_every_world() {
    let dir = tempfile::tempdir().unwrap();
    let call = r#"{"phase": "table", "resource": {"group": "", "version": "v1", "resource": "services"},
        "now": "2024-01-01T00:00:00Z",
        "objects": [{"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}]}"#;
    let path = dir.path().join("call.json");
    std::fs::write(&path, call).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args(["plugin", "run", "--module", "builtin:strategy", "--request"])
        .arg(&path)
        // Not about speed: a loaded machine may take more than the default 300 ms.
        .args(["--timeout-ms", "10000"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("builtin:strategy implements the strategy world"));
    let answer: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(answer["rows"][0]["cells"][4], "80/TCP", "{answer}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args([
            "plugin",
            "run",
            "--module",
            "builtin:always-deny",
            "--request",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("implements the authorizer world"),
        "{}",
        stderr(&out)
    );
}

/// Entries `builtin:<name>` that leave out phases and rules get the ones
/// the plugin's manifest declares: a mutating plugin mutates, and a plugin
/// is called only for the requests its rules cover (here one that always
/// fails with failurePolicy Ignore, so each call shows as a warning).
#[test]
fn builtin_entries_without_rules_or_phases_take_the_plugins_declared_ones() {
    let s = start_with_config(
        "admission:
- name: lifecycle
  module: builtin:namespace-lifecycle
- name: starved
  module: builtin:namespace-lifecycle
  fuel: 1
  failurePolicy: Ignore
- name: tolerations
  module: builtin:default-toleration-seconds
",
    );
    let err = s.fails(&["create", "configmap", "x", "-n", "nowhere"]);
    assert!(err.contains(r#"namespaces "nowhere" not found"#), "{err}");
    let ignored = r#"admission plugin "starved" failed and was ignored"#;
    let created = s.kubectl(&["create", "configmap", "cm"]);
    assert!(created.status.success(), "{}", stderr(&created));
    assert!(stderr(&created).contains(ignored), "{}", stderr(&created));
    let updated = s.kubectl(&["label", "configmap", "cm", "team=a"]);
    assert!(updated.status.success(), "{}", stderr(&updated));
    assert!(!stderr(&updated).contains(ignored), "{}", stderr(&updated));
    s.ok(&["run", "web", "--image=nginx:1.27"]);
    let pod = s.json(&["get", "pod", "web"]);
    let tolerations = pod["spec"]["tolerations"].as_array().unwrap();
    assert!(
        tolerations
            .iter()
            .any(|t| t["key"] == "node.kubernetes.io/not-ready" && t["tolerationSeconds"] == 300),
        "{pod}"
    );
}

#[test]
fn resource_quota_counts_usage_and_rejects_past_the_hard_limit() {
    let s = Server::start();
    s.ok(&["create", "namespace", "quota"]);
    s.ok(&[
        "create",
        "quota",
        "q",
        "--hard=pods=1,configmaps=5",
        "-n",
        "quota",
    ]);
    s.ok(&["run", "one", "--image=nginx:1.27", "-n", "quota"]);
    let err = s.fails(&["run", "two", "--image=nginx:1.27", "-n", "quota"]);
    assert!(
        err.contains(r#"pods "two" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1"#),
        "{err}"
    );
    let used_pods = || {
        let q = s.json(&["get", "quota", "q", "-n", "quota"]);
        q["status"]["used"]["pods"] == "1" && q["status"]["hard"]["pods"] == "1"
    };
    assert!(
        eventually(Duration::from_secs(10), used_pods),
        "{}",
        s.log()
    );
    // As kube's quota controller records its status writes.
    let q = s.json(&["get", "quota", "q", "-n", "quota", "--show-managed-fields"]);
    let entries = q["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let status = entries.iter().find(|e| e["subresource"] == "status");
    let status = status.unwrap_or_else(|| panic!("{q}"));
    assert_eq!(status["manager"], "kube-controller-manager", "{q}");
    assert_eq!(status["operation"], "Update", "{q}");
    assert_eq!(
        status["fieldsV1"]["f:status"]["f:used"]["f:pods"],
        serde_json::json!({}),
        "{q}"
    );
    s.ok(&["delete", "pod", "one", "-n", "quota", "--wait=false"]);
    s.ok(&["run", "three", "--image=nginx:1.27", "-n", "quota"]);
}

/// Waits for the `default` ServiceAccount of `ns` (pods are refused without it).
fn wait_for_default_service_account(s: &Server, ns: &str) {
    assert!(eventually(Duration::from_secs(10), || s
        .kubectl(&["get", "sa", "default", "-n", ns])
        .status
        .success()));
}

#[test]
fn nodes_get_the_not_ready_taint_and_pods_their_priority() {
    let s = Server::start();
    s.ok_stdin(
        &["create", "-f", "-"],
        "apiVersion: v1\nkind: Node\nmetadata: {name: worker-1}\n",
    );
    let node = s.json(&["get", "node", "worker-1"]);
    assert_eq!(
        node["spec"]["taints"],
        serde_json::json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}])
    );
    let critical = s.json(&["get", "priorityclass", "system-node-critical"]);
    assert_eq!(critical["value"], 2000001000);
    let cluster = s.json(&["get", "priorityclass", "system-cluster-critical"]);
    assert_eq!(cluster["value"], 2000000000);
    wait_for_default_service_account(&s, "default");
    s.ok(&["run", "plain", "--image=nginx:1.27"]);
    let pod = s.json(&["get", "pod", "plain"]);
    assert_eq!(pod["spec"]["priority"], 0, "{pod}");
    assert_eq!(pod["spec"]["preemptionPolicy"], "PreemptLowerPriority");
    let critical_pod = r#"{"spec":{"priorityClassName":"system-node-critical"}}"#;
    s.ok(&[
        "run",
        "agent",
        "--image=nginx:1.27",
        "--overrides",
        critical_pod,
    ]);
    assert_eq!(
        s.json(&["get", "pod", "agent"])["spec"]["priority"],
        2000001000
    );
    let unknown = r#"{"spec":{"priorityClassName":"gold"}}"#;
    let err = s.fails(&["run", "rich", "--image=nginx:1.27", "--overrides", unknown]);
    assert!(
        err.contains(r#"pods "rich" is forbidden: no PriorityClass with name gold was found"#),
        "{err}"
    );
    let runtime = r#"{"spec":{"runtimeClassName":"gvisor"}}"#;
    let err = s.fails(&[
        "run",
        "sandboxed",
        "--image=nginx:1.27",
        "--overrides",
        runtime,
    ]);
    assert!(
        err.contains(
            r#"pods "sandboxed" is forbidden: pod rejected: RuntimeClass "gvisor" not found"#
        ),
        "{err}"
    );
}

#[test]
fn priority_classes_follow_kubes_rules() {
    let s = Server::start();
    s.ok(&[
        "create",
        "priorityclass",
        "batch",
        "--value=100",
        "--global-default",
    ]);
    let err = s.fails(&[
        "create",
        "priorityclass",
        "other",
        "--value=5",
        "--global-default",
    ]);
    assert!(
        err.contains(r#"priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass batch is already marked as default. Only one default can exist"#),
        "{err}"
    );
    let err = s.fails(&["create", "priorityclass", "system-mine", "--value=5"]);
    assert!(
        err.contains("metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"),
        "{err}"
    );
    let class = s.json(&["get", "priorityclass", "batch"]);
    assert_eq!(class["preemptionPolicy"], "PreemptLowerPriority");
    wait_for_default_service_account(&s, "default");
    s.ok(&["run", "job", "--image=nginx:1.27"]);
    let pod = s.json(&["get", "pod", "job"]);
    assert_eq!(pod["spec"]["priorityClassName"], "batch");
    assert_eq!(pod["spec"]["priority"], 100);
}

#[test]
fn claims_are_protected_while_used_and_resized_only_as_kube_allows() {
    let s = Server::start();
    s.ok_stdin(
        &["create", "-f", "-"],
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fixed}\nprovisioner: example.com/disk\n",
    );
    let claim = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {storageClassName: fixed, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n";
    s.ok_stdin(&["create", "-f", "-"], claim);
    let created = s.json(&["get", "pvc", "data"]);
    assert_eq!(
        created["metadata"]["finalizers"],
        serde_json::json!(["kubernetes.io/pvc-protection"])
    );
    s.ok(&[
        "patch",
        "pvc",
        "data",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Bound"}}"#,
    ]);
    let grow = r#"{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}"#;
    let err = s.fails(&["patch", "pvc", "data", "--type=merge", "-p", grow]);
    assert!(
        err.contains(r#"persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"#),
        "{err}"
    );
    wait_for_default_service_account(&s, "default");
    let mounts =
        r#"{"spec":{"volumes":[{"name":"d","persistentVolumeClaim":{"claimName":"data"}}]}}"#;
    s.ok(&["run", "user", "--image=nginx:1.27", "--overrides", mounts]);
    s.ok(&["delete", "pvc", "data", "--wait=false"]);
    std::thread::sleep(Duration::from_secs(3));
    let held = s.json(&["get", "pvc", "data"]);
    assert!(held["metadata"]["deletionTimestamp"].is_string(), "{held}");
    s.ok(&["delete", "pod", "user", "--wait=false"]);
    let gone = || !s.kubectl(&["get", "pvc", "data"]).status.success();
    assert!(eventually(Duration::from_secs(15), gone), "{}", s.log());
}

#[test]
fn ingresses_without_a_class_get_the_default_one() {
    let s = Server::start();
    s.ok_stdin(
        &["create", "-f", "-"],
        "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata:\n  name: nginx\n  annotations: {ingressclass.kubernetes.io/is-default-class: \"true\"}\nspec: {controller: k8s.io/ingress-nginx}\n",
    );
    s.ok(&["create", "ingress", "web", "--rule=example.com/=web:80"]);
    let ingress = s.json(&["get", "ingress", "web"]);
    assert_eq!(ingress["spec"]["ingressClassName"], "nginx");
    s.ok(&[
        "create",
        "ingress",
        "own",
        "--class=traefik",
        "--rule=a.com/=a:80",
    ]);
    assert_eq!(
        s.json(&["get", "ingress", "own"])["spec"]["ingressClassName"],
        "traefik"
    );
}
