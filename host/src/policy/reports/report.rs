//! One PolicyReport (or ClusterPolicyReport) as the audit writes it: the
//! results of one PolicyBundle's policies over the objects of one
//! namespace (or the cluster-scoped objects), their summary counts, and
//! the bounds that keep it well under kube's 1.5 MiB object limit.
//!
//! A report is named `pb-<PolicyBundle>`, labelled
//! `app.kubernetes.io/managed-by: capstan`, annotated with its
//! PolicyBundle's name, and owned by the (cluster-scoped) PolicyBundle, so
//! the garbage collector removes it with its PolicyBundle even when no
//! audit runs. A result that did not change keeps its timestamp, so a scan
//! that finds nothing new leaves the report exactly as stored.

use crate::catalogue::policy_report::{GROUP, VERSION};
use serde_json::{json, Map, Value};

pub const SOURCE: &str = "capstan";
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "capstan");
pub const BUNDLE_ANNOTATION: &str = "policies.capstan.dev/bundle";
pub const OMITTED_ANNOTATION: &str = "policies.capstan.dev/results-omitted";
/// Results listed in one report (the summary counts them all).
pub const MAX_RESULTS: usize = 1000;
/// The encoded results of one report, at most.
pub const MAX_RESULT_BYTES: usize = 1 << 20;
/// A result's message, at most (in characters).
pub const MAX_MESSAGE_CHARS: usize = 1024;

/// What one policy said of one object.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Pass,
    /// The policy's denial message.
    Fail(String),
    /// Why the policy gave no verdict (trap, timeout, bad answer).
    Error(String),
}

/// One policy's outcome for one object.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// `<PolicyBundle>/<policy>`.
    pub policy: String,
    /// `{apiVersion, kind, name, namespace?, uid}` of the object.
    pub object: Value,
    pub outcome: Outcome,
}

impl Finding {
    pub fn namespace(&self) -> Option<&str> {
        self.object.get("namespace").and_then(Value::as_str)
    }

    fn result(&self) -> &'static str {
        match self.outcome {
            Outcome::Pass => "pass",
            Outcome::Fail(_) => "fail",
            Outcome::Error(_) => "error",
        }
    }
}

/// The PolicyBundle a report belongs to.
pub struct Owner<'a> {
    pub name: &'a str,
    pub uid: &'a str,
    pub mode: &'a str,
}

/// The report's name for a PolicyBundle: `pb-<name>`, shortened with a
/// digest of the name when that would pass kube's 253 characters.
pub fn name_for(bundle: &str) -> String {
    let name = format!("pb-{bundle}");
    if name.len() <= 253 {
        return name;
    }
    let d = ring::digest::digest(&ring::digest::SHA256, bundle.as_bytes());
    let hex: String = d.as_ref()[..8].iter().map(|b| format!("{b:02x}")).collect();
    let mut cut = 253 - 17;
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}-{hex}", name[..cut].trim_end_matches(['.', '-']))
}

/// The report of `owner`'s findings in `namespace` (None: the cluster
/// report); results unchanged since `old` keep their timestamp, new ones
/// get `now` (seconds, nanos).
pub fn desired(
    owner: &Owner<'_>,
    namespace: Option<&str>,
    findings: &[&Finding],
    old: Option<&Value>,
    now: (i64, u32),
) -> Value {
    let mut ordered: Vec<&&Finding> = findings.iter().collect();
    // Failures and errors first: they are what a bound must not drop.
    ordered.sort_by_key(|f| (f.outcome == Outcome::Pass, sort_key(f)));
    let previous = old
        .and_then(|o| o.get("results"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut results = Vec::new();
    let mut bytes = 0;
    for f in &ordered {
        let r = result(owner, f, previous, now);
        bytes += r.to_string().len();
        if results.len() == MAX_RESULTS || bytes > MAX_RESULT_BYTES {
            break;
        }
        results.push(r);
    }
    let omitted = findings.len() - results.len();
    report(owner, namespace, summary(findings), results, omitted)
}

fn sort_key(f: &Finding) -> (String, String, String) {
    let text = |k: &str| f.object[k].as_str().unwrap_or_default().to_string();
    (text("kind"), text("name"), f.policy.clone())
}

fn report(
    owner: &Owner<'_>,
    namespace: Option<&str>,
    summary: Value,
    results: Vec<Value>,
    omitted: usize,
) -> Value {
    let mut annotations = Map::new();
    annotations.insert(BUNDLE_ANNOTATION.into(), json!(owner.name));
    if omitted > 0 {
        annotations.insert(OMITTED_ANNOTATION.into(), json!(omitted.to_string()));
    }
    let mut metadata = json!({
        "name": name_for(owner.name),
        "labels": {MANAGED_BY.0: MANAGED_BY.1},
        "annotations": annotations,
        "ownerReferences": [{
            "apiVersion": format!("{}/{}", crate::catalogue::policy_bundle::GROUP,
                                  crate::catalogue::policy_bundle::VERSION),
            "kind": "PolicyBundle", "name": owner.name, "uid": owner.uid,
        }],
    });
    let kind = match namespace {
        Some(ns) => {
            metadata["namespace"] = json!(ns);
            "PolicyReport"
        }
        None => "ClusterPolicyReport",
    };
    json!({
        "apiVersion": format!("{GROUP}/{VERSION}"),
        "kind": kind,
        "metadata": metadata,
        "summary": summary,
        "results": results,
    })
}

/// The counts of every finding, listed or not.
pub fn summary(findings: &[&Finding]) -> Value {
    let count = |r: &str| findings.iter().filter(|f| f.result() == r).count();
    json!({"pass": count("pass"), "fail": count("fail"), "warn": 0,
           "error": count("error"), "skip": 0})
}

fn result(owner: &Owner<'_>, f: &Finding, previous: &[Value], now: (i64, u32)) -> Value {
    let rule = f
        .policy
        .split_once('/')
        .map_or(f.policy.as_str(), |(_, p)| p);
    let mut r = json!({
        "source": SOURCE,
        "policy": f.policy,
        "rule": rule,
        "result": f.result(),
        "scored": true,
        "resources": [f.object],
        "properties": {"mode": owner.mode},
    });
    if let Outcome::Fail(m) | Outcome::Error(m) = &f.outcome {
        r["message"] = json!(bounded(m));
    }
    let stamp = previous
        .iter()
        .find(|p| same_result(p, &r))
        .and_then(|p| p.get("timestamp").cloned())
        .unwrap_or_else(|| json!({"seconds": now.0, "nanos": now.1}));
    r["timestamp"] = stamp;
    r
}

/// Everything but the timestamp.
fn same_result(a: &Value, b: &Value) -> bool {
    let keys = [
        "source",
        "policy",
        "rule",
        "result",
        "scored",
        "resources",
        "message",
        "properties",
    ];
    keys.iter().all(|k| a.get(k) == b.get(k))
}

fn bounded(message: &str) -> String {
    match message.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((at, _)) => format!("{}...", &message[..at]),
        None => message.to_string(),
    }
}

/// Whether the stored report already says what `desired` says.
pub fn up_to_date(stored: &Value, desired: &Value) -> bool {
    let meta = |v: &Value, k: &str| v.get("metadata").and_then(|m| m.get(k)).cloned();
    ["summary", "results"]
        .iter()
        .all(|k| stored.get(k) == desired.get(k))
        && ["labels", "annotations", "ownerReferences"]
            .iter()
            .all(|k| meta(stored, k) == meta(desired, k))
}

/// `desired`'s content on the stored report (its other metadata kept).
pub fn updated(mut stored: Value, desired: &Value) -> Value {
    for k in ["summary", "results"] {
        stored[k] = desired[k].clone();
    }
    for k in ["labels", "annotations", "ownerReferences"] {
        stored["metadata"][k] = desired["metadata"][k].clone();
    }
    stored
}

/// The PolicyBundle a stored report belongs to, if Capstan manages it.
pub fn bundle_of(report: &Value) -> Option<&str> {
    let managed = report
        .pointer(&format!(
            "/metadata/labels/{}",
            MANAGED_BY.0.replace('/', "~1")
        ))
        .and_then(Value::as_str)
        == Some(MANAGED_BY.1);
    if !managed {
        return None;
    }
    report
        .pointer(&format!(
            "/metadata/annotations/{}",
            BUNDLE_ANNOTATION.replace('/', "~1")
        ))
        .and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWNER: Owner<'static> = Owner {
        name: "baseline",
        uid: "u-1",
        mode: "Audit",
    };

    fn pod(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "name": name, "namespace": "team-a", "uid": format!("uid-{name}")})
    }

    fn finding(pod_name: &str, outcome: Outcome) -> Finding {
        Finding {
            policy: "baseline/disallow-latest-tag".into(),
            object: pod(pod_name),
            outcome,
        }
    }

    fn refs(findings: &[Finding]) -> Vec<&Finding> {
        findings.iter().collect()
    }

    #[test]
    fn a_report_counts_and_lists_each_result() {
        let findings = [
            finding("ok", Outcome::Pass),
            finding(
                "web",
                Outcome::Fail("pods \"web\" is forbidden: latest".into()),
            ),
            finding("odd", Outcome::Error("policy trapped".into())),
        ];
        let r = desired(&OWNER, Some("team-a"), &refs(&findings), None, (100, 5));
        assert_eq!(r["kind"], "PolicyReport");
        assert_eq!(r["apiVersion"], "wgpolicyk8s.io/v1alpha2");
        assert_eq!(r["metadata"]["name"], "pb-baseline");
        assert_eq!(r["metadata"]["namespace"], "team-a");
        assert_eq!(
            r["metadata"]["labels"]["app.kubernetes.io/managed-by"],
            "capstan"
        );
        assert_eq!(r["metadata"]["ownerReferences"][0]["kind"], "PolicyBundle");
        assert_eq!(
            r["summary"],
            json!({"pass": 1, "fail": 1, "warn": 0, "error": 1, "skip": 0})
        );
        let results = r["results"].as_array().unwrap();
        let outcomes: Vec<&str> = results
            .iter()
            .map(|x| x["result"].as_str().unwrap())
            .collect();
        assert_eq!(outcomes, ["error", "fail", "pass"], "failures first");
        let fail = &results[1];
        assert_eq!(
            *fail,
            json!({"source": "capstan", "policy": "baseline/disallow-latest-tag",
                   "rule": "disallow-latest-tag", "result": "fail", "scored": true,
                   "resources": [pod("web")], "properties": {"mode": "Audit"},
                   "message": "pods \"web\" is forbidden: latest",
                   "timestamp": {"seconds": 100, "nanos": 5}})
        );
        assert!(results[2].get("message").is_none());
        assert_eq!(bundle_of(&r), Some("baseline"));
        let cluster = desired(&OWNER, None, &refs(&findings), None, (100, 5));
        assert_eq!(cluster["kind"], "ClusterPolicyReport");
        assert!(cluster["metadata"].get("namespace").is_none());
    }

    #[test]
    fn an_unchanged_scan_is_up_to_date_and_a_change_is_not() {
        let findings = [finding("web", Outcome::Fail("latest".into()))];
        let first = desired(&OWNER, Some("team-a"), &refs(&findings), None, (100, 0));
        let again = desired(
            &OWNER,
            Some("team-a"),
            &refs(&findings),
            Some(&first),
            (200, 0),
        );
        assert!(up_to_date(&first, &again), "timestamps kept");
        let fixed = [finding("web", Outcome::Pass)];
        let later = desired(
            &OWNER,
            Some("team-a"),
            &refs(&fixed),
            Some(&first),
            (300, 0),
        );
        assert!(!up_to_date(&first, &later));
        assert_eq!(later["results"][0]["timestamp"]["seconds"], 300);
        let stored = updated(first, &later);
        assert_eq!(stored["summary"]["fail"], 0);
        assert_eq!(stored["summary"]["pass"], 1);
    }

    #[test]
    fn results_messages_and_names_are_bounded() {
        let long = "x".repeat(MAX_MESSAGE_CHARS * 3);
        let findings: Vec<Finding> = (0..MAX_RESULTS + 10)
            .map(|i| finding(&format!("p{i}"), Outcome::Fail(long.clone())))
            .collect();
        let r = desired(&OWNER, Some("team-a"), &refs(&findings), None, (1, 0));
        let results = r["results"].as_array().unwrap();
        assert!(results.len() < findings.len());
        assert!(
            r.to_string().len() < 3 * (1 << 20) / 2,
            "under kube's 1.5 MiB"
        );
        assert_eq!(
            r["summary"]["fail"],
            findings.len(),
            "the summary counts them all"
        );
        let omitted: usize = r["metadata"]["annotations"][OMITTED_ANNOTATION]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(omitted + results.len(), findings.len());
        let message = results[0]["message"].as_str().unwrap();
        assert_eq!(message.chars().count(), MAX_MESSAGE_CHARS + 3);
        let name = name_for(&"b".repeat(253));
        assert!(name.len() <= 253 && name.starts_with("pb-bbb"), "{name}");
        assert_ne!(name, name_for(&format!("{}c", "b".repeat(252))));
    }
}
