//! Built-in authorizer plugin `rbac`, kube-apiserver's RBAC authorizer:
//! allows what the ClusterRoleBindings and (in the request's namespace)
//! RoleBindings of the user and its groups grant, and has no opinion on
//! anything else; answers rules reviews for SelfSubjectRulesReview.
//!
//! The instance keeps the policy between calls and rebuilds it only when
//! the watermark of one of the four RBAC resources moved.

use capstan_plugin_sdk::access::{
    NonResourceRule, ResourceRule, SubjectAccessReviewSpec, SubjectRulesReviewSpec,
};
use capstan_plugin_sdk::{
    host, AuthorizerPlugin, SubjectAccessReview, SubjectAccessReviewStatus, SubjectRulesReview,
    SubjectRulesReviewStatus, Value,
};
use capstan_rbac::cache::{self, Store, API_VERSION};
use capstan_rbac::{
    decide, rules_for, Attributes, Decision, NonResourceAttributes, Request, ResourceAttributes,
    SubjectRules,
};

/// The plugin.
pub struct Rbac;

/// The server's store, through the plugin host.
struct HostStore;

impl Store for HostStore {
    fn watermark(&self, resource: &str) -> Result<String, String> {
        host::watermark(API_VERSION, resource)
    }

    fn list(&self, resource: &str) -> Result<Vec<Value>, String> {
        host::list_objects(API_VERSION, resource, None, None, None)
    }
}

impl AuthorizerPlugin for Rbac {
    fn authorize(review: &SubjectAccessReview) -> Result<SubjectAccessReviewStatus, String> {
        let Some(request) = request_of(&review.spec) else {
            return Ok(SubjectAccessReviewStatus::no_opinion());
        };
        let policy = cache::current_policy(&HostStore)?;
        Ok(match decide(&policy, &request) {
            Decision::Allow(reason) => SubjectAccessReviewStatus::allow(reason),
            Decision::NoOpinion(reason) => SubjectAccessReviewStatus {
                reason,
                ..SubjectAccessReviewStatus::no_opinion()
            },
        })
    }

    fn rules(review: &SubjectRulesReview) -> Result<SubjectRulesReviewStatus, String> {
        let SubjectRulesReviewSpec {
            namespace,
            user,
            groups,
            ..
        } = &review.spec;
        let policy = cache::current_policy(&HostStore)?;
        Ok(rules_status(rules_for(&policy, user, groups, namespace)))
    }
}

/// The RBAC request of a SubjectAccessReview; None when it names neither
/// resource nor non-resource attributes.
fn request_of(spec: &SubjectAccessReviewSpec) -> Option<Request> {
    let attributes = match (&spec.resource_attributes, &spec.non_resource_attributes) {
        (Some(r), _) => Attributes::Resource(ResourceAttributes {
            verb: r.verb.clone(),
            namespace: r.namespace.clone(),
            api_group: r.group.clone(),
            resource: r.resource.clone(),
            subresource: r.subresource.clone(),
            name: r.name.clone(),
        }),
        (None, Some(n)) => Attributes::NonResource(NonResourceAttributes {
            path: n.path.clone(),
            verb: n.verb.clone(),
        }),
        (None, None) => return None,
    };
    Some(Request {
        user: spec.user.clone(),
        groups: spec.groups.clone(),
        attributes,
    })
}

/// SelfSubjectRulesReview's status for `rules`: complete, with resolution
/// errors (if any) as the evaluation error, as kube reports them.
fn rules_status(rules: SubjectRules) -> SubjectRulesReviewStatus {
    SubjectRulesReviewStatus {
        resource_rules: rules
            .resource_rules
            .into_iter()
            .map(|r| ResourceRule {
                verbs: r.verbs,
                api_groups: r.api_groups,
                resources: r.resources,
                resource_names: r.resource_names,
            })
            .collect(),
        non_resource_rules: rules
            .non_resource_rules
            .into_iter()
            .map(|r| NonResourceRule {
                verbs: r.verbs,
                non_resource_urls: r.non_resource_urls,
            })
            .collect(),
        incomplete: false,
        evaluation_error: rules.evaluation_error,
    }
}

capstan_plugin_sdk::authorizer_plugin!(Rbac);

#[cfg(test)]
mod tests;
