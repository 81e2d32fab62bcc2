//! PolicyBundles through the API with the real binary and kubectl: the
//! baseline bundle (built once, as policy_bundles.rs builds it) placed
//! under the data directory's `bundles/`, referenced by a PolicyBundle that
//! becomes Ready and then denies a `:latest` pod (Enforce; counted on
//! /metrics; skipped where its matchConditions say so), warns
//! (Warn), records it in the server's log (Audit), and stops once deleted;
//! an update naming a missing bundle leaves the previous bundle in effect;
//! missing and tampered bundles get Ready=False naming the bundle and why;
//! a bad spec is kube's 422 with field paths; only cluster-admins reach
//! them; no create fails while the mode swaps; both replicas on etcd
//! load them. The multi-tenancy bundle's context-aware policies read the
//! live store.

use crate::policy_bundles::{build_baseline, build_bundle, build_workload_limits};
use crate::policy_examples::ingress;
use crate::support::{eventually, stderr, stdout, Server};
use std::path::Path;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

pub(crate) fn apply(s: &Server, yaml: &str) {
    s.ok_stdin(&["apply", "-f", "-"], yaml);
}

fn policy_bundle(name: &str, bundle: &str, mode: &str) -> String {
    format!(
        "apiVersion: policies.capstan.dev/v1alpha1\nkind: PolicyBundle\nmetadata:\n  name: {name}\n\
         spec:\n  bundle: {bundle}\n  mode: {mode}\n  policies: [disallow-latest-tag]\n"
    )
}

/// The Ready condition once the status reflects the PolicyBundle's
/// current generation: (status, reason, message).
fn ready_when_observed(s: &Server, name: &str) -> Option<(String, String, String)> {
    let pb = s.json(&["get", "policybundle", name, "-o", "json"]);
    let generation = &pb["metadata"]["generation"];
    let ready = pb["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready" && &c["observedGeneration"] == generation)?
        .clone();
    let text = |k: &str| ready[k].as_str().unwrap_or_default().to_string();
    Some((text("status"), text("reason"), text("message")))
}

pub(crate) fn wait_ready(s: &Server, name: &str) -> (String, String, String) {
    let mut last = None;
    let observed = eventually(WAIT, || {
        last = ready_when_observed(s, name);
        last.is_some()
    });
    assert!(observed, "{name} never got a status: {}", s.log());
    last.unwrap()
}

/// `kubectl run <pod> --image=nginx:latest`: (succeeded, stderr).
fn run_latest(s: &Server, pod: &str) -> (bool, String) {
    let out = s.kubectl(&["run", pod, "--image=nginx:latest"]);
    (out.status.success(), stderr(&out))
}

const DENIAL: &str = "policy baseline/disallow-latest-tag: pods \"p\" is forbidden: container \"p\" uses image \"nginx:latest\", tagged latest";

#[test]
fn a_policy_bundle_enforces_warns_audits_and_goes_without_a_restart() {
    let build = tempfile::tempdir().unwrap();
    let (_, tar) = build_baseline(build.path());
    let s = Server::start();
    let bundles = s.dir.path().join("bundles");
    std::fs::create_dir_all(&bundles).unwrap();
    std::fs::copy(&tar, bundles.join("baseline.tar")).unwrap();

    apply(&s, &policy_bundle("baseline", "baseline.tar", "Enforce"));
    let (status, reason, message) = wait_ready(&s, "baseline");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("True", "PoliciesInEffect"),
        "{message}"
    );
    let listed = s.ok(&["get", "pb"]);
    let row: Vec<&str> = listed.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(
        row[..4],
        ["baseline", "baseline.tar", "Enforce", "True"],
        "{listed}"
    );

    // Enforce: denied with the policy's message; a pinned image is fine.
    let (created, err) = run_latest(&s, "p");
    assert!(!created, "a :latest pod was created under Enforce");
    assert!(err.contains(DENIAL), "{err}");
    s.ok(&["run", "pinned", "--image=nginx:1.27"]);

    // Every decision is counted and timed on /metrics.
    let metrics = s.ok(&["get", "--raw", "/metrics"]);
    let denied = "capstan_policy_decisions_total{policy_bundle=\"baseline\",policy=\"disallow-latest-tag\",mode=\"Enforce\",verdict=\"denied\"} 1";
    assert!(metrics.lines().any(|l| l == denied), "{metrics}");
    let timed = "capstan_policy_duration_seconds_count{policy_bundle=\"baseline\",policy=\"disallow-latest-tag\"} ";
    assert!(metrics.lines().any(|l| l.starts_with(timed)), "{metrics}");
    // And every resource request, as kube-apiserver counts them.
    let created = "apiserver_request_total{code=\"201\",component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"namespace\",subresource=\"\",verb=\"POST\",version=\"v1\"} ";
    assert!(metrics.lines().any(|l| l.starts_with(created)), "{metrics}");
    let refused = "apiserver_request_total{code=\"403\",component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"namespace\",subresource=\"\",verb=\"POST\",version=\"v1\"} ";
    assert!(metrics.lines().any(|l| l.starts_with(refused)), "{metrics}");

    // matchConditions: a pod labelled exempt is left alone, others are not.
    s.ok(&[
        "patch",
        "pb",
        "baseline",
        "--type=merge",
        "-p",
        r#"{"spec":{"matchConditions":[{"name":"not-exempt","expression":"!has(object.metadata.labels) || !('exempt' in object.metadata.labels)"}]}}"#,
    ]);
    assert_eq!(wait_ready(&s, "baseline").0, "True");
    s.ok(&[
        "run",
        "exempt",
        "--image=nginx:latest",
        "--labels=exempt=yes",
    ]);
    assert!(run_latest(&s, "p").1.contains(DENIAL));

    // A generation naming a missing bundle: refused, the previous one stays.
    s.ok(&[
        "patch",
        "pb",
        "baseline",
        "--type=merge",
        "-p",
        r#"{"spec":{"bundle":"gone.tar"}}"#,
    ]);
    let (status, reason, message) = wait_ready(&s, "baseline");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "BundleNotFound"),
        "{message}"
    );
    assert!(
        message.contains("bundles/gone.tar") && message.contains("stays in effect"),
        "{message}"
    );
    assert!(run_latest(&s, "p").1.contains(DENIAL));

    // Warn: created, kubectl prints the policy's message as a warning.
    s.ok(&[
        "patch",
        "pb",
        "baseline",
        "--type=merge",
        "-p",
        r#"{"spec":{"bundle":"baseline.tar","mode":"Warn"}}"#,
    ]);
    assert_eq!(wait_ready(&s, "baseline").0, "True");
    let (created, err) = run_latest(&s, "p");
    assert!(created, "{err}");
    assert!(err.contains(&format!("Warning: {DENIAL}")), "{err}");

    // Audit: created without a warning, the violation in the server's log.
    s.ok(&[
        "patch",
        "pb",
        "baseline",
        "--type=merge",
        "-p",
        r#"{"spec":{"mode":"Audit"}}"#,
    ]);
    assert_eq!(wait_ready(&s, "baseline").0, "True");
    let out = s.kubectl(&["run", "audited", "--image=nginx:latest"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("Warning"), "{}", stderr(&out));
    let log = plain_log(&s);
    let line = log
        .lines()
        .find(|l| l.contains("policy violation audited") && l.contains("name=audited"))
        .unwrap_or_else(|| panic!("no audit line: {log}"));
    for part in [
        "bundle=baseline",
        "policy=disallow-latest-tag",
        "namespace=default",
        "resource=pods",
        "uid=",
    ] {
        assert!(line.contains(part), "{part} missing: {line}");
    }

    // Deleted: its policies no longer run.
    s.ok(&["delete", "pb", "baseline"]);
    assert!(eventually(WAIT, || s
        .log()
        .contains("policy bundle removed")));
    let out = s.kubectl(&["run", "free", "--image=nginx:latest"]);
    assert!(
        out.status.success() && !stderr(&out).contains("Warning"),
        "{}",
        stderr(&out)
    );
    assert!(!s
        .log()
        .lines()
        .any(|l| l.contains("policy violation audited") && l.contains("name=free")));
}

#[test]
fn missing_and_tampered_bundles_are_refused_and_bad_specs_are_invalid() {
    let build = tempfile::tempdir().unwrap();
    let (layout, _) = build_baseline(build.path());
    let s = Server::start();
    let tampered = s.dir.path().join("bundles").join("tampered");
    copy_dir(Path::new(&layout), &tampered);
    let blob = std::fs::read_dir(tampered.join("blobs/sha256"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    let mut bytes = std::fs::read(&blob).unwrap();
    bytes[100] ^= 0xff;
    std::fs::write(&blob, bytes).unwrap();

    apply(&s, &policy_bundle("missing", "nope.tar", "Enforce"));
    apply(&s, &policy_bundle("tampered", "tampered", "Enforce"));
    let (status, reason, message) = wait_ready(&s, "missing");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "BundleNotFound"),
        "{message}"
    );
    assert!(
        message.contains("bundles/nope.tar")
            && message.contains("none of its policies are in effect"),
        "{message}"
    );
    let (status, reason, message) = wait_ready(&s, "tampered");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "InvalidBundle"),
        "{message}"
    );
    assert!(
        message.contains("bundles/tampered") && message.contains("(tampered with or corrupt)"),
        "{message}"
    );
    // A bundle read and checked whose policies cannot be built (a CEL
    // condition that does not compile): Loaded, not Compiled.
    copy_dir(
        Path::new(&layout),
        &s.dir.path().join("bundles").join("good"),
    );
    apply(
        &s,
        "apiVersion: policies.capstan.dev/v1alpha1\nkind: PolicyBundle\nmetadata:\n  name: uncompiled\n\
         spec:\n  bundle: good\n  matchConditions: [{name: broken, expression: 'object.'}]\n",
    );
    let (status, reason, message) = wait_ready(&s, "uncompiled");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "InvalidSpec"),
        "{message}"
    );
    assert!(
        message.contains("matchConditions[0].expression: Invalid value"),
        "{message}"
    );
    let pb = s.json(&["get", "pb", "uncompiled", "-o", "json"]);
    let state: Vec<(String, String)> = pb["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["type"].to_string(), c["status"].to_string()))
        .collect();
    for (kind, want) in [
        ("Loaded", "True"),
        ("Compiled", "False"),
        ("Ready", "False"),
    ] {
        assert!(
            state.contains(&(format!("{kind:?}"), format!("{want:?}"))),
            "{kind} should be {want}: {state:?}"
        );
    }

    // The chain keeps working, with none of their policies.
    s.ok(&["run", "p", "--image=nginx:latest"]);
    s.ok(&["create", "configmap", "c"]);

    let bad = "apiVersion: policies.capstan.dev/v1alpha1\nkind: PolicyBundle\nmetadata:\n  name: bad\nspec:\n  bundle: ../../etc/x.tar\n  mode: Sometimes\n";
    let out = s.kubectl_stdin(&["apply", "-f", "-"], Some(bad));
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("The PolicyBundle \"bad\" is invalid"), "{err}");
    assert!(
        err.contains("spec.mode: Unsupported value: \"Sometimes\""),
        "{err}"
    );
    assert!(
        err.contains("spec.bundle: Invalid value")
            && err.contains("must not contain a '..' path segment"),
        "{err}"
    );
    assert!(stdout(&s.kubectl(&["get", "pb", "-o", "name"]))
        .lines()
        .all(|l| !l.ends_with("/bad")));
}

#[test]
fn a_verification_key_that_is_pem_wrapped_garbage_is_invalid() {
    let s = Server::start();
    let garbage = "-----BEGIN PUBLIC KEY-----\naGVsbG8gd29ybGQ=\n-----END PUBLIC KEY-----\n";
    let body = serde_json::json!({"apiVersion": "policies.capstan.dev/v1alpha1", "kind": "PolicyBundle",
        "metadata": {"name": "garbage"},
        "spec": {"bundle": "b.tar", "verification": {"publicKeys": [garbage]}}});
    let (code, status, _) = s.request(
        "POST",
        "/apis/policies.capstan.dev/v1alpha1/policybundles",
        "application/json",
        Some(&body.to_string()),
    );
    assert_eq!(
        (code, status["reason"].as_str()),
        (422, Some("Invalid")),
        "{status}"
    );
    let cause = &status["details"]["causes"][0];
    assert_eq!(
        cause["field"], "spec.verification.publicKeys[0]",
        "{status}"
    );
    assert!(
        cause["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Invalid value: \"string\": must be an ECDSA P-256 public key"),
        "{status}"
    );
    assert!(s.fails(&["get", "pb", "garbage"]).contains("not found"));
}

/// The server's log without its colours' escape sequences.
fn plain_log(s: &Server) -> String {
    let mut out = String::new();
    let log = s.log();
    let mut chars = log.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters, then a final letter.
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn only_cluster_admins_manage_policy_bundles_and_no_write_fails_while_modes_swap() {
    let build = tempfile::tempdir().unwrap();
    let (_, tar) = build_baseline(build.path());
    let s = Server::start();
    let bundles = s.dir.path().join("bundles");
    std::fs::create_dir_all(&bundles).unwrap();
    std::fs::copy(&tar, bundles.join("baseline.tar")).unwrap();

    // An editor of every namespace may not read or create them.
    s.ok(&[
        "create",
        "clusterrolebinding",
        "alice-edit",
        "--clusterrole=edit",
        "--user=alice",
    ]);
    let alice = s.user_kubeconfig("alice", &[]);
    let out = s.kubectl_with(&alice, &["get", "--raw", "/metrics"]);
    assert!(
        stderr(&out).contains("User \"alice\" cannot get path \"/metrics\""),
        "{}",
        stderr(&out)
    );
    let out = s.kubectl_with(&alice, &["get", "policybundles"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("policybundles.policies.capstan.dev is forbidden: User \"alice\" cannot list resource \"policybundles\" in API group \"policies.capstan.dev\" at the cluster scope"),
        "{}",
        stderr(&out)
    );

    // `:latest` pods created while the mode swaps between Warn and Audit:
    // allowed in both, none fails during a swap.
    apply(&s, &policy_bundle("baseline", "baseline.tar", "Warn"));
    assert_eq!(wait_ready(&s, "baseline").0, "True");
    let writer = {
        let kubeconfig = s.kubeconfig();
        std::thread::spawn(move || {
            (0..24)
                .map(|i| {
                    std::process::Command::new(crate::support::kubectl_path())
                        .arg("--kubeconfig")
                        .arg(&kubeconfig)
                        .args(["run", &format!("s{i}"), "--image=nginx:latest"])
                        .output()
                        .unwrap()
                })
                .filter(|out| !out.status.success())
                .map(|out| stderr(&out))
                .collect::<Vec<_>>()
        })
    };
    for mode in ["Audit", "Warn", "Audit", "Warn"] {
        let patch = format!(r#"{{"spec":{{"mode":"{mode}"}}}}"#);
        s.ok(&["patch", "pb", "baseline", "--type=merge", "-p", &patch]);
        assert_eq!(wait_ready(&s, "baseline").0, "True");
    }
    let failed = writer.join().unwrap();
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(s.ok(&["get", "pods", "-o", "name"]).lines().count(), 24);
}

#[test]
fn every_replica_on_etcd_loads_the_policy_bundles() {
    let build = tempfile::tempdir().unwrap();
    let (_, tar) = build_baseline(build.path());
    let etcd = crate::etcd::Etcd::start(1);
    let servers = etcd.servers();
    let a = Server::start_with(&["--etcd-servers", &servers]);
    let b = a.start_replica(&["--etcd-servers", &servers]);
    let bundles = a.dir.path().join("bundles");
    std::fs::create_dir_all(&bundles).unwrap();
    std::fs::copy(&tar, bundles.join("baseline.tar")).unwrap();

    apply(&a, &policy_bundle("baseline", "baseline.tar", "Enforce"));
    assert_eq!(wait_ready(&a, "baseline").0, "True");
    // Only one replica leads the controllers; both enforce.
    for s in [&a, &b] {
        let denied = eventually(WAIT, || {
            let out = s.kubectl(&["run", "p", "--image=nginx:latest", "--dry-run=server"]);
            stderr(&out).contains(DENIAL)
        });
        assert!(denied, "{}", s.log());
    }
    assert!(run_latest(&b, "p").1.contains(DENIAL));
    b.ok(&[
        "patch",
        "pb",
        "baseline",
        "--type=merge",
        "-p",
        r#"{"spec":{"mode":"Warn"}}"#,
    ]);
    let warned = eventually(WAIT, || {
        let out = a.kubectl(&["run", "p", "--image=nginx:latest", "--dry-run=server"]);
        out.status.success() && stderr(&out).contains(&format!("Warning: {DENIAL}"))
    });
    assert!(warned, "{}", a.log());
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The multi-tenancy bundle's context-aware policies read the live store
/// (what `capstan policy test` cannot show offline): a workload waits for
/// its namespace's first ResourceQuota, and an Ingress host another
/// namespace holds is refused naming its holder.
#[test]
fn the_multi_tenancy_bundle_reads_the_cluster_it_guards() {
    let build = tempfile::tempdir().unwrap();
    let (_, tar) = build_bundle(build.path(), "multi-tenancy", 3);
    let s = Server::start();
    let bundles = s.dir.path().join("bundles");
    std::fs::create_dir_all(&bundles).unwrap();
    std::fs::copy(&tar, bundles.join("multi-tenancy.tar")).unwrap();
    apply(
        &s,
        "apiVersion: policies.capstan.dev/v1alpha1\nkind: PolicyBundle\nmetadata:\n  name: multi-tenancy\n\
         spec:\n  bundle: multi-tenancy.tar\n",
    );
    let (status, _, message) = wait_ready(&s, "multi-tenancy");
    assert_eq!(status, "True", "{message}");

    let err = s.fails(&["create", "namespace", "scratch"]);
    assert!(err.contains("policy multi-tenancy/require-namespace-labels: namespaces \"scratch\" is forbidden: missing required label \"team\""), "{err}");
    for ns in ["team-a", "team-b"] {
        apply(
            &s,
            &format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}, labels: {{team: {ns}}}}}\n"),
        );
    }

    let run = ["run", "web", "-n", "team-a", "--image=nginx:1.27"];
    let err = s.fails(&run);
    assert!(err.contains("policy multi-tenancy/require-quota: pods \"web\" is forbidden: namespace \"team-a\" has no ResourceQuota"), "{err}");
    s.ok(&[
        "create",
        "quota",
        "compute",
        "-n",
        "team-a",
        "--hard=pods=10",
    ]);
    s.ok(&run);

    apply(&s, &ingress("team-a", "shop", "shop.example.com"));
    let copy = s.kubectl_stdin(
        &["apply", "-f", "-"],
        Some(&ingress("team-b", "copy", "shop.example.com")),
    );
    assert!(!copy.status.success(), "{}", stdout(&copy));
    assert!(stderr(&copy).contains("policy multi-tenancy/unique-ingress-host: ingresses.networking.k8s.io \"copy\" is forbidden: host \"shop.example.com\" is already used by ingress team-a/shop"), "{}", stderr(&copy));
    apply(&s, &ingress("team-b", "blog", "blog.example.com"));
}

#[test]
fn a_bundles_admission_policies_deny_in_enforce_and_warn_in_warn() {
    let build = tempfile::tempdir().unwrap();
    let (_, tar) = build_workload_limits(build.path());
    let s = Server::start();
    let bundles = s.dir.path().join("bundles");
    std::fs::create_dir_all(&bundles).unwrap();
    std::fs::copy(&tar, bundles.join("wl.tar")).unwrap();
    let bundle = |mode: &str| {
        format!(
            "apiVersion: policies.capstan.dev/v1alpha1\nkind: PolicyBundle\nmetadata:\n  name: wl\n\
             spec:\n  bundle: wl.tar\n  mode: {mode}\n"
        )
    };
    apply(&s, &bundle("Enforce"));
    let (status, _, message) = wait_ready(&s, "wl");
    assert_eq!(status, "True", "{message}");
    let big = s.kubectl(&[
        "create",
        "deployment",
        "big",
        "--image=nginx:1.27",
        "--replicas=6",
    ]);
    assert!(!big.status.success());
    assert!(
        stderr(&big).contains("policy wl/replica-limit: deployments.apps \"big\" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: replicas must be at most 5, not 6"),
        "{}",
        stderr(&big)
    );
    s.ok(&[
        "create",
        "deployment",
        "small",
        "--image=nginx:1.27",
        "--replicas=2",
    ]);
    // The binding's namespaceSelector, against the live namespaces.
    let unowned = s.kubectl(&["create", "configmap", "settings"]);
    assert!(
        stderr(&unowned).contains("every ConfigMap needs a team label"),
        "{}",
        stderr(&unowned)
    );
    s.ok(&["create", "configmap", "settings", "-n", "kube-system"]);

    apply(&s, &bundle("Warn"));
    assert!(eventually(WAIT, || {
        let out = s.kubectl(&["create", "configmap", "warned", "--dry-run=server"]);
        out.status.success() && stderr(&out).contains("every ConfigMap needs a team label")
    }));
}
