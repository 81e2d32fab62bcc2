//! Test support: an in-memory imitation of the kube-apiserver endpoints the benchmark
//! uses (namespaces; ConfigMap create/get/list/update/delete and watch), over TLS.

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
}

pub struct FakeApi {
    pub state: Mutex<State>,
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
        match (method.as_str(), segs.as_slice()) {
            ("POST", ["api", "v1", "namespaces"]) => self.create_namespace(body),
            ("GET", ["api", "v1", "namespaces", ns]) => self.get_namespace(ns),
            ("DELETE", ["api", "v1", "namespaces", ns]) => self.delete_namespace(ns),
            ("GET", ["api", "v1", "namespaces", ns, "configmaps"])
                if query.contains("watch=true") =>
            {
                self.watch(ns)
            }
            ("GET", ["api", "v1", "namespaces", ns, "configmaps"]) => self.list(ns),
            ("POST", ["api", "v1", "namespaces", ns, "configmaps"]) => self.create(ns, body),
            ("GET", ["api", "v1", "namespaces", ns, "configmaps", name]) => self.get(ns, name),
            ("PUT", ["api", "v1", "namespaces", ns, "configmaps", name]) => {
                self.update(ns, name, body)
            }
            ("DELETE", ["api", "v1", "namespaces", ns, "configmaps", name]) => {
                self.delete(ns, name)
            }
            _ => status(StatusCode::NOT_FOUND, "no such route"),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap()
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

    fn create(&self, ns: &str, body: &[u8]) -> Response<TestBody> {
        let mut obj: Value = serde_json::from_slice(body).unwrap();
        let name = obj["metadata"]["name"].as_str().unwrap().to_string();
        let mut state = self.lock();
        if !state.namespaces.contains(ns) {
            return status(
                StatusCode::NOT_FOUND,
                &format!("namespaces \"{ns}\" not found"),
            );
        }
        if state
            .configmaps
            .contains_key(&(ns.to_string(), name.clone()))
        {
            return status(
                StatusCode::CONFLICT,
                &format!("configmaps \"{name}\" already exists"),
            );
        }
        state.rv += 1;
        obj["metadata"]["resourceVersion"] = json!(state.rv.to_string());
        state.configmaps.insert((ns.to_string(), name), obj.clone());
        let event = json!({"type": "ADDED", "object": obj}).to_string() + "\n";
        let _ = self.events.send((ns.to_string(), Bytes::from(event)));
        reply(StatusCode::CREATED, &obj)
    }

    fn get(&self, ns: &str, name: &str) -> Response<TestBody> {
        match self
            .lock()
            .configmaps
            .get(&(ns.to_string(), name.to_string()))
        {
            Some(obj) => reply(StatusCode::OK, obj),
            None => status(
                StatusCode::NOT_FOUND,
                &format!("configmaps \"{name}\" not found"),
            ),
        }
    }

    fn list(&self, ns: &str) -> Response<TestBody> {
        let state = self.lock();
        let items: Vec<&Value> = state
            .configmaps
            .iter()
            .filter(|(k, _)| k.0 == ns)
            .map(|(_, v)| v)
            .collect();
        let list = json!({"kind": "ConfigMapList", "metadata": {"resourceVersion": state.rv.to_string()}, "items": items});
        reply(StatusCode::OK, &list)
    }

    fn update(&self, ns: &str, name: &str, body: &[u8]) -> Response<TestBody> {
        let mut obj: Value = serde_json::from_slice(body).unwrap();
        let mut state = self.lock();
        let key = (ns.to_string(), name.to_string());
        let Some(current) = state.configmaps.get(&key) else {
            return status(
                StatusCode::NOT_FOUND,
                &format!("configmaps \"{name}\" not found"),
            );
        };
        if current["metadata"]["resourceVersion"] != obj["metadata"]["resourceVersion"] {
            return status(StatusCode::CONFLICT, "the object has been modified");
        }
        state.rv += 1;
        obj["metadata"]["resourceVersion"] = json!(state.rv.to_string());
        state.configmaps.insert(key, obj.clone());
        reply(StatusCode::OK, &obj)
    }

    fn delete(&self, ns: &str, name: &str) -> Response<TestBody> {
        match self
            .lock()
            .configmaps
            .remove(&(ns.to_string(), name.to_string()))
        {
            Some(obj) => reply(StatusCode::OK, &obj),
            None => status(
                StatusCode::NOT_FOUND,
                &format!("configmaps \"{name}\" not found"),
            ),
        }
    }

    fn watch(&self, ns: &str) -> Response<TestBody> {
        let rx = self.events.subscribe();
        let ns = ns.to_string();
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
