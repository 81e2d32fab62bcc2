//! `/metrics` with the real binary: the whole exposition checked against
//! the Prometheus text format (names, labels, values, TYPE before samples,
//! histograms cumulative), and kube-apiserver's families moving by exactly
//! what known requests add.

use crate::support::Server;
use std::collections::BTreeMap;
use std::process::{Command, Stdio};

/// Samples by their full text before the value (`name{labels}`).
type Samples = BTreeMap<String, f64>;

/// Parses the exposition, panicking at the first line the text format
/// does not allow.
fn parse(text: &str) -> Samples {
    let mut typed: BTreeMap<String, String> = BTreeMap::new();
    let mut samples = Samples::new();
    for (i, line) in text.lines().enumerate() {
        let at = |why: &str| format!("line {}: {why}: {line}", i + 1);
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE name kind");
            assert!(valid_name(name), "{}", at("bad name"));
            assert!(
                ["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind),
                "{}",
                at("kind")
            );
            assert!(
                typed.insert(name.to_string(), kind.to_string()).is_none(),
                "{}",
                at("TYPE twice")
            );
            continue;
        }
        if line.starts_with("# HELP ") || line.is_empty() {
            continue;
        }
        assert!(!line.starts_with('#'), "{}", at("unknown comment"));
        let (series, value) = line.rsplit_once(' ').expect("a sample and its value");
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v.parse().unwrap_or_else(|_| panic!("{}", at("value"))),
        };
        let name = series.split('{').next().unwrap();
        assert!(valid_name(name), "{}", at("bad name"));
        if let Some(labels) = series.strip_prefix(name).filter(|l| !l.is_empty()) {
            check_labels(labels).unwrap_or_else(|e| panic!("{}", at(&e)));
        }
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| {
                name.strip_suffix(s)
                    .filter(|f| typed.get(*f).is_some_and(|k| k == "histogram"))
            })
            .unwrap_or(name);
        assert!(
            typed.contains_key(family),
            "{}",
            at("no TYPE before the sample")
        );
        assert!(
            samples.insert(series.to_string(), value).is_none(),
            "{}",
            at("sample twice")
        );
    }
    samples
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// `{a="x",b="y"}` with escaped quotes, backslashes and newlines only.
fn check_labels(labels: &str) -> Result<(), String> {
    let inner = labels
        .strip_prefix('{')
        .and_then(|l| l.strip_suffix('}'))
        .ok_or("labels not in braces")?;
    let mut rest = inner;
    while !rest.is_empty() {
        let (name, after) = rest.split_once("=\"").ok_or("label without =\"")?;
        if !valid_name(name) || name.starts_with("__") {
            return Err(format!("label name {name}"));
        }
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next().ok_or("unterminated value")? {
                (_, '\\') => match chars.next() {
                    Some((_, '\\' | '"' | 'n')) => {}
                    _ => return Err("bad escape".into()),
                },
                (i, '"') => break i,
                _ => {}
            }
        };
        rest = &after[end + 1..];
        rest = rest.strip_prefix(',').unwrap_or(rest);
    }
    Ok(())
}

fn scrape(s: &Server) -> Samples {
    parse(&s.ok(&["get", "--raw", "/metrics"]))
}

fn get(samples: &Samples, series: &str) -> f64 {
    samples.get(series).copied().unwrap_or(0.0)
}

/// The labels of a configmap GET, after `code` (for the counts) and before
/// `dry_run` (in name order, as Prometheus' client sorts them).
const COMPONENT: &str = r#"component="apiserver""#;
const CONFIGMAP_GET: &str =
    r#"group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1""#;

#[test]
fn the_exposition_parses_and_kubes_families_count_known_requests() {
    let s = Server::start();
    s.ok(&["create", "configmap", "seen", "--from-literal=a=b"]);
    let before = scrape(&s);
    for _ in 0..3 {
        s.ok(&["get", "configmap", "seen"]);
    }
    let _ = s.kubectl(&["get", "configmap", "missing"]);
    s.ok(&["create", "configmap", "another"]);
    let mut watch = Command::new(crate::support::kubectl_path())
        .args([
            "--kubeconfig",
            &s.kubeconfig().display().to_string(),
            "get",
            "configmaps",
            "--watch",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let watching = crate::support::eventually(std::time::Duration::from_secs(10), || {
        scrape(&s).iter().any(|(k, v)| {
            k.starts_with("apiserver_longrunning_requests{")
                && k.contains("verb=\"WATCH\"")
                && *v >= 1.0
        })
    });
    s.ok(&["create", "configmap", "watched"]);
    let event = r#"apiserver_watch_events_total{group="",kind="ConfigMap",version="v1"}"#;
    let sent = crate::support::eventually(std::time::Duration::from_secs(10), || {
        get(&scrape(&s), event) > get(&before, event)
    });
    let _ = watch.kill();
    let _ = watch.wait();
    assert!(watching, "an open watch is a long-running request");
    assert!(sent, "the watcher's event is counted");
    let after = scrape(&s);
    let delta = |series: &str| get(&after, series) - get(&before, series);

    let ok =
        format!(r#"apiserver_request_total{{code="200",{COMPONENT},dry_run="",{CONFIGMAP_GET}}}"#);
    assert_eq!(delta(&ok), 3.0);
    let missing =
        format!(r#"apiserver_request_total{{code="404",{COMPONENT},dry_run="",{CONFIGMAP_GET}}}"#);
    assert_eq!(delta(&missing), 1.0);
    let timed = format!(
        r#"apiserver_request_duration_seconds_count{{{COMPONENT},dry_run="",{CONFIGMAP_GET}}}"#
    );
    assert_eq!(delta(&timed), 4.0, "every GET is timed");
    let inf = format!(
        r#"apiserver_request_duration_seconds_bucket{{{COMPONENT},dry_run="",{CONFIGMAP_GET},le="+Inf"}}"#
    );
    assert_eq!(
        get(&after, &inf),
        get(&after, &timed),
        "the +Inf bucket is the count"
    );
    let sli =
        format!(r#"apiserver_request_sli_duration_seconds_count{{{COMPONENT},{CONFIGMAP_GET}}}"#);
    assert_eq!(delta(&sli), 4.0, "and in the SLI histogram");
    let sized = format!(r#"apiserver_response_sizes_count{{{COMPONENT},{CONFIGMAP_GET}}}"#);
    assert_eq!(delta(&sized), 4.0);
    let admitted = r#"apiserver_admission_step_admission_duration_seconds_count{operation="CREATE",rejected="false",type="admit"}"#;
    assert_eq!(
        delta(admitted),
        2.0,
        "two creates went through the mutating phase"
    );
    let validated = r#"apiserver_admission_step_admission_duration_seconds_count{operation="CREATE",rejected="false",type="validate"}"#;
    assert_eq!(delta(validated), 2.0);
    let lifecycle = r#"apiserver_admission_controller_admission_duration_seconds_count{name="namespace-lifecycle",operation="CREATE",rejected="false",type="validate"}"#;
    assert_eq!(
        delta(lifecycle),
        2.0,
        "{:?}",
        after
            .keys()
            .filter(|k| k.contains("controller_admission"))
            .collect::<Vec<_>>()
    );
    let plugin = r#"capstan_plugin_calls_total{plugin="namespace-lifecycle",result="ok"}"#;
    let entry = r#"apiserver_admission_controller_admission_duration_seconds_count{name="namespace-lifecycle",operation="CREATE",rejected="false",type="admit"}"#;
    let calls = delta(lifecycle) + delta(entry);
    assert_eq!(delta(plugin), calls, "one plugin call per admission call");
    let authorized = r#"authorization_attempts_total{result="allowed"}"#;
    assert!(
        delta(authorized) >= 5.0,
        "kubectl's requests are authorized"
    );
    let certs = "apiserver_client_certificate_expiration_seconds_count";
    assert!(
        delta(certs) >= 4.0,
        "kubectl's client certificate is observed"
    );
    assert!(get(&after, "process_cpu_seconds_total") > 0.0);
    assert!(get(&after, "process_resident_memory_bytes") > 1e6);
    assert!(get(&after, "process_open_fds") > 0.0);
    let started = get(&after, "process_start_time_seconds");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert!(
        started > now - 600.0 && started <= now + 1.0,
        "{started} vs {now}"
    );
    assert!(after.contains_key(r#"apiserver_current_inflight_requests{request_kind="mutating"}"#));
}

/// The series kube-prometheus' apiserver rules read: every metric name in
/// their expressions that no rule of theirs records (and not Prometheus'
/// own `up`).
fn series_the_rules_read() -> Vec<String> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/e2e/data/kube-prometheus/apiserver-rules.yaml"
    ))
    .unwrap();
    let doc: serde_json::Value = capstan::apimachinery::yaml::config_from_str(&text).unwrap();
    let rules: Vec<&serde_json::Value> = doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["rules"].as_array().unwrap())
        .collect();
    let recorded: Vec<&str> = rules.iter().filter_map(|r| r["record"].as_str()).collect();
    let mut read = Vec::new();
    for expr in rules.iter().filter_map(|r| r["expr"].as_str()) {
        for word in expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':')) {
            let metric = word.starts_with("apiserver_") || word.starts_with("aggregator_");
            if metric && !recorded.contains(&word) && !read.contains(&word.to_string()) {
                read.push(word.to_string());
            }
        }
    }
    read
}

#[test]
fn every_series_kube_prometheus_apiserver_rules_read_is_exposed() {
    let s = Server::start();
    s.ok(&["get", "namespaces"]);
    let text = s.ok(&["get", "--raw", "/metrics"]);
    let families: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    let needed = series_the_rules_read();
    assert!(needed.len() >= 5, "{needed:?}");
    let missing: Vec<&String> = needed
        .iter()
        .filter(|n| {
            let family = ["_bucket", "_count", "_sum"]
                .iter()
                .find_map(|s| n.strip_suffix(s))
                .unwrap_or(n);
            !families.contains(&family) && !families.contains(&n.as_str())
        })
        .collect();
    assert!(missing.is_empty(), "not exposed: {missing:?}");
}

#[test]
fn storage_calls_and_stored_objects_are_counted_by_kind_as_kube_counts_them() {
    let s = Server::start();
    // No controller writes PodTemplates: the creates are the test's own.
    let creates = r#"etcd_request_duration_seconds_count{operation="create",type="podtemplates"}"#;
    let before = get(&scrape(&s), creates);
    for name in ["a", "b"] {
        s.ok_stdin(
            &["create", "-f", "-"],
            &format!("apiVersion: v1\nkind: PodTemplate\nmetadata: {{name: {name}}}\ntemplate: {{spec: {{containers: [{{name: c, image: i}}]}}}}\n"),
        );
    }
    let after = scrape(&s);
    assert_eq!(get(&after, creates) - before, 2.0);
    let total = r#"etcd_requests_total{operation="create",type="podtemplates"}"#;
    assert_eq!(get(&after, total), get(&after, creates));
    // Counted after the bootstrap: kube's default ClusterRoles are there.
    let roles = r#"apiserver_storage_objects{resource="clusterroles.rbac.authorization.k8s.io"}"#;
    assert!(get(&after, roles) >= 60.0, "{}", get(&after, roles));
    assert!(after.contains_key(r#"apiserver_storage_objects{resource="deployments.apps"}"#));
    let size = r#"apiserver_storage_size_bytes{storage_cluster_id="sqlite-0"}"#;
    assert!(get(&after, size) > 0.0, "the database's size");
    // The watch cache saw both creates, and serves the list from memory.
    let received = r#"apiserver_watch_cache_events_received_total{resource="podtemplates"}"#;
    let seen = crate::support::eventually(std::time::Duration::from_secs(5), || {
        get(&scrape(&s), received) >= 2.0
    });
    assert!(seen, "{}", get(&scrape(&s), received));
    s.ok(&["get", "podtemplates"]);
    let listed = scrape(&s);
    let lists = r#"apiserver_cache_list_total{index="",resource_prefix="/podtemplates"}"#;
    assert!(get(&listed, lists) >= 1.0);
    let returned =
        r#"apiserver_cache_list_returned_objects_total{index="",resource_prefix="/podtemplates"}"#;
    assert!(get(&listed, returned) >= 2.0);
}
