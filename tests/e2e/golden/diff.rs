//! Field-for-field differences between a recorded answer and Capstan's.

use serde_json::Value;

/// At most this many differences are reported per answer.
const LIMIT: usize = 12;

/// The differences of `got` from `want`, each as `path: want → got`.
pub fn differences(want: &Value, got: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(want, got, String::new(), &mut out);
    out
}

fn walk(want: &Value, got: &Value, path: String, out: &mut Vec<String>) {
    if out.len() >= LIMIT || want == got {
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

fn push(out: &mut Vec<String>, line: String) {
    if out.len() < LIMIT {
        out.push(line);
    }
}

/// A value clipped to a readable length.
fn short(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(160) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}
