//! Storage keys (`/registry/<group>/<resource>/<namespace>/<name>`) and the
//! opaque continue tokens of paged lists.

use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
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

/// A continue token as kube's `EncodeContinue` writes it: unpadded
/// base64url of `{"v","rv","start"}`, the start key just past the last
/// key returned.
pub fn encode_continue(revision: i64, last_key: &str, prefix: &str) -> String {
    let start = last_key.strip_prefix(prefix).unwrap_or(last_key);
    let token = json!({"v": "meta.k8s.io/v1", "rv": revision, "start": format!("{start}\u{0}")});
    GO_RAW_URL.encode(token.to_string())
}

/// Go's `base64.RawURLEncoding`: no padding, trailing bits not checked.
const GO_RAW_URL: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    base64::engine::GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::RequireNone),
);

/// kube's `DecodeContinue` error texts.
const INVALID_KEY: &str = "continue key is not valid";

/// Decodes a continue token into (revision, exclusive start key), refusing
/// it with kube's 400 `invalid continue token: …` (DecodeContinue's errors).
/// A negative revision (kube writes -1 into the token of an
/// inconsistent-continue 410) means "continue at the latest revision".
pub fn decode_continue(token: &str, prefix: &str) -> ApiResult<(i64, String)> {
    let bad = |why: String| ApiError::bad_request(format!("invalid continue token: {why}"));
    let generic = |why: String| bad(format!("{INVALID_KEY}: {why}"));
    // Older Capstans padded their tokens; kube's never are.
    let raw = GO_RAW_URL
        .decode(token.trim_end_matches('=').as_bytes())
        .map_err(|e| generic(go_base64_error(&e)))?;
    if let Some(why) = crate::apimachinery::go_json::syntax_error(&raw) {
        return Err(generic(why));
    }
    let v: serde_json::Value = serde_json::from_slice(&raw).map_err(|e| generic(e.to_string()))?;
    match v
        .get("v")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
    {
        "meta.k8s.io/v1" => {}
        other => {
            return Err(bad(format!(
                "{INVALID_KEY}: server does not recognize this encoded version {other}"
            )))
        }
    }
    let rv = v["rv"].as_i64().unwrap_or_default();
    if rv == 0 {
        return Err(bad(format!(
            "{INVALID_KEY}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
        )));
    }
    let start = v["start"].as_str().unwrap_or_default();
    if start.is_empty() {
        return Err(bad(format!(
            "{INVALID_KEY}: encoded start key empty (version meta.k8s.io/v1)"
        )));
    }
    if !is_clean_path(&format!("/{}", start.trim_start_matches('/'))) || start.starts_with("//") {
        return Err(generic(start.to_string()));
    }
    let start = start.trim_start_matches('/');
    let start = start.strip_suffix('\u{0}').unwrap_or(start);
    Ok((rv, format!("{prefix}{start}")))
}

/// Go's `path.Clean(p) == p` for an absolute `p`: no empty, `.` or `..`
/// segment and no trailing slash.
fn is_clean_path(p: &str) -> bool {
    p == "/"
        || p[1..]
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
}

/// Go's `base64.CorruptInputError` text.
fn go_base64_error(e: &base64::DecodeError) -> String {
    let at = match e {
        base64::DecodeError::InvalidByte(at, _) | base64::DecodeError::InvalidLastSymbol(at, _) => {
            *at
        }
        base64::DecodeError::InvalidLength(len) => len.saturating_sub(1),
        base64::DecodeError::InvalidPadding => 0,
    };
    format!("illegal base64 data at input byte {at}")
}
