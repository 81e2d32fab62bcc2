//! apimachinery's name validations (k8s.io/apimachinery/pkg/util/validation)
//! with their messages, for the format library.

const LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric \
                         characters or '-', and must start and end with an alphanumeric character";
const SUBDOMAIN_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case \
                             alphanumeric characters, '-' or '.', and must start and end with an \
                             alphanumeric character";
const DNS1035_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters \
                           or '-', start with an alphabetic character, and end with an \
                           alphanumeric character";
const QUALIFIED_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must \
                             start and end with an alphanumeric character";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric \
                               characters, '-', '_' or '.', and must start and end with an \
                               alphanumeric character";

/// `MaxLenError`.
fn max_len(length: usize) -> String {
    format!("must be no more than {length} characters")
}

/// `RegexError`: the message, its examples and the regex.
fn regex_error(msg: &str, regex: &str, examples: &[&str]) -> String {
    let quoted: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{msg} (e.g. {}regex used for validation is '{regex}')",
        quoted.join(" or ")
    )
}

/// `maskTrailingDash` of the `…Prefix` formats (kube drops two characters
/// and appends an `a`).
pub(super) fn mask_trailing_dash(name: &str) -> String {
    match name.strip_suffix('-') {
        Some(_) if name.len() > 1 => {
            let cut = name.len().saturating_sub(2);
            let kept = name.get(..cut).unwrap_or_default();
            format!("{kept}a")
        }
        _ => name.to_string(),
    }
}

fn is_label(value: &str, first: fn(char) -> bool) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    value.starts_with(first)
        && value.ends_with(alnum)
        && value.chars().all(|c| alnum(c) || c == '-')
}

fn is_dns1123_label(value: &str) -> bool {
    is_label(value, |c| c.is_ascii_lowercase() || c.is_ascii_digit())
}

fn is_subdomain(value: &str) -> bool {
    value.split('.').all(is_dns1123_label)
}

/// `IsDNS1123Label`.
pub(super) fn dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len(63));
    }
    if !is_dns1123_label(value) {
        if is_subdomain(value) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(LABEL_MSG, LABEL_FMT, &["my-name", "123-abc"]));
        }
    }
    errs
}

/// `IsDNS1123Subdomain`.
pub(super) fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(max_len(253));
    }
    if !is_subdomain(value) {
        errs.push(regex_error(SUBDOMAIN_MSG, SUBDOMAIN_FMT, &["example.com"]));
    }
    errs
}

/// `IsDNS1035Label`.
pub(super) fn dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len(63));
    }
    if !is_label(value, |c| c.is_ascii_lowercase()) {
        errs.push(regex_error(
            DNS1035_MSG,
            DNS1035_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

fn is_qualified_part(name: &str) -> bool {
    let ext = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
        && name.chars().all(ext)
}

/// `IsQualifiedName`.
pub(super) fn qualified_name(value: &str) -> Vec<String> {
    let examples = ["MyName", "my.name", "123-abc"];
    let regex = || regex_error(QUALIFIED_MSG, QUALIFIED_FMT, &examples);
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                let msgs = dns1123_subdomain(prefix);
                errs.extend(msgs.into_iter().map(|m| format!("prefix part {m}")));
            }
            *name
        }
        _ => {
            return vec![format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. \
                 'example.com/MyName')",
                regex()
            )]
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len(63)));
    }
    if !is_qualified_part(name) {
        errs.push(format!("name part {}", regex()));
    }
    errs
}

/// `IsValidLabelValue`.
pub(super) fn label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len(63));
    }
    if !value.is_empty() && !is_qualified_part(value) {
        let regex = format!("({QUALIFIED_FMT})?");
        errs.push(regex_error(
            LABEL_VALUE_MSG,
            &regex,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}
