//! Label key / label value syntax checks with kube's exact error texts
//! (k8s.io/apimachinery/pkg/util/validation, 1.33 wording), plus the
//! `field.Error` / aggregate message formatting selectors report.

const NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const NAME_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', \
and must start and end with an alphanumeric character";
const VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric \
characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const SUBDOMAIN_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case \
alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const NAME_MAX: usize = 63;
const SUBDOMAIN_MAX: usize = 253;

/// kube's `RegexError`: message, examples, and the regex used.
fn regex_error(msg: &str, re: &str, examples: &[&str]) -> String {
    let shown: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{msg} (e.g. {}regex used for validation is '{re}')",
        shown.join(" or ")
    )
}

fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

fn name_regex_error() -> String {
    regex_error(NAME_ERR, NAME_FMT, &["MyName", "my.name", "123-abc"])
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`
fn is_label_name(s: &str) -> bool {
    let b = s.as_bytes();
    let (Some(first), Some(last)) = (b.first(), b.last()) else {
        return false;
    };
    first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn is_dns_label_part(s: &str) -> bool {
    let b = s.as_bytes();
    let ok = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => ok(f) && ok(l) && b.iter().all(|c| ok(c) || *c == b'-'),
        _ => false,
    }
}

/// `IsDNS1123Subdomain`: the list of problems (empty when valid).
pub(crate) fn dns1123_subdomain_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > SUBDOMAIN_MAX {
        errs.push(max_len_error(SUBDOMAIN_MAX));
    }
    if !value.split('.').all(is_dns_label_part) {
        errs.push(regex_error(SUBDOMAIN_ERR, SUBDOMAIN_FMT, &["example.com"]));
    }
    errs
}

/// `IsQualifiedName`: the list of problems with a label key (empty when valid).
pub(crate) fn qualified_name_errors(value: &str) -> Vec<String> {
    let parts: Vec<&str> = value.split('/').collect();
    let mut errs = Vec::new();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                let prefixed = dns1123_subdomain_errors(prefix).into_iter();
                errs.extend(prefixed.map(|m| format!("prefix part {m}")));
            }
            *name
        }
        _ => {
            return vec![format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' \
                 (e.g. 'example.com/MyName')",
                name_regex_error()
            )]
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > NAME_MAX {
        errs.push(format!("name part {}", max_len_error(NAME_MAX)));
    }
    if !is_label_name(name) {
        errs.push(format!("name part {}", name_regex_error()));
    }
    errs
}

/// `IsValidLabelValue`: the list of problems with a label value.
pub(crate) fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > NAME_MAX {
        errs.push(max_len_error(NAME_MAX));
    }
    if !(value.is_empty() || is_label_name(value)) {
        errs.push(regex_error(
            VALUE_ERR,
            VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// Go's `strconv.Quote` (what `%q` prints) for the characters that matter.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A `field.Invalid(path, value, detail).Error()` message; `value` is
/// already rendered (quoted string or JSON).
pub(crate) fn invalid(path: &str, value: &str, detail: &str) -> String {
    format!("{path}: Invalid value: {value}: {detail}")
}

/// `ErrorList.ToAggregate().Error()`: duplicates dropped, several errors
/// bracketed and comma-joined.
pub(crate) fn aggregate(errs: Vec<String>) -> Option<String> {
    let mut seen: Vec<String> = Vec::new();
    for e in errs {
        if !seen.contains(&e) {
            seen.push(e);
        }
    }
    match seen.len() {
        0 => None,
        1 => seen.pop(),
        _ => Some(format!("[{}]", seen.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_part_error_text_matches_kube() {
        let errs = qualified_name_errors("app:monolith");
        assert_eq!(
            errs,
            vec!["name part must consist of alphanumeric characters, '-', '_' or '.', and must \
                  start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  \
                  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
                .to_string()]
        );
    }

    #[test]
    fn prefixed_keys() {
        assert!(qualified_name_errors("app.kubernetes.io/name").is_empty());
        let errs = qualified_name_errors("app.kubernetes_io/name");
        assert_eq!(errs.len(), 1);
        assert!(errs[0].starts_with("prefix part a lowercase RFC 1123 subdomain"));
        assert!(errs[0].contains("(e.g. 'example.com', regex used"));
        assert_eq!(
            qualified_name_errors("/x"),
            vec!["prefix part must be non-empty"]
        );
        assert!(qualified_name_errors("a/b/c")[0].starts_with("a qualified name must consist"));
    }

    #[test]
    fn empty_and_long_names() {
        assert_eq!(qualified_name_errors("").len(), 2);
        let long = "a".repeat(64);
        assert_eq!(
            qualified_name_errors(&long),
            vec!["name part must be no more than 63 characters"]
        );
    }

    #[test]
    fn label_values() {
        assert!(label_value_errors("").is_empty());
        assert!(label_value_errors("my_value-1.2").is_empty());
        assert_eq!(label_value_errors("-bad").len(), 1);
        assert_eq!(label_value_errors(&"a".repeat(64)).len(), 1);
    }

    #[test]
    fn quoting_and_aggregates() {
        assert_eq!(go_quote("a\"b\n"), "\"a\\\"b\\n\"");
        assert_eq!(aggregate(vec![]), None);
        assert_eq!(aggregate(vec!["x".into(), "x".into()]), Some("x".into()));
        assert_eq!(
            aggregate(vec!["x".into(), "y".into()]),
            Some("[x, y]".into())
        );
    }
}
