//! `--audit-log-format legacy`: kube's one-line text form of an event
//! (`<time> AUDIT: id="..." stage="..." ip="..." method="..." user="..." ...`).

use kube_rules::gofmt::quote as go_quote;
use serde_json::Value;

pub fn line(event: &Value) -> String {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let user = &event["user"];
    let (username, groups) = match user["username"].as_str().filter(|u| !u.is_empty()) {
        Some(name) => (name.to_string(), groups_or(&user["groups"], "<none>")),
        None => ("<none>".to_string(), "<none>".to_string()),
    };
    let (as_user, as_groups) = match event.get("impersonatedUser") {
        Some(i) => (text(&i["username"]), groups_or(&i["groups"], "<lookup>")),
        None => ("<self>".to_string(), "<lookup>".to_string()),
    };
    let namespace = event["objectRef"]["namespace"]
        .as_str()
        .filter(|n| !n.is_empty())
        .unwrap_or("<none>");
    let response = match event["responseStatus"]["code"].as_i64() {
        Some(code) => code.to_string(),
        None => "<deferred>".to_string(),
    };
    let ip = event["sourceIPs"][0].as_str().unwrap_or("<unknown>");
    format!(
        "{} AUDIT: id={} stage={} ip={} method={} user={} groups={} as={} asgroups={} user-agent={} namespace={} uri={} response=\"{response}\"",
        rfc3339_nano(event["requestReceivedTimestamp"].as_str().unwrap_or_default()),
        go_quote(&text(&event["auditID"])),
        go_quote(&text(&event["stage"])),
        go_quote(ip),
        go_quote(&text(&event["verb"])),
        go_quote(&username),
        go_quote(&groups),
        go_quote(&as_user),
        go_quote(&as_groups),
        go_quote(&text(&event["userAgent"])),
        go_quote(namespace),
        go_quote(&text(&event["requestURI"])),
    )
}

/// kube's `"a","b"` of a group list, or `none` when there is none.
fn groups_or(groups: &Value, none: &str) -> String {
    match groups.as_array().filter(|g| !g.is_empty()) {
        Some(g) => g
            .iter()
            .map(|g| go_quote(g.as_str().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(","),
        None => none.to_string(),
    }
}

/// Go's RFC3339Nano of a microsecond timestamp: trailing zeros dropped.
fn rfc3339_nano(micro: &str) -> String {
    let Some((seconds, fraction)) = micro.trim_end_matches('Z').split_once('.') else {
        return micro.to_string();
    };
    match fraction.trim_end_matches('0') {
        "" => format!("{seconds}Z"),
        kept => format!("{seconds}.{kept}Z"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn writes_kube_s_legacy_line() {
        let event = json!({
            "auditID": "a1", "stage": "ResponseComplete", "verb": "create",
            "requestURI": "/api/v1/namespaces/default/configmaps",
            "user": {"username": "alice", "groups": ["dev", "system:authenticated"]},
            "sourceIPs": ["127.0.0.1"], "userAgent": "kubectl/v1.33.0",
            "objectRef": {"resource": "configmaps", "namespace": "default"},
            "responseStatus": {"metadata": {}, "code": 201},
            "requestReceivedTimestamp": "2026-12-06T12:01:31.691600Z",
        });
        assert_eq!(
            line(&event),
            r#"2026-12-06T12:01:31.6916Z AUDIT: id="a1" stage="ResponseComplete" ip="127.0.0.1" method="create" user="alice" groups="\"dev\",\"system:authenticated\"" as="<self>" asgroups="<lookup>" user-agent="kubectl/v1.33.0" namespace="default" uri="/api/v1/namespaces/default/configmaps" response="201""#
        );
    }

    #[test]
    fn an_anonymous_deferred_event_reads_as_kube_s() {
        let event = json!({"auditID": "a2", "stage": "RequestReceived", "verb": "get", "requestURI": "/healthz",
            "user": {"username": ""}, "requestReceivedTimestamp": "2026-12-06T12:00:00.000000Z"});
        let text = line(&event);
        assert!(text.starts_with("2026-12-06T12:00:00Z AUDIT:"), "{text}");
        assert!(
            text.contains(r#"ip="<unknown>" method="get" user="<none>" groups="<none>""#),
            "{text}"
        );
        assert!(
            text.ends_with(r#"namespace="<none>" uri="/healthz" response="<deferred>""#),
            "{text}"
        );
    }
}
