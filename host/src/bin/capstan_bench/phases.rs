//! The timed phases (create, get, list, update, delete) on the scope's kind of object,
//! and the namespace the run works in.

use super::client::Client;
use super::kinds::Kind;
use super::runner::run_phase;
use super::stats::PhaseResult;
use anyhow::{anyhow, Result};
use bytes::Bytes;
use http::{Method, StatusCode};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

/// What every operation of one concurrency level needs.
pub struct Scope {
    pub client: Client,
    /// Where the watch-delivery phase watches (the same server, or a replica).
    pub watcher: Client,
    pub namespace: String,
    /// Object name prefix, unique to the run, the level and the kind.
    pub prefix: String,
    /// What the phases create, read and update.
    pub kind: Kind,
}

/// Last known resourceVersion of each object, by operation index.
#[derive(Clone)]
pub struct Versions(Arc<Mutex<Vec<Option<String>>>>);

impl Versions {
    pub fn new(n: usize) -> Self {
        Versions(Arc::new(Mutex::new(vec![None; n])))
    }

    fn set(&self, i: usize, rv: Option<String>) {
        if let Some(slot) = self.0.lock().unwrap_or_else(|e| e.into_inner()).get_mut(i) {
            *slot = rv;
        }
    }

    fn get(&self, i: usize) -> Option<String> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(i)
            .cloned()
            .flatten()
    }
}

impl Scope {
    pub fn collection_path(&self) -> String {
        self.kind.collection_path(&self.namespace)
    }

    pub fn object_path(&self, name: &str) -> String {
        format!("{}/{}", self.collection_path(), name)
    }

    pub fn object_name(&self, i: usize) -> String {
        format!("{}-{i}", self.prefix)
    }

    /// POSTs a new object and returns the reply body.
    pub async fn create(&self, name: &str) -> Result<Bytes> {
        let body = self.kind.body(name, None, 0);
        let path = self.collection_path();
        let reply = self.client.request(Method::POST, &path, Some(body)).await?;
        Ok(reply.check()?.body)
    }
}

/// `metadata.resourceVersion` of a JSON object or list.
pub fn resource_version(body: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let rv = value.get("metadata")?.get("resourceVersion")?.as_str()?;
    Some(rv.to_string())
}

pub async fn create(scope: &Arc<Scope>, c: usize, n: usize, rvs: &Versions) -> PhaseResult {
    let (scope, rvs) = (scope.clone(), rvs.clone());
    run_phase("create", c, n, move |i| {
        let (scope, rvs) = (scope.clone(), rvs.clone());
        async move {
            let body = scope.create(&scope.object_name(i)).await?;
            rvs.set(i, resource_version(&body));
            Ok(None)
        }
    })
    .await
}

pub async fn get(scope: &Arc<Scope>, c: usize, n: usize, rvs: &Versions) -> PhaseResult {
    let (scope, rvs) = (scope.clone(), rvs.clone());
    run_phase("get", c, n, move |i| {
        let (scope, rvs) = (scope.clone(), rvs.clone());
        async move {
            let path = scope.object_path(&scope.object_name(i));
            let reply = scope
                .client
                .request(Method::GET, &path, None)
                .await?
                .check()?;
            rvs.set(i, resource_version(&reply.body));
            Ok(None)
        }
    })
    .await
}

pub async fn list(scope: &Arc<Scope>, c: usize, n: usize) -> PhaseResult {
    let scope = scope.clone();
    run_phase("list", c, n, move |_| {
        let scope = scope.clone();
        async move {
            let path = scope.collection_path();
            scope
                .client
                .request(Method::GET, &path, None)
                .await?
                .check()?;
            Ok(None)
        }
    })
    .await
}

pub async fn update(scope: &Arc<Scope>, c: usize, n: usize, rvs: &Versions) -> PhaseResult {
    let (scope, rvs) = (scope.clone(), rvs.clone());
    run_phase("update", c, n, move |i| {
        let (scope, rvs) = (scope.clone(), rvs.clone());
        async move {
            let name = scope.object_name(i);
            let rv = rvs
                .get(i)
                .ok_or_else(|| anyhow!("{name}: no resourceVersion known (create failed?)"))?;
            let body = scope.kind.body(&name, Some(&rv), 1);
            let path = scope.object_path(&name);
            let reply = scope
                .client
                .request(Method::PUT, &path, Some(body))
                .await?
                .check()?;
            rvs.set(i, resource_version(&reply.body));
            Ok(None)
        }
    })
    .await
}

/// Deletes objects `name_of(0..n)`; also used untimed to clean up after the watch phase.
pub async fn delete<N>(scope: &Arc<Scope>, c: usize, n: usize, name_of: N) -> PhaseResult
where
    N: Fn(&Scope, usize) -> String + Send + Sync + 'static,
{
    let scope = scope.clone();
    let name_of = Arc::new(name_of);
    run_phase("delete", c, n, move |i| {
        let (scope, name_of) = (scope.clone(), name_of.clone());
        async move {
            let path = scope.object_path(&name_of(&scope, i));
            scope
                .client
                .request(Method::DELETE, &path, None)
                .await?
                .check()?;
            Ok(None)
        }
    })
    .await
}

/// Makes sure the namespace exists; returns whether this run created it (and so should
/// delete it at the end).
pub async fn ensure_namespace(client: &Client, name: &str) -> Result<bool> {
    let path = format!("/api/v1/namespaces/{name}");
    let reply = client.request(Method::GET, &path, None).await?;
    if reply.status != StatusCode::NOT_FOUND {
        if !reply.status.is_success() {
            tracing::warn!(namespace = name, status = %reply.status, "cannot read the namespace; using it anyway");
        }
        return Ok(false);
    }
    let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    let body = Some(Bytes::from(body.to_string()));
    client
        .request(Method::POST, "/api/v1/namespaces", body)
        .await?
        .check()?;
    Ok(true)
}

/// Deletes a namespace the run created (errors are logged: results are already in).
pub async fn delete_namespace(client: &Client, name: &str) {
    let path = format!("/api/v1/namespaces/{name}");
    match client
        .request(Method::DELETE, &path, None)
        .await
        .and_then(|r| r.check())
    {
        Ok(_) => tracing::info!(namespace = name, "deleted the benchmark namespace"),
        Err(e) => {
            tracing::warn!(namespace = name, error = %format!("{e:#}"), "could not delete the benchmark namespace")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::kinds::configmap_body;
    use super::*;

    #[test]
    fn configmap_body_is_a_valid_configmap_with_optional_resource_version() {
        let v: Value = serde_json::from_slice(&configmap_body("cm-1", None, 0)).unwrap();
        assert_eq!(v["kind"], "ConfigMap");
        assert_eq!(v["apiVersion"], "v1");
        assert_eq!(v["metadata"]["name"], "cm-1");
        assert!(v["metadata"].get("resourceVersion").is_none());
        assert_eq!(v["data"]["generation"], "0");
        let v: Value = serde_json::from_slice(&configmap_body("cm-1", Some("42"), 1)).unwrap();
        assert_eq!(v["metadata"]["resourceVersion"], "42");
        assert_eq!(v["data"]["generation"], "1");
        assert!(v["data"]
            .as_object()
            .unwrap()
            .values()
            .all(Value::is_string));
    }

    #[test]
    fn resource_version_reads_objects_and_lists() {
        assert_eq!(
            resource_version(br#"{"metadata":{"resourceVersion":"7"}}"#).as_deref(),
            Some("7")
        );
        let list = br#"{"kind":"ConfigMapList","metadata":{"resourceVersion":"99"},"items":[]}"#;
        assert_eq!(resource_version(list).as_deref(), Some("99"));
        assert_eq!(resource_version(b"not json"), None);
        assert_eq!(resource_version(br#"{"metadata":{}}"#), None);
    }

    #[test]
    fn versions_ignore_out_of_range_indices() {
        let v = Versions::new(2);
        v.set(1, Some("5".into()));
        v.set(9, Some("x".into()));
        assert_eq!(
            (v.get(0), v.get(1), v.get(9)),
            (None, Some("5".into()), None)
        );
    }
}
