//! kube's `ValidFieldPath`: a rule's `fieldPath` (`.spec.replicas`,
//! `.labels['app.kubernetes.io/name']`) must name properties (or keys of
//! additionalProperties maps) of the rule's schema node; it is reported as
//! kube's field path (`spec.replicas`, `labels[app.kubernetes.io/name]`).

use super::schema::Node;

/// The tokens of a path: `.`, `[`, `]`, quoted strings and names.
fn tokens(path: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        let len = if rest.starts_with('\'') {
            quoted_len(rest)
        } else if rest.starts_with(['.', '[', ']']) {
            1
        } else {
            rest.find(['.', '[', ']']).unwrap_or(rest.len())
        };
        out.push(&rest[..len]);
        rest = &rest[len..];
    }
    out
}

/// The length of the single-quoted string `rest` starts with (all of it
/// when unterminated).
fn quoted_len(rest: &str) -> usize {
    let bytes = rest.as_bytes();
    (1..bytes.len())
        .find(|&i| bytes[i] == b'\'' && bytes[i - 1] != b'\\')
        .map_or(rest.len(), |i| i + 1)
}

fn unescape(quoted: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next()? {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\'' => '\'',
            '\\' => '\\',
            _ => return None,
        });
    }
    Some(out)
}

/// One step down from `node` by `name`: a property, or a map key.
fn step<'a>(node: &'a Node, name: &str, path: &mut String) -> Option<&'a Node> {
    if !node.properties.is_empty() {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(name);
        return node.property(name);
    }
    let values = node.additional.as_deref()?;
    path.push_str(&format!("[{name}]"));
    Some(values)
}

/// The normalized path, if `field_path` is valid below `node`.
pub(crate) fn normalize(field_path: &str, node: &Node) -> Option<String> {
    let tokens = tokens(field_path);
    let mut node = node;
    let mut path = String::new();
    let mut i = 0;
    while i < tokens.len() {
        match tokens[i] {
            "[" => {
                let quoted = tokens.get(i + 1)?;
                let inner = quoted.strip_prefix('\'')?.strip_suffix('\'')?;
                if quoted.len() < 2 || tokens.get(i + 2) != Some(&"]") {
                    return None;
                }
                node = step(node, &unescape(inner)?, &mut path)?;
                i += 3;
            }
            "." => {
                node = step(node, tokens.get(i + 1)?, &mut path)?;
                i += 2;
            }
            _ => return None,
        }
    }
    Some(path)
}
