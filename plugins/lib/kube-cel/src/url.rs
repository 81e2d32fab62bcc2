//! kube's url library (k8s.io/apiserver/pkg/cel/library/urls.go): `url`,
//! `isURL` and the getters, with Go's `url.ParseRequestURI` rules: an
//! absolute URL or an absolute path.

use kube_rules::gofmt::quote;
use std::collections::HashMap;
use std::sync::Arc;

use cel::objects::{Key, Map, Opaque};
use cel::Value;

use crate::call::{error, opaque, string, Answer};

/// A parsed URL, `kubernetes.URL`.
#[derive(Debug, PartialEq, Eq)]
pub struct Url {
    scheme: String,
    host: String,
    path: String,
    query: String,
}

impl Opaque for Url {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.URL"
    }
}

pub(crate) fn call(name: &str, this: Option<&Value>, args: &[Value]) -> Answer {
    match (this, args) {
        (None, [text]) if name == "url" => Some(
            parse(string(text)?)
                .map(|u| Value::Opaque(Arc::new(u)))
                .map_err(|e| {
                    error(
                        name,
                        format!("URL parse error during conversion from string: {e}"),
                    )
                }),
        ),
        (None, [text]) if name == "isURL" => Some(Ok(Value::Bool(parse(string(text)?).is_ok()))),
        (Some(u), []) => getter(name, opaque::<Url>(u)?),
        _ => None,
    }
}

fn getter(name: &str, url: &Url) -> Answer {
    let text = |s: &str| Some(Ok(Value::String(Arc::new(s.to_string()))));
    match name {
        "getScheme" => text(&url.scheme),
        "getHost" => text(&url.host),
        "getHostname" => text(split_host(&url.host).0),
        "getPort" => text(split_host(&url.host).1),
        "getEscapedPath" => text(&escaped_path(&url.path)),
        "getQuery" => Some(Ok(query(&url.query))),
        _ => None,
    }
}

fn parse(text: &str) -> Result<Url, String> {
    let invalid = || format!("parse {}: invalid URI for request", quote(text));
    // kube re-parses with `url.Parse`, which drops the fragment.
    let whole = text.split_once('#').map_or(text, |(before, _)| before);
    let (rest, query) = whole.split_once('?').unwrap_or((whole, ""));
    if rest.starts_with('/') {
        return path_only(text, rest, query);
    }
    let (scheme, rest) = rest.split_once(':').ok_or_else(invalid)?;
    if !valid_scheme(scheme) {
        return Err(format!(
            "parse {}: first path segment in URL cannot contain colon",
            quote(text)
        ));
    }
    let Some(rest) = rest.strip_prefix("//") else {
        // An opaque URL (`mailto:someone`): no host, no path.
        return Ok(Url {
            scheme: scheme.to_ascii_lowercase(),
            host: String::new(),
            path: String::new(),
            query: query.to_string(),
        });
    };
    let (host, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    check_host(text, host)?;
    check_escapes(text, path)?;
    Ok(Url {
        scheme: scheme.to_ascii_lowercase(),
        host: host.to_string(),
        path: path.to_string(),
        query: query.to_string(),
    })
}

fn path_only(text: &str, path: &str, query: &str) -> Result<Url, String> {
    check_escapes(text, path)?;
    Ok(Url {
        scheme: String::new(),
        host: String::new(),
        path: path.to_string(),
        query: query.to_string(),
    })
}

fn valid_scheme(scheme: &str) -> bool {
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
}

fn check_host(text: &str, host: &str) -> Result<(), String> {
    let (_, port) = split_host(host);
    if !port.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "parse {}: invalid port {} after host",
            quote(text),
            quote(&format!(":{port}"))
        ));
    }
    if host.chars().any(|c| c == ' ' || c.is_control()) {
        return Err(format!(
            "parse {}: invalid character \" \" in host name",
            quote(text)
        ));
    }
    Ok(())
}

/// Go's `unescape` check: every `%` starts two hex digits.
fn check_escapes(text: &str, path: &str) -> Result<(), String> {
    let bytes = path.as_bytes();
    for (i, _) in path.match_indices('%') {
        let hex = bytes
            .get(i + 1..i + 3)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit));
        if hex.is_none() {
            let bad: String = path[i..].chars().take(3).collect();
            return Err(format!(
                "parse {}: invalid URL escape {}",
                quote(text),
                quote(&bad)
            ));
        }
    }
    Ok(())
}

/// `host[:port]` into hostname (IPv6 brackets dropped) and port.
fn split_host(host: &str) -> (&str, &str) {
    if let Some(rest) = host.strip_prefix('[') {
        if let Some((name, after)) = rest.split_once(']') {
            return (name, after.strip_prefix(':').unwrap_or(""));
        }
    }
    host.rsplit_once(':').unwrap_or((host, ""))
}

/// Go's `EscapedPath`: the path with what must be escaped escaped.
fn escaped_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~$&+,/:;=@%!'()*".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Go's `url.ParseQuery`: `map(string, list(string))`, pairs that do not
/// unescape skipped.
fn query(raw: &str) -> Value {
    let mut map: HashMap<Key, Vec<Value>> = HashMap::new();
    for pair in raw.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if let (Some(k), Some(v)) = (unescape(k), unescape(v)) {
            map.entry(Key::String(Arc::new(k)))
                .or_default()
                .push(Value::String(Arc::new(v)));
        }
    }
    let map: HashMap<Key, Value> = map
        .into_iter()
        .map(|(k, v)| (k, Value::List(Arc::new(v))))
        .collect();
    Value::Map(Map::from(map))
}

/// Query unescaping: `+` is a space, `%XX` a byte.
fn unescape(text: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        rest = tail;
        match b {
            b'+' => bytes.push(b' '),
            b'%' => {
                let hex = std::str::from_utf8(rest.get(..2)?).ok()?;
                bytes.push(u8::from_str_radix(hex, 16).ok()?);
                rest = &rest[2..];
            }
            b => bytes.push(b),
        }
    }
    String::from_utf8(bytes).ok()
}
