//! Background audit into PolicyReports with the real binary and kubectl:
//! a PolicyBundle in Audit mode reports the `:latest` pods created before
//! it existed and after (fail, with the policy's message) and a pinned
//! one (pass) in its namespace's PolicyReport, with the summary counts
//! `kubectl get polr` prints; a pod deleted leaves the report at the next
//! scan; a Warn-mode PolicyBundle writes none; a deleted PolicyBundle's
//! reports go. Cluster-scoped objects (namespaces) land in a
//! ClusterPolicyReport, in Enforce mode too; a fix shows at the periodic
//! scan. A namespace's viewers read its reports.

use crate::policy_bundle_api::{apply, wait_ready};
use crate::policy_bundles::{build_baseline, build_bundle};
use crate::support::{eventually, stdout, Server};
use serde_json::Value;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

fn policy_bundle(name: &str, bundle: &str, mode: &str, policy: &str) -> String {
    format!(
        "apiVersion: policies.capstan.dev/v1alpha1\nkind: PolicyBundle\nmetadata:\n  name: {name}\n\
         spec:\n  bundle: {bundle}\n  mode: {mode}\n  policies: [{policy}]\n"
    )
}

/// A server auditing every `interval`, with `bundle`'s tarball under its
/// data directory.
fn server_with(bundle: &str, tar: &str, interval: &str) -> Server {
    let s = Server::start_with(&["--policy-audit-interval", interval]);
    let bundles = s.dir.path().join("bundles");
    std::fs::create_dir_all(&bundles).unwrap();
    std::fs::copy(tar, bundles.join(format!("{bundle}.tar"))).unwrap();
    s
}

/// The report as stored, if any.
fn report(s: &Server, args: &[&str]) -> Option<Value> {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "json", "--ignore-not-found"]);
    let out = s.kubectl(&all);
    serde_json::from_slice(&out.stdout).ok()
}

/// (object name, result, message) of each result.
fn results(report: &Value) -> Vec<(String, String, String)> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    report["results"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .map(|r| {
                    (
                        text(&r["resources"][0]["name"]),
                        text(&r["result"]),
                        text(&r["message"]),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Waits until the report says `check`; returns it.
fn wait_report(s: &Server, args: &[&str], check: impl Fn(&Value) -> bool) -> Value {
    let mut last = None;
    let ok = eventually(WAIT, || {
        last = report(s, args);
        last.as_ref().is_some_and(&check)
    });
    assert!(ok, "report never matched: {last:#?}\n{}", s.log());
    last.unwrap()
}

fn latest_denial(pod: &str) -> String {
    format!(
        "pods \"{pod}\" is forbidden: container \"{pod}\" uses image \"nginx:latest\", tagged latest: \
         pin a tag other than \"latest\", or a digest"
    )
}

#[test]
fn an_audit_mode_bundle_reports_existing_and_new_pods_per_namespace() {
    let build = tempfile::tempdir().unwrap();
    let (_, tar) = build_baseline(build.path());
    // No periodic scan during the test: what it sees comes from the scans
    // a bundle change or an audited violation starts.
    let s = server_with("baseline", &tar, "30m");
    s.ok(&["create", "namespace", "team-a"]);
    s.ok(&["run", "before", "-n", "team-a", "--image=nginx:latest"]);

    apply(
        &s,
        &policy_bundle("baseline", "baseline.tar", "Audit", "disallow-latest-tag"),
    );
    assert_eq!(wait_ready(&s, "baseline").0, "True");
    s.ok(&["run", "after", "-n", "team-a", "--image=nginx:latest"]);
    s.ok(&["run", "pinned", "-n", "team-a", "--image=nginx:1.27"]);

    let polr = ["polr", "pb-baseline", "-n", "team-a"];
    let r = wait_report(&s, &polr, |r| results(r).len() == 3);
    let mut found = results(&r);
    found.sort();
    assert_eq!(
        found,
        [
            ("after".into(), "fail".into(), latest_denial("after")),
            ("before".into(), "fail".into(), latest_denial("before")),
            ("pinned".into(), "pass".into(), String::new()),
        ]
    );
    assert_eq!(
        r["summary"],
        serde_json::json!({"pass": 1, "fail": 2, "warn": 0, "error": 0, "skip": 0})
    );
    let first = &r["results"][0];
    assert_eq!(first["policy"], "baseline/disallow-latest-tag");
    assert_eq!(first["source"], "capstan");
    assert_eq!(first["resources"][0]["kind"], "Pod");
    assert!(first["timestamp"]["seconds"].as_i64().unwrap() > 0);
    assert_eq!(
        r["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "capstan"
    );

    let listed = s.ok(&["get", "polr", "-A"]);
    let header: Vec<&str> = listed.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "NAMESPACE",
            "NAME",
            "PASS",
            "FAIL",
            "WARN",
            "ERROR",
            "SKIP",
            "AGE"
        ],
        "{listed}"
    );
    let row: Vec<&str> = listed.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(
        row[..7],
        ["team-a", "pb-baseline", "1", "2", "0", "0", "0"],
        "{listed}"
    );

    // The namespace's viewers read it (`view` aggregates the reports' role).
    s.ok(&[
        "create",
        "rolebinding",
        "alice-view",
        "--clusterrole=view",
        "--user=alice",
        "-n",
        "team-a",
    ]);
    let alice = s.user_kubeconfig("alice", &[]);
    let read = eventually(WAIT, || {
        let out = s.kubectl_with(&alice, &["get", "polr", "-n", "team-a"]);
        out.status.success() && stdout(&out).contains("pb-baseline")
    });
    assert!(read, "a viewer of team-a cannot read its reports");

    // The pod deleted: its result goes at the next scan (here, the one a
    // new PolicyBundle starts); a Warn-mode PolicyBundle writes no report.
    s.ok(&["delete", "pod", "after", "-n", "team-a", "--wait=false"]);
    apply(
        &s,
        &policy_bundle("warned", "baseline.tar", "Warn", "disallow-latest-tag"),
    );
    assert_eq!(wait_ready(&s, "warned").0, "True");
    let r = wait_report(&s, &polr, |r| results(r).len() == 2);
    assert!(results(&r).iter().all(|(name, _, _)| name != "after"));
    assert_eq!(r["summary"]["fail"], 1);
    assert!(report(&s, &["polr", "pb-warned", "-n", "team-a"]).is_none());

    // The PolicyBundle deleted: its reports go.
    s.ok(&["delete", "pb", "baseline"]);
    assert!(
        eventually(WAIT, || report(&s, &polr).is_none()),
        "{}",
        s.log()
    );
    assert!(!s.ok(&["get", "polr", "-A"]).contains("pb-"));
}

/// An Enforce-mode PolicyBundle reports the objects stored before it; a
/// fix its mode lets through is seen by the periodic scan.
#[test]
fn cluster_scoped_objects_are_reported_in_a_cluster_policy_report() {
    let build = tempfile::tempdir().unwrap();
    let (_, tar) = build_bundle(build.path(), "multi-tenancy", 3);
    let s = server_with("multi-tenancy", &tar, "2s");
    apply(
        &s,
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, labels: {team: a}}\n",
    );
    apply(
        &s,
        &policy_bundle(
            "tenancy",
            "multi-tenancy.tar",
            "Enforce",
            "require-namespace-labels",
        ),
    );
    assert_eq!(wait_ready(&s, "tenancy").0, "True");
    let r = wait_report(&s, &["cpolr", "pb-tenancy"], |r| !results(r).is_empty());
    assert_eq!(r["kind"], "ClusterPolicyReport");
    let found = results(&r);
    assert!(
        found.contains(&("team-a".into(), "pass".into(), String::new())),
        "{found:?}"
    );
    assert!(
        found.contains(&(
            "default".into(),
            "fail".into(),
            "namespaces \"default\" is forbidden: missing required label \"team\"".into()
        )),
        "{found:?}"
    );
    assert_eq!(r["results"][0]["properties"]["mode"], "Enforce");
    let listed = s.ok(&["get", "cpolr"]);
    assert!(listed.starts_with("NAME"), "{listed}");
    assert!(listed.contains("pb-tenancy"), "{listed}");

    s.ok(&["label", "namespace", "default", "team=platform"]);
    let r = wait_report(&s, &["cpolr", "pb-tenancy"], |r| {
        results(r)
            .iter()
            .any(|(name, result, _)| name == "default" && result == "pass")
    });
    let count = |want: &str| results(&r).iter().filter(|(_, x, _)| x == want).count();
    assert_eq!(r["summary"]["pass"], count("pass"));
    assert_eq!(r["summary"]["fail"], count("fail"));
}
