//! Discovery documents derived from the catalogue: `/api` (APIVersions),
//! `/apis` (APIGroupList), `/apis/<group>` (APIGroup), `/api/v1` and
//! `/apis/<group>/<version>` (APIResourceList), and aggregated discovery
//! (apidiscovery.k8s.io v2 / v2beta1 APIGroupDiscoveryList) for `/api` and
//! `/apis`.

use base64::Engine;
use serde_json::{json, Map, Value};

use super::{group_version, Catalogue, ResourceInfo, Subresource};

/// Response to `GET /api`.
pub fn api_versions(_cat: &Catalogue, server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            { "clientCIDR": "0.0.0.0/0", "serverAddress": server_address }
        ]
    })
}

fn version_entry(group: &str, version: &str) -> Value {
    json!({ "groupVersion": group_version(group, version), "version": version })
}

fn group_entry(group: &str, versions: &[String]) -> Value {
    let entries: Vec<Value> = versions.iter().map(|v| version_entry(group, v)).collect();
    json!({
        "name": group,
        "versions": entries,
        "preferredVersion": entries.first().cloned().unwrap_or(Value::Null),
    })
}

/// Response to `GET /apis`: every named group (the core group is at `/api`).
pub fn api_group_list(cat: &Catalogue) -> Value {
    let groups: Vec<Value> = cat
        .groups()
        .iter()
        .filter(|(g, _)| !g.is_empty())
        .map(|(g, versions)| group_entry(g, versions))
        .collect();
    json!({ "kind": "APIGroupList", "apiVersion": "v1", "groups": groups })
}

/// Response to `GET /apis/<group>`; `None` if the group is not served.
pub fn api_group(cat: &Catalogue, group: &str) -> Option<Value> {
    if group.is_empty() {
        return None;
    }
    let groups = cat.groups();
    let (_, versions) = groups.iter().find(|(g, _)| g == group)?;
    let mut out = Map::new();
    out.insert("kind".into(), json!("APIGroup"));
    out.insert("apiVersion".into(), json!("v1"));
    if let Value::Object(entry) = group_entry(group, versions) {
        out.extend(entry);
    }
    Some(Value::Object(out))
}

/// Built-ins kube stores as another group-version-kind than they are
/// served: events.k8s.io's Events are core Events; CustomResourceDefinitions
/// are still stored as apiextensions.k8s.io/v1beta1.
const STORED_ELSEWHERE: &[(&str, &str, &str)] = &[
    ("events.k8s.io", "events", "/v1/Event"),
    (
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "apiextensions.k8s.io/v1beta1/CustomResourceDefinition",
    ),
];

/// kube's `storageVersionHash`: the first 8 bytes of the SHA-256 of the
/// storage version's `group/version/kind`, base64 (the core group is "").
fn storage_version_hash(r: &ResourceInfo) -> String {
    let gvk = match STORED_ELSEWHERE
        .iter()
        .find(|(g, p, _)| *g == r.group && *p == r.plural)
    {
        Some((_, _, stored)) => stored.to_string(),
        None => {
            let version = match (&r.custom, super::conversion::of(r)) {
                (Some(c), _) => c.storage_version.clone(),
                (None, Some(conversion)) => conversion.storage_api_version(),
                (None, None) => super::group_version(&r.group, &r.version),
            };
            let version = version.rsplit('/').next().unwrap_or_default().to_string();
            format!("{}/{version}/{}", r.group, r.kind)
        }
    };
    let digest = ring::digest::digest(&ring::digest::SHA256, gvk.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(&digest.as_ref()[..8])
}

fn resource_entry(r: &ResourceInfo) -> Value {
    let mut e = Map::new();
    e.insert("name".into(), json!(r.plural));
    e.insert("singularName".into(), json!(r.singular));
    e.insert("namespaced".into(), json!(r.namespaced));
    e.insert("kind".into(), json!(r.kind));
    e.insert("verbs".into(), json!(r.verbs));
    if !r.short_names.is_empty() {
        e.insert("shortNames".into(), json!(r.short_names));
    }
    if !r.categories.is_empty() {
        e.insert("categories".into(), json!(r.categories));
    }
    // Only what is stored has one: not the reviews or componentstatuses.
    if r.has_verb("watch") {
        e.insert("storageVersionHash".into(), json!(storage_version_hash(r)));
    }
    Value::Object(e)
}

/// True when the subresource's kind lives in another group-version (scale).
fn foreign_kind(r: &ResourceInfo, s: &Subresource) -> bool {
    s.group != r.group || s.version != r.version
}

fn subresource_entry(r: &ResourceInfo, s: &Subresource) -> Value {
    let mut e = Map::new();
    e.insert("name".into(), json!(format!("{}/{}", r.plural, s.name)));
    e.insert("singularName".into(), json!(""));
    e.insert("namespaced".into(), json!(r.namespaced));
    if foreign_kind(r, s) {
        e.insert("group".into(), json!(s.group));
        e.insert("version".into(), json!(s.version));
    }
    e.insert("kind".into(), json!(s.kind));
    e.insert("verbs".into(), json!(s.verbs));
    Value::Object(e)
}

/// Response to `GET /api/v1` or `GET /apis/<group>/<version>`; `None` if the
/// group-version is not served. Entries are sorted by name like kube's.
pub fn api_resource_list(cat: &Catalogue, group: &str, version: &str) -> Option<Value> {
    let resources = cat.resources_in(group, version);
    if resources.is_empty() {
        return None;
    }
    let mut entries: Vec<(String, Value)> = Vec::new();
    for r in resources {
        entries.push((r.plural.clone(), resource_entry(r)));
        for s in &r.subresources {
            entries.push((format!("{}/{}", r.plural, s.name), subresource_entry(r, s)));
        }
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let list: Vec<Value> = entries.into_iter().map(|(_, v)| v).collect();
    let mut out = json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version(group, version),
        "resources": list,
    });
    if group.is_empty() {
        // kube's legacy /api/v1 list carries no apiVersion.
        if let Some(fields) = out.as_object_mut() {
            fields.remove("apiVersion");
        }
    }
    Some(out)
}

/// `responseKind` of aggregated discovery: group and version are left empty
/// when they are the resource's own, as kube does.
fn response_kind(r: &ResourceInfo, group: &str, version: &str, kind: &str) -> Value {
    let same = group == r.group && version == r.version;
    let (g, v) = if same { ("", "") } else { (group, version) };
    json!({ "group": g, "kind": kind, "version": v })
}

fn aggregated_resource(r: &ResourceInfo) -> Value {
    let mut e = Map::new();
    e.insert("resource".into(), json!(r.plural));
    e.insert(
        "responseKind".into(),
        response_kind(r, &r.group, &r.version, &r.kind),
    );
    let scope = if r.namespaced {
        "Namespaced"
    } else {
        "Cluster"
    };
    e.insert("scope".into(), json!(scope));
    e.insert("singularResource".into(), json!(r.singular));
    e.insert("verbs".into(), json!(r.verbs));
    if !r.short_names.is_empty() {
        e.insert("shortNames".into(), json!(r.short_names));
    }
    if !r.categories.is_empty() {
        e.insert("categories".into(), json!(r.categories));
    }
    if !r.subresources.is_empty() {
        let subs: Vec<Value> = r
            .subresources
            .iter()
            .map(|s| {
                json!({
                    "subresource": s.name,
                    "responseKind": response_kind(r, &s.group, &s.version, &s.kind),
                    "verbs": s.verbs,
                })
            })
            .collect();
        e.insert("subresources".into(), Value::Array(subs));
    }
    Value::Object(e)
}

fn aggregated_version(cat: &Catalogue, group: &str, version: &str) -> Value {
    let mut resources = cat.resources_in(group, version);
    resources.sort_by(|a, b| a.plural.cmp(&b.plural));
    let entries: Vec<Value> = resources.into_iter().map(aggregated_resource).collect();
    json!({ "version": version, "resources": entries, "freshness": "Current" })
}

fn aggregated_group(cat: &Catalogue, group: &str, versions: &[String]) -> Value {
    let mut metadata = Map::new();
    if !group.is_empty() {
        metadata.insert("name".into(), json!(group));
    }
    metadata.insert("creationTimestamp".into(), Value::Null);
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| aggregated_version(cat, group, v))
        .collect();
    json!({ "metadata": metadata, "versions": versions })
}

/// Aggregated discovery (`Accept: application/json;g=apidiscovery.k8s.io;
/// v=v2;as=APIGroupDiscoveryList`): for `/api` when `legacy`, else `/apis`.
/// `api_version` is "v2" or "v2beta1".
pub fn aggregated(cat: &Catalogue, legacy: bool, api_version: &str) -> Value {
    let items: Vec<Value> = cat
        .groups()
        .iter()
        .filter(|(g, _)| g.is_empty() == legacy)
        .map(|(g, versions)| aggregated_group(cat, g, versions))
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": format!("apidiscovery.k8s.io/{api_version}"),
        "metadata": {},
        "items": items,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry<'a>(list: &'a Value, name: &str) -> &'a Value {
        list["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap()
    }

    #[test]
    fn core_resource_list_has_pods() {
        let cat = Catalogue::builtin();
        let list = api_resource_list(&cat, "", "v1").unwrap();
        assert_eq!(list["groupVersion"], "v1");
        let pods = entry(&list, "pods");
        assert_eq!(pods["shortNames"], json!(["po"]));
        assert_eq!(pods["categories"], json!(["all"]));
        assert_eq!(pods["singularName"], "pod");
        assert_eq!(pods["namespaced"], true);
        assert!(pods["verbs"].as_array().unwrap().contains(&json!("watch")));
        // kube 1.32's value, recorded in tests/golden/answers/discovery/api-v1.json.
        assert_eq!(pods["storageVersionHash"], "xPOwRZ+Yhw8=");
        let status = entry(&list, "pods/status");
        assert_eq!(status["singularName"], "");
        assert_eq!(status["verbs"], json!(["get", "patch", "update"]));
        assert!(entry(&list, "configmaps").get("categories").is_none());
        assert!(api_resource_list(&cat, "", "v2").is_none());
    }

    #[test]
    fn deployment_scale_is_autoscaling_scale() {
        let cat = Catalogue::builtin();
        let list = api_resource_list(&cat, "apps", "v1").unwrap();
        let scale = entry(&list, "deployments/scale");
        assert_eq!(scale["kind"], "Scale");
        assert_eq!(scale["group"], "autoscaling");
        assert_eq!(scale["version"], "v1");
        assert!(entry(&list, "deployments/status").get("group").is_none());
        let names: Vec<&str> = list["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
    }

    #[test]
    fn groups_and_versions() {
        let cat = Catalogue::builtin();
        let api = api_versions(&cat, "10.0.0.1:6443");
        assert_eq!(api["versions"], json!(["v1"]));
        assert_eq!(
            api["serverAddressByClientCIDRs"][0]["serverAddress"],
            "10.0.0.1:6443"
        );
        let groups = api_group_list(&cat);
        let names: Vec<&str> = groups["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names[..2],
            ["apiregistration.k8s.io", "apps"],
            "kube's order"
        );
        assert!(names.contains(&"rbac.authorization.k8s.io") && !names.contains(&""));
        let apps = api_group(&cat, "apps").unwrap();
        assert_eq!(apps["kind"], "APIGroup");
        assert_eq!(apps["preferredVersion"]["groupVersion"], "apps/v1");
        assert!(api_group(&cat, "nope.example.com").is_none());
    }

    #[test]
    fn aggregated_discovery_v2() {
        let cat = Catalogue::builtin();
        let core = aggregated(&cat, true, "v2");
        assert_eq!(core["apiVersion"], "apidiscovery.k8s.io/v2");
        assert_eq!(core["items"].as_array().unwrap().len(), 1);
        let v1 = &core["items"][0]["versions"][0];
        assert_eq!(v1["freshness"], "Current");
        let pods = v1["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["resource"] == "pods")
            .unwrap();
        assert_eq!(pods["scope"], "Namespaced");
        assert_eq!(pods["responseKind"]["kind"], "Pod");
        let subs = pods["subresources"].as_array().unwrap();
        let names: Vec<&str> = subs
            .iter()
            .filter_map(|s| s["subresource"].as_str())
            .collect();
        assert_eq!(
            names,
            [
                "attach",
                "binding",
                "ephemeralcontainers",
                "eviction",
                "exec",
                "log",
                "portforward",
                "proxy",
                "resize",
                "status"
            ]
        );
        assert_eq!(
            subs[3]["responseKind"],
            json!({"group": "policy", "kind": "Eviction", "version": "v1"})
        );
        let apis = aggregated(&cat, false, "v2beta1");
        assert_eq!(apis["apiVersion"], "apidiscovery.k8s.io/v2beta1");
        let apps = &apis["items"][1];
        assert_eq!(apps["metadata"]["name"], "apps");
        let deploy = apps["versions"][0]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["resource"] == "deployments")
            .unwrap();
        let scale = deploy["subresources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["subresource"] == "scale")
            .unwrap();
        assert_eq!(
            scale["responseKind"],
            json!({"group": "autoscaling", "kind": "Scale", "version": "v1"})
        );
        let ns = &core["items"][0]["versions"][0]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["resource"] == "namespaces")
            .unwrap()["scope"];
        assert_eq!(*ns, json!("Cluster"));
    }
}
