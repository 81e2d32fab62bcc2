//! Capstan on etcd: two replicas on a three-member etcd cluster give one
//! API (reads, watches, conflicts and RBAC decisions agree), an etcd outage
//! gives 503s and a not-ready /readyz and heals by itself, and kill -9 under
//! write load loses no acknowledged write (on etcd and on the embedded store).

use crate::etcd::Etcd;
use crate::support::{eventually, stderr, stdout, Server};
use serde_json::Value;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn on_etcd(etcd: &Etcd) -> Vec<String> {
    vec!["--etcd-servers".into(), etcd.servers()]
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn two_replicas_on_one_etcd_cluster_give_one_api() {
    let mut etcd = Etcd::start(3);
    let flags = on_etcd(&etcd);
    let a = Server::start_with(&args(&flags));
    let b = a.start_replica(&args(&flags));
    a.ok(&["create", "namespace", "rep"]);
    a.ok(&[
        "create",
        "configmap",
        "first",
        "-n",
        "rep",
        "--from-literal=k=v",
    ]);
    let read: Value =
        serde_json::from_str(&b.ok(&["get", "configmap", "first", "-n", "rep", "-o", "json"]))
            .unwrap();
    assert_eq!(read["data"]["k"], "v");
    // etcd's own figures, as kube reports them.
    let metrics = a.ok(&["get", "--raw", "/metrics"]);
    let size = metrics
        .lines()
        .find_map(|l| {
            l.strip_prefix(r#"apiserver_storage_size_bytes{storage_cluster_id="etcd-0"} "#)
        })
        .and_then(|v| v.parse::<f64>().ok());
    assert!(
        size.is_some_and(|b| b > 0.0),
        "etcd's database size: {size:?}"
    );
    assert!(metrics
        .contains(r#"etcd_request_duration_seconds_count{operation="create",type="configmaps"}"#));

    // A watch on B sees every write made through A, in order, once each.
    let mut watch = Command::new(crate::support::kubectl_path())
        .arg("--kubeconfig")
        .arg(b.kubeconfig())
        .args([
            "--server",
            &b.url(""),
            "get",
            "configmaps",
            "-n",
            "rep",
            "-w",
            "-o",
            "name",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    for i in 0..5 {
        a.ok(&["create", "configmap", &format!("cm-{i}"), "-n", "rep"]);
    }
    std::thread::sleep(Duration::from_secs(2));
    let _ = watch.kill();
    let mut seen = String::new();
    watch
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut seen)
        .unwrap();
    let _ = watch.wait();
    let events: Vec<&str> = seen.lines().filter(|l| l.contains("cm-")).collect();
    let want: Vec<String> = (0..5).map(|i| format!("configmap/cm-{i}")).collect();
    assert_eq!(events, want, "{seen}");

    // A stale update through either replica is a conflict.
    let old = b.ok(&["get", "configmap", "first", "-n", "rep", "-o", "json"]);
    a.ok(&["label", "configmap", "first", "-n", "rep", "touched=yes"]);
    let out = b.kubectl_stdin(&["replace", "-f", "-"], Some(&old));
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("the object has been modified"),
        "{}",
        stderr(&out)
    );

    // An RBAC binding made through A decides at once on B.
    let bob = b.user_kubeconfig("bob", &[]);
    a.ok(&[
        "create",
        "rolebinding",
        "bob-view",
        "--clusterrole=view",
        "--user=bob",
        "-n",
        "rep",
    ]);
    let listed = eventually(Duration::from_secs(5), || {
        b.kubectl_with(&bob, &["get", "configmaps", "-n", "rep"])
            .status
            .success()
    });
    assert!(listed, "bob cannot list through B: {}", b.log());

    // One member of three down: the API keeps serving.
    etcd.stop(0);
    let created = eventually(Duration::from_secs(20), || {
        a.kubectl(&["create", "configmap", "after", "-n", "rep"])
            .status
            .success()
    });
    assert!(created, "{}", a.log());
    assert!(b
        .ok(&["get", "configmap", "after", "-n", "rep"])
        .contains("after"));
}

#[test]
fn an_etcd_outage_gives_503_and_heals_by_itself() {
    let mut etcd = Etcd::start(1);
    let s = Server::start_with(&args(&on_etcd(&etcd)));
    s.ok(&["create", "configmap", "before", "-n", "default"]);
    etcd.stop(0);
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"during"}}"#;
    let (code, status, _) = s.request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        Some(body),
    );
    assert_eq!(code, 503, "{status}");
    assert_eq!(status["reason"], "ServiceUnavailable", "{status}");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains("storage is unavailable"),
        "{status}"
    );
    let ready = s.curl(&[
        "-s",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &s.url("/readyz"),
    ]);
    assert_ne!(stdout(&ready), "200");
    etcd.restart(0);
    let healed = eventually(Duration::from_secs(30), || {
        s.kubectl(&["create", "configmap", "after", "-n", "default"])
            .status
            .success()
    });
    assert!(healed, "{}", s.log());
    let names = s.ok(&["get", "configmaps", "-n", "default", "-o", "name"]);
    assert!(
        names.contains("configmap/before") && names.contains("configmap/after"),
        "{names}"
    );
    assert!(!names.contains("configmap/during"), "{names}");
    let ready = s.curl(&[
        "-s",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &s.url("/readyz"),
    ]);
    assert_eq!(stdout(&ready), "200");
}

/// Creates ConfigMaps `load-<writer>-<n>` through `s` until stopped; returns
/// (name, resourceVersion) of each acknowledged one.
fn write_until(
    s: &Server,
    writer: usize,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Vec<(String, i64)>> {
    let (url, ca, cert, key) = (
        s.url("/api/v1/namespaces/default/configmaps"),
        s.pki("ca.crt"),
        s.pki("admin.crt"),
        s.pki("admin.key"),
    );
    std::thread::spawn(move || {
        let mut acked = Vec::new();
        for i in 0.. {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            let body = format!(
                r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"load-{writer}-{i}"}}}}"#
            );
            let out = Command::new("curl")
                .args(["-s", "-m", "5", "--cacert"])
                .arg(&ca)
                .arg("--cert")
                .arg(&cert)
                .arg("--key")
                .arg(&key)
                .args([
                    "-H",
                    "Content-Type: application/json",
                    "-X",
                    "POST",
                    "--data",
                    &body,
                    &url,
                ])
                .output();
            let Ok(out) = out else { continue };
            let reply: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
            if let Some(rv) = reply
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
            {
                acked.push((format!("load-{writer}-{i}"), rv.parse().unwrap()));
            }
        }
        acked
    })
}

fn no_acknowledged_write_is_lost(extra: &[&str]) {
    let mut s = Server::start_with(extra);
    let stop = Arc::new(AtomicBool::new(false));
    // Several writers at once, so that writes share commits.
    let writers: Vec<_> = (0..4).map(|w| write_until(&s, w, stop.clone())).collect();
    std::thread::sleep(Duration::from_millis(1500));
    s.stop(true);
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::SeqCst);
    let acked: Vec<_> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    assert!(
        acked.len() > 5,
        "too few writes before the kill: {}",
        acked.len()
    );
    s.restart(true);
    let list: Value =
        serde_json::from_str(&s.ok(&["get", "configmaps", "-n", "default", "-o", "json"])).unwrap();
    let stored: std::collections::HashMap<String, i64> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["metadata"]["name"].as_str().unwrap().to_string(),
                o["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap()
                    .parse()
                    .unwrap(),
            )
        })
        .collect();
    for (name, rv) in &acked {
        assert_eq!(
            stored.get(name),
            Some(rv),
            "acknowledged {name} at {rv} is missing or changed"
        );
    }
    let last = acked.iter().map(|(_, rv)| *rv).max().unwrap();
    let next: Value = serde_json::from_str(&s.ok(&[
        "create",
        "configmap",
        "next",
        "-n",
        "default",
        "-o",
        "json",
    ]))
    .unwrap();
    let next_rv: i64 = next["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(next_rv > last, "revision went back: {next_rv} <= {last}");
}

#[test]
fn kill_9_under_write_load_loses_nothing_on_the_embedded_store() {
    no_acknowledged_write_is_lost(&[]);
}

#[test]
fn kill_9_under_write_load_loses_nothing_on_etcd() {
    let etcd = Etcd::start(1);
    let flags = on_etcd(&etcd);
    no_acknowledged_write_is_lost(&args(&flags));
}

/// Replicas started with `lease` (kube-controller-manager's election flags).
fn two_electing_replicas(etcd: &Etcd, lease: &[&str]) -> (Server, Server) {
    let mut flags = on_etcd(etcd);
    flags.extend(lease.iter().map(|s| s.to_string()));
    let a = Server::start_with(&args(&flags));
    let b = a.start_replica(&args(&flags));
    (a, b)
}

fn lease_holder(s: &Server) -> String {
    let out = s.kubectl(&[
        "get",
        "lease",
        "-n",
        "kube-system",
        "capstan-controllers",
        "-o",
        "jsonpath={.spec.holderIdentity}",
    ]);
    stdout(&out).trim().to_string()
}

/// Waits for a holder of the controllers' Lease; returns (leader, follower).
fn split_by_leadership(a: Server, b: Server) -> (Server, Server, String) {
    let mut holder = String::new();
    assert!(
        eventually(Duration::from_secs(20), || {
            holder = lease_holder(&a);
            !holder.is_empty()
        }),
        "no replica took the lease: {}",
        a.log()
    );
    let leads = |s: &Server| s.log().contains(&holder) && s.log().contains("became leader");
    assert!(
        leads(&a) != leads(&b),
        "exactly one leader:\nA: {}\nB: {}",
        a.log(),
        b.log()
    );
    if leads(&a) {
        (a, b, holder)
    } else {
        (b, a, holder)
    }
}

/// The follower holds the Lease instead of `first` within `within`.
fn takes_over(follower: &Server, first: &str, within: Duration) {
    assert!(
        eventually(within, || {
            let holder = lease_holder(follower);
            !holder.is_empty() && holder != first
        }),
        "the follower did not take over the lease: {}",
        follower.log()
    );
}

/// The follower runs the controllers: a new namespace gets its default ServiceAccount.
fn controllers_run_through(s: &Server, namespace: &str) {
    s.ok(&["create", "namespace", namespace]);
    assert!(
        eventually(Duration::from_secs(15), || {
            s.kubectl(&["get", "serviceaccount", "default", "-n", namespace])
                .status
                .success()
        }),
        "no default ServiceAccount in {namespace}: {}",
        s.log()
    );
}

#[test]
fn one_replica_leads_the_controllers_and_a_stopped_leader_hands_over_at_once() {
    let etcd = Etcd::start(1);
    // A lease far longer than the test waits: only a release explains a quick takeover.
    let lease = [
        "--leader-elect-lease-duration=120s",
        "--leader-elect-renew-deadline=60s",
        "--leader-elect-retry-period=200ms",
    ];
    let (a, b) = two_electing_replicas(&etcd, &lease);
    let (mut leader, follower, first) = split_by_leadership(a, b);
    leader.stop(false);
    takes_over(&follower, &first, Duration::from_secs(20));
    controllers_run_through(&follower, "after-release");
}

#[test]
fn a_killed_leader_is_replaced_after_its_lease_expires() {
    let etcd = Etcd::start(1);
    let lease = [
        "--leader-elect-lease-duration=3s",
        "--leader-elect-renew-deadline=2s",
        "--leader-elect-retry-period=200ms",
    ];
    let (a, b) = two_electing_replicas(&etcd, &lease);
    let (mut leader, follower, first) = split_by_leadership(a, b);
    assert_eq!(lease_holder(&follower), first, "the leader keeps renewing");
    leader.stop(true);
    takes_over(&follower, &first, Duration::from_secs(30));
    controllers_run_through(&follower, "after-failover");
}

/// Replicas behind a load balancer are reached under its name: `--tls-san`
/// adds it to the shared serving certificate, and kubectl verifies it.
#[test]
fn tls_san_names_are_served_with_the_data_directorys_ca() {
    let s = Server::start_with(&["--tls-san", "capstan.example.com,10.9.8.7"]);
    let as_name = |name: &str| s.kubectl(&["--tls-server-name", name, "get", "ns", "default"]);
    let ok = as_name("capstan.example.com");
    assert!(ok.status.success(), "{}", stderr(&ok));
    let refused = as_name("other.example.com");
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("certificate"),
        "a TLS name error: {}",
        stderr(&refused)
    );
}

/// A replica killed and started again on the same address is the same
/// candidate: it resumes its Lease at once rather than after the default
/// 15 s lease duration, so a new namespace gets its ServiceAccount quickly.
#[test]
fn a_leader_restarted_on_its_address_resumes_its_lease_at_once() {
    let etcd = Etcd::start(1);
    let mut s = Server::start_with(&args(&on_etcd(&etcd)));
    let mut first = String::new();
    let leads = eventually(Duration::from_secs(10), || {
        first = lease_holder(&s);
        !first.is_empty()
    });
    assert!(leads, "the only replica leads: {}", s.log());
    s.restart(true);
    assert_eq!(lease_holder(&s), first);
    s.ok(&["create", "namespace", "after-restart"]);
    let quick = eventually(Duration::from_secs(8), || {
        s.kubectl(&["get", "serviceaccount", "default", "-n", "after-restart"])
            .status
            .success()
    });
    assert!(quick, "controllers did not resume: {}", s.log());
}

/// A CRD created through one replica is served by the other at once (it
/// learns of it through the store's watch), and so is its removal.
#[test]
fn a_crd_created_on_one_replica_is_served_by_the_other() {
    let etcd = Etcd::start(1);
    let flags = on_etcd(&etcd);
    let a = Server::start_with(&args(&flags));
    let b = a.start_replica(&args(&flags));
    let crd = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: notes.example.com}
spec:
  group: example.com
  scope: Cluster
  names: {plural: notes, singular: note, kind: Note}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
";
    a.ok_stdin(&["apply", "-f", "-"], crd);
    a.ok(&[
        "wait",
        "--for=condition=established",
        "--timeout=30s",
        "crd/notes.example.com",
    ]);
    let note = "apiVersion: example.com/v1\nkind: Note\nmetadata: {name: n1}\ntext: hello\n";
    b.ok_stdin(&["create", "-f", "-"], note);
    let read: Value = serde_json::from_str(&a.ok(&["get", "note", "n1", "-o", "json"])).unwrap();
    assert_eq!(read["text"], "hello");
    a.ok(&["delete", "crd", "notes.example.com", "--timeout=30s"]);
    assert!(eventually(Duration::from_secs(10), || {
        b.get_json("/apis/example.com/v1/notes").0 == 404
    }));
}
