//! kube's RBAC authorizer (`plugin/pkg/auth/authorizer/rbac/rbac.go`): a
//! request is allowed when some rule that applies to the user allows it;
//! otherwise RBAC has no opinion (it never denies).

use std::ops::ControlFlow;

use crate::policy::{Policy, Visit};
use crate::rules::PolicyRule;
use kube_rules::gofmt::aggregate;

/// Who asks, and for what.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Request {
    pub user: String,
    pub groups: Vec<String>,
    pub attributes: Attributes,
}

/// A request on a resource, or on a non-resource URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attributes {
    Resource(ResourceAttributes),
    NonResource(NonResourceAttributes),
}

impl Default for Attributes {
    fn default() -> Self {
        Attributes::Resource(ResourceAttributes::default())
    }
}

/// The attributes of a resource request ("" namespace = cluster-wide).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceAttributes {
    pub verb: String,
    pub namespace: String,
    pub api_group: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
}

/// The attributes of a non-resource request (`/healthz`, `/metrics`, ...).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NonResourceAttributes {
    pub path: String,
    pub verb: String,
}

impl Request {
    /// The namespace whose RoleBindings apply: a resource request's
    /// namespace, "" for non-resource requests.
    pub fn namespace(&self) -> &str {
        match &self.attributes {
            Attributes::Resource(r) => &r.namespace,
            Attributes::NonResource(_) => "",
        }
    }
}

/// The answer of the RBAC authorizer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Allowed, with kube's reason (`RBAC: allowed by ...`).
    Allow(String),
    /// No opinion; the reason lists rule resolution errors, "" when none.
    NoOpinion(String),
}

/// kube's `RuleAllows`: whether one rule allows the request.
pub fn rule_allows(attributes: &Attributes, rule: &PolicyRule) -> bool {
    match attributes {
        Attributes::Resource(r) => {
            rule.verb_matches(&r.verb)
                && rule.api_group_matches(&r.api_group)
                && rule.resource_matches(&r.resource, &r.subresource)
                && rule.resource_name_matches(&r.name)
        }
        Attributes::NonResource(n) => {
            rule.verb_matches(&n.verb) && rule.non_resource_url_matches(&n.path)
        }
    }
}

/// kube's `RBACAuthorizer.Authorize`: allowed by the first applying rule
/// that allows the request, else no opinion (with resolution errors).
pub fn decide(policy: &Policy, request: &Request) -> Decision {
    let mut allowed_by = None;
    let mut errors = Vec::new();
    policy.visit_rules_for(
        &request.user,
        &request.groups,
        request.namespace(),
        &mut |visit| match visit {
            Visit::Rule(source, rule) if rule_allows(&request.attributes, rule) => {
                allowed_by = Some(format!("RBAC: allowed by {source}"));
                ControlFlow::Break(())
            }
            Visit::Rule(..) => ControlFlow::Continue(()),
            Visit::Error(error) => {
                errors.push(error.authorizer_message());
                ControlFlow::Continue(())
            }
        },
    );
    match allowed_by {
        Some(reason) => Decision::Allow(reason),
        None if errors.is_empty() => Decision::NoOpinion(String::new()),
        None => Decision::NoOpinion(format!("RBAC: {}", aggregate(&errors))),
    }
}

/// Some(reason) when RBAC allows the request, None when it has no opinion.
pub fn authorize(policy: &Policy, request: &Request) -> Option<String> {
    match decide(policy, request) {
        Decision::Allow(reason) => Some(reason),
        Decision::NoOpinion(_) => None,
    }
}
