//! Test support: an in-memory imitation of the kube-apiserver endpoints the benchmark
//! uses (namespaces; the bench CRD; ConfigMap and custom-resource
//! create/get/list/update/delete and watch), over TLS.

use super::testing::{full, serve_tls, Handler, TestBody, TestPki};
use bytes::Bytes;
use http::{Method, Response, StatusCode};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

#[derive(Default)]
pub struct State {
    pub rv: u64,
    pub namespaces: HashSet<String>,
    pub deleted_namespaces: Vec<String>,
    pub configmaps: HashMap<(String, String), Value>,
    /// Custom resources (benchobjects).
    pub custom: HashMap<(String, String), Value>,
    pub crds: HashSet<String>,
    pub deleted_crds: Vec<String>,
}

const CRDS: [&str; 4] = [
    "apis",
    "apiextensions.k8s.io",
    "v1",
    "customresourcedefinitions",
];

/// A collection: resource and namespace.
type Res<'a> = (&'a str, &'a str);

pub struct FakeApi {
    pub state: Mutex<State>,
    /// Events by "<resource>/<namespace>".
    events: broadcast::Sender<(String, Bytes)>,
}

impl FakeApi {
    /// Starts the server; returns it and its port.
    pub async fn start(pki: &TestPki, alpn: Vec<Vec<u8>>) -> (Arc<FakeApi>, u16) {
        let api = Arc::new(FakeApi {
            state: Mutex::default(),
            events: broadcast::channel(4096).0,
        });
        let shared = api.clone();
        let handler: Handler = Arc::new(move |req, _| {
            let api = shared.clone();
            Box::pin(async move {
                let (parts, body) = req.into_parts();
                let body = body
                    .collect()
                    .await
                    .map(|b| b.to_bytes())
                    .unwrap_or_default();
                let query = parts.uri.query().unwrap_or_default().to_string();
                api.route(&parts.method, parts.uri.path(), &query, &body)
            })
        });
        (api.clone(), serve_tls(pki, alpn, handler).await)
    }

    fn route(&self, method: &Method, path: &str, query: &str, body: &[u8]) -> Response<TestBody> {
        let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        if segs.starts_with(&CRDS) {
            return self.route_crd(method, &segs[CRDS.len()..], body);
        }
        let (res, rest) = match segs.as_slice() {
            ["api", "v1", "namespaces", ns, "configmaps", rest @ ..] => (("configmaps", *ns), rest),
            ["apis", "bench.capstan.dev", "v1", "namespaces", ns, "benchobjects", rest @ ..]
                if self.lock().crds.contains("benchobjects.bench.capstan.dev") =>
            {
                (("benchobjects", *ns), rest)
            }
            ["api", "v1", "namespaces", rest @ ..] => {
                return self.route_namespace(method, rest, body)
            }
            _ => return status(StatusCode::NOT_FOUND, "no such route"),
        };
        match (method.as_str(), rest) {
            ("GET", []) if query.contains("watch=true") => self.watch(res),
            ("GET", []) => self.list(res),
            ("POST", []) => self.create(res, body),
            ("GET", [name]) => self.get(res, name),
            ("PUT", [name]) => self.update(res, name, body),
            ("DELETE", [name]) => self.delete(res, name),
            _ => status(StatusCode::NOT_FOUND, "no such route"),
        }
    }

    fn route_namespace(&self, method: &Method, rest: &[&str], body: &[u8]) -> Response<TestBody> {
        match (method.as_str(), rest) {
            ("POST", []) => self.create_namespace(body),
            ("GET", [ns]) => self.get_namespace(ns),
            ("DELETE", [ns]) => self.delete_namespace(ns),
            _ => status(StatusCode::NOT_FOUND, "no such route"),
        }
    }

    /// CRDs: created Established at once.
    fn route_crd(&self, method: &Method, rest: &[&str], body: &[u8]) -> Response<TestBody> {
        let mut state = self.lock();
        match (method.as_str(), rest) {
            ("POST", []) => {
                let v: Value = serde_json::from_slice(body).unwrap();
                let name = v["metadata"]["name"].as_str().unwrap().to_string();
                state.crds.insert(name);
                reply(StatusCode::CREATED, &v)
            }
            ("GET", [name]) if state.crds.contains(*name) => {
                let established = json!({"type": "Established", "status": "True"});
                let crd =
                    json!({"metadata": {"name": name}, "status": {"conditions": [established]}});
                reply(StatusCode::OK, &crd)
            }
            ("DELETE", [name]) if state.crds.remove(*name) => {
                state.deleted_crds.push(name.to_string());
                reply(StatusCode::OK, &json!({"metadata": {"name": name}}))
            }
            _ => status(StatusCode::NOT_FOUND, "no such CRD"),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }

    /// The objects of a resource.
    fn objects<'a>(
        state: &'a mut State,
        resource: &str,
    ) -> &'a mut HashMap<(String, String), Value> {
        match resource {
            "configmaps" => &mut state.configmaps,
            _ => &mut state.custom,
        }
    }

    fn create_namespace(&self, body: &[u8]) -> Response<TestBody> {
        let v: Value = serde_json::from_slice(body).unwrap();
        let name = v["metadata"]["name"].as_str().unwrap().to_string();
        self.lock().namespaces.insert(name);
        reply(StatusCode::CREATED, &v)
    }

    fn get_namespace(&self, ns: &str) -> Response<TestBody> {
        match self.lock().namespaces.contains(ns) {
            true => reply(StatusCode::OK, &json!({"metadata": {"name": ns}})),
            false => status(
                StatusCode::NOT_FOUND,
                &format!("namespaces \"{ns}\" not found"),
            ),
        }
    }

    fn delete_namespace(&self, ns: &str) -> Response<TestBody> {
        let mut state = self.lock();
        state.namespaces.remove(ns);
        state.deleted_namespaces.push(ns.to_string());
        reply(StatusCode::OK, &json!({"metadata": {"name": ns}}))
    }

    fn create(&self, (resource, ns): Res, body: &[u8]) -> Response<TestBody> {
        let mut obj: Value = serde_json::from_slice(body).unwrap();
        let name = obj["metadata"]["name"].as_str().unwrap().to_string();
        let mut state = self.lock();
        if !state.namespaces.contains(ns) {
            return status(
                StatusCode::NOT_FOUND,
                &format!("namespaces \"{ns}\" not found"),
            );
        }
        if Self::objects(&mut state, resource).contains_key(&(ns.to_string(), name.clone())) {
            return status(
                StatusCode::CONFLICT,
                &format!("{resource} \"{name}\" already exists"),
            );
        }
        state.rv += 1;
        obj["metadata"]["resourceVersion"] = json!(state.rv.to_string());
        Self::objects(&mut state, resource).insert((ns.to_string(), name), obj.clone());
        let event = json!({"type": "ADDED", "object": obj}).to_string() + "\n";
        let _ = self
            .events
            .send((format!("{resource}/{ns}"), Bytes::from(event)));
        reply(StatusCode::CREATED, &obj)
    }

    fn get(&self, (resource, ns): Res, name: &str) -> Response<TestBody> {
        let mut state = self.lock();
        match Self::objects(&mut state, resource).get(&(ns.to_string(), name.to_string())) {
            Some(obj) => reply(StatusCode::OK, obj),
            None => status(
                StatusCode::NOT_FOUND,
                &format!("{resource} \"{name}\" not found"),
            ),
        }
    }

    fn list(&self, (resource, ns): Res) -> Response<TestBody> {
        let mut state = self.lock();
        let rv = state.rv.to_string();
        let items: Vec<&Value> = Self::objects(&mut state, resource)
            .iter()
            .filter(|(k, _)| k.0 == ns)
            .map(|(_, v)| v)
            .collect();
        let list = json!({"kind": "List", "metadata": {"resourceVersion": rv}, "items": items});
        reply(StatusCode::OK, &list)
    }

    fn update(&self, (resource, ns): Res, name: &str, body: &[u8]) -> Response<TestBody> {
        let mut obj: Value = serde_json::from_slice(body).unwrap();
        let mut state = self.lock();
        let key = (ns.to_string(), name.to_string());
        let Some(current) = Self::objects(&mut state, resource).get(&key) else {
            return status(
                StatusCode::NOT_FOUND,
                &format!("{resource} \"{name}\" not found"),
            );
        };
        if current["metadata"]["resourceVersion"] != obj["metadata"]["resourceVersion"] {
            return status(StatusCode::CONFLICT, "the object has been modified");
        }
        state.rv += 1;
        obj["metadata"]["resourceVersion"] = json!(state.rv.to_string());
        Self::objects(&mut state, resource).insert(key, obj.clone());
        reply(StatusCode::OK, &obj)
    }

    fn delete(&self, (resource, ns): Res, name: &str) -> Response<TestBody> {
        let mut state = self.lock();
        match Self::objects(&mut state, resource).remove(&(ns.to_string(), name.to_string())) {
            Some(obj) => reply(StatusCode::OK, &obj),
            None => status(
                StatusCode::NOT_FOUND,
                &format!("{resource} \"{name}\" not found"),
            ),
        }
    }

    fn watch(&self, (resource, ns): Res) -> Response<TestBody> {
        let rx = self.events.subscribe();
        let ns = format!("{resource}/{ns}");
        let frames = futures_util::stream::unfold((rx, ns), |(mut rx, ns)| async move {
            loop {
                match rx.recv().await {
                    Ok((event_ns, bytes)) if event_ns == ns => {
                        return Some((Ok::<_, Infallible>(Frame::data(bytes)), (rx, ns)))
                    }
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        });
        Response::new(StreamBody::new(frames).boxed())
    }
}

fn reply(code: StatusCode, v: &Value) -> Response<TestBody> {
    let mut resp = Response::new(full(v.to_string()));
    *resp.status_mut() = code;
    resp
}

fn status(code: StatusCode, message: &str) -> Response<TestBody> {
    let body =
        json!({"kind": "Status", "status": "Failure", "message": message, "code": code.as_u16()});
    reply(code, &body)
}
