//! `k8s.io/apimachinery/pkg/util/validation` (kube-apiserver 1.32/1.33
//! wording), `path.IsValidPathSegmentName` and the name functions of
//! `k8s.io/apimachinery/pkg/api/validation` (`NameIsDNSSubdomain`, ...).
//!
//! Every check answers kube's list of problems with `value`, empty when it
//! is valid; a caller turns each into a `field.Invalid` of its own.

/// `DNS1123LabelMaxLength`.
pub const DNS1123_LABEL_MAX_LENGTH: usize = 63;
/// `DNS1123SubdomainMaxLength` (also the ConfigMap key limit).
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;
/// `DNS1035LabelMaxLength`.
pub const DNS1035_LABEL_MAX_LENGTH: usize = 63;
/// `LabelValueMaxLength`, also the name part of a qualified name.
pub const LABEL_VALUE_MAX_LENGTH: usize = 63;

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case \
                                 alphanumeric characters or '-', and must start and end with an \
                                 alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case \
                                     alphanumeric characters, '-' or '.', and must start and end \
                                     with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric \
                                 characters or '-', start with an alphabetic character, and end \
                                 with an alphanumeric character";
const WILDCARD_DNS1123_SUBDOMAIN_FMT: &str =
    "\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const WILDCARD_DNS1123_SUBDOMAIN_MSG: &str = "a wildcard DNS-1123 subdomain must start with \
                                              '*.', followed by a valid DNS subdomain, which must \
                                              consist of lower case alphanumeric characters, '-' \
                                              or '.' and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and \
                                  must start and end with an alphanumeric character";
const QUALIFIED_NAME_EXAMPLES: [&str; 3] = ["MyName", "my.name", "123-abc"];
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric \
                               characters, '-', '_' or '.', and must start and end with an \
                               alphanumeric character";
const CONFIG_MAP_KEY_FMT: &str = "[-._a-zA-Z0-9]+";
const CONFIG_MAP_KEY_MSG: &str =
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";
const PERCENT_FMT: &str = "[0-9]+%";
const PERCENT_MSG: &str =
    "a valid percent string must be a numeric string followed by an ending '%'";

/// `MaxLenError`: "must be no more than N characters".
pub fn max_len_error(length: usize) -> String {
    format!("must be no more than {length} characters")
}

/// `RegexError`: the message, its examples (if any) and the regex.
pub fn regex_error(msg: &str, regex: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{regex}')");
    }
    let quoted: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{msg} (e.g. {}regex used for validation is '{regex}')",
        quoted.join(" or ")
    )
}

/// `EmptyError`: "must be non-empty".
pub fn empty_error() -> &'static str {
    "must be non-empty"
}

/// `InclusiveRangeError`: "must be between LO and HI, inclusive".
pub fn inclusive_range_error(lo: i64, hi: i64) -> String {
    format!("must be between {lo} and {hi}, inclusive")
}

fn is_lower_alnum(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// Whether `value` matches `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
pub fn is_dns1123_label(value: &str) -> bool {
    value.starts_with(is_lower_alnum)
        && value.ends_with(is_lower_alnum)
        && value.chars().all(|c| is_lower_alnum(c) || c == '-')
}

/// Whether `value` matches the DNS-1123 subdomain regex (length aside).
pub fn is_dns1123_subdomain(value: &str) -> bool {
    value.split('.').all(is_dns1123_label)
}

/// Whether `value` matches `[a-z]([-a-z0-9]*[a-z0-9])?`.
pub fn is_dns1035_label(value: &str) -> bool {
    is_dns1123_label(value) && value.starts_with(|c: char| c.is_ascii_lowercase())
}

/// Whether `value` matches `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, the
/// name part of a qualified name and a non-empty label value.
pub fn is_qualified_name_part(value: &str) -> bool {
    let ext = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    value.starts_with(|c: char| c.is_ascii_alphanumeric())
        && value.ends_with(|c: char| c.is_ascii_alphanumeric())
        && value.chars().all(ext)
}

/// `IsDNS1123Label`.
pub fn dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    if !is_dns1123_label(value) {
        if is_dns1123_subdomain(value) {
            // A valid subdomain and not a valid label: it has dots.
            errs.push("must not contain dots".to_string());
        } else {
            let examples = ["my-name", "123-abc"];
            errs.push(regex_error(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, &examples));
        }
    }
    errs
}

/// `IsDNS1123Subdomain`.
pub fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !is_dns1123_subdomain(value) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// `IsDNS1035Label`.
pub fn dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1035_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1035_LABEL_MAX_LENGTH));
    }
    if !is_dns1035_label(value) {
        let examples = ["my-name", "abc-123"];
        errs.push(regex_error(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, &examples));
    }
    errs
}

/// `IsWildcardDNS1123Subdomain`: `*.` and a DNS-1123 subdomain.
pub fn wildcard_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !value.strip_prefix("*.").is_some_and(is_dns1123_subdomain) {
        errs.push(regex_error(
            WILDCARD_DNS1123_SUBDOMAIN_MSG,
            WILDCARD_DNS1123_SUBDOMAIN_FMT,
            &["*.example.com"],
        ));
    }
    errs
}

fn qualified_name_regex_error() -> String {
    regex_error(
        QUALIFIED_NAME_MSG,
        QUALIFIED_NAME_FMT,
        &QUALIFIED_NAME_EXAMPLES,
    )
}

/// `IsQualifiedName` (label keys, annotation keys, finalizers, ...): a
/// name part with an optional DNS-1123 subdomain prefix and '/'.
pub fn qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push(format!("prefix part {}", empty_error()));
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
                qualified_name_regex_error()
            )]
        }
    };
    if name.is_empty() {
        errs.push(format!("name part {}", empty_error()));
    } else if name.len() > LABEL_VALUE_MAX_LENGTH {
        errs.push(format!(
            "name part {}",
            max_len_error(LABEL_VALUE_MAX_LENGTH)
        ));
    }
    if !is_qualified_name_part(name) {
        errs.push(format!("name part {}", qualified_name_regex_error()));
    }
    errs
}

/// `IsValidLabelValue`.
pub fn label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX_LENGTH {
        errs.push(max_len_error(LABEL_VALUE_MAX_LENGTH));
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        let examples = ["MyValue", "my_value", "12345"];
        errs.push(regex_error(LABEL_VALUE_MSG, LABEL_VALUE_FMT, &examples));
    }
    errs
}

/// `IsConfigMapKey` (keys of ConfigMaps and Secrets).
pub fn config_map_key(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if value.is_empty() || !value.chars().all(allowed) {
        let examples = ["key.name", "KEY_NAME", "key-name"];
        errs.push(regex_error(
            CONFIG_MAP_KEY_MSG,
            CONFIG_MAP_KEY_FMT,
            &examples,
        ));
    }
    errs.extend(ch_dir_prefix(value));
    errs
}

/// `hasChDirPrefix`.
fn ch_dir_prefix(value: &str) -> Option<String> {
    match value {
        "." => Some("must not be '.'".into()),
        ".." => Some("must not be '..'".into()),
        v if v.starts_with("..") => Some("must not start with '..'".into()),
        _ => None,
    }
}

/// `IsValidPortNum`'s message, when `port` is outside 1..=65535.
pub fn port_num(port: i64) -> Option<String> {
    in_range(port, 1, 65535)
}

/// `IsInRange`'s message, when `value` is outside `lo..=hi`.
pub fn in_range(value: i64, lo: i64, hi: i64) -> Option<String> {
    (!(lo..=hi).contains(&value)).then(|| inclusive_range_error(lo, hi))
}

/// `IsValidPortName` (an IANA service name).
pub fn port_name(port: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if port.len() > 15 {
        errs.push(max_len_error(15));
    }
    let charset = |c: char| is_lower_alnum(c) || c == '-';
    if port.is_empty() || !port.chars().all(charset) {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !port.chars().any(|c| c.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".into());
    }
    if port.contains("--") {
        errs.push("must not contain consecutive hyphens".into());
    }
    if port.starts_with('-') || port.ends_with('-') {
        errs.push("must not begin or end with a hyphen".into());
    }
    errs
}

/// `IsValidPercent`'s message, when `value` is not "<digits>%".
pub fn percent(value: &str) -> Option<String> {
    let digits = value.strip_suffix('%').unwrap_or_default();
    let ok = !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit());
    (!ok).then(|| regex_error(PERCENT_MSG, PERCENT_FMT, &["1%", "93%"]))
}

/// `path.IsValidPathSegmentName`: what every object name must pass (it is
/// a segment of the object's URL path).
pub fn path_segment_name(value: &str) -> Vec<String> {
    if value == "." || value == ".." {
        return vec![format!("may not be '{value}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|bad| value.contains(**bad))
        .map(|bad| format!("may not contain '{bad}'"))
        .collect()
}

/// `maskTrailingDash`: a `generateName` prefix's trailing '-' replaced so
/// the prefix can be checked as a name (kube drops the last two
/// characters and appends an `a`).
pub fn mask_trailing_dash(name: &str) -> String {
    match name.strip_suffix('-') {
        Some(_) if name.len() > 1 => {
            let cut = name.len().saturating_sub(2);
            let kept = name.get(..cut).unwrap_or_default();
            format!("{kept}a")
        }
        _ => name.to_string(),
    }
}

/// `NameIsDNSSubdomain(name, prefix)`: a name, or with `prefix` a
/// `generateName` prefix, that must be a DNS-1123 subdomain.
pub fn name_is_dns_subdomain(name: &str, prefix: bool) -> Vec<String> {
    dns1123_subdomain(&masked(name, prefix))
}

/// `NameIsDNSLabel(name, prefix)`.
pub fn name_is_dns_label(name: &str, prefix: bool) -> Vec<String> {
    dns1123_label(&masked(name, prefix))
}

/// `NameIsDNS1035Label(name, prefix)`.
pub fn name_is_dns1035_label(name: &str, prefix: bool) -> Vec<String> {
    dns1035_label(&masked(name, prefix))
}

fn masked(name: &str, prefix: bool) -> String {
    if prefix {
        mask_trailing_dash(name)
    } else {
        name.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns1123_labels() {
        assert!(dns1123_label("web-1").is_empty());
        assert_eq!(
            dns1123_label("Foo"),
            vec![
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters \
                 or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  \
                 or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert_eq!(dns1123_label("a.b"), vec!["must not contain dots"]);
        assert_eq!(
            dns1123_label(&"a".repeat(64)),
            vec!["must be no more than 63 characters"]
        );
        assert_eq!(dns1123_label("").len(), 1);
    }

    #[test]
    fn dns1123_subdomains() {
        assert!(dns1123_subdomain("web-1.example").is_empty());
        assert_eq!(
            dns1123_subdomain("Web"),
            vec![
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric \
                 characters, '-' or '.', and must start and end with an alphanumeric character \
                 (e.g. 'example.com', regex used for validation is \
                 '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ]
        );
        assert_eq!(dns1123_subdomain("a..b").len(), 1);
        assert_eq!(dns1123_subdomain(&"a".repeat(254)).len(), 1);
    }

    #[test]
    fn dns1035_labels() {
        assert!(dns1035_label("abc-1").is_empty());
        assert_eq!(
            dns1035_label("1abc"),
            vec![
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', \
                 start with an alphabetic character, and end with an alphanumeric character \
                 (e.g. 'my-name',  or 'abc-123', regex used for validation is \
                 '[a-z]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert_eq!(dns1035_label("a-").len(), 1);
    }

    #[test]
    fn wildcard_subdomains() {
        assert!(wildcard_dns1123_subdomain("*.example.com").is_empty());
        assert_eq!(wildcard_dns1123_subdomain("*.*.example.com").len(), 1);
        assert_eq!(wildcard_dns1123_subdomain("example.com").len(), 1);
    }

    #[test]
    fn qualified_names() {
        assert!(qualified_name("app.kubernetes.io/name").is_empty());
        assert_eq!(
            qualified_name("app:monolith"),
            vec![
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must \
                 start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  \
                 or '123-abc', regex used for validation is \
                 '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ]
        );
        let errs = qualified_name("app.kubernetes_io/name");
        assert_eq!(errs.len(), 1);
        assert!(errs[0].starts_with("prefix part a lowercase RFC 1123 subdomain"));
        assert_eq!(qualified_name("/x"), vec!["prefix part must be non-empty"]);
        assert_eq!(
            qualified_name("a/b/c"),
            vec![
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and \
                 must start and end with an alphanumeric character (e.g. 'MyName',  or \
                 'my.name',  or '123-abc', regex used for validation is \
                 '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain \
                 prefix and '/' (e.g. 'example.com/MyName')"
            ]
        );
        assert_eq!(qualified_name("").len(), 2);
        assert_eq!(
            qualified_name(&"a".repeat(64)),
            vec!["name part must be no more than 63 characters"]
        );
    }

    #[test]
    fn label_values() {
        assert!(label_value("").is_empty());
        assert!(label_value("my_value-1.2").is_empty());
        assert_eq!(
            label_value("-x"),
            vec![
                "a valid label must be an empty string or consist of alphanumeric characters, \
                 '-', '_' or '.', and must start and end with an alphanumeric character (e.g. \
                 'MyValue',  or 'my_value',  or '12345', regex used for validation is \
                 '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
            ]
        );
        assert_eq!(
            label_value(&"a".repeat(64)),
            vec!["must be no more than 63 characters"]
        );
    }

    #[test]
    fn config_map_keys() {
        assert!(config_map_key("key.name").is_empty());
        assert_eq!(
            config_map_key("a b"),
            vec![
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.' \
                 (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation \
                 is '[-._a-zA-Z0-9]+')"
            ]
        );
        assert_eq!(config_map_key("."), vec!["must not be '.'"]);
        assert_eq!(config_map_key(".."), vec!["must not be '..'"]);
        assert_eq!(config_map_key("..a"), vec!["must not start with '..'"]);
    }

    #[test]
    fn port_names_and_numbers() {
        assert!(port_name("http").is_empty());
        assert_eq!(
            port_name("8080"),
            vec!["must contain at least one letter (a-z)"]
        );
        assert_eq!(
            port_name("-web--"),
            vec![
                "must not contain consecutive hyphens",
                "must not begin or end with a hyphen"
            ]
        );
        assert_eq!(
            port_num(70000).as_deref(),
            Some("must be between 1 and 65535, inclusive")
        );
        assert_eq!(port_num(80), None);
    }

    #[test]
    fn percents() {
        assert_eq!(percent("50%"), None);
        assert_eq!(
            percent("50").as_deref(),
            Some(
                "a valid percent string must be a numeric string followed by an ending '%' \
                 (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
            )
        );
    }

    #[test]
    fn regex_errors_without_examples() {
        assert_eq!(
            regex_error("Invalid path", "[a-z]+", &[]),
            "Invalid path (regex used for validation is '[a-z]+')"
        );
    }

    #[test]
    fn path_segments() {
        assert!(path_segment_name("system:basic-user").is_empty());
        assert_eq!(path_segment_name(".."), vec!["may not be '..'"]);
        assert_eq!(
            path_segment_name("a/b%c"),
            vec!["may not contain '/'", "may not contain '%'"]
        );
    }

    #[test]
    fn generate_name_prefixes() {
        assert_eq!(mask_trailing_dash("web-"), "wea");
        assert_eq!(mask_trailing_dash("-"), "-");
        assert_eq!(mask_trailing_dash("web"), "web");
        assert!(name_is_dns_subdomain("web-", true).is_empty());
        assert_eq!(name_is_dns_subdomain("web-", false).len(), 1);
        assert!(name_is_dns_label("a-", true).is_empty());
        assert!(name_is_dns1035_label("svc-", true).is_empty());
    }
}
