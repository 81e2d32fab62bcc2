//! Object name rules: DNS-1123 subdomains and labels, DNS-1035 labels, path
//! segments, and generateName, with kube-apiserver's messages.

use crate::apimachinery::status::Cause;
use rand::Rng;

const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/// Which rule a resource's names follow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NameRule {
    Subdomain,
    Label,
    Dns1035,
    PathSegment,
}

/// The rule kube-apiserver applies to names of `group/resource`.
pub fn rule_for(group: &str, resource: &str) -> NameRule {
    match (group, resource) {
        ("", "namespaces") => NameRule::Label,
        ("", "services") => NameRule::Dns1035,
        // APIServices are named `<version>.<group>`: `v1.` for the core group.
        ("rbac.authorization.k8s.io" | "apiregistration.k8s.io", _) => NameRule::PathSegment,
        _ => NameRule::Subdomain,
    }
}

fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

fn is_subdomain(s: &str) -> bool {
    s.split('.').all(is_label)
}

fn is_dns1035(s: &str) -> bool {
    is_label(s) && s.as_bytes()[0].is_ascii_lowercase()
}

/// kube's `IsValidPathSegmentName`: a name that can be a path segment.
pub fn is_valid_path_segment(name: &str) -> bool {
    path_segment_problems(name).is_empty()
}

/// Problems with a path-segment name (every name must pass these).
fn path_segment_problems(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    if name == "." || name == ".." {
        out.push(format!("may not be '{name}'"));
    }
    for bad in ["/", "%"] {
        if name.contains(bad) {
            out.push(format!("may not contain '{bad}'"));
        }
    }
    out
}

/// Validates `name` under `rule`; each problem is a cause on `metadata.name`.
pub fn validate(rule: NameRule, name: &str, field: &str) -> Vec<Cause> {
    let mut problems = path_segment_problems(name);
    let (max, ok, msg) = match rule {
        NameRule::Subdomain => (253, is_subdomain(name), SUBDOMAIN_MSG),
        NameRule::Label => (63, is_label(name), LABEL_MSG),
        NameRule::Dns1035 => (63, is_dns1035(name), DNS1035_MSG),
        NameRule::PathSegment => (usize::MAX, true, ""),
    };
    if name.len() > max {
        problems.push(format!("must be no more than {max} characters"));
    }
    if !ok {
        problems.push(msg.to_string());
    }
    problems
        .into_iter()
        .map(|p| Cause::invalid(field, name, &p))
        .collect()
}

const GENERATE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
const MAX_GENERATED_PREFIX: usize = 58;

/// A name from `generateName`: the prefix (cut to 58 bytes) and 5 random characters.
pub fn generate(prefix: &str) -> String {
    let mut cut = prefix.len().min(MAX_GENERATED_PREFIX);
    while !prefix.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut rng = rand::thread_rng();
    let suffix: String = (0..5)
        .map(|_| GENERATE_ALPHABET[rng.gen_range(0..GENERATE_ALPHABET.len())] as char)
        .collect();
    format!("{}{suffix}", &prefix[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdomain_rules() {
        assert!(validate(NameRule::Subdomain, "web-1.example", "metadata.name").is_empty());
        let c = validate(NameRule::Subdomain, "Web", "metadata.name");
        assert_eq!(c.len(), 1);
        assert!(c[0]
            .message
            .starts_with("Invalid value: \"Web\": a lowercase RFC 1123 subdomain"));
    }

    #[test]
    fn labels_and_services() {
        assert!(!validate(NameRule::Label, "a.b", "metadata.name").is_empty());
        assert!(!validate(NameRule::Dns1035, "1abc", "metadata.name").is_empty());
        assert!(validate(NameRule::Dns1035, "abc-1", "metadata.name").is_empty());
        assert_eq!(
            validate(NameRule::Label, &"a".repeat(64), "metadata.name").len(),
            1
        );
    }

    #[test]
    fn rbac_names_allow_colons_but_not_slashes() {
        assert!(validate(NameRule::PathSegment, "system:basic-user", "metadata.name").is_empty());
        assert_eq!(
            validate(NameRule::PathSegment, "a/b", "metadata.name").len(),
            1
        );
    }

    #[test]
    fn generated_names_keep_prefix() {
        let n = generate("web-");
        assert_eq!(n.len(), 9);
        assert!(n.starts_with("web-"));
        assert_eq!(generate(&"x".repeat(70)).len(), 63);
    }
}
