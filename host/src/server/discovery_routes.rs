//! Non-resource GET paths derived from the catalogue: legacy and aggregated
//! discovery (/api, /apis, ...) and the OpenAPI v2 and v3 documents.

use crate::api::state::AppState;
use crate::catalogue::discovery;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode};
use serde_json::Value;

fn json_response(value: &Value, content_type: &str) -> Response {
    let mut resp = (
        StatusCode::OK,
        crate::apimachinery::kube_json::to_vec(value),
    )
        .into_response();
    if let Ok(ct) = HeaderValue::from_str(content_type) {
        resp.headers_mut().insert(http::header::CONTENT_TYPE, ct);
    }
    resp
}

/// kube's `GET /`: every path the server serves, sorted, written as
/// kube's `WriteRawJSON` writes it (indented, no final newline).
fn root_paths(cat: &crate::catalogue::Catalogue) -> Response {
    let mut paths: Vec<String> = ["/api", "/api/v1", "/apis", "/apis/", "/metrics"]
        .into_iter()
        .chain(["/openapi/v2", "/openapi/v3", "/openapi/v3/", "/version"])
        .map(String::from)
        .collect();
    for (group, versions) in cat.groups().into_iter().filter(|(g, _)| !g.is_empty()) {
        paths.push(format!("/apis/{group}"));
        paths.extend(versions.iter().map(|v| format!("/apis/{group}/{v}")));
    }
    paths.extend(crate::server::health::paths());
    paths.sort();
    let body = serde_json::to_string_pretty(&serde_json::json!({ "paths": paths }));
    let mut resp = (StatusCode::OK, body.unwrap_or_default()).into_response();
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
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

/// Whether an `If-None-Match` header names this entity tag (weak
/// comparison, as Go's `http.ServeContent` does).
fn etag_matches(if_none_match: Option<&str>, etag: &str) -> bool {
    if_none_match.is_some_and(|header| {
        header
            .split(',')
            .map(str::trim)
            .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
    })
}

/// Whether `/openapi/v2` should answer protobuf: the first media range of
/// `Accept` that names either form decides (JSON for anything else).
fn wants_v2_protobuf(accept: &str) -> bool {
    for media in accept.split(',') {
        let media = media.split(';').next().unwrap_or_default().trim();
        if media == OPENAPI_V2_PROTOBUF || media == OPENAPI_V2_PROTOBUF_REPLY {
            return true;
        }
        if matches!(media, "application/json" | "application/*" | "*/*") {
            return false;
        }
    }
    false
}

/// The OpenAPI documents with the v3 ones built: the first request builds
/// them, off the async workers.
fn openapi_v3(state: &AppState) -> std::sync::Arc<crate::catalogue::openapi::OpenApiCache> {
    let openapi = state.catalogue.openapi();
    if !openapi.v3_built() {
        crate::cpu::heavy(|| {
            let _ = openapi.index();
        });
    }
    openapi
}

/// `/openapi/v2`: JSON, or gnostic's protobuf when asked for, with the
/// JSON's entity tag on both (as kube-openapi's handler) and 304 Not
/// Modified when the client already has it. The document is built on the
/// first request, off the async workers.
fn openapi_v2(state: &AppState, accept: &str, if_none_match: Option<&str>) -> Response {
    let openapi = state.catalogue.openapi();
    let v2 = match openapi.v2_built() {
        Some(built) => built,
        None => crate::cpu::heavy(|| openapi.v2()),
    };
    let (body, content_type) = if wants_v2_protobuf(accept) {
        (&v2.protobuf, OPENAPI_V2_PROTOBUF_REPLY)
    } else {
        (&v2.json, "application/json")
    };
    let etag = format!("\"{}\"", v2.etag);
    let mut resp = if etag_matches(if_none_match, &etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut resp = (StatusCode::OK, body.clone()).into_response();
        resp.headers_mut().insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static(content_type),
        );
        resp
    };
    if let Ok(value) = HeaderValue::from_str(&etag) {
        resp.headers_mut().insert(http::header::ETAG, value);
    }
    resp.headers_mut()
        .insert(http::header::VARY, HeaderValue::from_static("Accept"));
    resp
}

/// Serves a discovery or OpenAPI path; None if the path is not one.
pub fn serve(
    state: &AppState,
    path: &str,
    _query: Option<&str>,
    accept: &str,
    if_none_match: Option<&str>,
) -> Option<Response> {
    let cat = &*state.catalogue.get();
    let parts: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    let plain = |v: Value| json_response(&v, "application/json");
    match parts.as_slice() {
        [] => Some(root_paths(cat)),
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
        ["openapi", "v2"] => Some(openapi_v2(state, accept, if_none_match)),
        ["openapi", "v3"] => Some(plain(openapi_v3(state).index().clone())),
        ["openapi", "v3", rest @ ..] => openapi_v3(state).document_json(&rest.join("/")).map(|d| {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openapi_v2_media_type_is_the_first_one_named() {
        assert!(wants_v2_protobuf(OPENAPI_V2_PROTOBUF));
        assert!(wants_v2_protobuf(
            "application/com.github.proto-openapi.spec.v2.v1.0+protobuf;q=0.9, application/json"
        ));
        assert!(!wants_v2_protobuf(&format!(
            "application/json, {OPENAPI_V2_PROTOBUF}"
        )));
        assert!(!wants_v2_protobuf("*/*"));
        assert!(!wants_v2_protobuf(""));
    }

    #[test]
    fn if_none_match_compares_weakly() {
        let etag = "\"ABC\"";
        assert!(etag_matches(Some("\"ABC\""), etag));
        assert!(etag_matches(Some("W/\"XYZ\", W/\"ABC\""), etag));
        assert!(etag_matches(Some("*"), etag));
        assert!(!etag_matches(Some("\"ABD\""), etag));
        assert!(!etag_matches(None, etag));
    }
}
