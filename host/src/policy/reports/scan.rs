//! What one PolicyBundle's audit evaluates, and the evaluation: the stored
//! objects of the resources its policies' rules take for CREATE (one
//! served version per resource, never the reports themselves), each
//! passed through the policies whose rules, namespace and object selectors
//! and matchConditions take it, in an AdmissionReview of operation CREATE
//! for the stored object (as Kubewarden's audit scanner does), through the
//! loaded policies' own entries (`PolicySet::audited`).

use super::report::{Finding, Outcome};
use crate::admission::chain::CallableEntry;
use crate::admission::match_conditions::Outcome as Condition;
use crate::admission::matcher::{labels_of, RequestAttributes};
use crate::admission::review::{read_response, ReviewRequest};
use crate::apimachinery::status::ApiResult;
use crate::catalogue::{Catalogue, ResourceInfo};
use crate::registry::{ListQuery, Registry};
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Objects one PolicyBundle's scan evaluates, at most.
pub const MAX_OBJECTS: usize = 10_000;
/// Who the audit's reviews say is asking.
pub const AUDITOR: &str = "system:capstan:policy-audit";

/// A stored object and its resource.
pub type Object = (Arc<ResourceInfo>, Value);
/// Namespace name → its labels.
pub type NamespaceLabels = HashMap<String, Map<String, Value>>;

/// The resources the entries' rules take for CREATE: one served version
/// per group and resource, the first the rules take.
pub fn targets(catalogue: &Catalogue, entries: &[Arc<CallableEntry>]) -> Vec<Arc<ResourceInfo>> {
    let mut seen = HashSet::new();
    catalogue
        .resources()
        .iter()
        .filter(|r| {
            r.group != crate::catalogue::policy_report::GROUP && r.verbs.iter().any(|v| v == "list")
        })
        .filter(|r| entries.iter().any(|e| rules_take(e, &attributes(r))))
        .filter(|r| seen.insert((r.group.clone(), r.plural.clone())))
        .map(|r| Arc::new(r.clone()))
        .collect()
}

/// The objects of `targets` (those being deleted left out), at most
/// [`MAX_OBJECTS`]; true when the cap cut the scan short.
pub async fn objects(
    registry: &Registry,
    targets: &[Arc<ResourceInfo>],
) -> ApiResult<(Vec<Object>, bool)> {
    let mut out = Vec::new();
    for res in targets {
        let remaining = MAX_OBJECTS - out.len();
        let query = ListQuery {
            limit: Some(remaining),
            ..ListQuery::default()
        };
        let page = registry.list(res, None, &query).await?;
        let capped = page.items.len() >= remaining;
        out.extend(
            page.items
                .into_iter()
                .filter(|o| o.pointer("/metadata/deletionTimestamp").is_none())
                .map(|o| (res.clone(), o)),
        );
        if capped {
            return Ok((out, true));
        }
    }
    Ok((out, false))
}

/// Each namespace's labels (for the policies' namespaceSelector).
pub async fn namespace_labels(
    registry: &Registry,
    catalogue: &Catalogue,
) -> ApiResult<NamespaceLabels> {
    let Some(res) = catalogue.lookup("", "v1", "namespaces") else {
        return Ok(HashMap::new());
    };
    let items = registry.list(res, None, &ListQuery::default()).await?.items;
    Ok(items
        .iter()
        .filter_map(|n| {
            Some((
                crate::apimachinery::meta::name(n)?.to_string(),
                labels_of(Some(n)),
            ))
        })
        .collect())
}

/// Every finding of `entries` over `objects` (CPU-heavy: run it on the
/// plugin runtime).
pub async fn evaluate(
    entries: Vec<Arc<CallableEntry>>,
    objects: Vec<Object>,
    namespaces: NamespaceLabels,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (res, obj) in &objects {
        let req = review_request(res, obj);
        let attrs = attributes(res);
        let reference = reference(res, obj);
        let mut encoded = None;
        for e in &entries {
            if !rules_take(e, &attrs) || !selectors_take(e, res, obj, &namespaces) {
                continue;
            }
            let outcome = match conditions(e, &req, obj) {
                Condition::Skip => continue,
                Condition::Error(why) => Outcome::Error(why),
                Condition::Call => {
                    let review = encoded.get_or_insert_with(|| req.encode(Some(obj), None));
                    let uid = uuid::Uuid::new_v4().to_string();
                    call(e, &review.with_uid(&uid), &uid).await
                }
            };
            findings.push(Finding {
                policy: e.config.name.clone(),
                object: reference.clone(),
                outcome,
            });
        }
    }
    findings
}

async fn call(e: &CallableEntry, review: &str, uid: &str) -> Outcome {
    let verdict = e
        .transport
        .call(review)
        .await
        .and_then(|text| read_response(&text, uid, &e.config.name, e.verbatim));
    match verdict {
        Ok(v) if v.allowed => Outcome::Pass,
        Ok(v) => Outcome::Fail(
            v.denial
                .map(|d| d.message)
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| "denied without explanation".into()),
        ),
        Err(why) => Outcome::Error(why),
    }
}

fn attributes(r: &ResourceInfo) -> RequestAttributes {
    RequestAttributes {
        operation: "CREATE",
        group: r.group.clone(),
        version: r.version.clone(),
        resource: r.plural.clone(),
        subresource: String::new(),
        namespaced: r.namespaced,
    }
}

fn rules_take(e: &CallableEntry, attrs: &RequestAttributes) -> bool {
    e.config
        .rules
        .as_ref()
        .is_none_or(|rs| rs.iter().any(|r| r.matches(attrs)))
}

/// The entry's object selector, and its namespace selector for namespaced
/// objects and namespaces (as the chain applies them).
fn selectors_take(
    e: &CallableEntry,
    res: &ResourceInfo,
    obj: &Value,
    namespaces: &NamespaceLabels,
) -> bool {
    let labels = labels_of(Some(obj));
    if !e.config.object_selector.matches(&labels) {
        return false;
    }
    let selector = &e.config.namespace_selector;
    if selector.is_everything() {
        return true;
    }
    if res.group.is_empty() && res.plural == "namespaces" {
        return selector.matches(&labels);
    }
    match obj.pointer("/metadata/namespace").and_then(Value::as_str) {
        Some(ns) => selector.matches(namespaces.get(ns).unwrap_or(&Map::new())),
        None => true,
    }
}

fn conditions(e: &CallableEntry, req: &ReviewRequest, obj: &Value) -> Condition {
    if e.config.match_conditions.is_empty() {
        return Condition::Call;
    }
    // The background audit is no user's request: `authorizer` checks fail.
    let request = req.request_value();
    e.config
        .match_conditions
        .evaluate(obj, &Value::Null, &request, None)
}

/// A CREATE of the stored object, by the auditor.
fn review_request(res: &ResourceInfo, obj: &Value) -> ReviewRequest {
    let text = |p: &str| obj.pointer(p).and_then(Value::as_str).map(String::from);
    ReviewRequest {
        operation: "CREATE",
        group: res.group.clone(),
        version: res.version.clone(),
        kind_group: res.group.clone(),
        kind_version: res.version.clone(),
        kind: res.kind.clone(),
        resource: res.plural.clone(),
        subresource: String::new(),
        namespace: text("/metadata/namespace"),
        name: text("/metadata/name").unwrap_or_default(),
        user: json!({"username": AUDITOR, "groups": ["system:authenticated"]}),
        dry_run: false,
    }
}

/// The object as a report's `resources[]` names it.
fn reference(res: &ResourceInfo, obj: &Value) -> Value {
    let mut r = json!({"apiVersion": res.api_version(), "kind": res.kind});
    for (field, pointer) in [
        ("name", "/metadata/name"),
        ("namespace", "/metadata/namespace"),
        ("uid", "/metadata/uid"),
    ] {
        if let Some(v) = obj.pointer(pointer).and_then(Value::as_str) {
            r[field] = json!(v);
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::config::{FailurePolicy, Phase, PluginEntry};
    use crate::admission::matcher::{Rule, Selector};
    use crate::transport::ReviewTransport;
    use futures_util::future::BoxFuture;

    /// Denies pods whose image ends in `:latest`, naming the pod.
    struct NoLatest;

    impl ReviewTransport for NoLatest {
        fn call<'a>(&'a self, review: &'a str) -> BoxFuture<'a, Result<String, String>> {
            Box::pin(async move {
                let r: Value = serde_json::from_str(review).map_err(|e| e.to_string())?;
                let req = &r["request"];
                assert_eq!(req["operation"], "CREATE");
                assert_eq!(req["userInfo"]["username"], AUDITOR);
                let image = req["object"]["spec"]["containers"][0]["image"]
                    .as_str()
                    .unwrap_or_default();
                let allowed = !image.ends_with(":latest");
                Ok(json!({"response": {"uid": req["uid"], "allowed": allowed,
                    "status": {"message": format!("pods {:?} is forbidden: latest", req["name"].as_str().unwrap())}}})
                .to_string())
            })
        }
    }

    fn entry(namespace_selector: Option<Value>) -> Arc<CallableEntry> {
        let rule = Rule {
            operations: vec!["CREATE".into()],
            api_groups: vec!["".into()],
            api_versions: vec!["*".into()],
            resources: vec!["pods".into()],
            scope: None,
        };
        let config = PluginEntry {
            name: "baseline/disallow-latest-tag".into(),
            module: "bundle:sha256:00".into(),
            phases: vec![Phase::Validating],
            failure_policy: FailurePolicy::Ignore,
            timeout: crate::wasm::DEFAULT_TIMEOUT,
            memory_bytes: 1 << 20,
            fuel: None,
            config: "{}".into(),
            rules: Some(vec![rule]),
            namespace_selector: Selector::parse(namespace_selector.as_ref()).unwrap(),
            object_selector: Selector::parse(None).unwrap(),
            reinvoke_if_needed: false,
            match_conditions: Default::default(),
        };
        Arc::new(CallableEntry {
            config,
            transport: Arc::new(NoLatest),
            verbatim: true,
            dry_run_safe: true,
        })
    }

    fn pod(ns: &str, name: &str, image: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": ns, "uid": format!("u-{name}")},
               "spec": {"containers": [{"name": "c", "image": image}]}})
    }

    #[test]
    fn targets_are_what_the_rules_take_once_per_resource() {
        let cat = Catalogue::builtin();
        let found = targets(&cat, &[entry(None)]);
        let names: Vec<String> = found
            .iter()
            .map(|r| format!("{}/{}", r.group, r.plural))
            .collect();
        assert_eq!(names, ["/pods"]);
    }

    #[tokio::test]
    async fn each_selected_object_gets_a_pass_or_a_fail_with_the_policys_message() {
        let cat = Catalogue::builtin();
        let pods = Arc::new(cat.lookup("", "v1", "pods").unwrap().clone());
        let objects = vec![
            (pods.clone(), pod("team-a", "web", "nginx:latest")),
            (pods.clone(), pod("team-a", "pinned", "nginx:1.27")),
            (pods.clone(), pod("other", "web", "nginx:latest")),
        ];
        let mut namespaces = NamespaceLabels::new();
        namespaces.insert(
            "team-a".into(),
            labels_of(Some(&json!({"metadata": {"labels": {"audit": "yes"}}}))),
        );
        let selector = json!({"matchLabels": {"audit": "yes"}});
        let found = evaluate(vec![entry(Some(selector))], objects, namespaces).await;
        assert_eq!(
            found.len(),
            2,
            "the namespace selector leaves `other` out: {found:?}"
        );
        assert_eq!(found[0].policy, "baseline/disallow-latest-tag");
        assert_eq!(
            found[0].outcome,
            Outcome::Fail("pods \"web\" is forbidden: latest".into())
        );
        assert_eq!(
            found[0].object,
            json!({"apiVersion": "v1", "kind": "Pod", "name": "web", "namespace": "team-a", "uid": "u-web"})
        );
        assert_eq!(found[1].outcome, Outcome::Pass);
    }
}
