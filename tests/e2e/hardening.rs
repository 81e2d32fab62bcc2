//! Hardening against hostile clients and careless operators: bounds that
//! hold whatever a client sends (metrics labels, bulk CRD installs, large
//! legal objects through the built-in plugins).

use crate::support::*;
use std::process::Command;

/// `n` anonymous GETs of made-up group/version/resource paths, on one
/// connection (curl's config file, one URL a line).
fn anonymous_gets(s: &Server, paths: impl Iterator<Item = String>) {
    let config = s.dir.path().join("anonymous-urls");
    let lines: Vec<String> = paths
        .map(|p| format!("url = \"{}\"\noutput = \"/dev/null\"", s.url(&p)))
        .collect();
    std::fs::write(&config, lines.join("\n")).expect("write curl config");
    let out = Command::new("curl")
        .args(["-sS", "--cacert"])
        .arg(s.pki("ca.crt"))
        .arg("-K")
        .arg(&config)
        .output()
        .expect("run curl");
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn made_up_paths_cannot_grow_the_request_metrics() {
    let s = Server::start();
    let paths = (0..1500).map(|i| match i % 3 {
        0 => format!("/apis/g{i}.example/v1/foos"),
        1 => format!("/apis/apps/v{i}x/deployments"),
        _ => format!("/api/v1/namespaces/default/pods/p/sub{i}"),
    });
    anonymous_gets(&s, paths);
    let metrics = s.ok(&["get", "--raw", "/metrics"]);
    let series: Vec<&str> = metrics
        .lines()
        .filter(|l| l.starts_with("apiserver_request_total{"))
        .collect();
    assert!(
        !metrics.contains("example") && !metrics.contains("sub1"),
        "a client-sent name became a label:\n{metrics}"
    );
    assert!(series.len() < 40, "{} series:\n{metrics}", series.len());
    let other = series
        .iter()
        .filter(|l| l.contains(r#"group="<other>",resource="<other>""#))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum::<u64>();
    assert_eq!(other, 1500, "{metrics}");
    // Served resources keep their own labels.
    let listed = r#"apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="namespaces""#;
    s.ok(&["get", "ns"]);
    let metrics = s.ok(&["get", "--raw", "/metrics"]);
    assert!(metrics.lines().any(|l| l.starts_with(listed)), "{metrics}");
}

/// `n` CRDs, spread over four groups, as one List.
fn crd_list(n: usize) -> String {
    let items: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            let group = format!("g{}.bulk.example", i % 4);
            let plural = format!("things{i}");
            serde_json::json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": format!("{plural}.{group}")},
                "spec": {
                    "group": group,
                    "scope": "Namespaced",
                    "names": {"plural": plural, "singular": format!("thing{i}"),
                              "kind": format!("Thing{i}"), "listKind": format!("Thing{i}List")},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                            "spec": {"type": "object", "properties": {
                                "size": {"type": "integer", "minimum": 0},
                                "name": {"type": "string", "maxLength": 64}}}}}}}]
                }
            })
        })
        .collect();
    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string()
}

#[test]
fn a_bulk_crd_install_is_served_in_time_and_memory_linear_in_it() {
    let s = Server::start();
    let n = 400;
    let (cpu_before, rss_before) = (s.cpu_seconds(), s.rss_mib());
    s.ok_stdin(&["create", "-f", "-"], &crd_list(n));
    let last = format!("things{}.g{}.bulk.example", n - 1, (n - 1) % 4);
    let served = eventually(std::time::Duration::from_secs(120), || {
        s.kubectl(&["get", &last]).status.success()
    });
    assert!(served, "the last CRD's resource is not served");
    // Every CRD is Established and its resource served.
    let established = s.ok(&[
        "get",
        "crd",
        "-o",
        "jsonpath={range .items[*]}{.status.conditions[?(@.type==\"Established\")].status}{\"\\n\"}{end}",
    ]);
    assert_eq!(established.lines().filter(|l| *l == "True").count(), n);
    let first = s.ok_stdin(
        &["create", "-f", "-", "-o", "name"],
        r#"{"apiVersion":"g0.bulk.example/v1","kind":"Thing0","metadata":{"name":"a","namespace":"default"},"spec":{"size":1}}"#,
    );
    assert_eq!(first.trim(), "thing0.g0.bulk.example/a");
    // The cost of the install: each CRD's own work, not a pass over every
    // CRD per change (before: 250 CRDs took 20 s of CPU and 290 MiB more,
    // 500 took 85 s and 900 MiB; now 400 take 8-10 s and 100-190 MiB,
    // depending on the allocator's arenas). Generous bounds for a loaded
    // machine.
    let cpu = s.cpu_seconds() - cpu_before;
    let grown = s.rss_mib().saturating_sub(rss_before);
    eprintln!("{n} CRDs: {cpu:.1} s of server CPU, RSS {rss_before} MiB + {grown} MiB");
    assert!(cpu < 30.0, "{n} CRDs cost {cpu:.1} s of server CPU");
    assert!(grown < 400, "{n} CRDs grew the server by {grown} MiB");
}

#[test]
fn a_large_legal_custom_object_passes_the_built_in_plugins() {
    let s = Server::start();
    s.ok_stdin(
        &["create", "-f", "-"],
        r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
            "metadata":{"name":"numbers.example.com"},
            "spec":{"group":"example.com","scope":"Namespaced",
              "names":{"plural":"numbers","singular":"number","kind":"Number","listKind":"NumberList"},
              "versions":[{"name":"v1","served":true,"storage":true,
                "schema":{"openAPIV3Schema":{"type":"object","properties":{
                  "spec":{"type":"object","properties":{
                    "values":{"type":"array","items":{"type":"integer"}}}}}}}}]}}"#,
    );
    assert!(eventually(std::time::Duration::from_secs(30), || {
        s.kubectl(&["get", "numbers"]).status.success()
    }));
    // 550,000 integers: 1.1 MB, under the store's 1.5 MiB limit.
    let values = vec!["0"; 550_000].join(",");
    let body = format!(
        r#"{{"apiVersion":"example.com/v1","kind":"Number","metadata":{{"name":"big"}},"spec":{{"values":[{values}]}}}}"#
    );
    let path = "/apis/example.com/v1/namespaces/default/numbers";
    let (code, answer, _) = s.request("POST", path, "application/json", Some(&body));
    assert_eq!(code, 201, "{answer}");
    // An update sends the built-ins the object and the old object.
    let mut updated = answer.clone();
    updated["metadata"]["labels"] = serde_json::json!({"changed": "yes"});
    let (code, answer, _) = s.request(
        "PUT",
        &format!("{path}/big"),
        "application/json",
        Some(&updated.to_string()),
    );
    assert_eq!(code, 200, "{answer}");
    let (code, stored) = s.get_json(&format!("{path}/big"));
    assert_eq!(code, 200);
    assert_eq!(
        stored["spec"]["values"].as_array().map(Vec::len),
        Some(550_000)
    );
    assert_eq!(stored["metadata"]["labels"]["changed"], "yes");
    assert!(ready(&s));
}

fn ready(s: &Server) -> bool {
    let out = s.curl(&["-o", "/dev/null", "-w", "%{http_code}", &s.url("/readyz")]);
    stdout(&out) == "200"
}
