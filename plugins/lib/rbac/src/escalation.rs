//! RBAC escalation prevention: may a user grant these rules? kube's
//! `Covers` (component-helpers `auth/rbac/validation/policy_comparator.go`),
//! `CompactRules` (`pkg/registry/rbac/validation/policy_compact.go`) and
//! `ConfirmNoEscalation` (`pkg/registry/rbac/validation/rule.go`).

use std::collections::{BTreeMap, BTreeSet};

use crate::policy::Policy;
use crate::rules::{url_covers, PolicyRule, ALL};
use kube_rules::gofmt::{aggregate, quote, quote_list};

/// `*` on every resource of every group, and on every non-resource URL:
/// what kube requires of whoever sets a ClusterRole's aggregationRule.
pub fn full_authority() -> Vec<PolicyRule> {
    vec![
        crate::rules::rule(&[ALL], &[ALL], &[ALL]),
        PolicyRule {
            verbs: vec![ALL.to_string()],
            non_resource_urls: vec![ALL.to_string()],
            ..Default::default()
        },
    ]
}

/// kube's `BreakdownRule`: one rule per group × resource × verb (× name),
/// and per non-resource URL × verb.
pub fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let mut pieces = Vec::new();
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                let piece = |names: Vec<String>| PolicyRule {
                    verbs: vec![verb.clone()],
                    api_groups: vec![group.clone()],
                    resources: vec![resource.clone()],
                    resource_names: names,
                    non_resource_urls: Vec::new(),
                };
                if rule.resource_names.is_empty() {
                    pieces.push(piece(Vec::new()));
                }
                for name in &rule.resource_names {
                    pieces.push(piece(vec![name.clone()]));
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            pieces.push(PolicyRule {
                verbs: vec![verb.clone()],
                non_resource_urls: vec![url.clone()],
                ..Default::default()
            });
        }
    }
    pieces
}

/// kube's `Covers`: the pieces of `requested` (see [`breakdown`]) that no
/// rule of `owner` covers; empty when the owner may grant them all.
pub fn uncovered(owner: &[PolicyRule], requested: &[PolicyRule]) -> Vec<PolicyRule> {
    requested
        .iter()
        .flat_map(breakdown)
        .filter(|piece| !owner.iter().any(|o| rule_covers(o, piece)))
        .collect()
}

/// kube's `ruleCovers`: whether `owner` covers `piece` (one verb, resource,
/// name or URL, as [`breakdown`] makes them).
fn rule_covers(owner: &PolicyRule, piece: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, ALL) || has_all(&owner.verbs, &piece.verbs);
    let groups = has(&owner.api_groups, ALL) || has_all(&owner.api_groups, &piece.api_groups);
    let resources = resources_cover(&owner.resources, &piece.resources);
    let urls = piece
        .non_resource_urls
        .iter()
        .all(|path| owner.non_resource_urls.iter().any(|o| url_covers(o, path)));
    let names = if piece.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &piece.resource_names)
    };
    verbs && groups && resources && urls && names
}

/// kube's `resourceCoversAll`: `*`, exact names, or `*/subresource`.
fn resources_cover(owner: &[String], wanted: &[String]) -> bool {
    if has(owner, ALL) {
        return true;
    }
    wanted.iter().all(|path| {
        has(owner, path)
            || path
                .split_once('/')
                .is_some_and(|(_, sub)| has(owner, &format!("*/{sub}")))
    })
}

fn has(set: &[String], item: &str) -> bool {
    set.iter().any(|s| s == item)
}

fn has_all(set: &[String], items: &[String]) -> bool {
    items.iter().all(|item| has(set, item))
}

/// kube's `CompactRules`: merges the verbs of rules that name exactly one
/// group and one resource and nothing else; other rules stay as they are.
pub fn compact(rules: &[PolicyRule]) -> Vec<PolicyRule> {
    let mut simple: BTreeMap<(String, String), PolicyRule> = BTreeMap::new();
    let mut compacted = Vec::new();
    for rule in rules {
        match simple_key(rule) {
            Some(key) => simple
                .entry(key)
                .or_insert_with(|| PolicyRule {
                    verbs: Vec::new(),
                    ..rule.clone()
                })
                .verbs
                .extend(rule.verbs.iter().cloned()),
            None => compacted.push(rule.clone()),
        }
    }
    compacted.extend(simple.into_values());
    compacted
}

/// (group, resource) of a rule with one of each, verbs, and nothing else.
fn simple_key(rule: &PolicyRule) -> Option<(String, String)> {
    if !rule.resource_names.is_empty() || !rule.non_resource_urls.is_empty() {
        return None;
    }
    match (rule.api_groups.as_slice(), rule.resources.as_slice()) {
        ([group], [resource]) => Some((group.clone(), resource.clone())),
        _ => None,
    }
}

/// The text of kube's `ConfirmNoEscalation` error: `user "alice"
/// (groups=["g"]) is attempting to grant RBAC permissions not currently
/// held:` and the compacted missing rules, sorted, one a line; then
/// `; resolution errors: [...]` when resolving the user's rules failed.
pub fn escalation_message(
    user: &str,
    groups: &[String],
    missing: &[PolicyRule],
    resolution_errors: &[String],
) -> String {
    let lines: BTreeSet<String> = compact(missing)
        .iter()
        .map(PolicyRule::compact_string)
        .collect();
    let lines: Vec<String> = lines.into_iter().collect();
    let mut message = format!(
        "user {} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        quote(user),
        quote_list(groups),
        lines.join("\n")
    );
    if !resolution_errors.is_empty() {
        message.push_str(&format!(
            "; resolution errors: [{}]",
            aggregate(resolution_errors)
        ));
    }
    message
}

/// kube's `ConfirmNoEscalation`: Ok when the rules the user has in
/// `namespace` ("" = cluster-wide) cover `requested`, else the error text.
/// Resolution errors are worded as kube's registry words them.
pub fn confirm_no_escalation(
    policy: &Policy,
    user: &str,
    groups: &[String],
    namespace: &str,
    requested: &[PolicyRule],
) -> Result<(), String> {
    let owner = policy.resolve(user, groups, namespace);
    let missing = uncovered(&owner.rules, requested);
    if missing.is_empty() {
        return Ok(());
    }
    let errors: Vec<String> = owner.errors.iter().map(|e| e.registry_message()).collect();
    Err(escalation_message(user, groups, &missing, &errors))
}
