//! Storage keys (`/registry/<group>/<resource>/<namespace>/<name>`) and the
//! opaque continue tokens of paged lists.

use crate::catalogue::ResourceInfo;
use crate::status::{ApiError, ApiResult};
use base64::Engine;
use serde_json::json;

fn group_segment(res: &ResourceInfo) -> &str {
    if res.group.is_empty() {
        "core"
    } else {
        &res.group
    }
}

/// The key prefix of every object of `res` (in `namespace`, if given), ending in `/`.
pub fn prefix(res: &ResourceInfo, namespace: Option<&str>) -> String {
    match namespace {
        Some(ns) if res.namespaced => {
            format!("/registry/{}/{}/{ns}/", group_segment(res), res.plural)
        }
        _ => format!("/registry/{}/{}/", group_segment(res), res.plural),
    }
}

/// The key of one object.
pub fn key(res: &ResourceInfo, namespace: Option<&str>, name: &str) -> String {
    format!("{}{name}", prefix(res, namespace))
}

/// A continue token: the revision the first page was read at and the last key returned.
pub fn encode_continue(revision: i64, last_key: &str, prefix: &str) -> String {
    let start = last_key.strip_prefix(prefix).unwrap_or(last_key);
    let token = json!({"v": "meta.k8s.io/v1", "rv": revision, "start": format!("{start}\u{0}")});
    base64::engine::general_purpose::URL_SAFE.encode(token.to_string())
}

/// Decodes a continue token into (revision, exclusive start key).
pub fn decode_continue(token: &str, prefix: &str) -> ApiResult<(i64, String)> {
    let bad = |why: &str| ApiError::bad_request(format!("continue key is not valid: {why}"));
    let raw = base64::engine::general_purpose::URL_SAFE
        .decode(token.as_bytes())
        .map_err(|_| bad("incorrect encoded start resourceVersion (version meta.k8s.io/v1)"))?;
    let v: serde_json::Value = serde_json::from_slice(&raw).map_err(|_| bad("invalid token"))?;
    if v["v"] != "meta.k8s.io/v1" {
        return Err(bad("server does not recognize this encoded version"));
    }
    let rv = v["rv"]
        .as_i64()
        .filter(|r| *r > 0)
        .ok_or_else(|| bad("incorrect encoded start resourceVersion"))?;
    let start = v["start"]
        .as_str()
        .ok_or_else(|| bad("invalid start key"))?;
    let start = start.strip_suffix('\u{0}').unwrap_or(start);
    if start.contains("..") || start.starts_with('/') {
        return Err(bad("continue key may not contain a relative path"));
    }
    Ok((rv, format!("{prefix}{start}")))
}
