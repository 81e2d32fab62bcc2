//! The CRD string formats of the format library (go-openapi/strfmt as kube
//! uses it): uri (`url.ParseRequestURI`), uuid, byte (base64), date and
//! date-time (RFC 3339).

use std::sync::LazyLock;

use regex::Regex;

/// kube's single message when `valid` is false.
pub(super) fn check(valid: bool, message: &str) -> Vec<String> {
    if valid {
        Vec::new()
    } else {
        vec![message.to_string()]
    }
}

fn matches(regex: &LazyLock<Option<Regex>>, text: &str) -> bool {
    regex.as_ref().is_some_and(|r| r.is_match(text))
}

static UUID: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new("(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$").ok()
});
static BASE64: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new("^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})?$")
        .ok()
});
static DATE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^(\d{4})-(\d{2})-(\d{2})$").ok());
static DATETIME: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"^(\d{4})-(\d{2})-(\d{2})[Tt ]([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$",
    )
    .ok()
});

pub(super) fn is_uuid(text: &str) -> bool {
    matches(&UUID, text)
}

pub(super) fn is_base64(text: &str) -> bool {
    matches(&BASE64, text)
}

/// A calendar date: the month's day count respected, leap years included.
fn valid_date(year: u32, month: u32, day: u32) -> bool {
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

fn date_of(regex: &LazyLock<Option<Regex>>, text: &str) -> bool {
    let Some(captures) = regex.as_ref().and_then(|r| r.captures(text)) else {
        return false;
    };
    let part = |i: usize| captures.get(i).and_then(|m| m.as_str().parse::<u32>().ok());
    match (part(1), part(2), part(3)) {
        (Some(y), Some(m), Some(d)) => valid_date(y, m, d),
        _ => false,
    }
}

pub(super) fn is_date(text: &str) -> bool {
    date_of(&DATE, text)
}

pub(super) fn is_datetime(text: &str) -> bool {
    date_of(&DATETIME, text)
}

/// `url.ParseRequestURI`'s error, if any: an absolute URI or an absolute
/// path (Go's wording).
pub(super) fn uri(text: &str) -> Vec<String> {
    let quoted = kube_rules::gofmt::quote(text);
    if text.is_empty() {
        return vec![format!("parse {quoted}: empty url")];
    }
    if text.chars().any(|c| c.is_ascii_control()) {
        return vec![format!(
            "parse {quoted}: net/url: invalid control character in URL"
        )];
    }
    let scheme_end = text.find(':');
    let scheme_ok = scheme_end.is_some_and(|end| {
        let scheme = &text[..end];
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    if text.starts_with('/') || scheme_ok {
        return Vec::new();
    }
    if scheme_end == Some(0) {
        return vec![format!("parse {quoted}: missing protocol scheme")];
    }
    vec![format!("parse {quoted}: invalid URI for request")]
}
