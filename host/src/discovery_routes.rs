//! Non-resource GET paths derived from the catalogue: legacy and aggregated
//! discovery (/api, /apis, ...) and OpenAPI v3 documents.

use crate::catalogue::discovery;
use crate::state::AppState;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode};
use serde_json::Value;

fn json_response(value: &Value, content_type: &str) -> Response {
    let mut resp = (StatusCode::OK, crate::kube_json::to_vec(value)).into_response();
    if let Ok(ct) = HeaderValue::from_str(content_type) {
        resp.headers_mut().insert(http::header::CONTENT_TYPE, ct);
    }
    resp
}

/// The aggregated discovery version the client asked for first, if any.
fn aggregated_version(accept: &str) -> Option<&'static str> {
    for media in accept.split(',') {
        let has = |p: &str| media.split(';').any(|x| x.trim() == p);
        if has("g=apidiscovery.k8s.io") && has("as=APIGroupDiscoveryList") {
            if has("v=v2") {
                return Some("v2");
            }
            if has("v=v2beta1") {
                return Some("v2beta1");
            }
        }
    }
    None
}

const OPENAPI_V2_PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
/// What is answered for it: Go's mime parser rejects the `@` of the requested form.
const OPENAPI_V2_PROTOBUF_REPLY: &str =
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// OpenAPI v2 is not generated yet: an empty document (an empty protobuf message
/// when protobuf is asked for) tells older kubectl versions that no schemas are
/// published, so they skip client-side validation instead of failing.
fn openapi_v2(accept: &str) -> Response {
    if accept.contains(OPENAPI_V2_PROTOBUF) {
        let mut resp = (StatusCode::OK, Vec::<u8>::new()).into_response();
        resp.headers_mut().insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static(OPENAPI_V2_PROTOBUF_REPLY),
        );
        return resp;
    }
    let doc = serde_json::json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": format!("v{}.{}.0", crate::health::KUBE_MAJOR, crate::health::KUBE_MINOR)},
        "paths": {},
        "definitions": {},
    });
    json_response(&doc, "application/json")
}

/// Serves a discovery or OpenAPI path; None if the path is not one.
pub fn serve(state: &AppState, path: &str, _query: Option<&str>, accept: &str) -> Option<Response> {
    let cat = &*state.catalogue.get();
    let parts: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    let plain = |v: Value| json_response(&v, "application/json");
    match parts.as_slice() {
        ["api"] | ["apis"] => {
            let legacy = parts[0] == "api";
            if let Some(v) = aggregated_version(accept) {
                let ct = format!(
                    "application/json;g=apidiscovery.k8s.io;v={v};as=APIGroupDiscoveryList"
                );
                return Some(json_response(&discovery::aggregated(cat, legacy, v), &ct));
            }
            Some(plain(if legacy {
                discovery::api_versions(cat, &state.server_address)
            } else {
                discovery::api_group_list(cat)
            }))
        }
        ["api", version] => discovery::api_resource_list(cat, "", version).map(plain),
        ["apis", group] => discovery::api_group(cat, group).map(plain),
        ["apis", group, version] => discovery::api_resource_list(cat, group, version).map(plain),
        ["openapi", "v2"] => Some(openapi_v2(accept)),
        ["openapi", "v3"] => Some(plain(state.catalogue.openapi().index().clone())),
        ["openapi", "v3", rest @ ..] => state
            .catalogue
            .openapi()
            .document_json(&rest.join("/"))
            .map(|d| {
                let mut resp = (StatusCode::OK, d.to_vec()).into_response();
                resp.headers_mut().insert(
                    http::header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                resp
            }),
        _ => None,
    }
}
