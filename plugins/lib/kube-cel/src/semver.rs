//! kube's semver library (k8s.io/apiserver/pkg/cel/library/semverlib.go):
//! `semver(string[, normalize])`, `isSemver(string[, normalize])`,
//! `.major()`, `.minor()`, `.patch()`, `.compareTo()`, `.isGreaterThan()`,
//! `.isLessThan()`. Versions compare by SemVer precedence (build metadata
//! ignored), as blang/semver's `Compare`.

use std::cmp::Ordering;
use std::sync::Arc;

use cel::objects::Opaque;
use cel::Value;

use crate::call::{error, opaque, string, Answer};

/// A version, `kubernetes.Semver`.
#[derive(Debug, PartialEq, Eq)]
pub struct Semver(pub semver::Version);

impl Opaque for Semver {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Semver"
    }
}

pub(crate) fn call(name: &str, this: Option<&Value>, args: &[Value]) -> Answer {
    match (this, args) {
        (None, [text]) => global(name, string(text)?, false),
        (None, [text, Value::Bool(normalize)]) => global(name, string(text)?, *normalize),
        (Some(v), args) => member(name, &opaque::<Semver>(v)?.0, args),
        _ => None,
    }
}

fn global(name: &str, text: &str, normalize: bool) -> Answer {
    let parsed = if normalize {
        normalize_and_parse(text)
    } else {
        semver::Version::parse(text).map_err(|e| e.to_string())
    };
    Some(match name {
        "semver" => parsed
            .map(|v| Value::Opaque(Arc::new(Semver(v))))
            .map_err(|e| error(name, e)),
        "isSemver" => Ok(Value::Bool(parsed.is_ok())),
        _ => return None,
    })
}

fn member(name: &str, v: &semver::Version, args: &[Value]) -> Answer {
    let int = |n: u64| Some(Ok(Value::Int(i64::try_from(n).unwrap_or(i64::MAX))));
    match (name, args) {
        ("major", []) => int(v.major),
        ("minor", []) => int(v.minor),
        ("patch", []) => int(v.patch),
        ("compareTo", [other]) => Some(Ok(Value::Int(compare(v, other)? as i64))),
        ("isGreaterThan", [other]) => Some(Ok(Value::Bool(compare(v, other)?.is_gt()))),
        ("isLessThan", [other]) => Some(Ok(Value::Bool(compare(v, other)?.is_lt()))),
        _ => None,
    }
}

fn compare(v: &semver::Version, other: &Value) -> Option<Ordering> {
    opaque::<Semver>(other).map(|o| v.cmp_precedence(&o.0))
}

/// kube's `normalizeAndParse`: no "v" prefix, leading zeros dropped, a
/// missing minor or patch is 0.
fn normalize_and_parse(text: &str) -> Result<semver::Version, String> {
    let text = text.strip_prefix('v').unwrap_or(text);
    let mut parts: Vec<String> = text.splitn(3, '.').map(drop_leading_zeros).collect();
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return Err("short version cannot contain PreRelease/Build meta data".to_string());
        }
        parts.resize(3, "0".to_string());
    }
    semver::Version::parse(&parts.join(".")).map_err(|e| e.to_string())
}

fn drop_leading_zeros(part: &str) -> String {
    if part.len() <= 1 {
        return part.to_string();
    }
    let trimmed = part.trim_start_matches('0');
    if trimmed.starts_with(|c: char| c.is_ascii_digit()) {
        trimmed.to_string()
    } else {
        format!("0{trimmed}")
    }
}
