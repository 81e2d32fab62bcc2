//! Kubernetes RBAC for Capstan, with kube-apiserver's semantics: the policy
//! model built from ClusterRoles, ClusterRoleBindings, Roles and
//! RoleBindings ([`Policy`]), authorization ([`authorize()`]), the rules of a
//! user for SelfSubjectRulesReview ([`rules_for`]) and escalation checks
//! ([`uncovered`], [`confirm_no_escalation`]).
//!
//! Plain Rust over `serde_json::Value`, for native and wasm32 builds alike;
//! the plugins `rbac` (authorizer) and `rbac-escalation` (admission) use it.

pub mod authorize;
pub mod cache;
pub mod escalation;
pub mod fixtures;
mod index;
pub mod objects;
pub mod policy;
pub mod review;
pub mod rules;
pub mod source;

pub use authorize::{
    authorize, decide, rule_allows, Attributes, Decision, NonResourceAttributes, Request,
    ResourceAttributes,
};
pub use escalation::{
    breakdown, compact, confirm_no_escalation, escalation_message, full_authority, uncovered,
};
pub use policy::{Lists, Policy, Resolution, ResolutionError, Visit};
pub use review::{rules_for, NonResourceRule, ResourceRule, SubjectRules};
pub use rules::PolicyRule;

/// The RBAC API group.
pub const GROUP: &str = "rbac.authorization.k8s.io";

/// The group whose members may do anything, escalation included.
pub const SYSTEM_MASTERS: &str = "system:masters";
