//! `apiserver_request_total`, as kube-apiserver counts its resource
//! requests: by verb (GET, LIST, WATCH, POST, PUT, PATCH, DELETE,
//! DELETECOLLECTION), group, version, resource, subresource, scope
//! (resource, namespace, cluster), component and response code. The number
//! of series is bounded: a client can name any resource in a path, so past
//! [`MAX_SERIES`] new label sets are counted under resource `<other>`.

use crate::metrics::{Exposition, MetricSource};
use crate::request_info::{ResourceRequest, Verb};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

const MAX_SERIES: usize = 5_000;
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

/// The counts, per label set and code.
#[derive(Default)]
pub struct RequestMetrics(Mutex<BTreeMap<(RequestLabels, u16), u64>>);

impl RequestMetrics {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<(RequestLabels, u16), u64>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// One request answered with `code`.
    pub fn record(&self, mut labels: RequestLabels, code: u16) {
        let mut all = self.lock();
        let key = (labels, code);
        if let Some(n) = all.get_mut(&key) {
            *n += 1;
            return;
        }
        labels = key.0;
        if all.len() >= MAX_SERIES {
            labels.resource = "<other>".into();
            labels.subresource.clear();
        }
        *all.entry((labels, code)).or_default() += 1;
    }
}

impl MetricSource for RequestMetrics {
    fn render(&self, out: &mut Exposition) {
        out.family(
            NAME,
            "counter",
            "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
        );
        for ((l, code), n) in self.lock().iter() {
            let code = code.to_string();
            let labels = [
                ("code", code.as_str()),
                ("component", "apiserver"),
                ("dry_run", ""),
                ("group", l.group.as_str()),
                ("resource", l.resource.as_str()),
                ("scope", l.scope),
                ("subresource", l.subresource.as_str()),
                ("verb", l.verb),
                ("version", l.version.as_str()),
            ];
            out.sample(NAME, &labels, *n as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::Method;

    fn labels(method: Method, path: &str, query: Option<&str>) -> RequestLabels {
        RequestLabels::of(&crate::request_info::parse(&method, path, query).unwrap())
    }

    #[test]
    fn requests_are_counted_as_kube_labels_them() {
        let m = RequestMetrics::default();
        m.record(
            labels(Method::GET, "/api/v1/namespaces/default/pods", None),
            200,
        );
        m.record(
            labels(Method::GET, "/api/v1/namespaces/default/pods", None),
            200,
        );
        m.record(labels(Method::GET, "/api/v1/pods", Some("watch=true")), 200);
        m.record(
            labels(Method::POST, "/apis/apps/v1/namespaces/a/deployments", None),
            201,
        );
        m.record(
            labels(Method::PUT, "/api/v1/namespaces/a/pods/p/status", None),
            409,
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
    fn made_up_resources_cannot_grow_the_series_without_bound() {
        let m = RequestMetrics::default();
        for i in 0..MAX_SERIES + 100 {
            m.record(labels(Method::GET, &format!("/api/v1/junk{i}"), None), 404);
        }
        assert_eq!(m.lock().len(), MAX_SERIES + 1);
        let other = m
            .lock()
            .iter()
            .find(|((l, _), _)| l.resource == "<other>")
            .map(|(_, n)| *n);
        assert_eq!(other, Some(100));
    }
}
