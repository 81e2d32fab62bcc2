//! kube's logging flags with the real binary: `--logging-format json`
//! writes one JSON object a line (`ts`, `v`, `msg`, fields). (The test
//! servers run with RUST_LOG set, which wins over `-v`: the verbosity's
//! mapping is checked by `logging.rs`'s unit test.)

use crate::support::Server;
use serde_json::Value;

#[test]
fn json_lines_as_kube_apiserver_logs() {
    let s = Server::start_with(&["--logging-format", "json"]);
    s.ok(&["get", "namespaces"]);
    let log = s.log();
    let lines: Vec<Value> = log
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(lines.len() > 5, "{log}");
    assert!(lines
        .iter()
        .all(|l| l["ts"].as_f64().is_some() && l["msg"].is_string()));
    let serving = lines
        .iter()
        .find(|l| {
            l["msg"]
                .as_str()
                .unwrap_or_default()
                .starts_with("capstan is serving")
        })
        .expect("the serving line");
    assert_eq!(serving["v"], 0);
    assert!(serving["kubeconfig"]
        .as_str()
        .is_some_and(|k| k.ends_with("admin.kubeconfig")));
    assert!(
        lines.iter().any(|l| l["v"] == 4),
        "RUST_LOG's debug lines are v=4"
    );
}
