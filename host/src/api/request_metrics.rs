//! kube-apiserver's request metrics of resource requests:
//! `apiserver_request_total` (by verb (GET, LIST, WATCH, POST, PUT, PATCH,
//! DELETE, DELETECOLLECTION), group, version, resource, subresource, scope
//! (resource, namespace, cluster), component and response code),
//! `apiserver_request_duration_seconds` and `apiserver_response_sizes`
//! (histograms with kube's buckets; long-running requests are not timed),
//! `apiserver_longrunning_requests` (watches and other long-running
//! requests open now) and `apiserver_current_inflight_requests` (by
//! readOnly and mutating). The number
//! of series is bounded whatever a client sends: a path can name any group,
//! version, resource and subresource, so a request for one the server does
//! not serve is counted with all four labels `<other>` (kube-apiserver
//! counts only its installed routes), and past [`MAX_SERIES`] new label
//! sets are counted the same way.

use crate::apimachinery::request_info::{ResourceRequest, Verb};
use crate::telemetry::metrics::{Exposition, MetricSource};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

const MAX_SERIES: usize = 5_000;
/// The label value of whatever is not counted under its own name.
const OTHER: &str = "<other>";
const NAME: &str = "apiserver_request_total";

/// What one request is counted under (the code apart).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RequestLabels {
    verb: &'static str,
    group: String,
    version: String,
    resource: String,
    subresource: String,
    scope: &'static str,
}

impl RequestLabels {
    pub fn of(r: &ResourceRequest) -> RequestLabels {
        let scope = match (&r.name, &r.namespace) {
            (Some(_), _) => "resource",
            (None, Some(_)) => "namespace",
            (None, None) => "cluster",
        };
        RequestLabels {
            verb: verb(r.verb),
            group: r.group.clone(),
            version: r.version.clone(),
            resource: r.resource.clone(),
            subresource: r.subresource.clone().unwrap_or_default(),
            scope,
        }
    }

    /// The labels with group, version, resource and subresource `<other>`.
    fn other(self) -> RequestLabels {
        RequestLabels {
            group: OTHER.into(),
            version: OTHER.into(),
            resource: OTHER.into(),
            subresource: OTHER.into(),
            ..self
        }
    }

    /// Whether the request named a resource (and subresource) `catalogue` serves.
    pub fn served_by(&self, catalogue: &crate::catalogue::Catalogue) -> bool {
        catalogue
            .lookup(&self.group, &self.version, &self.resource)
            .is_some_and(|r| self.subresource.is_empty() || r.has_subresource(&self.subresource))
    }
}

fn verb(v: Verb) -> &'static str {
    match v {
        Verb::Get => "GET",
        Verb::List => "LIST",
        Verb::Watch => "WATCH",
        Verb::Create => "POST",
        Verb::Update => "PUT",
        Verb::Patch => "PATCH",
        Verb::Delete => "DELETE",
        Verb::DeleteCollection => "DELETECOLLECTION",
    }
}

/// kube's `apiserver_request_duration_seconds` buckets.
const DURATION_BUCKETS: &[f64] = &[
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];
/// kube's `apiserver_request_sli_duration_seconds` buckets.
const SLI_BUCKETS: &[f64] = &[
    0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0, 20.0,
    30.0, 45.0, 60.0,
];
/// kube's `apiserver_response_sizes` buckets.
const SIZE_BUCKETS: &[f64] = &[1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

/// The requests' figures, per label set (and code for the counts).
#[derive(Default)]
pub struct RequestMetrics(Mutex<Figures>);

#[derive(Default)]
struct Figures {
    counts: BTreeMap<(RequestLabels, u16), u64>,
    durations: BTreeMap<RequestLabels, crate::telemetry::metrics::Histogram>,
    /// Without the time spent calling admission webhooks.
    sli: BTreeMap<RequestLabels, crate::telemetry::metrics::Histogram>,
    sizes: BTreeMap<RequestLabels, crate::telemetry::metrics::Histogram>,
    long_running: BTreeMap<RequestLabels, i64>,
    /// Requests the server ended itself: timed out (504), throttled (429).
    terminations: BTreeMap<(RequestLabels, u16), u64>,
    /// Requests being served now: read-only, mutating.
    inflight: [i64; 2],
}

/// What one answered request adds.
pub struct Answered {
    pub code: u16,
    /// None for a long-running request (not timed).
    pub seconds: Option<f64>,
    /// Of those, the time spent calling admission webhooks.
    pub webhook_seconds: f64,
    /// The body's size, when known.
    pub bytes: Option<u64>,
}

impl RequestMetrics {
    fn lock(&self) -> MutexGuard<'_, Figures> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// One request answered. `served` is asked only of a label set not
    /// counted yet: whether the server serves what it names.
    pub fn record(
        &self,
        labels: RequestLabels,
        answered: Answered,
        served: impl FnOnce(&RequestLabels) -> bool,
    ) {
        let mut all = self.lock();
        let known = all.counts.contains_key(&(labels.clone(), answered.code));
        let labels = if !known && (all.counts.len() >= MAX_SERIES || !served(&labels)) {
            labels.other()
        } else {
            labels
        };
        *all.counts
            .entry((labels.clone(), answered.code))
            .or_default() += 1;
        if let Some(seconds) = answered.seconds {
            let h = all.durations.entry(labels.clone());
            h.or_insert_with(|| crate::telemetry::metrics::Histogram::new(DURATION_BUCKETS))
                .observe(seconds);
            let sli = (seconds - answered.webhook_seconds).max(0.0);
            let h = all.sli.entry(labels.clone());
            h.or_insert_with(|| crate::telemetry::metrics::Histogram::new(SLI_BUCKETS))
                .observe(sli);
        }
        if let Some(bytes) = answered.bytes {
            let h = all.sizes.entry(labels);
            h.or_insert_with(|| crate::telemetry::metrics::Histogram::new(SIZE_BUCKETS))
                .observe(bytes as f64);
        }
    }

    /// A long-running request starts (bounded as the counts are); it ends
    /// when the returned guard is dropped.
    pub fn long_running(self: &std::sync::Arc<Self>, labels: RequestLabels) -> Running {
        let mut all = self.lock();
        let labels =
            if all.long_running.len() >= MAX_SERIES && !all.long_running.contains_key(&labels) {
                labels.other()
            } else {
                labels
            };
        *all.long_running.entry(labels.clone()).or_default() += 1;
        Running {
            metrics: self.clone(),
            labels: Some(labels),
            mutating: None,
        }
    }

    /// Requests being served now (long-running ones aside).
    pub fn in_flight(&self) -> i64 {
        self.lock().inflight.iter().sum()
    }

    /// A request takes an in-flight slot (read-only or mutating); it is
    /// given back when the returned guard is dropped.
    pub fn inflight(self: &std::sync::Arc<Self>, mutating: bool) -> Running {
        self.lock().inflight[usize::from(mutating)] += 1;
        Running {
            metrics: self.clone(),
            labels: None,
            mutating: Some(mutating),
        }
    }
}

/// A request counted while it runs.
pub struct Running {
    metrics: std::sync::Arc<RequestMetrics>,
    labels: Option<RequestLabels>,
    mutating: Option<bool>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut all = self.metrics.lock();
        if let Some(labels) = self.labels.take() {
            if let Some(n) = all.long_running.get_mut(&labels) {
                *n -= 1;
            }
        }
        if let Some(m) = self.mutating {
            all.inflight[usize::from(m)] -= 1;
        }
    }
}

impl RequestLabels {
    /// kube's labels of the request families, with the family's own
    /// (`code`, `dry_run`), in name order as Prometheus' client sorts them.
    fn pairs<'a>(&'a self, own: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut labels = own.to_vec();
        labels.extend([
            ("component", "apiserver"),
            ("group", self.group.as_str()),
            ("resource", self.resource.as_str()),
            ("scope", self.scope),
            ("subresource", self.subresource.as_str()),
            ("verb", self.verb),
            ("version", self.version.as_str()),
        ]);
        labels.sort_by_key(|(name, _)| *name);
        labels
    }
}

impl MetricSource for RequestMetrics {
    fn render(&self, out: &mut Exposition) {
        let all = self.lock();
        out.family(
            NAME,
            "counter",
            "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
        );
        for ((l, code), n) in all.counts.iter() {
            let code = code.to_string();
            let labels = l.pairs(&[("code", code.as_str()), ("dry_run", "")]);
            out.sample(NAME, &labels, *n as f64);
        }
        let terminations = "apiserver_request_terminations_total";
        out.family(
            terminations,
            "counter",
            "[ALPHA] Number of requests which apiserver terminated in self-defense.",
        );
        for ((l, code), n) in all.terminations.iter() {
            let code = code.to_string();
            out.sample(
                terminations,
                &l.pairs(&[("code", code.as_str())]),
                *n as f64,
            );
        }
        let duration = "apiserver_request_duration_seconds";
        out.family(duration, "histogram", "[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.");
        for (l, h) in all.durations.iter() {
            h.render(out, duration, &l.pairs(&[("dry_run", "")]));
        }
        let sli = "apiserver_request_sli_duration_seconds";
        out.family(sli, "histogram", "[ALPHA] Response latency distribution (not counting webhook duration and priority & fairness queue wait times) in seconds for each verb, group, version, resource, subresource, scope and component.");
        for (l, h) in all.sli.iter() {
            h.render(out, sli, &l.pairs(&[]));
        }
        let sizes = "apiserver_response_sizes";
        out.family(sizes, "histogram", "[STABLE] Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.");
        for (l, h) in all.sizes.iter() {
            h.render(out, sizes, &l.pairs(&[]));
        }
        let long = "apiserver_longrunning_requests";
        out.family(long, "gauge", "[STABLE] Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.");
        for (l, n) in all.long_running.iter() {
            out.sample(long, &l.pairs(&[]), *n as f64);
        }
        let inflight = "apiserver_current_inflight_requests";
        out.family(inflight, "gauge", "[STABLE] Maximal number of currently used inflight request limit of this apiserver per request kind in last second.");
        out.sample(
            inflight,
            &[("request_kind", "mutating")],
            all.inflight[1] as f64,
        );
        out.sample(
            inflight,
            &[("request_kind", "readOnly")],
            all.inflight[0] as f64,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Catalogue;
    use http::Method;

    fn ok(code: u16) -> Answered {
        Answered {
            code,
            seconds: Some(0.01),
            webhook_seconds: 0.0,
            bytes: Some(2048),
        }
    }

    fn labels(method: Method, path: &str, query: Option<&str>) -> RequestLabels {
        RequestLabels::of(&crate::apimachinery::request_info::parse(&method, path, query).unwrap())
    }

    #[test]
    fn requests_are_counted_as_kube_labels_them() {
        let m = RequestMetrics::default();
        let served = |l: &RequestLabels| l.served_by(&Catalogue::builtin());
        m.record(
            labels(Method::GET, "/api/v1/namespaces/default/pods", None),
            ok(200),
            served,
        );
        m.record(
            labels(Method::GET, "/api/v1/namespaces/default/pods", None),
            ok(200),
            served,
        );
        m.record(
            labels(Method::GET, "/api/v1/pods", Some("watch=true")),
            ok(200),
            served,
        );
        m.record(
            labels(Method::POST, "/apis/apps/v1/namespaces/a/deployments", None),
            ok(201),
            served,
        );
        m.record(
            labels(Method::PUT, "/api/v1/namespaces/a/pods/p/status", None),
            ok(409),
            served,
        );
        let mut out = Exposition::default();
        m.render(&mut out);
        let text = out.into_text();
        for line in [
            r#"apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 2"#,
            r#"apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="cluster",subresource="",verb="WATCH",version="v1"} 1"#,
            r#"apiserver_request_total{code="201",component="apiserver",dry_run="",group="apps",resource="deployments",scope="namespace",subresource="",verb="POST",version="v1"} 1"#,
            r#"apiserver_request_total{code="409",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="status",verb="PUT",version="v1"} 1"#,
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing:\n{text}");
        }
    }

    #[test]
    fn made_up_groups_versions_and_resources_share_one_series() {
        let m = RequestMetrics::default();
        let catalogue = Catalogue::builtin();
        for i in 0..200 {
            for path in [
                format!("/apis/g{i}.example/v1/foos"),
                format!("/apis/apps/v{i}x/deployments"),
                format!("/api/v1/junk{i}"),
                format!("/api/v1/namespaces/a/pods/p/sub{i}"),
            ] {
                m.record(labels(Method::GET, &path, None), ok(404), |l| {
                    l.served_by(&catalogue)
                });
            }
        }
        // One series per verb and scope, whatever the names.
        let all = &m.lock().counts;
        assert!(all.len() <= 3, "{all:?}");
        assert!(all.keys().all(|(l, _)| l.group == OTHER
            && l.version == OTHER
            && l.resource == OTHER
            && l.subresource == OTHER));
        assert_eq!(all.values().sum::<u64>(), 800);
    }

    #[test]
    fn served_label_sets_are_bounded_too() {
        let m = RequestMetrics::default();
        for i in 0..MAX_SERIES + 100 {
            let path = format!("/apis/g{i}.example/v1/foos");
            m.record(labels(Method::GET, &path, None), ok(200), |_| true);
        }
        let all = &m.lock().counts;
        assert_eq!(all.len(), MAX_SERIES + 1);
        let other = all.iter().find(|((l, _), _)| l.group == OTHER);
        assert_eq!(other.map(|(_, n)| *n), Some(100));
    }
}
