//! Field-for-field differences between a recorded answer and Capstan's.

use serde_json::Value;

/// At most this many differences are reported per answer
/// (`GOLDEN_LIMIT` raises it when looking at one answer).
fn limit() -> usize {
    static LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var("GOLDEN_LIMIT")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(12)
    })
}

/// The differences of `got` from `want`, each as `path: want → got`.
pub fn differences(want: &Value, got: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(want, got, String::new(), &mut out);
    out
}

fn walk(want: &Value, got: &Value, path: String, out: &mut Vec<String>) {
    if want == got || out.len() >= limit() {
        return;
    }
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (key, wv) in w {
                let at = format!("{path}/{key}");
                match g.get(key) {
                    Some(gv) => walk(wv, gv, at, out),
                    None => push(out, format!("{at}: missing (kube: {})", short(wv))),
                }
            }
            for (key, gv) in g.iter().filter(|(k, _)| !w.contains_key(*k)) {
                push(out, format!("{path}/{key}: unexpected {}", short(gv)));
            }
        }
        (Value::Array(w), Value::Array(g)) if keyed(w) && keyed(g) => by_key(w, g, &path, out),
        (Value::Array(w), Value::Array(g)) if w.len() == g.len() => {
            for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                walk(wv, gv, format!("{path}/{i}"), out);
            }
        }
        _ => push(
            out,
            format!("{path}: kube {} · capstan {}", short(want), short(got)),
        ),
    }
}

/// What names an element of a list of objects: `metadata.name` (and
/// namespace), or a `name`, `resource` or `groupVersion` field.
fn key(v: &Value) -> Option<String> {
    let text = |p: &str| v.pointer(p).and_then(Value::as_str);
    if let Some(name) = text("/metadata/name") {
        return Some(format!(
            "{}{name}",
            text("/metadata/namespace")
                .map(|n| format!("{n}/"))
                .unwrap_or_default()
        ));
    }
    ["/name", "/resource", "/groupVersion"]
        .iter()
        .find_map(|p| text(p))
        .map(String::from)
}

/// Every element has a key, and no two the same.
fn keyed(items: &[Value]) -> bool {
    let keys: Option<Vec<String>> = items.iter().map(key).collect();
    keys.is_some_and(|k| k.iter().collect::<std::collections::BTreeSet<_>>().len() == k.len())
}

/// Lists of named objects compared name by name (`path[name]`), so one
/// missing element does not make every later one differ; order is compared
/// once the same names are there.
fn by_key(w: &[Value], g: &[Value], path: &str, out: &mut Vec<String>) {
    let find =
        |items: &[Value], k: &str| items.iter().find(|v| key(v).as_deref() == Some(k)).cloned();
    for wv in w {
        let k = key(wv).unwrap_or_default();
        match find(g, &k) {
            Some(gv) => walk(wv, &gv, format!("{path}[{k}]"), out),
            None => push(out, format!("{path}[{k}]: missing")),
        }
    }
    for gv in g
        .iter()
        .filter(|gv| find(w, &key(gv).unwrap_or_default()).is_none())
    {
        push(
            out,
            format!("{path}[{}]: unexpected", key(gv).unwrap_or_default()),
        );
    }
    let order = |items: &[Value]| items.iter().filter_map(key).collect::<Vec<_>>();
    if out.is_empty() && order(w) != order(g) {
        push(
            out,
            format!("{path}: same elements, other order (kube: {:?})", order(w)),
        );
    }
}

fn push(out: &mut Vec<String>, line: String) {
    if out.len() < limit() {
        out.push(line);
    }
}

/// A value clipped to a readable length.
fn short(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(
        std::env::var("GOLDEN_WIDTH")
            .ok()
            .and_then(|w| w.parse().ok())
            .unwrap_or(160),
    ) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}
