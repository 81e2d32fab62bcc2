//! Response encoding: JSON (or YAML), and the Table and PartialObjectMetadata
//! views kubectl and metadata clients ask for in `Accept`.

use crate::api::table::{self, IncludeObject};
use crate::apimachinery::status::{ApiError, ApiResult};
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode};
use serde_json::{json, Value};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Output {
    Json,
    Yaml,
    Table(IncludeObject),
    PartialMetadata,
    /// The object (or list) in kube's protobuf form.
    Protobuf,
    /// PartialObjectMetadata(List) in kube's protobuf form.
    ProtobufMetadata,
}

impl Output {
    pub fn is_protobuf(self) -> bool {
        matches!(self, Output::Protobuf | Output::ProtobufMetadata)
    }

    /// Objects reduced to their metadata (PartialObjectMetadata).
    pub fn is_metadata(self) -> bool {
        matches!(self, Output::PartialMetadata | Output::ProtobufMetadata)
    }
}

fn param<'a>(media: &'a str, key: &str) -> Option<&'a str> {
    media.split(';').skip(1).find_map(|p| {
        let (k, v) = p.trim().split_once('=')?;
        (k.trim() == key).then_some(v.trim())
    })
}

/// The media types kube's routes produce; a list's also the watch streams.
const PRODUCED: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];
const STREAMS: &[&str] = &[
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf;stream=watch",
];

/// Picks the first acceptable media range of the Accept header (a Table
/// only when the resource prints tables; protobuf only when its kind has a
/// protobuf form, as kube's built-ins have and custom resources have not,
/// and metadata in protobuf for every resource). None acceptable: kube's handler
/// refuses a view it cannot give (406, its media types), and its router a
/// media type no route produces (406 with the route's "Available
/// representations"; a list's route also produces the watch streams).
pub fn negotiate(
    accept: Option<&str>,
    include_object: Option<&str>,
    list: bool,
    tables: bool,
    protobuf: bool,
) -> ApiResult<Output> {
    let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
        return Ok(Output::Json);
    };
    for media in accept.split(',') {
        let base = media.split(';').next().unwrap_or_default().trim();
        match (base, param(media, "as"), param(media, "g")) {
            ("application/json" | "*/*" | "application/*", Some("Table"), Some("meta.k8s.io"))
                if tables =>
            {
                let include = table::parse_include_object(include_object);
                return include.map(Output::Table).map_err(ApiError::bad_request);
            }
            (
                "application/json" | "*/*" | "application/*",
                Some("PartialObjectMetadata" | "PartialObjectMetadataList"),
                Some("meta.k8s.io"),
            ) => return Ok(Output::PartialMetadata),
            (
                crate::api::protobuf::MEDIA_TYPE,
                Some("PartialObjectMetadata" | "PartialObjectMetadataList"),
                Some("meta.k8s.io"),
            ) => return Ok(Output::ProtobufMetadata),
            (crate::api::protobuf::MEDIA_TYPE, None, _) if protobuf => return Ok(Output::Protobuf),
            ("application/json" | "*/*" | "application/*", None, _) => return Ok(Output::Json),
            ("application/yaml", None, _) => return Ok(Output::Yaml),
            _ => continue,
        }
    }
    if accept.split(',').any(routable) {
        return Err(ApiError::not_acceptable(&PRODUCED.join(", ")));
    }
    let mut available = PRODUCED.to_vec();
    if list {
        available.extend(STREAMS);
    }
    Err(ApiError::no_representation(&available.join(", ")))
}

/// A media range one of kube's routes produces (parameters aside).
fn routable(media: &str) -> bool {
    let base = media.split(';').next().unwrap_or_default().trim();
    matches!(base, "*/*" | "application/*") || PRODUCED.contains(&base)
}

/// The metadata-only view of an object.
pub fn partial_metadata(obj: &Value) -> Value {
    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata").cloned().unwrap_or(json!({}))})
}

/// Encodes `value` with the status code and any Warning headers.
pub fn respond(code: StatusCode, value: &Value, output: Output, warnings: &[String]) -> Response {
    crate::audit::response_object(value);
    let (body, ct) = match output {
        Output::Yaml => (
            crate::apimachinery::yaml::to_string(value)
                .unwrap_or_default()
                .into_bytes(),
            "application/yaml",
        ),
        o if o.is_protobuf() => match protobuf_bytes(value) {
            Some(bytes) => (bytes, crate::api::protobuf::MEDIA_TYPE),
            None => json_bytes(value),
        },
        _ => json_bytes(value),
    };
    let mut resp = (code, body).into_response();
    resp.headers_mut()
        .insert(http::header::CONTENT_TYPE, HeaderValue::from_static(ct));
    add_warnings(&mut resp, warnings);
    resp
}

fn json_bytes(value: &Value) -> (Vec<u8>, &'static str) {
    let bytes = crate::cpu::for_request(|| crate::apimachinery::kube_json::to_vec(value));
    (bytes, "application/json")
}

/// `value` in protobuf; None (answered in JSON) for a kind without a
/// protobuf form (a subresource's own kind, say).
pub fn protobuf_bytes(value: &Value) -> Option<Vec<u8>> {
    let schemas = crate::catalogue::Catalogue::builtin_schemas();
    match crate::cpu::for_request(|| crate::api::protobuf::encode_object(value, schemas)) {
        Ok(bytes) => Some(bytes),
        Err(e) => {
            tracing::debug!(error = %e, "answered in JSON: no protobuf form");
            None
        }
    }
}

/// A JSON response whose body is already encoded.
pub fn respond_json_bytes(code: StatusCode, body: Vec<u8>) -> Response {
    crate::audit::response_bytes(&body);
    let mut resp = (code, body).into_response();
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

pub fn add_warnings(resp: &mut Response, warnings: &[String]) {
    for w in warnings {
        let text = format!("299 - {}", serde_json::Value::String(w.clone()));
        if let Ok(v) = HeaderValue::from_str(&text) {
            resp.headers_mut().append(http::header::WARNING, v);
        }
    }
}
