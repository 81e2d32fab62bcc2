//! Object name rules: DNS-1123 subdomains and labels, DNS-1035 labels, path
//! segments, and generateName, with kube-apiserver's messages.

use crate::apimachinery::status::Cause;
use rand::Rng;

/// Which rule a resource's names follow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NameRule {
    Subdomain,
    Label,
    Dns1035,
    PathSegment,
}

/// kube's `IsValidPathSegmentName`: a name that can be a path segment.
pub fn is_valid_path_segment(name: &str) -> bool {
    kube_rules::path_segment_name(name).is_empty()
}

/// Validates `name` under `rule`; each problem is a cause on `field`. As
/// kube's `rest.BeforeCreate`: the kind's own rule first (its strategy's
/// Validate), and `IsValidPathSegmentName` only when that passed (so a
/// ConfigMap named `a/b` gets the subdomain message alone).
pub fn validate(rule: NameRule, name: &str, field: &str) -> Vec<Cause> {
    let mut problems = rule_problems(rule, name, false);
    if problems.is_empty() {
        problems = kube_rules::path_segment_name(name);
    }
    causes(problems, name, field)
}

/// Validates a `generateName` under `rule`, as kube's `ValidateObjectMeta`
/// does with the rule's prefix form (a trailing `-` is fine).
pub fn validate_prefix(rule: NameRule, prefix: &str, field: &str) -> Vec<Cause> {
    causes(rule_problems(rule, prefix, true), prefix, field)
}

/// The rule's own problems with `value` (a whole name, or a prefix).
fn rule_problems(rule: NameRule, value: &str, prefix: bool) -> Vec<String> {
    match rule {
        NameRule::Subdomain => kube_rules::name_is_dns_subdomain(value, prefix),
        NameRule::Label => kube_rules::name_is_dns_label(value, prefix),
        NameRule::Dns1035 => kube_rules::name_is_dns1035_label(value, prefix),
        // RBAC's and APIServices' names: `path.ValidatePathSegmentName`,
        // whose prefix form allows `.` and `..`.
        NameRule::PathSegment if prefix => kube_rules::path_segment_name(value)
            .into_iter()
            .filter(|p| p.starts_with("may not contain"))
            .collect(),
        NameRule::PathSegment => Vec::new(),
    }
}

fn causes(problems: Vec<String>, value: &str, field: &str) -> Vec<Cause> {
    problems
        .into_iter()
        .map(|p| Cause::invalid(field, value, &p))
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
        let dotted = validate(NameRule::Label, "a.b", "metadata.name");
        assert!(dotted[0].message.ends_with("must not contain dots"));
        assert!(!validate(NameRule::Dns1035, "1abc", "metadata.name").is_empty());
        assert!(validate(NameRule::Dns1035, "abc-1", "metadata.name").is_empty());
        assert_eq!(
            validate(NameRule::Label, &"a".repeat(64), "metadata.name").len(),
            1
        );
    }

    #[test]
    fn the_kind_rule_comes_first_and_path_segments_only_after_it() {
        let c = validate(NameRule::Subdomain, "a/b", "metadata.name");
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(c[0].message.contains("a lowercase RFC 1123 subdomain"));
    }

    #[test]
    fn generate_names_are_checked_as_prefixes() {
        assert!(validate_prefix(NameRule::Subdomain, "web-", "metadata.generateName").is_empty());
        let c = validate_prefix(NameRule::Subdomain, "Bad_", "metadata.generateName");
        assert_eq!(c.len(), 1);
        assert!(c[0]
            .message
            .starts_with("Invalid value: \"Bad_\": a lowercase RFC 1123 subdomain"));
        assert_eq!(
            validate_prefix(
                NameRule::Subdomain,
                &"a".repeat(300),
                "metadata.generateName"
            )
            .len(),
            1
        );
        assert!(
            validate_prefix(NameRule::PathSegment, "system:", "metadata.generateName").is_empty()
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
