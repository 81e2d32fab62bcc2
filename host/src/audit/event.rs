//! One request's audit state and the audit.k8s.io/v1 Events made of it,
//! field for field as kube-apiserver writes them.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde_json::{json, Map, Value};

use super::policy::{Decision, Level, Stage};
use crate::apimachinery::request_info::ResourceRequest;
use crate::apimachinery::user::UserInfo;

/// At most this many annotations on one event.
const MAX_ANNOTATIONS: usize = 64;

/// What an event of one request says, gathered while it is served.
pub struct Recording {
    pub decision: Decision,
    pub audit_id: String,
    request_uri: String,
    verb: String,
    user: UserInfo,
    source_ips: Vec<String>,
    user_agent: Option<String>,
    received: String,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    impersonated: Option<UserInfo>,
    object_ref: Option<Value>,
    response_status: Option<Value>,
    request_body: Option<bytes::Bytes>,
    request_object: Option<Value>,
    response_object: Option<Value>,
    annotations: BTreeMap<String, String>,
}

/// What a request is, for its events.
pub struct Request<'a> {
    pub audit_id: String,
    pub method: &'a http::Method,
    pub uri: &'a http::Uri,
    pub headers: &'a http::HeaderMap,
    pub source_ip: Option<String>,
    pub resource: Option<&'a ResourceRequest>,
}

impl Recording {
    pub fn new(decision: Decision, user: UserInfo, req: &Request<'_>) -> Recording {
        let verb = match req.resource {
            Some(r) => r.verb.as_str().to_string(),
            None => req.method.as_str().to_ascii_lowercase(),
        };
        let request_uri = req
            .uri
            .path_and_query()
            .map_or_else(|| req.uri.path().to_string(), |p| p.as_str().to_string());
        let user_agent = req
            .headers
            .get(http::header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        let state = State {
            object_ref: req.resource.map(object_ref),
            ..State::default()
        };
        Recording {
            decision,
            audit_id: req.audit_id.clone(),
            request_uri,
            verb,
            user,
            source_ips: source_ips(req.headers, req.source_ip.as_deref()),
            user_agent,
            received: timestamp(),
            state: Mutex::new(state),
        }
    }

    fn with_state(&self, f: impl FnOnce(&mut State)) {
        if let Ok(mut s) = self.state.lock() {
            f(&mut s);
        }
    }

    pub fn impersonated(&self, user: &UserInfo) {
        let user = user.clone();
        self.with_state(|s| s.impersonated = Some(user));
    }

    pub fn annotate(&self, key: &str, value: &str) {
        self.with_state(|s| {
            if s.annotations.len() < MAX_ANNOTATIONS && !s.annotations.contains_key(key) {
                s.annotations.insert(key.to_string(), value.to_string());
            }
        });
    }

    pub fn set_request_body(&self, bytes: bytes::Bytes) {
        self.with_state(|s| s.request_body = Some(bytes));
    }

    pub fn set_request_object(&self, value: &Value) {
        let value = value.clone();
        self.with_state(|s| s.request_object = Some(value));
    }

    /// The response object: kept at RequestResponse; a Status (an error,
    /// a delete's answer) is the responseStatus, and a created object
    /// names the objectRef.
    pub fn set_response(&self, value: &Value) {
        let keep = self.decision.level >= Level::RequestResponse;
        self.with_state(|s| {
            if value.get("kind") == Some(&json!("Status")) {
                s.response_status = Some(status_of(value));
            }
            name_created(s, value);
            if keep {
                s.response_object = Some(value.clone());
            }
        });
    }

    /// kube's responseStatus of a request whose handler panicked.
    pub fn panicked(&self, why: &str) {
        let status = json!({"metadata": {}, "status": "Failure", "message": format!("APIServer panic'd: {why}"), "reason": "InternalError", "code": 500});
        self.with_state(|s| s.response_status = Some(status));
    }

    /// The status code of the response (unless a Status said more).
    pub fn set_code(&self, code: u16) {
        self.with_state(|s| {
            let status = s
                .response_status
                .get_or_insert_with(|| json!({"metadata": {}}));
            if status.get("code").is_none() {
                status["code"] = json!(code);
            }
        });
    }

    /// The event at `stage`.
    pub fn event(&self, stage: Stage) -> Value {
        let state = self.state.lock();
        let Ok(s) = state else {
            return Value::Null;
        };
        let mut e = Map::new();
        e.insert("kind".into(), json!("Event"));
        e.insert("apiVersion".into(), json!("audit.k8s.io/v1"));
        e.insert("level".into(), json!(self.decision.level.as_str()));
        e.insert("auditID".into(), json!(self.audit_id));
        e.insert("stage".into(), json!(stage.as_str()));
        e.insert("requestURI".into(), json!(self.request_uri));
        e.insert("verb".into(), json!(self.verb));
        e.insert("user".into(), user_json(&self.user, true));
        if let Some(i) = &s.impersonated {
            e.insert("impersonatedUser".into(), user_json(i, false));
        }
        e.insert("sourceIPs".into(), json!(self.source_ips));
        if let Some(agent) = &self.user_agent {
            e.insert("userAgent".into(), json!(agent));
        }
        if let Some(r) = &s.object_ref {
            e.insert("objectRef".into(), r.clone());
        }
        if stage != Stage::RequestReceived {
            if let Some(status) = &s.response_status {
                e.insert("responseStatus".into(), status.clone());
            }
        }
        let omit = self.decision.omit_managed_fields;
        if self.decision.level >= Level::Request && stage == Stage::ResponseComplete {
            let object = s.request_object.clone();
            if let Some(body) = object.or_else(|| s.request_body.as_deref().and_then(decoded)) {
                e.insert("requestObject".into(), without_managed_fields(body, omit));
            }
        }
        if let (Some(o), Stage::ResponseComplete) = (&s.response_object, stage) {
            e.insert(
                "responseObject".into(),
                without_managed_fields(o.clone(), omit),
            );
        }
        e.insert("requestReceivedTimestamp".into(), json!(self.received));
        e.insert("stageTimestamp".into(), json!(timestamp()));
        if stage != Stage::RequestReceived && !s.annotations.is_empty() {
            e.insert("annotations".into(), json!(s.annotations));
        }
        Value::Object(e)
    }
}

/// kube's objectRef: resource, namespace, name, apiGroup (not for the
/// core group), apiVersion, subresource. A namespace is its own namespace,
/// as kube's RequestInfo has it.
fn object_ref(r: &ResourceRequest) -> Value {
    let mut o = Map::new();
    o.insert("resource".into(), json!(r.resource));
    let own = (r.group.is_empty() && r.resource == "namespaces")
        .then_some(r.name.as_ref())
        .flatten();
    if let Some(ns) = r.namespace.as_ref().or(own) {
        o.insert("namespace".into(), json!(ns));
    }
    if let Some(name) = &r.name {
        o.insert("name".into(), json!(name));
    }
    if !r.group.is_empty() {
        o.insert("apiGroup".into(), json!(r.group));
    }
    o.insert("apiVersion".into(), json!(r.version));
    if let Some(sub) = &r.subresource {
        o.insert("subresource".into(), json!(sub));
    }
    Value::Object(o)
}

/// A create's objectRef takes the created object's name.
fn name_created(s: &mut State, value: &Value) {
    let Some(Value::Object(r)) = s.object_ref.as_mut() else {
        return;
    };
    if r.contains_key("name") || value.get("kind") == Some(&json!("Status")) {
        return;
    }
    if let Some(name) = value.pointer("/metadata/name").and_then(Value::as_str) {
        let mut named = Map::new();
        for (k, v) in std::mem::take(r) {
            let before_name = k == "apiGroup" || k == "apiVersion" || k == "subresource";
            if before_name && !named.contains_key("name") {
                named.insert("name".into(), json!(name));
            }
            named.insert(k, v);
        }
        *r = named;
    }
}

/// A Status as an event's responseStatus: `metadata: {}` and its fields.
fn status_of(status: &Value) -> Value {
    let mut out = Map::new();
    out.insert("metadata".into(), json!({}));
    for key in ["status", "message", "reason", "details", "code"] {
        if let Some(v) = status.get(key).filter(|v| !v.is_null()) {
            out.insert(key.into(), v.clone());
        }
    }
    Value::Object(out)
}

fn user_json(u: &UserInfo, with_uid: bool) -> Value {
    let mut o = Map::new();
    if !u.username.is_empty() {
        o.insert("username".into(), json!(u.username));
    }
    if with_uid && !u.uid.is_empty() {
        o.insert("uid".into(), json!(u.uid));
    }
    if !u.groups.is_empty() {
        o.insert("groups".into(), json!(u.groups));
    }
    if !u.extra.is_empty() {
        o.insert("extra".into(), json!(u.extra));
    }
    Value::Object(o)
}

/// The client's addresses: X-Forwarded-For's, X-Real-Ip, then the peer.
fn source_ips(headers: &http::HeaderMap, peer: Option<&str>) -> Vec<String> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let mut ips: Vec<String> = header("x-forwarded-for")
        .into_iter()
        .flat_map(|v| v.split(','))
        .map(|ip| ip.trim().to_string())
        .filter(|ip| ip.parse::<std::net::IpAddr>().is_ok())
        .collect();
    if let Some(real) = header("x-real-ip").filter(|ip| ip.parse::<std::net::IpAddr>().is_ok()) {
        if !ips.iter().any(|ip| ip == real) {
            ips.push(real.to_string());
        }
    }
    if let Some(peer) = peer {
        if !ips.iter().any(|ip| ip == peer) {
            ips.push(peer.to_string());
        }
    }
    ips
}

/// A request body as an object: JSON or YAML (protobuf is not recorded).
fn decoded(bytes: &[u8]) -> Option<Value> {
    if bytes.starts_with(b"k8s\0") {
        return None;
    }
    if let Ok(v) = serde_json::from_slice(bytes) {
        return Some(v);
    }
    crate::apimachinery::yaml::config_from_str(std::str::from_utf8(bytes).ok()?).ok()
}

fn without_managed_fields(mut value: Value, omit: bool) -> Value {
    if !omit {
        return value;
    }
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    if let Some(items) = value.get_mut("items").and_then(Value::as_array_mut) {
        for item in items {
            if let Some(meta) = item.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("managedFields");
            }
        }
    }
    value
}

/// kube's event timestamps: RFC 3339 with microseconds, UTC.
fn timestamp() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}
