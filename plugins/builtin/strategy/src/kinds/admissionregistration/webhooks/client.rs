//! A webhook's `clientConfig`: exactly one of `url` (kube's
//! `ValidateWebhookURL`, https only, read as Go's `url.Parse` reads it) and
//! `service` (`ValidateWebhookService`: name, namespace, port, path).

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common::{self, text};
use kube_rules::gofmt;

const FORM: &str = "; desired format: https://host[/path]";

/// The causes for `clientConfig` at `field`.
pub fn validate(client: Option<&Value>, field: &str) -> Vec<Cause> {
    let url = client.and_then(|c| c.get("url")).filter(|v| !v.is_null());
    let service = client
        .and_then(|c| c.get("service"))
        .filter(|v| !v.is_null());
    match (url, service) {
        (Some(url), None) => url_causes(url.as_str().unwrap_or_default(), &format!("{field}.url")),
        (None, Some(svc)) => service_causes(svc, &format!("{field}.service")),
        _ => vec![common::required(
            field,
            "exactly one of url or service is required",
        )],
    }
}

/// `ValidateWebhookURL` with https forced.
fn url_causes(url: &str, field: &str) -> Vec<Cause> {
    let parts = match parse(url) {
        Ok(parts) => parts,
        Err(e) => {
            let detail = format!("url must be a valid URL: {e}{FORM}");
            return vec![common::required(field, &detail)];
        }
    };
    let mut causes = Vec::new();
    if parts.scheme != "https" {
        let detail = format!("'https' is the only allowed URL scheme{FORM}");
        causes.push(common::invalid_str(field, parts.scheme, &detail));
    }
    if parts.host.is_empty() {
        let detail = format!("host must be specified{FORM}");
        causes.push(common::invalid_str(field, parts.host, &detail));
    }
    if let Some(user) = parts.user {
        let detail = "user information is not permitted in the URL";
        causes.push(common::invalid_str(field, user, detail));
    }
    if !parts.fragment.is_empty() {
        let detail = "fragments are not permitted in the URL";
        causes.push(common::invalid_str(field, parts.fragment, detail));
    }
    if !parts.query.is_empty() {
        let detail = "query parameters are not permitted in the URL";
        causes.push(common::invalid_str(field, parts.query, detail));
    }
    causes
}

/// What `ValidateWebhookURL` looks at in a URL.
#[derive(Debug, Default, PartialEq)]
struct Parts<'a> {
    scheme: &'a str,
    host: &'a str,
    user: Option<&'a str>,
    query: &'a str,
    fragment: &'a str,
}

/// Go's `url.Parse`, as far as the scheme, host, userinfo, query and
/// fragment go, with its errors (`parse "…": …`).
fn parse(raw: &str) -> Result<Parts<'_>, String> {
    let error = |e: &str| format!("parse {}: {e}", gofmt::quote(raw));
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err(error("net/url: invalid control character in URL"));
    }
    let (rest, fragment) = raw.split_once('#').unwrap_or((raw, ""));
    let (scheme, rest) = scheme(rest).map_err(error)?;
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let mut parts = Parts {
        scheme,
        query,
        fragment,
        ..Parts::default()
    };
    if !rest.starts_with('/') {
        let first_segment = rest.split('/').next().unwrap_or_default();
        if scheme.is_empty() && first_segment.contains(':') {
            return Err(error("first path segment in URL cannot contain colon"));
        }
        return Ok(parts);
    }
    if let Some(after) = rest.strip_prefix("//") {
        if !scheme.is_empty() || !after.starts_with('/') {
            let authority = after.split('/').next().unwrap_or_default();
            match authority.rsplit_once('@') {
                Some((user, host)) => (parts.user, parts.host) = (Some(user), host),
                None => parts.host = authority,
            }
        }
    }
    Ok(parts)
}

/// Go's `getScheme`: letters, then letters, digits, `+`, `-` or `.`, up
/// to a colon; anything else first means there is no scheme.
fn scheme(raw: &str) -> Result<(&str, &str), &'static str> {
    for (i, c) in raw.char_indices() {
        match c {
            c if c.is_ascii_alphabetic() => {}
            c if i > 0 && (c.is_ascii_digit() || matches!(c, '+' | '-' | '.')) => {}
            ':' if i == 0 => return Err("missing protocol scheme"),
            ':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// `ValidateWebhookService` (kube passes the name and namespace in each
/// other's place and so reports one missing as the other; here each is
/// reported as itself).
fn service_causes(svc: &Value, field: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    for key in ["name", "namespace"] {
        if text(svc, key).is_empty() {
            causes.push(common::required(&format!("{field}.{key}"), ""));
        }
    }
    let port = svc.get("port").and_then(Value::as_i64).unwrap_or(443);
    if let Some(why) = kube_rules::port_num(port) {
        let detail = format!("port is not valid: {why}");
        causes.push(common::invalid(
            &format!("{field}.port"),
            &port.to_string(),
            &detail,
        ));
    }
    if let Some(path) = svc.get("path").and_then(Value::as_str) {
        causes.extend(path_causes(path, &format!("{field}.path")));
    }
    causes
}

/// A service path: `/`-separated DNS-1123 subdomains.
fn path_causes(path: &str, field: &str) -> Vec<Cause> {
    if path.is_empty() || path == "/" {
        return Vec::new();
    }
    if path == "//" {
        return vec![common::invalid_str(
            field,
            path,
            "segment[0] may not be empty",
        )];
    }
    let mut causes = Vec::new();
    if !path.starts_with('/') {
        causes.push(common::invalid_str(field, path, "must start with a '/'"));
    }
    let inner = path.get(1..).unwrap_or_default();
    let inner = inner.strip_suffix('/').unwrap_or(inner);
    for (i, step) in inner.split('/').enumerate() {
        if step.is_empty() {
            let detail = format!("segment[{i}] may not be empty");
            causes.push(common::invalid_str(field, path, &detail));
            continue;
        }
        for failure in kube_rules::dns1123_subdomain(step) {
            let detail = format!("segment[{i}]: {failure}");
            causes.push(common::invalid_str(field, path, &detail));
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_read_as_go_reads_them() {
        let p = parse("https://user:pw@127.0.0.1:8443/validate?x=1#f").unwrap();
        assert_eq!(
            p,
            Parts {
                scheme: "https",
                host: "127.0.0.1:8443",
                user: Some("user:pw"),
                query: "x=1",
                fragment: "f",
            }
        );
        assert_eq!(
            parse("127.0.0.1:8443/x").unwrap_err(),
            "parse \"127.0.0.1:8443/x\": first path segment in URL cannot contain colon"
        );
        assert_eq!(
            parse(":8443").unwrap_err(),
            "parse \":8443\": missing protocol scheme"
        );
        assert_eq!(parse("https:host").unwrap().host, "");
    }

    fn messages(causes: Vec<Cause>) -> Vec<String> {
        crate::tests::messages(&causes)
    }

    #[test]
    fn url_problems_in_kube_words() {
        assert!(url_causes("https://example.com/hook", "u").is_empty());
        assert_eq!(
            messages(url_causes("http://a/b?q#f", "u")),
            [
                "u: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
                "u: Invalid value: \"f\": fragments are not permitted in the URL",
                "u: Invalid value: \"q\": query parameters are not permitted in the URL",
            ]
        );
        assert_eq!(
            messages(validate(Some(&serde_json::json!({})), "c")),
            ["c: Required value: exactly one of url or service is required"]
        );
    }

    #[test]
    fn service_problems_in_kube_words() {
        let svc = serde_json::json!({"name": "", "namespace": "ns", "port": 0, "path": "/a//B"});
        assert_eq!(
            messages(service_causes(&svc, "s")),
            [
                "s.name: Required value",
                "s.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive",
                "s.path: Invalid value: \"/a//B\": segment[1] may not be empty",
                "s.path: Invalid value: \"/a//B\": segment[2]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ]
        );
    }
}
