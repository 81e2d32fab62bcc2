//! Mutating/ValidatingWebhookConfigurations (admissionregistration.k8s.io/v1):
//! kube's v1 defaults and `ValidateValidatingWebhookConfiguration` /
//! `ValidateMutatingWebhookConfiguration` with their messages and field
//! paths (`k8s.io/kubernetes/pkg/apis/admissionregistration/validation`).
//! On update, as kube's `...Update` forms, what the stored object already
//! had keeps being accepted (side effects, review versions, duplicate
//! names, label values, unchanged matchConditions). The rules, the
//! clientConfig and the matchConditions are in [`rules`], [`client`] and
//! [`conditions`].

mod client;
pub(crate) mod conditions;
pub(crate) mod rules;

use std::collections::HashSet;

use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use crate::common::{self, list, text};
use crate::json::set_default;
use crate::selector;
use kube_rules::gofmt;

/// The admission review versions this server speaks.
const REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];
const NO_SIDE_EFFECTS: [&str; 2] = ["None", "NoneOnDryRun"];
const SIDE_EFFECTS: [&str; 4] = ["None", "NoneOnDryRun", "Some", "Unknown"];

/// kube's v1 defaults: failurePolicy Fail, matchPolicy Equivalent, empty
/// selectors, timeoutSeconds 10, reinvocationPolicy Never (mutating),
/// rules' scope `*`, a service's port 443.
pub fn defaults(object: &mut Value, mutating: bool) {
    let Some(hooks) = object.get_mut("webhooks").and_then(Value::as_array_mut) else {
        return;
    };
    for hook in hooks.iter_mut().filter(|h| h.is_object()) {
        set_default(hook, "/failurePolicy", json!("Fail"));
        set_default(hook, "/matchPolicy", json!("Equivalent"));
        set_default(hook, "/namespaceSelector", json!({}));
        set_default(hook, "/objectSelector", json!({}));
        set_default(hook, "/timeoutSeconds", json!(10));
        if mutating {
            set_default(hook, "/reinvocationPolicy", json!("Never"));
        }
        if hook
            .pointer("/clientConfig/service")
            .is_some_and(Value::is_object)
        {
            set_default(hook, "/clientConfig/service/port", json!(443));
        }
        let rules = hook.get_mut("rules").and_then(Value::as_array_mut);
        for rule in rules.into_iter().flatten().filter(|r| r.is_object()) {
            set_default(rule, "/scope", json!("*"));
        }
    }
}

/// What an update keeps accepting because the stored object had it (all
/// strict on create).
struct Options {
    require_no_side_effects: bool,
    require_recognized_versions: bool,
    require_unique_names: bool,
    allow_invalid_label_values: bool,
    ignore_match_conditions: bool,
}

impl Options {
    fn new(webhooks: &[Value], old: Option<&Value>) -> Options {
        let Some(old) = old else {
            return Options {
                require_no_side_effects: true,
                require_recognized_versions: true,
                require_unique_names: true,
                allow_invalid_label_values: false,
                ignore_match_conditions: false,
            };
        };
        let old = list(old, "webhooks");
        Options {
            require_no_side_effects: old
                .iter()
                .all(|h| NO_SIDE_EFFECTS.contains(&text(h, "sideEffects"))),
            require_recognized_versions: old.iter().all(has_recognized_version),
            require_unique_names: unique_names(old),
            allow_invalid_label_values: old.iter().any(has_invalid_label_value),
            ignore_match_conditions: old.len() == webhooks.len()
                && old
                    .iter()
                    .zip(webhooks)
                    .all(|(o, n)| common::same(o.get("matchConditions"), n.get("matchConditions"))),
        }
    }
}

fn has_recognized_version(hook: &Value) -> bool {
    let versions = list(hook, "admissionReviewVersions");
    versions.is_empty()
        || versions
            .iter()
            .any(|v| REVIEW_VERSIONS.contains(&v.as_str().unwrap_or_default()))
}

fn unique_names(hooks: &[Value]) -> bool {
    let mut seen = HashSet::new();
    hooks.iter().all(|h| seen.insert(text(h, "name")))
}

fn has_invalid_label_value(hook: &Value) -> bool {
    ["namespaceSelector", "objectSelector"].iter().any(|key| {
        hook.get(*key)
            .is_some_and(|s| !label_selector(s, "", false).is_empty())
    })
}

/// The causes for a webhook configuration (over `old` on update).
pub fn validate(object: &Value, old: Option<&Value>, mutating: bool) -> Vec<Cause> {
    let hooks = list(object, "webhooks");
    let opts = Options::new(hooks, old);
    let mut causes = Vec::new();
    let mut names = HashSet::new();
    for (i, hook) in hooks.iter().enumerate() {
        let at = format!("webhooks[{i}]");
        causes.extend(webhook(hook, &at, &opts, mutating));
        causes.extend(review_versions(hook, &at, &opts));
        let name = text(hook, "name");
        if opts.require_unique_names && !name.is_empty() && !names.insert(name) {
            causes.push(common::duplicate(
                &format!("{at}.name"),
                &gofmt::quote(name),
            ));
        }
    }
    causes
}

/// `validateValidatingWebhook` / `validateMutatingWebhook`.
fn webhook(hook: &Value, at: &str, opts: &Options, mutating: bool) -> Vec<Cause> {
    let field = |child: &str| format!("{at}.{child}");
    let mut causes = fully_qualified_name(text(hook, "name"), &field("name"));
    for (j, rule) in list(hook, "rules").iter().enumerate() {
        causes.extend(rules::validate(rule, &format!("{at}.rules[{j}]")));
    }
    let choices: [(&str, &[&str]); 2] = [
        ("failurePolicy", &["Fail", "Ignore"]),
        ("matchPolicy", &["Equivalent", "Exact"]),
    ];
    for (key, supported) in choices {
        causes.extend(one_of(hook, key, supported, at));
    }
    causes.extend(side_effects(hook, at, opts));
    if let Some(seconds) = hook.get("timeoutSeconds").and_then(Value::as_i64) {
        if !(1..=30).contains(&seconds) {
            let detail = "the timeout value must be between 1 and 30 seconds";
            causes.push(common::invalid(
                &field("timeoutSeconds"),
                &seconds.to_string(),
                detail,
            ));
        }
    }
    for key in ["namespaceSelector", "objectSelector"] {
        if let Some(s) = hook.get(key).filter(|s| s.is_object()) {
            causes.extend(label_selector(
                s,
                &field(key),
                opts.allow_invalid_label_values,
            ));
        }
    }
    if mutating {
        causes.extend(one_of(
            hook,
            "reinvocationPolicy",
            &["IfNeeded", "Never"],
            at,
        ));
    }
    causes.extend(client::validate(
        hook.get("clientConfig"),
        &field("clientConfig"),
    ));
    if !opts.ignore_match_conditions {
        let conditions = list(hook, "matchConditions");
        causes.extend(conditions::validate(
            conditions,
            &field("matchConditions"),
            &conditions::WEBHOOK_VARIABLES,
        ));
    }
    causes
}

/// `field.NotSupported` when `hook[key]` is set to something else than `supported`.
fn one_of(hook: &Value, key: &str, supported: &[&str], at: &str) -> Option<Cause> {
    let value = hook.get(key).and_then(Value::as_str)?;
    (!supported.contains(&value))
        .then(|| common::not_supported(&format!("{at}.{key}"), value, supported))
}

/// sideEffects is required; on create (or when the stored webhooks all had
/// none) only None and NoneOnDryRun are accepted.
fn side_effects(hook: &Value, at: &str, opts: &Options) -> Option<Cause> {
    let allowed: &[&str] = if opts.require_no_side_effects {
        &NO_SIDE_EFFECTS
    } else {
        &SIDE_EFFECTS
    };
    let field = format!("{at}.sideEffects");
    match hook.get("sideEffects").and_then(Value::as_str) {
        None => Some(common::required(
            &field,
            &format!("must specify one of {}", allowed.join(", ")),
        )),
        Some(value) if !allowed.contains(&value) => {
            Some(common::not_supported(&field, value, allowed))
        }
        Some(_) => None,
    }
}

/// `validateAdmissionReviewVersions`.
fn review_versions(hook: &Value, at: &str, opts: &Options) -> Vec<Cause> {
    let field = format!("{at}.admissionReviewVersions");
    let versions = list(hook, "admissionReviewVersions");
    if versions.is_empty() {
        let detail = format!("must specify one of {}", REVIEW_VERSIONS.join(", "));
        return vec![common::required(&field, &detail)];
    }
    let mut causes = Vec::new();
    let mut seen = HashSet::new();
    for (k, v) in versions.iter().enumerate() {
        let v = v.as_str().unwrap_or_default();
        let at = format!("{field}[{k}]");
        if !seen.insert(v) {
            causes.push(common::invalid_str(&at, v, "duplicate version"));
            continue;
        }
        common::invalid_each(&mut causes, &at, v, kube_rules::dns1035_label(v));
    }
    if opts.require_recognized_versions && !has_recognized_version(hook) {
        let detail = format!(
            "must include at least one of {}",
            REVIEW_VERSIONS.join(", ")
        );
        let rendered = gofmt::string_slice(hook.get("admissionReviewVersions"));
        causes.push(common::invalid(&field, &rendered, &detail));
    }
    causes
}

/// `utilvalidation.IsFullyQualifiedName`: a DNS subdomain of at least three segments.
fn fully_qualified_name(name: &str, field: &str) -> Vec<Cause> {
    if name.is_empty() {
        return vec![common::required(field, "")];
    }
    let errs = kube_rules::dns1123_subdomain(name);
    if !errs.is_empty() {
        return vec![common::invalid_str(field, name, &errs.join(","))];
    }
    if name.split('.').count() < 3 {
        let detail = "should be a domain with at least three segments separated by dots";
        return vec![common::invalid_str(field, name, detail)];
    }
    Vec::new()
}

/// `metav1validation.ValidateLabelSelector`: matchLabels as labels, each
/// expression's operator, key and (unless allowed) values.
pub(crate) fn label_selector(
    selector: &Value,
    field: &str,
    allow_invalid_values: bool,
) -> Vec<Cause> {
    selector::validate(selector, field, allow_invalid_values).0
}

#[cfg(test)]
mod tests;
