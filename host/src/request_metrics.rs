//! `apiserver_request_total`, as kube-apiserver counts its resource
//! requests: by verb (GET, LIST, WATCH, POST, PUT, PATCH, DELETE,
//! DELETECOLLECTION), group, version, resource, subresource, scope
//! (resource, namespace, cluster), component and response code. The number
//! of series is bounded whatever a client sends: a path can name any group,
//! version, resource and subresource, so a request for one the server does
//! not serve is counted with all four labels `<other>` (kube-apiserver
//! counts only its installed routes), and past [`MAX_SERIES`] new label
//! sets are counted the same way.

use crate::metrics::{Exposition, MetricSource};
use crate::request_info::{ResourceRequest, Verb};
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

/// The counts, per label set and code.
#[derive(Default)]
pub struct RequestMetrics(Mutex<BTreeMap<(RequestLabels, u16), u64>>);

impl RequestMetrics {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<(RequestLabels, u16), u64>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// One request answered with `code`. `served` is asked only of a label
    /// set not counted yet: whether the server serves what it names.
    pub fn record(
        &self,
        labels: RequestLabels,
        code: u16,
        served: impl FnOnce(&RequestLabels) -> bool,
    ) {
        let mut all = self.lock();
        let key = (labels, code);
        if let Some(n) = all.get_mut(&key) {
            *n += 1;
            return;
        }
        let (mut labels, code) = key;
        if all.len() >= MAX_SERIES || !served(&labels) {
            labels = labels.other();
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
    use crate::catalogue::Catalogue;
    use http::Method;

    fn labels(method: Method, path: &str, query: Option<&str>) -> RequestLabels {
        RequestLabels::of(&crate::request_info::parse(&method, path, query).unwrap())
    }

    #[test]
    fn requests_are_counted_as_kube_labels_them() {
        let m = RequestMetrics::default();
        let served = |l: &RequestLabels| l.served_by(&Catalogue::builtin());
        m.record(
            labels(Method::GET, "/api/v1/namespaces/default/pods", None),
            200,
            served,
        );
        m.record(
            labels(Method::GET, "/api/v1/namespaces/default/pods", None),
            200,
            served,
        );
        m.record(
            labels(Method::GET, "/api/v1/pods", Some("watch=true")),
            200,
            served,
        );
        m.record(
            labels(Method::POST, "/apis/apps/v1/namespaces/a/deployments", None),
            201,
            served,
        );
        m.record(
            labels(Method::PUT, "/api/v1/namespaces/a/pods/p/status", None),
            409,
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
                m.record(labels(Method::GET, &path, None), 404, |l| {
                    l.served_by(&catalogue)
                });
            }
        }
        // One series per verb and scope, whatever the names.
        let all = m.lock();
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
            m.record(labels(Method::GET, &path, None), 200, |_| true);
        }
        let all = m.lock();
        assert_eq!(all.len(), MAX_SERIES + 1);
        let other = all.iter().find(|((l, _), _)| l.group == OTHER);
        assert_eq!(other.map(|(_, n)| *n), Some(100));
    }
}
