//! Request bodies: size limit (413), media type (415), JSON or YAML decoding
//! (400), and the apiVersion/kind/namespace checks every write makes.

use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
use crate::catalogue::Schemas;
use axum::body::Body;
use http_body_util::BodyExt;
use serde_json::{json, Value};

/// kube-apiserver's limit on request bodies.
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// Reads the whole body, refusing more than [`MAX_BODY_BYTES`].
pub async fn read(body: Body) -> ApiResult<bytes::Bytes> {
    let limited = http_body_util::Limited::new(body, MAX_BODY_BYTES);
    match limited.collect().await {
        Ok(c) => {
            let bytes = c.to_bytes();
            crate::cpu::mark_large(bytes.len());
            crate::audit::request_body(&bytes);
            Ok(bytes)
        }
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            Err(ApiError::too_large(MAX_BODY_BYTES))
        }
        Err(e) => Err(ApiError::bad_request(format!(
            "unable to read the request body: {e}"
        ))),
    }
}

/// The media type of a Content-Type header, without parameters.
pub fn media_type(content_type: Option<&str>) -> String {
    content_type
        .unwrap_or("application/json")
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// Decodes a JSON, YAML or Kubernetes protobuf document into a JSON value
/// (`schemas` name the JSON fields of protobuf messages).
pub fn decode(bytes: &[u8], content_type: Option<&str>, schemas: &Schemas) -> ApiResult<Value> {
    let mt = media_type(content_type);
    let value: Value = match mt.as_str() {
        m if crate::api::protobuf::is_protobuf(m) => {
            crate::api::protobuf::decode_object(bytes, schemas).map_err(ApiError::bad_request)?
        }
        "application/json" | "" | "*/*" => serde_json::from_slice(bytes).map_err(|e| {
            ApiError::bad_request(format!(
                "couldn't get version/kind; json parse error: {}",
                json_error_text(bytes, &e)
            ))
        })?,
        "application/yaml" | "application/x-yaml" | "text/yaml" => {
            crate::apimachinery::yaml::from_slice(bytes).map_err(ApiError::bad_request)?
        }
        _ => return Err(ApiError::unsupported_media_type()),
    };
    crate::audit::request_object(&value);
    Ok(value)
}

/// Decodes the body of a write to `res`: a body that cannot be decoded is
/// kube's `the object provided is unrecognized (must be of type ConfigMap):
/// <why> (<the first 30 bytes>)`.
pub fn decode_for(
    res: &ResourceInfo,
    bytes: &[u8],
    content_type: Option<&str>,
    schemas: &Schemas,
) -> ApiResult<Value> {
    if crate::api::protobuf::is_protobuf(&media_type(content_type)) {
        if let Some(refused) = undecodable_protobuf(res, bytes) {
            return Err(refused);
        }
    }
    let decoded = decode(bytes, content_type, schemas).and_then(an_object);
    decoded.map_err(|e| {
        if e.code != 400 {
            return e;
        }
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): {} ({})",
            res.kind,
            e.message,
            summarize(bytes)
        ))
    })
}

/// The decoded body as an object: `null` (or an empty YAML document) is
/// an empty one; anything else is what kube's probe for apiVersion and
/// kind cannot read.
fn an_object(value: Value) -> ApiResult<Value> {
    let found = match value {
        Value::Object(_) => return Ok(value),
        Value::Null => return Ok(json!({})),
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
    };
    Err(ApiError::bad_request(format!(
        "couldn't get version/kind; json parse error: json: cannot unmarshal {found} into Go \
         value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; \
         Kind string \"json:\\\"kind,omitempty\\\"\" }}"
    )))
}

/// kube's answer to a well-formed protobuf body it cannot decode into the
/// resource: a custom resource has no protobuf form at all, and a kind
/// kube's scheme does not know (at that version) is not registered.
fn undecodable_protobuf(res: &ResourceInfo, bytes: &[u8]) -> Option<ApiError> {
    let (api_version, kind) = crate::api::protobuf::envelope_kind(bytes)?;
    let why = if res.custom.is_some() {
        "object *unstructured.Unstructured does not implement the protobuf marshalling \
         interface and cannot be encoded to a protobuf message"
            .to_string()
    } else if !crate::api::protobuf::decodable(&api_version, &kind) {
        format!(
            "no kind {kind:?} is registered for version {api_version:?} in scheme {:?}",
            scheme_name(&res.group)
        )
    } else {
        return None;
    };
    let version = api_version.rsplit('/').next().unwrap_or_default();
    Some(ApiError::bad_request(format!(
        "{kind} in version {version:?} cannot be handled as a {}: {why}",
        res.kind
    )))
}

/// Where kube-apiserver's scheme for a group is made (its error messages
/// name it by that call site).
fn scheme_name(group: &str) -> &'static str {
    match group {
        "apiextensions.k8s.io" => "pkg/apiserver/apiserver.go:53",
        "apiregistration.k8s.io" => "pkg/apiserver/scheme/scheme.go:28",
        _ => "pkg/api/legacyscheme/scheme.go:30",
    }
}

/// kube's `summarizeData(body, 30)`: JSON objects as text, anything else
/// in hex, cut at 30 bytes.
fn summarize(bytes: &[u8]) -> String {
    const MAX: usize = 30;
    let cut = &bytes[..bytes.len().min(MAX)];
    let more = if bytes.len() > MAX { " ..." } else { "" };
    match bytes.first() {
        None => "<empty>".to_string(),
        Some(b'{') => format!("{}{more}", String::from_utf8_lossy(cut)),
        Some(_) => {
            let hex: String = cut.iter().map(|b| format!("{b:02x}")).collect();
            format!("{hex}{more}")
        }
    }
}

/// Go's wording of the JSON errors clients see most.
fn json_error_text(bytes: &[u8], e: &serde_json::Error) -> String {
    if let Some(go) = crate::apimachinery::go_json::syntax_error(bytes) {
        return go;
    }
    if e.is_eof() || bytes.iter().all(u8::is_ascii_whitespace) {
        "unexpected end of JSON input".to_string()
    } else {
        e.to_string()
    }
}

/// The JSON bytes of a body for field validation (YAML is converted first).
pub fn as_json_bytes(
    bytes: &bytes::Bytes,
    content_type: Option<&str>,
    decoded: &Value,
) -> bytes::Bytes {
    let mt = media_type(content_type);
    if mt.contains("yaml") || crate::api::protobuf::is_protobuf(&mt) {
        bytes::Bytes::from(decoded.to_string())
    } else {
        bytes.clone()
    }
}

/// Checks and fills apiVersion and kind, and the namespace against the URL's.
pub fn check_object(res: &ResourceInfo, obj: &mut Value, namespace: Option<&str>) -> ApiResult<()> {
    let Some(map) = obj.as_object_mut() else {
        return Err(ApiError::bad_request(
            "the request body must be a JSON object",
        ));
    };
    let expected = res.api_version();
    let text = |field: &str| {
        map.get(field)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    if let Some(av) = api_version.filter(|av| *av != expected) {
        if res.custom.is_some() {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({av}) does not match the expected API version ({expected})"
            )));
        }
        let version = av.rsplit('/').next().unwrap_or(av);
        return Err(not_convertible(res, version, kind.unwrap_or(&res.kind)));
    }
    if let Some(kind) = kind.filter(|k| *k != res.kind) {
        let name = map
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str);
        return Err(kind_mismatch(res, kind, name.unwrap_or_default()));
    }
    map.insert("apiVersion".into(), json!(expected));
    map.insert("kind".into(), json!(res.kind));
    if let Some(md) = map.get("metadata") {
        if !md.is_object() && !md.is_null() {
            return Err(ApiError::bad_request("metadata must be an object"));
        }
    }
    check_namespace(res, obj, namespace)
}

/// kube's decoder answer when a body's kind is not the URL's: the decoded
/// object cannot be converted into the resource's type. A custom resource
/// decodes into plain JSON, so its validation names the kind instead (422).
fn kind_mismatch(res: &ResourceInfo, kind: &str, name: &str) -> ApiError {
    if res.custom.is_some() {
        let why = format!("must be {}", res.kind);
        let cause = crate::apimachinery::status::Cause::invalid("kind", kind, &why);
        return ApiError::invalid(&res.group, &res.kind, name, vec![cause]);
    }
    not_convertible(res, &res.version, kind)
}

/// kube's decoder answer for a built-in body of another kind or group: it
/// decodes, but cannot be converted into the resource's internal type.
fn not_convertible(res: &ResourceInfo, version: &str, kind: &str) -> ApiError {
    let internal = match res.group.split('.').next() {
        Some("") | None => "core",
        Some(first) => first,
    };
    ApiError::bad_request(format!(
        "{kind} in version {version:?} cannot be handled as a {expected}: converting ({version}.{kind}) to ({internal}.{expected}): unknown conversion",
        expected = res.kind,
    ))
}

fn check_namespace(res: &ResourceInfo, obj: &Value, namespace: Option<&str>) -> ApiResult<()> {
    let in_body = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    match (res.namespaced, in_body, namespace) {
        (true, Some(b), Some(url)) if b != url => Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        )),
        _ => Ok(()),
    }
}
