//! The bits of Go's `fmt` that kube's RBAC messages use: `%q` of a string
//! (`strconv.Quote`) and of a `[]string` (`["a" "b"]`), and the text of a
//! `utilerrors.Aggregate`, so our messages read byte for byte like kube's.

use std::fmt::Write as _;

/// Go's `%q` of a string: double-quoted, with Go's escapes.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        push_escaped(&mut out, c);
    }
    out.push('"');
    out
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{b}' => out.push_str("\\v"),
        c if (c as u32) < 0x20 || c == '\u{7f}' => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c if c.is_control() => {
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        c => out.push(c),
    }
}

/// Go's `%q` of a `[]string`: `["a" "b"]`, `[]` when empty.
pub fn quote_list<S: AsRef<str>>(items: &[S]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| quote(s.as_ref())).collect();
    format!("[{}]", quoted.join(" "))
}

/// The text of `utilerrors.NewAggregate(errors)`: "" for none, the message
/// itself for one, else `[a, b]` with duplicate messages dropped.
pub fn aggregate<S: AsRef<str>>(messages: &[S]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for message in messages {
        let message = message.as_ref();
        if !seen.contains(&message) {
            seen.push(message);
        }
    }
    match seen.as_slice() {
        [] => String::new(),
        [only] => (*only).to_string(),
        many => format!("[{}]", many.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_go() {
        assert_eq!(quote("alice"), "\"alice\"");
        assert_eq!(quote("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\x01\"");
        assert_eq!(quote("é"), "\"é\"");
    }

    #[test]
    fn quotes_lists_like_go() {
        assert_eq!(quote_list::<&str>(&[]), "[]");
        assert_eq!(
            quote_list(&["system:authenticated", "dev"]),
            "[\"system:authenticated\" \"dev\"]"
        );
    }

    #[test]
    fn aggregates_like_utilerrors() {
        assert_eq!(aggregate::<&str>(&[]), "");
        assert_eq!(aggregate(&["a"]), "a");
        assert_eq!(aggregate(&["a", "b", "a"]), "[a, b]");
        assert_eq!(aggregate(&["a", "a"]), "a");
    }
}
