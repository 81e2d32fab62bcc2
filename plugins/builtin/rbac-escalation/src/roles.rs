//! Roles and ClusterRoles (kube's `role/policybased` and
//! `clusterrole/policybased` storages): the requester must hold every rule
//! it writes, unless RBAC grants it verb `escalate` on the role. Setting or
//! changing a ClusterRole's aggregationRule needs full authority (`*` on
//! everything), since aggregation can gather any rule.

use capstan_plugin_sdk::{AdmissionResponse, Operation, Value};
use capstan_rbac::{
    authorize, confirm_no_escalation, full_authority, Attributes, Policy, PolicyRule, Request,
    ResourceAttributes,
};

use crate::status::forbidden;
use crate::Write;

/// kube's message when the aggregationRule check fails.
pub const AGGREGATION_MESSAGE: &str =
    "must have cluster-admin privileges to use the aggregationRule";

/// Checks a create or update of a Role or ClusterRole.
pub fn check(policy: &Policy, write: &Write) -> AdmissionResponse {
    if escalate_authorized(policy, write) {
        return AdmissionResponse::allow();
    }
    let resource = write.request.resource.resource.as_str();
    let rules = PolicyRule::list_from_json(write.object, "rules");
    if let Err(message) = confirm(policy, write, &rules) {
        return forbidden(resource, write.name(), &message);
    }
    if sets_aggregation_rule(write) && confirm(policy, write, &full_authority()).is_err() {
        return forbidden(resource, write.name(), AGGREGATION_MESSAGE);
    }
    AdmissionResponse::allow()
}

/// kube's `RoleEscalationAuthorized`: RBAC allows verb `escalate` on this
/// role. Like kube's request info, a create names no object.
fn escalate_authorized(policy: &Policy, write: &Write) -> bool {
    let request = write.request;
    let name = match request.operation {
        Operation::Create => String::new(),
        _ => request.name.clone(),
    };
    let attributes = ResourceAttributes {
        verb: "escalate".to_string(),
        namespace: request.namespace.clone(),
        api_group: request.resource.group.clone(),
        resource: request.resource.resource.clone(),
        subresource: String::new(),
        name,
    };
    let escalate = Request {
        user: write.requester.user.to_string(),
        groups: write.requester.groups.to_vec(),
        attributes: Attributes::Resource(attributes),
    };
    authorize(policy, &escalate).is_some()
}

/// ConfirmNoEscalation in the role's scope: its namespace for a Role,
/// cluster-wide for a ClusterRole.
fn confirm(policy: &Policy, write: &Write, rules: &[PolicyRule]) -> Result<(), String> {
    let namespace = match write.request.resource.resource.as_str() {
        "roles" => write.namespace(),
        _ => "",
    };
    let who = &write.requester;
    confirm_no_escalation(policy, who.user, who.groups, namespace, rules)
}

/// A ClusterRole whose new or old version has an aggregationRule with selectors.
fn sets_aggregation_rule(write: &Write) -> bool {
    let request = write.request;
    request.resource.resource == "clusterroles"
        && (has_aggregation_rule(write.object)
            || request
                .old_object
                .as_ref()
                .is_some_and(has_aggregation_rule))
}

fn has_aggregation_rule(role: &Value) -> bool {
    let selectors = ["aggregationRule", "clusterRoleSelectors"];
    !capstan_plugin_sdk::object::array(role, &selectors).is_empty()
}
