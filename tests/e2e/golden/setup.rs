//! Cases that need real objects first (a scale subresource, an eviction, an
//! update): their `setup` requests really create objects, in the case's own
//! namespace or cluster-wide, before the case is asked, and the objects are
//! deleted after it, on the oracle when recording and on Capstan when
//! comparing. What kube's controllers write meanwhile (status, annotations)
//! is the case's `ignore`, left out of both answers.

use super::endpoint::Endpoint;
use super::request::Request;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::{Duration, Instant};

/// How long a setup request is retried (a namespace of an earlier recording
/// still terminating, a default ServiceAccount not made yet).
const SETTLE: Duration = Duration::from_secs(30);

/// The objects a case needs and what of its answer is not the API server's.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Setup {
    /// Requests sent (until they succeed) before the case, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<Request>,
    /// What kube's controllers write between the setup and the case: JSON
    /// pointers (`/status`), or `manager:<name>` for a field manager's
    /// managedFields entries.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<String>,
}

impl Setup {
    pub fn is_empty(&self) -> bool {
        self.setup.is_empty()
    }

    /// Sends the setup requests, each until it succeeds.
    pub fn create(&self, server: &Endpoint) {
        for request in &self.setup {
            send_until_ok(server, request);
        }
    }

    /// Deletes what `create` made, last first: the case's namespace (its
    /// objects with it) and cluster-wide objects, waiting until these are
    /// gone so that no later answer (a list) sees them.
    pub fn delete(&self, server: &Endpoint) {
        for path in self.created().iter().rev() {
            let segments = path.split('/').count();
            let namespaced = path.contains("/namespaces/") && segments > 5;
            if namespaced {
                continue;
            }
            let mut delete = Request::get(path);
            delete.method = "DELETE".into();
            server.send(&delete);
            wait_gone(server, path);
        }
    }

    /// The paths of the objects the setup creates.
    fn created(&self) -> Vec<String> {
        self.setup
            .iter()
            .filter(|r| r.method == "POST")
            .filter_map(|r| {
                let name = r.body.as_ref()?.pointer("/metadata/name")?.as_str()?;
                let collection = r.path.split('?').next().unwrap_or(&r.path);
                Some(format!("{collection}/{name}"))
            })
            .collect()
    }

    /// The answer without what the case ignores.
    pub fn drop_ignored(&self, body: &mut Value) {
        for ignored in &self.ignore {
            match ignored.strip_prefix("manager:") {
                Some(manager) => drop_manager(body, manager),
                None => drop_pointer(body, ignored),
            }
        }
    }
}

fn send_until_ok(server: &Endpoint, request: &Request) {
    let start = Instant::now();
    loop {
        let answer = server.send(request);
        if (200..300).contains(&answer.code) {
            return;
        }
        assert!(
            start.elapsed() < SETTLE,
            "setup {} {}: {} {}",
            request.method,
            request.path,
            answer.code,
            answer.body
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn wait_gone(server: &Endpoint, path: &str) {
    let start = Instant::now();
    while server.send(&Request::get(path)).code != 404 && start.elapsed() < SETTLE {
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn drop_pointer(body: &mut Value, pointer: &str) {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return;
    };
    let key = last.replace("~1", "/").replace("~0", "~");
    if let Some(Value::Object(map)) = body.pointer_mut(parent) {
        map.remove(&key);
        if map.is_empty() && !parent.is_empty() {
            drop_pointer(body, parent);
        }
    }
}

fn drop_manager(body: &mut Value, manager: &str) {
    if let Some(Value::Array(entries)) = body.pointer_mut("/metadata/managedFields") {
        entries.retain(|e| e.get("manager").and_then(Value::as_str) != Some(manager));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ignored_fields_and_managers_are_dropped() {
        let setup = Setup {
            ignore: vec![
                "/metadata/annotations/deployment.kubernetes.io~1revision".into(),
                "/status".into(),
                "manager:kube-controller-manager".into(),
            ],
            ..Default::default()
        };
        let mut body = json!({"metadata": {"name": "d",
            "annotations": {"deployment.kubernetes.io/revision": "1"},
            "managedFields": [{"manager": "curl"}, {"manager": "kube-controller-manager"}]},
            "spec": {}, "status": {"replicas": 1}});
        setup.drop_ignored(&mut body);
        assert_eq!(
            body,
            json!({"metadata": {"name": "d", "managedFields": [{"manager": "curl"}]}, "spec": {}})
        );
    }

    #[test]
    fn created_objects_are_named_by_their_collection() {
        let mut ns = Request::get("/api/v1/namespaces");
        ns.method = "POST".into();
        ns.body = Some(json!({"metadata": {"name": "g"}}));
        let mut get = Request::get("/api/v1/namespaces/g");
        get.method = "GET".into();
        let setup = Setup {
            setup: vec![ns, get],
            ..Default::default()
        };
        assert_eq!(setup.created(), vec!["/api/v1/namespaces/g".to_string()]);
    }
}
