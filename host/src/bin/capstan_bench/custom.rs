//! The bench's own CustomResourceDefinition (`benchobjects.bench.capstan.dev`):
//! namespaced, `data` a map of strings with two CEL rules of the kind real CRDs carry;
//! installed before the custom-resource phases, removed at the end.

use super::client::Client;
use super::kinds::{Kind, CUSTOM_GROUP, CUSTOM_KIND, CUSTOM_PLURAL, CUSTOM_VERSION};
use anyhow::{bail, Result};
use bytes::Bytes;
use http::{Method, StatusCode};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
/// How long the CRD may take to be Established and served.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

pub fn crd_name() -> String {
    format!("{CUSTOM_PLURAL}.{CUSTOM_GROUP}")
}

/// The CRD, as a user would write it.
pub fn crd() -> Value {
    let data = json!({
        "type": "object",
        "maxProperties": 64,
        "additionalProperties": {"type": "string", "maxLength": 4096},
        "x-kubernetes-validations": [
            {"rule": "!('generation' in self) || self['generation'].matches('^[0-9]+$')",
             "message": "generation must be a decimal number"},
            {"rule": "!('color' in self) || self['color'] in ['blue', 'green', 'red']",
             "message": "color must be blue, green or red"},
        ],
    });
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": crd_name(), "labels": {"app.kubernetes.io/name": "capstan-bench"}},
        "spec": {
            "group": CUSTOM_GROUP,
            "scope": "Namespaced",
            "names": {"plural": CUSTOM_PLURAL, "singular": "benchobject", "kind": CUSTOM_KIND,
                      "listKind": format!("{CUSTOM_KIND}List")},
            "versions": [{
                "name": CUSTOM_VERSION, "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"data": data}}},
            }],
        },
    })
}

/// Creates the CRD (an existing one is reused) and waits until it is Established and
/// its collection in `namespace` answers. Returns whether this run created it.
pub async fn install(client: &Client, namespace: &str) -> Result<bool> {
    install_definition(client, &crd(), &Kind::Custom.collection_path(namespace)).await
}

/// Creates the CRD `crd` (an existing one is reused) and waits until it is
/// Established and `collection` answers. Returns whether this run created it.
pub async fn install_definition(client: &Client, crd: &Value, collection: &str) -> Result<bool> {
    let name = crd["metadata"]["name"].as_str().unwrap_or_default();
    let body = Bytes::from(crd.to_string());
    let reply = client.request(Method::POST, CRDS, Some(body)).await?;
    let created = reply.status != StatusCode::CONFLICT;
    if created {
        reply.check()?;
    }
    wait_ready(client, name, collection).await?;
    tracing::info!(crd = name, created, "custom resource definition ready");
    Ok(created)
}

async fn wait_ready(client: &Client, name: &str, collection: &str) -> Result<()> {
    let crd_path = format!("{CRDS}/{name}");
    let list_path = format!("{collection}?limit=1");
    let started = Instant::now();
    loop {
        let crd = client
            .request(Method::GET, &crd_path, None)
            .await?
            .check()?;
        if established(&crd.body) {
            let list = client.request(Method::GET, &list_path, None).await?;
            if list.status.is_success() {
                return Ok(());
            }
        }
        if started.elapsed() > READY_TIMEOUT {
            bail!("{name} not served within {READY_TIMEOUT:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether a CRD's status has the condition Established=True.
pub fn established(body: &[u8]) -> bool {
    let Ok(crd) = serde_json::from_slice::<Value>(body) else {
        return false;
    };
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Established" && c["status"] == "True")
}

/// Deletes the CRD (errors are logged: results are already in).
pub async fn remove(client: &Client) {
    remove_definition(client, &crd_name()).await
}

/// Deletes the CRD called `name` (errors are logged: results are already in).
pub async fn remove_definition(client: &Client, name: &str) {
    let path = format!("{CRDS}/{name}");
    match client
        .request(Method::DELETE, &path, None)
        .await
        .and_then(|r| r.check())
    {
        Ok(_) => tracing::info!(crd = name, "deleted the benchmark CRD"),
        Err(e) => {
            tracing::warn!(crd = name, error = %format!("{e:#}"), "could not delete the benchmark CRD")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn established_reads_the_condition() {
        let yes = br#"{"status":{"conditions":[{"type":"NamesAccepted","status":"True"},{"type":"Established","status":"True"}]}}"#;
        let no = br#"{"status":{"conditions":[{"type":"Established","status":"False"}]}}"#;
        assert!(established(yes));
        assert!(!established(no));
        assert!(!established(b"{}"));
        assert!(!established(b"oops"));
    }

    #[test]
    fn crd_serves_the_custom_kind_with_cel_rules_on_data() {
        let crd = crd();
        assert_eq!(crd["metadata"]["name"], "benchobjects.bench.capstan.dev");
        assert_eq!(crd["spec"]["names"]["kind"], "BenchObject");
        let data = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["data"];
        assert_eq!(
            data["x-kubernetes-validations"].as_array().unwrap().len(),
            2
        );
    }
}
