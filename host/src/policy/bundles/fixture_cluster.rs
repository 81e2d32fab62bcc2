//! The cluster a fixture's policy sees: `<case>.cluster.yaml` beside the
//! review holds the objects (YAML documents, or a List) that the policy's
//! `get-object` and `list-objects` imports find, as gator's inventory and
//! kwctl's recorded host calls give context-aware policies their cluster.
//! Without the file a case sees an empty cluster.

use crate::apimachinery::selectors::field_labels_for;
use crate::apimachinery::selectors::{field::parse_field_selector, label::parse_label_selector};
use crate::catalogue::Catalogue;
use crate::wasm::ObjectReader;
use anyhow::{anyhow, bail};
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::path::Path;
use std::sync::Arc;

pub const CLUSTER_SUFFIX: &str = ".cluster.yaml";
/// A cluster file's bound (kube's request body limit), and its objects'.
const MAX_CLUSTER_BYTES: u64 = 3 << 20;
const MAX_OBJECTS: usize = 10_000;

/// One object with what the imports look it up by.
#[derive(Debug, Clone)]
struct Stored {
    api_version: String,
    resource: String,
    namespace: Option<String>,
    name: String,
    object: Value,
}

/// The objects of one cluster file.
#[derive(Debug, Default)]
pub struct FixtureCluster(Vec<Stored>);

impl FixtureCluster {
    /// Reads `path`: YAML documents, each an object or a List of them.
    pub fn read(path: &Path) -> anyhow::Result<Arc<FixtureCluster>> {
        let objects = Self::read_objects(path)?;
        let stored = objects
            .into_iter()
            .enumerate()
            .map(|(i, o)| stored(o).map_err(|e| anyhow!("{}: object {i}: {e}", path.display())))
            .collect::<anyhow::Result<_>>()?;
        Ok(Arc::new(FixtureCluster(stored)))
    }

    /// These objects and `extra` (each with apiVersion, kind and name).
    pub fn extended(&self, extra: &[Value]) -> anyhow::Result<Arc<FixtureCluster>> {
        let mut all = self.0.clone();
        for (i, o) in extra.iter().enumerate() {
            all.push(stored(o.clone()).map_err(|e| anyhow!("object {i}: {e}"))?);
        }
        Ok(Arc::new(FixtureCluster(all)))
    }

    /// The objects of `path` (bounded in size and number): YAML documents,
    /// each an object or a List of them.
    pub fn read_objects(path: &Path) -> anyhow::Result<Vec<Value>> {
        let len = std::fs::metadata(path)?.len();
        if len > MAX_CLUSTER_BYTES {
            bail!(
                "{}: {len} bytes, more than {MAX_CLUSTER_BYTES}",
                path.display()
            );
        }
        let text = std::fs::read_to_string(path)?;
        let docs: Vec<Value> = crate::apimachinery::yaml::documents_from_str(&text)
            .map_err(|e| anyhow!("{}: {e}", path.display()))?;
        let mut objects = Vec::new();
        for value in docs {
            match value.get("items").and_then(Value::as_array) {
                Some(items) => objects.extend(items.iter().cloned()),
                None if value.is_null() => {}
                None => objects.push(value),
            }
        }
        if objects.len() > MAX_OBJECTS {
            bail!("{}: more than {MAX_OBJECTS} objects", path.display());
        }
        Ok(objects)
    }

    fn select<'a>(
        &'a self,
        api_version: &'a str,
        resource: &'a str,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Stored> {
        self.0.iter().filter(move |s| {
            s.api_version == api_version
                && s.resource == resource
                && (namespace.is_none() || s.namespace.as_deref() == namespace)
        })
    }
}

/// The plural and scope of `kind`: a built-in's, else the lowercased
/// plural kube gives a CRD's kind, namespaced.
pub fn resource_of_kind(group: &str, version: &str, kind: &str) -> (String, bool) {
    match Catalogue::builtin_ref().by_kind(group, version, kind) {
        Some(info) => (info.plural.clone(), info.namespaced),
        None => (format!("{}s", kind.to_ascii_lowercase()), true),
    }
}

/// An object with its resource found by kind among the built-ins (a kind
/// the catalogue does not serve: its lowercased plural, as kube names CRDs).
fn stored(object: Value) -> Result<Stored, String> {
    let text = |p: &str| object.pointer(p).and_then(Value::as_str).map(String::from);
    let (Some(api_version), Some(kind), Some(name)) =
        (text("/apiVersion"), text("/kind"), text("/metadata/name"))
    else {
        return Err("apiVersion, kind and metadata.name are required".into());
    };
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", &api_version));
    let (resource, _) = resource_of_kind(group, version, &kind);
    Ok(Stored {
        namespace: text("/metadata/namespace"),
        api_version,
        resource,
        name,
        object,
    })
}

impl ObjectReader for FixtureCluster {
    fn get(
        &self,
        api_version: &str,
        resource: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> BoxFuture<'_, Result<Option<String>, String>> {
        let found = self
            .select(api_version, resource, namespace)
            .find(|s| s.name == name && s.namespace.as_deref() == namespace)
            .map(|s| s.object.to_string());
        Box::pin(async move { Ok(found) })
    }

    fn watermark(&self, _: &str, _: &str) -> Result<String, String> {
        Ok("1".to_string())
    }

    fn list(
        &self,
        api_version: &str,
        resource: &str,
        namespace: Option<&str>,
        label_selector: Option<&str>,
        field_selector: Option<&str>,
    ) -> BoxFuture<'_, Result<String, String>> {
        let listed = self.listed(
            api_version,
            resource,
            namespace,
            label_selector,
            field_selector,
        );
        Box::pin(async move { listed })
    }
}

impl FixtureCluster {
    fn listed(
        &self,
        api_version: &str,
        resource: &str,
        namespace: Option<&str>,
        label_selector: Option<&str>,
        field_selector: Option<&str>,
    ) -> Result<String, String> {
        let labels = parse_label_selector(label_selector.unwrap_or_default())?;
        let fields = parse_field_selector(field_selector.unwrap_or_default())?;
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        let empty = Map::new();
        let items: Vec<&Value> = self
            .select(api_version, resource, namespace)
            .filter(|s| {
                let l = s
                    .object
                    .pointer("/metadata/labels")
                    .and_then(Value::as_object);
                labels.matches(l.unwrap_or(&empty))
                    && fields.matches(field_labels_for(group, resource), &s.object)
            })
            .map(|s| &s.object)
            .collect();
        Ok(json!({"kind": "List", "apiVersion": api_version, "metadata": {"resourceVersion": "1"}, "items": items})
            .to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(yaml: &str) -> Arc<FixtureCluster> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.cluster.yaml");
        std::fs::write(&path, yaml).unwrap();
        FixtureCluster::read(&path).unwrap()
    }

    const OBJECTS: &str = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: shop, namespace: a, labels: {team: x}}\n---\n\
        apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ResourceQuota, metadata: {name: q, namespace: b}}\n\
        - {apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: web, namespace: b}}\n";

    #[tokio::test]
    async fn lists_and_gets_find_the_files_objects_by_resource() {
        let c = cluster(OBJECTS);
        let names = |list: String| -> Vec<String> {
            let v: Value = serde_json::from_str(&list).unwrap();
            v["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
                .collect()
        };
        let all = c
            .list("networking.k8s.io/v1", "ingresses", None, None, None)
            .await
            .unwrap();
        assert_eq!(names(all), ["shop", "web"]);
        let in_b = c
            .list("networking.k8s.io/v1", "ingresses", Some("b"), None, None)
            .await
            .unwrap();
        assert_eq!(names(in_b), ["web"]);
        let labelled = c
            .list(
                "networking.k8s.io/v1",
                "ingresses",
                None,
                Some("team=x"),
                None,
            )
            .await
            .unwrap();
        assert_eq!(names(labelled), ["shop"]);
        let named = c
            .list(
                "networking.k8s.io/v1",
                "ingresses",
                None,
                None,
                Some("metadata.name=web"),
            )
            .await
            .unwrap();
        assert_eq!(names(named), ["web"]);
        let quotas = c
            .list("v1", "resourcequotas", Some("b"), None, None)
            .await
            .unwrap();
        assert_eq!(names(quotas), ["q"]);
        assert!(c
            .get("v1", "resourcequotas", Some("b"), "q")
            .await
            .unwrap()
            .is_some());
        assert!(c
            .get("v1", "resourcequotas", Some("a"), "q")
            .await
            .unwrap()
            .is_none());
    }

    #[test]
    fn objects_without_identity_are_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.cluster.yaml");
        std::fs::write(&path, "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n").unwrap();
        let e = FixtureCluster::read(&path).unwrap_err().to_string();
        assert!(
            e.contains("c.cluster.yaml: object 0: apiVersion, kind and metadata.name are required"),
            "{e}"
        );
    }
}
