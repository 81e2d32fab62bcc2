//! What differs between two correct answers and is therefore not compared:
//! identities and times the server makes up, allocations, the requesting
//! user's name, and Capstan's own API groups. Applied to kube's answer when
//! it is recorded and to Capstan's before it is compared.

use super::request::Request;
use serde_json::{Map, Value};

/// Capstan's own API groups: not in kube's answers, left out of Capstan's.
pub const CAPSTAN_GROUPS: &[&str] = &["policies.capstan.dev", "wgpolicyk8s.io"];

/// The admin users the recorder and the comparison authenticate as.
const ADMINS: &[&str] = &["references-admin", "capstan-admin"];

/// Times in status conditions, node heartbeats and a volume's phase.
const CONDITION_TIMES: &[&str] = &[
    "lastPhaseTransitionTime",
    "lastTransitionTime",
    "lastUpdateTime",
    "lastHeartbeatTime",
    "lastProbeTime",
];

/// `body` as it is compared: `request` is what produced it.
pub fn normalize(request: &Request, body: &mut Value) {
    if request.path.starts_with("/openapi/") {
        // Documents: nothing in them is made up per server.
        return drop_own_openapi(body);
    }
    drop_capstan_own(body);
    let mut uids = Vec::new();
    scrub_metadata(body, &mut uids);
    if ["POST", "PUT", "PATCH"].contains(&request.method.as_str()) {
        allocated(request, body);
    }
    replace_strings(body, &|s| rewrite(s, &uids));
    issued_token(body);
    drop_credentials(body);
    sort_items(body);
    table_ages(body);
}

/// What depends on how the admin authenticates (a token on the oracle, a
/// client certificate on Capstan): the user's `uid` (tokens.csv has one,
/// certificates none) and the `credential-id` extra of certificates.
fn drop_credentials(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("uid") == Some(&Value::from("<admin>")) {
                map.remove("uid");
            }
            if let Some(Value::Object(extra)) = map.get_mut("extra") {
                extra.remove("authentication.kubernetes.io/credential-id");
                if extra.is_empty() {
                    map.remove("extra");
                }
            }
            map.values_mut().for_each(drop_credentials);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_credentials),
        _ => {}
    }
}

/// A TokenRequest's token and its expiry, made up per request: their
/// presence is compared.
fn issued_token(body: &mut Value) {
    if body.get("kind").and_then(Value::as_str) != Some("TokenRequest") {
        return;
    }
    for (field, mark) in [("token", "<token>"), ("expirationTimestamp", "<time>")] {
        if let Some(v) = body.pointer_mut(&format!("/status/{field}")) {
            *v = Value::String(mark.into());
        }
    }
}

/// Columns whose cells depend on when the answer was given: ages, times.
const TIME_COLUMNS: &[&str] = &["Age", "Created At", "Last Seen", "First Seen", "Duration"];

/// A Table as compared: cells of time columns (`0s`, `5m`, a creation
/// time) are `<age>`; a Service's allocated cluster IP and node ports are
/// `<allocated>`; rows in name order.
fn table_ages(body: &mut Value) {
    if body.get("kind").and_then(Value::as_str) != Some("Table") {
        return;
    }
    let names: Vec<String> = body
        .get("columnDefinitions")
        .and_then(Value::as_array)
        .map(|c| {
            c.iter()
                .map(|c| c["name"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    let Some(Value::Array(rows)) = body.get_mut("rows") else {
        return;
    };
    for cells in rows
        .iter_mut()
        .filter_map(|r| r.get_mut("cells"))
        .filter_map(Value::as_array_mut)
    {
        for (cell, name) in cells.iter_mut().zip(&names) {
            normalize_cell(name, cell);
        }
    }
    rows.sort_by_key(|r| r.pointer("/cells/0").map(Value::to_string));
}

fn normalize_cell(column: &str, cell: &mut Value) {
    let text = cell.as_str().unwrap_or_default();
    let new = match column {
        c if TIME_COLUMNS.contains(&c) => "<age>".to_string(),
        "Cluster-IP" if text != "None" => "<allocated>".to_string(),
        // `80:31234/TCP`: the node port is allocated.
        "Port(s)" => text
            .split(',')
            .map(|p| match p.split_once(':') {
                Some((port, rest)) => {
                    let protocol = rest.split_once('/').map_or("", |r| r.1);
                    format!("{port}:<allocated>/{protocol}")
                }
                None => p.to_string(),
            })
            .collect::<Vec<_>>()
            .join(","),
        _ => return,
    };
    *cell = Value::String(new);
}

/// Server-made metadata: uid (remembered: selectors and labels repeat it),
/// timestamps, resourceVersion, managedFields' and conditions' times, at
/// every depth.
fn scrub_metadata(value: &mut Value, uids: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for field in CONDITION_TIMES {
                map.remove(*field);
            }
            if let Some(Value::Object(meta)) = map.get_mut("metadata") {
                scrub_one(meta, uids);
            }
            map.values_mut().for_each(|v| scrub_metadata(v, uids));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| scrub_metadata(v, uids)),
        _ => {}
    }
}

fn scrub_one(meta: &mut Map<String, Value>, uids: &mut Vec<String>) {
    if let Some(Value::String(uid)) = meta.remove("uid") {
        uids.push(uid);
    }
    for field in ["creationTimestamp", "resourceVersion", "selfLink"] {
        meta.remove(field);
    }
    if let Some(Value::Array(entries)) = meta.get_mut("managedFields") {
        for entry in entries.iter_mut().filter_map(Value::as_object_mut) {
            entry.remove("time");
        }
    }
}

/// What the server allocates for a created or updated object: a generated
/// name, a Service's cluster IPs and node ports the request did not set
/// (their presence is compared).
fn allocated(request: &Request, body: &mut Value) {
    let sent = request.body.as_ref();
    let generated = sent
        .and_then(|b| b.pointer("/metadata/generateName"))
        .is_some();
    if generated {
        if let Some(name) = body.pointer_mut("/metadata/name") {
            *name = Value::String("<generated>".into());
        }
        generated_name_in_status(body);
    }
    if body.get("kind").and_then(Value::as_str) != Some("Service") {
        return;
    }
    let sent_spec = sent.and_then(|b| b.get("spec"));
    let Some(Value::Object(spec)) = body.get_mut("spec") else {
        return;
    };
    for field in ["clusterIP", "clusterIPs", "healthCheckNodePort"] {
        if sent_spec.and_then(|s| s.get(field)).is_none() {
            mark_allocated(spec.get_mut(field));
        }
    }
    if let Some(Value::Array(ports)) = spec.get_mut("ports") {
        ports
            .iter_mut()
            .for_each(|p| mark_allocated(p.get_mut("nodePort")));
    }
}

/// A refused create's Status names the generated name (details.name, the
/// message, each cause's): `<generated>` everywhere, as in an object.
fn generated_name_in_status(body: &mut Value) {
    if body.get("kind").and_then(Value::as_str) != Some("Status") {
        return;
    }
    let name = body.pointer("/details/name").and_then(Value::as_str);
    let Some(name) = name.filter(|n| !n.is_empty()).map(String::from) else {
        return;
    };
    replace_in_strings(body, &name);
}

fn replace_in_strings(value: &mut Value, name: &str) {
    match value {
        Value::String(s) if s == name => *s = "<generated>".into(),
        Value::String(s) => *s = s.replace(&format!("\"{name}\""), "\"<generated>\""),
        Value::Array(items) => items.iter_mut().for_each(|v| replace_in_strings(v, name)),
        Value::Object(map) => map.values_mut().for_each(|v| replace_in_strings(v, name)),
        _ => {}
    }
}

fn mark_allocated(value: Option<&mut Value>) {
    match value {
        Some(Value::Array(items)) => items.iter_mut().for_each(|v| mark_allocated(Some(v))),
        Some(v) if v != "None" => *v = Value::String("<allocated>".into()),
        _ => {}
    }
}

/// One string as compared: uids, UUIDs and a record's resourceVersion in
/// messages, the admin's name and
/// the server's own address and the random suffix of the service-account
/// token volume.
fn rewrite(s: &str, uids: &[String]) -> Option<String> {
    if uids.iter().any(|u| u == s) {
        return Some("<uid>".into());
    }
    if ADMINS.contains(&s) {
        return Some("<admin>".into());
    }
    if let Some(port) = s.strip_prefix("127.0.0.1:") {
        return port
            .parse::<u16>()
            .is_ok()
            .then(|| "127.0.0.1:<port>".into());
    }
    if let Some(suffix) = s.strip_prefix("kube-api-access-") {
        return (suffix.len() == 5).then(|| "kube-api-access-<random>".into());
    }
    if let Some((before, after)) = s.split_once("ResourceVersion in record (") {
        let rest = after.split_once(')').map_or("", |(_, r)| r);
        return Some(format!("{before}ResourceVersion in record (<rv>){rest}"));
    }
    let scrubbed = scrub_uuids(s);
    (scrubbed != s).then_some(scrubbed)
}

fn replace_strings(value: &mut Value, f: &dyn Fn(&str) -> Option<String>) {
    match value {
        Value::String(s) => {
            if let Some(new) = f(s) {
                *s = new;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| replace_strings(v, f)),
        Value::Object(map) => map.values_mut().for_each(|v| replace_strings(v, f)),
        _ => {}
    }
}

/// Every 8-4-4-4-12 hexadecimal UUID in `s` replaced by `<uuid>`.
pub fn scrub_uuids(s: &str) -> String {
    const SHAPE: &[usize] = &[8, 4, 4, 4, 12];
    let bytes = s.as_bytes();
    let (mut out, mut i) = (String::new(), 0);
    while i < bytes.len() {
        let len = uuid_at(&bytes[i..], SHAPE);
        if len > 0 {
            out.push_str("<uuid>");
            i += len;
        } else {
            let ch = s[i..].chars().next().unwrap_or('?');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The length of a UUID starting `bytes`, 0 if none does.
fn uuid_at(bytes: &[u8], shape: &[usize]) -> usize {
    let mut at = 0;
    for (n, len) in shape.iter().enumerate() {
        let part = bytes.get(at..at + len);
        if !part.is_some_and(|p| p.iter().all(u8::is_ascii_hexdigit)) {
            return 0;
        }
        at += len;
        if n + 1 < shape.len() {
            if bytes.get(at) != Some(&b'-') {
                return 0;
            }
            at += 1;
        }
    }
    at
}

/// List items in name order (kube lists in key order; Capstan too, but a
/// list is compared as a set of objects).
fn sort_items(body: &mut Value) {
    if let Some(Value::Array(items)) = body.get_mut("items") {
        items.sort_by_key(|item| {
            let meta = |f: &str| {
                item.pointer(&format!("/metadata/{f}"))
                    .and_then(Value::as_str)
                    .map(String::from)
            };
            (meta("namespace"), meta("name"))
        });
    }
}

/// Capstan's own groups, objects and rules, as kube has none of them.
fn drop_capstan_own(body: &mut Value) {
    if let Some(Value::Array(groups)) = body.get_mut("groups") {
        groups.retain(|g| !names_own_group(g.get("name")));
    }
    if let Some(Value::Array(items)) = body.get_mut("items") {
        items.retain(|item| !is_capstan_object(item));
        items.iter_mut().for_each(drop_own_rules);
        // Aggregated discovery: one item per group, named by it.
        items.retain(|item| !names_own_group(item.pointer("/metadata/name")));
    }
}

/// Capstan's groups' paths and definitions in the OpenAPI v2 document; and
/// `info.version`, which each server derives from its own `/version`.
fn drop_own_openapi(body: &mut Value) {
    if let Some(Value::Object(info)) = body.get_mut("info") {
        if info.contains_key("version") && info.get("title") == Some(&Value::from("Kubernetes")) {
            info.insert("version".into(), Value::from("<version>"));
        }
    }
    let own_path = |p: &str| {
        CAPSTAN_GROUPS
            .iter()
            .any(|g| p.starts_with(&format!("/apis/{g}/")))
    };
    if let Some(Value::Object(paths)) = body.get_mut("paths") {
        paths.retain(|p, _| !own_path(p));
    }
    // Definitions are named by the reversed group (`dev.capstan.policies…`).
    let reversed: Vec<String> = CAPSTAN_GROUPS
        .iter()
        .map(|g| g.split('.').rev().collect::<Vec<_>>().join("."))
        .collect();
    if let Some(Value::Object(definitions)) = body.get_mut("definitions") {
        definitions.retain(|d, _| !reversed.iter().any(|r| d.starts_with(&format!("{r}."))));
    }
}

fn names_own_group(name: Option<&Value>) -> bool {
    name.and_then(Value::as_str)
        .is_some_and(|n| CAPSTAN_GROUPS.contains(&n))
}

/// Capstan's own objects: named `capstan:…` or `capstan-…`, or an APIService of its groups.
fn is_capstan_object(item: &Value) -> bool {
    let name = item
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    name.starts_with("capstan:")
        || name.starts_with("capstan-")
        || CAPSTAN_GROUPS
            .iter()
            .any(|g| name.ends_with(&format!(".{g}")))
}

/// RBAC rules about Capstan's groups only (aggregated into kube's roles).
fn drop_own_rules(item: &mut Value) {
    if let Some(Value::Array(rules)) = item.get_mut("rules") {
        rules.retain(|rule| {
            let groups = rule.get("apiGroups").and_then(Value::as_array);
            !groups.is_some_and(|g| !g.is_empty() && g.iter().all(|g| names_own_group(Some(g))))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_in_messages_are_scrubbed() {
        let m = "UID in precondition: x, UID in object meta: 0b6a1c2e-1d3f-4a5b-9c7d-112233445566.";
        assert_eq!(
            scrub_uuids(m),
            "UID in precondition: x, UID in object meta: <uuid>."
        );
        assert_eq!(scrub_uuids("no-uuid-here"), "no-uuid-here");
    }
}
