//! JSON pointers as evanphx/json-patch v4 walks them: `~0`/`~1` escapes,
//! Go `strconv.Atoi` array indices (negative ones count from the end) and the
//! error texts kube returns when an index is unusable.

use serde_json::Value;

/// The container a path's last token addresses, as evanphx's `findObject` finds it.
pub(super) struct Slot {
    /// Tokens leading to the container, array indices made non-negative.
    pub tokens: Vec<String>,
    /// The last token, unescaped.
    pub key: String,
    pub parent: Parent,
}

pub(super) enum Parent {
    Object { has_key: bool },
    Array { len: usize },
}

impl Slot {
    pub fn child(&self, token: String) -> Vec<String> {
        let mut tokens = self.tokens.clone();
        tokens.push(token);
        tokens
    }
}

/// Walks every token but the last; `None` when a step is missing or not a container.
pub(super) fn locate(doc: &Value, path: &str) -> Option<Slot> {
    let segments: Vec<&str> = path.split('/').collect();
    let (first, rest) = segments.split_first()?;
    let (last, parents) = rest.split_last()?;
    if !first.is_empty() {
        return None;
    }
    let mut current = doc;
    let mut tokens = Vec::with_capacity(parents.len());
    for segment in parents {
        let key = unescape(segment);
        let (next, token) = match current {
            Value::Object(map) => (map.get(&key)?, key),
            Value::Array(items) => {
                let index = existing_index(&key, items.len()).ok()?;
                (&items[index], index.to_string())
            }
            _ => return None,
        };
        if !next.is_object() && !next.is_array() {
            return None;
        }
        current = next;
        tokens.push(token);
    }
    let key = unescape(last);
    let parent = match current {
        Value::Object(map) => Parent::Object {
            has_key: map.contains_key(&key),
        },
        Value::Array(items) => Parent::Array { len: items.len() },
        _ => return None,
    };
    Some(Slot {
        tokens,
        key,
        parent,
    })
}

/// An index that must point at an existing element (get, remove, replace).
pub(super) fn existing_index(key: &str, len: usize) -> Result<usize, String> {
    let raw = atoi(key)?;
    resolve_index(raw, len).ok_or_else(|| invalid_index(raw))
}

/// An insertion index for add: `-` appends, `len` appends too.
pub(super) fn insert_index(key: &str, len: usize) -> Result<String, String> {
    if key == "-" {
        return Ok(len.to_string());
    }
    let raw = atoi(key).map_err(|e| format!("value was not a proper array index: '{key}': {e}"))?;
    resolve_index(raw, len + 1)
        .map(|i| i.to_string())
        .ok_or_else(|| invalid_index(raw))
}

/// Negative indices count from the end (evanphx `SupportNegativeIndices`).
fn resolve_index(raw: i64, len: usize) -> Option<usize> {
    let len = i64::try_from(len).ok()?;
    let index = if raw < 0 { raw + len } else { raw };
    if index < 0 || index >= len {
        return None;
    }
    usize::try_from(index).ok()
}

fn invalid_index(raw: i64) -> String {
    format!("Unable to access invalid index: {raw}: invalid index referenced")
}

/// Go's `strconv.Atoi`, with its error text.
fn atoi(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("strconv.Atoi: parsing {s:?}: invalid syntax"));
    }
    s.parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {s:?}: value out of range"))
}

fn unescape(token: &str) -> String {
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('~', Some('1')) => {
                out.push('/');
                chars.next();
            }
            ('~', Some('0')) => {
                out.push('~');
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

pub(super) fn pointer(tokens: &[String]) -> String {
    tokens
        .iter()
        .map(|t| format!("/{}", t.replace('~', "~0").replace('/', "~1")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn indices_parse_like_go_atoi() {
        assert_eq!(existing_index("1", 2), Ok(1));
        assert_eq!(existing_index("-1", 2), Ok(1));
        assert_eq!(
            existing_index("2", 2),
            Err("Unable to access invalid index: 2: invalid index referenced".to_string())
        );
        assert_eq!(
            existing_index("x", 2),
            Err("strconv.Atoi: parsing \"x\": invalid syntax".to_string())
        );
        assert_eq!(insert_index("2", 2), Ok("2".to_string()));
        assert_eq!(insert_index("-", 2), Ok("2".to_string()));
    }

    #[test]
    fn locate_unescapes_and_normalizes_tokens() {
        let doc = json!({"a/b": [{"c~d": 1}, {"e": 2}]});
        let slot = locate(&doc, "/a~1b/-1/e").unwrap();
        assert_eq!(slot.tokens, ["a/b", "1"]);
        assert_eq!(slot.key, "e");
        assert_eq!(pointer(&slot.child("e".into())), "/a~1b/1/e");
        assert!(
            locate(&doc, "a~1b/0/x").is_none(),
            "a path must start with /"
        );
        assert!(locate(&doc, "/missing/x").is_none());
    }
}
