//! Watches: kubectl get -w, raw event streams from a resourceVersion, and 410 after compaction.

use crate::support::{eventually, Server};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn kubectl_get_watch_sees_new_objects() {
    let s = Server::start();
    s.ok(&["create", "configmap", "first"]);
    let mut child = Command::new(crate::support::kubectl_path())
        .arg("--kubeconfig")
        .arg(s.kubeconfig())
        .args(["get", "configmaps", "-w", "--request-timeout=20s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    s.ok(&["create", "configmap", "second"]);
    std::thread::sleep(Duration::from_millis(800));
    let _ = child.kill();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let _ = child.wait();
    assert!(out.contains("first") && out.contains("second"), "{out}");
}

fn events(s: &Server, path: &str) -> Vec<serde_json::Value> {
    parse_events(&crate::support::stdout(&s.curl(&["-N", &s.url(path)])))
}

fn parse_events(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The resourceVersion of the default namespace's ConfigMap list.
fn list_revision(s: &Server) -> String {
    let (_, list) = s.get_json("/api/v1/namespaces/default/configmaps");
    list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn watch_from_a_revision_replays_in_order() {
    let s = Server::start();
    let rv = list_revision(&s);
    s.ok(&["create", "configmap", "w"]);
    s.ok(&["label", "cm", "w", "x=y"]);
    s.ok(&["delete", "cm", "w"]);
    let evs = events(&s, &format!("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv}&timeoutSeconds=2"));
    let types: Vec<&str> = evs.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["ADDED", "MODIFIED", "DELETED"]);
    let rvs: Vec<i64> = evs
        .iter()
        .map(|e| {
            e["object"]["metadata"]["resourceVersion"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert!(rvs.windows(2).all(|w| w[0] < w[1]), "{rvs:?}");
    let filtered = events(&s, &format!("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv}&timeoutSeconds=1&labelSelector=x%3Dy"));
    let types: Vec<&str> = filtered
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        ["ADDED", "DELETED"],
        "a label change into the selector is an ADDED for this watcher"
    );
}

#[test]
fn watch_without_revision_starts_with_current_state_and_bookmarks() {
    let s = Server::start();
    s.ok(&["create", "configmap", "present"]);
    let evs = events(&s, "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan");
    // The namespace's objects (kube-root-ca.crt too), then the bookmark.
    let added: Vec<&str> = evs
        .iter()
        .take_while(|e| e["type"] == "ADDED")
        .filter_map(|e| e["object"]["metadata"]["name"].as_str())
        .collect();
    assert!(added.contains(&"present"), "{evs:?}");
    let bookmark = &evs[added.len()];
    assert_eq!(bookmark["type"], "BOOKMARK");
    assert_eq!(
        bookmark["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
}

#[test]
fn watch_from_a_compacted_revision_gets_410() {
    let s = Server::start_with(&["--history-revisions", "1", "--compaction-interval", "1"]);
    for i in 0..5 {
        s.ok(&["create", "configmap", &format!("c{i}")]);
    }
    let gone = eventually(Duration::from_secs(10), || {
        let evs = events(
            &s,
            "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=2&timeoutSeconds=1",
        );
        evs.first().is_some_and(|e| {
            e["type"] == "ERROR" && e["object"]["code"] == 410 && e["object"]["reason"] == "Expired"
        })
    });
    assert!(
        gone,
        "watching from a compacted revision must end with a 410 ERROR event"
    );
}

/// A curl watch running in the background; its events once it ends.
fn watch_in_background(s: &Server, path: &str, accept: &str) -> std::process::Child {
    Command::new("curl")
        .args(["-sS", "-N", "-H", &format!("Accept: {accept}"), "--cacert"])
        .arg(s.pki("ca.crt"))
        .arg("--cert")
        .arg(s.pki("admin.crt"))
        .arg("--key")
        .arg(s.pki("admin.key"))
        .arg(s.url(path))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finished_events(child: std::process::Child) -> Vec<serde_json::Value> {
    let out = child.wait_with_output().unwrap();
    parse_events(&String::from_utf8_lossy(&out.stdout))
}

fn summary(events: &[serde_json::Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["type"].as_str().unwrap(),
                e["object"]["metadata"]["name"].as_str().unwrap_or("")
            )
        })
        .collect()
}

#[test]
fn concurrent_watchers_each_see_events_in_their_own_form() {
    let s = Server::start();
    let rv = list_revision(&s);
    let path = |extra: &str| {
        format!("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv}&timeoutSeconds=4{extra}")
    };
    let json = "application/json";
    let meta = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
    let full = watch_in_background(&s, &path(""), json);
    let team = watch_in_background(&s, &path("&labelSelector=team%3Da"), json);
    let partial = watch_in_background(&s, &path(""), meta);
    let full_too = watch_in_background(&s, &path(""), json);
    s.ok(&["create", "configmap", "one"]);
    s.ok(&["label", "cm", "one", "team=a"]);
    s.ok(&["create", "configmap", "two", "--from-literal=k=v"]);
    s.ok(&["label", "cm", "one", "team-"]);
    s.ok(&["delete", "cm", "one"]);
    let full = finished_events(full);
    let expected = [
        "ADDED one",
        "MODIFIED one",
        "ADDED two",
        "MODIFIED one",
        "DELETED one",
    ];
    assert_eq!(summary(&full), expected);
    assert_eq!(full[2]["object"]["data"]["k"], "v");
    assert_eq!(
        finished_events(full_too),
        full,
        "two plain watchers get the same stream"
    );
    let team = finished_events(team);
    assert_eq!(summary(&team), ["ADDED one", "DELETED one"]);
    // Leaving the selection: the last matching state, at the update's revision.
    assert_eq!(team[1]["object"]["metadata"]["labels"]["team"], "a");
    assert_eq!(
        team[1]["object"]["metadata"]["resourceVersion"],
        full[3]["object"]["metadata"]["resourceVersion"]
    );
    let partial = finished_events(partial);
    assert_eq!(summary(&partial), expected);
    assert!(
        partial
            .iter()
            .all(|e| e["object"]["kind"] == "PartialObjectMetadata"
                && e["object"].get("data").is_none()),
        "{partial:?}"
    );
}

/// A list continued after its revision was compacted: kube's 410 with a
/// token that continues from the same place at the latest revision.
#[test]
fn continuing_a_compacted_list_gets_410_with_an_inconsistent_continue_token() {
    let s = Server::start_with(&["--history-revisions", "1", "--compaction-interval", "1"]);
    for i in 0..5 {
        s.ok(&["create", "configmap", &format!("c{i}")]);
    }
    let base = "/api/v1/namespaces/default/configmaps";
    let (_, page) = s.get_json(&format!("{base}?limit=2"));
    let token = page["metadata"]["continue"].as_str().unwrap().to_string();
    for name in ["c1a", "c1b"] {
        s.ok(&["create", "configmap", name]);
    }
    let mut expired = serde_json::Value::Null;
    let gone = eventually(Duration::from_secs(10), || {
        let (code, body) = s.get_json(&format!("{base}?limit=10&continue={token}"));
        expired = body;
        code == 410
    });
    assert!(gone, "the compacted token must be refused: {expired}");
    assert_eq!(expired["reason"], "Expired");
    assert!(
        expired["message"]
            .as_str()
            .unwrap()
            .contains("Continuing with the provided token results in an inconsistent list"),
        "{expired}"
    );
    let fresh = expired["metadata"]["continue"].as_str().expect("a token");
    let (code, rest) = s.get_json(&format!("{base}?limit=10&continue={fresh}"));
    assert_eq!(code, 200, "{rest}");
    let names: Vec<&str> = rest["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["metadata"]["name"].as_str())
        .collect();
    // The rest after c1, as it is now: c1a and c1b were created after the first page.
    assert_eq!(names, ["c1a", "c1b", "c2", "c3", "c4", "kube-root-ca.crt"]);
}
