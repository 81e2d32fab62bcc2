//! kube's names and attributes of a request's spans: the server span's
//! name (`GET /api/v1/namespaces/{:namespace}/pods/{:name}`), the HTTP
//! attributes of otelhttp, and the handler span (`Create`, `Get`, `List`,
//! ...) with kube's `traceFields`.

use crate::apimachinery::request_info::{ResourceRequest, Verb};
use opentelemetry::KeyValue;

/// kube's span name: the method alone for a non-resource request.
pub fn span_name(method: &http::Method, resource: Option<&ResourceRequest>) -> String {
    let Some(r) = resource else {
        return method.to_string();
    };
    let mut name = format!(
        "{method} /{}",
        if r.group.is_empty() { "api" } else { "apis" }
    );
    if !r.group.is_empty() {
        name.push('/');
        name.push_str(&r.group);
    }
    name.push('/');
    name.push_str(&r.version);
    if r.namespace.is_some() {
        name.push_str("/namespaces/{:namespace}");
    }
    name.push('/');
    name.push_str(&r.resource);
    if r.name.is_some() {
        name.push_str("/{:name}");
    }
    if let Some(sub) = &r.subresource {
        name.push('/');
        name.push_str(sub);
    }
    name
}

/// otelhttp's server attributes, with kube's `http.target`.
pub fn http_attributes(req: &http::Request<axum::body::Body>) -> Vec<KeyValue> {
    let mut attrs = vec![
        KeyValue::new("http.method", req.method().to_string()),
        KeyValue::new("http.scheme", "https"),
        KeyValue::new("net.protocol.version", protocol(req.version())),
        KeyValue::new(
            "http.target",
            req.uri()
                .path_and_query()
                .map(|p| p.as_str().to_string())
                .unwrap_or_default(),
        ),
    ];
    if let Some(agent) = header(req, http::header::USER_AGENT) {
        attrs.push(KeyValue::new("user_agent.original", agent));
    }
    if let Some(host) = header(req, http::header::HOST) {
        attrs.push(KeyValue::new("net.host.name", host));
    }
    attrs
}

/// The handler span's name, as kube's handlers name theirs (a watch is
/// served by the list handler).
pub fn handler_name(verb: Verb) -> &'static str {
    match verb {
        Verb::Get => "Get",
        Verb::List | Verb::Watch => "List",
        Verb::Create => "Create",
        Verb::Update => "Update",
        Verb::Patch => "Patch",
        Verb::Delete | Verb::DeleteCollection => "Delete",
    }
}

/// kube's `traceFields` of a handler span.
pub fn handler_attributes(
    req: &http::Request<axum::body::Body>,
    r: &ResourceRequest,
    audit_id: &str,
) -> Vec<KeyValue> {
    let scope = match (&r.namespace, &r.name) {
        (Some(_), _) => "namespace",
        (None, Some(_)) => "resource",
        (None, None) => "cluster",
    };
    vec![
        KeyValue::new(
            "accept",
            header(req, http::header::ACCEPT).unwrap_or_default(),
        ),
        KeyValue::new("audit-id", audit_id.to_string()),
        KeyValue::new(
            "client",
            header(req, http::header::USER_AGENT).unwrap_or_default(),
        ),
        KeyValue::new("api-group", r.group.clone()),
        KeyValue::new("api-version", r.version.clone()),
        KeyValue::new("name", r.name.clone().unwrap_or_default()),
        KeyValue::new("subresource", r.subresource.clone().unwrap_or_default()),
        KeyValue::new("namespace", r.namespace.clone().unwrap_or_default()),
        KeyValue::new("protocol", protocol_name(req.version())),
        KeyValue::new("resource", r.resource.clone()),
        KeyValue::new("scope", scope),
    ]
}

fn header(req: &http::Request<axum::body::Body>, name: http::header::HeaderName) -> Option<String> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(String::from)
}

fn protocol(v: http::Version) -> &'static str {
    match v {
        http::Version::HTTP_2 => "2",
        http::Version::HTTP_10 => "1.0",
        _ => "1.1",
    }
}

/// Go's `Request.Proto`.
fn protocol_name(v: http::Version) -> &'static str {
    match v {
        http::Version::HTTP_2 => "HTTP/2.0",
        http::Version::HTTP_10 => "HTTP/1.0",
        _ => "HTTP/1.1",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(method: &http::Method, path: &str) -> Option<ResourceRequest> {
        crate::apimachinery::request_info::parse(method, path, None)
    }

    #[test]
    fn names_spans_as_kube_does() {
        let get = http::Method::GET;
        let pod = parsed(&get, "/api/v1/namespaces/default/pods/web/log");
        assert_eq!(
            span_name(&get, pod.as_ref()),
            "GET /api/v1/namespaces/{:namespace}/pods/{:name}/log"
        );
        let list = parsed(&get, "/apis/apps/v1/deployments");
        assert_eq!(
            span_name(&get, list.as_ref()),
            "GET /apis/apps/v1/deployments"
        );
        assert_eq!(span_name(&get, parsed(&get, "/readyz").as_ref()), "GET");
    }
}
