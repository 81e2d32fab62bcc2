//! RoleBindings and ClusterRoleBindings (kube's `rolebinding/policybased`
//! and `clusterrolebinding/policybased` storages): the requester must hold
//! every rule of the referenced role (in the binding's namespace, for a
//! RoleBinding), unless RBAC grants it verb `bind` on that role. A
//! reference to a role that does not exist is answered as kube does: 404
//! NotFound, unless the requester may `bind` it.

use capstan_plugin_sdk::AdmissionResponse;
use capstan_rbac::objects::{RoleRef, CLUSTER_ROLE_KIND, ROLE_KIND};
use capstan_rbac::{
    authorize, confirm_no_escalation, Attributes, Policy, Request, ResolutionError,
    ResourceAttributes,
};

use crate::status::{bad_request, forbidden, internal, not_found};
use crate::Write;

/// Checks a create or update of a RoleBinding or ClusterRoleBinding.
pub fn check(policy: &Policy, write: &Write) -> AdmissionResponse {
    let namespace = binding_namespace(write);
    let role_ref = RoleRef::from_binding(write.object);
    if bind_authorized(policy, write, &role_ref, namespace) {
        return AdmissionResponse::allow();
    }
    if role_ref.kind == ROLE_KIND && namespace.is_empty() {
        return bad_request("Namespace parameter required.");
    }
    let rules = match policy.role_ref_rules(&role_ref, namespace) {
        Ok(rules) => rules,
        Err(error) => return unresolved(&role_ref, &error),
    };
    let who = &write.requester;
    match confirm_no_escalation(policy, who.user, who.groups, namespace, rules) {
        Ok(()) => AdmissionResponse::allow(),
        Err(message) => forbidden(&write.request.resource.resource, write.name(), &message),
    }
}

/// The binding's namespace for a RoleBinding, "" for a ClusterRoleBinding.
fn binding_namespace<'a>(write: &'a Write) -> &'a str {
    match write.request.resource.resource.as_str() {
        "rolebindings" => write.namespace(),
        _ => "",
    }
}

/// kube's `BindingAuthorized`: RBAC allows verb `bind` on the referenced
/// role (`roles` or `clusterroles`, named as the roleRef) in `namespace`.
fn bind_authorized(policy: &Policy, write: &Write, role_ref: &RoleRef, namespace: &str) -> bool {
    let resource = match role_ref.kind.as_str() {
        CLUSTER_ROLE_KIND => "clusterroles",
        ROLE_KIND => "roles",
        _ => return false,
    };
    let attributes = ResourceAttributes {
        verb: "bind".to_string(),
        namespace: namespace.to_string(),
        api_group: role_ref.api_group.clone(),
        resource: resource.to_string(),
        subresource: String::new(),
        name: role_ref.name.clone(),
    };
    let bind = Request {
        user: write.requester.user.to_string(),
        groups: write.requester.groups.to_vec(),
        attributes: Attributes::Resource(attributes),
    };
    authorize(policy, &bind).is_some()
}

/// kube's answer when the referenced role's rules cannot be read: the
/// storage's NotFound, or a plain error for an unknown kind.
fn unresolved(role_ref: &RoleRef, error: &ResolutionError) -> AdmissionResponse {
    match error {
        ResolutionError::RoleNotFound { .. } => {
            let resource = match role_ref.kind.as_str() {
                ROLE_KIND => "roles",
                _ => "clusterroles",
            };
            not_found(resource, &role_ref.name)
        }
        ResolutionError::UnsupportedKind(_) => internal(&error.registry_message()),
    }
}
