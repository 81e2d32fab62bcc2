//! Built-in validating admission plugin `rbac-escalation`, kube-apiserver's
//! RBAC escalation prevention (done in kube by the rbac registry,
//! `pkg/registry/rbac/*/policybased/storage.go`): a user may create or
//! update a Role or ClusterRole only with rules it holds itself (or with
//! verb `escalate` on it), and a RoleBinding or ClusterRoleBinding only to
//! a role whose rules it holds (or with verb `bind` on that role). Members
//! of `system:masters` may do anything. Other requests are allowed.

mod bindings;
mod gc_fields;
mod roles;
mod status;

use capstan_plugin_sdk::{
    host, AdmissionPlugin, AdmissionRequest, AdmissionResponse, Operation, Value,
};
use capstan_rbac::cache::{self, Store, API_VERSION};
use capstan_rbac::{Policy, GROUP, SYSTEM_MASTERS};

/// The plugin.
pub struct RbacEscalation;

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

/// Who asks: the request's user and groups.
pub(crate) struct Requester<'a> {
    pub user: &'a str,
    pub groups: &'a [String],
}

/// A checked write: the request, the object written, and the requester.
pub(crate) struct Write<'a> {
    pub request: &'a AdmissionRequest,
    pub object: &'a Value,
    pub requester: Requester<'a>,
}

impl Write<'_> {
    /// The object's name (kube names it so in errors), else the request's.
    pub fn name(&self) -> &str {
        match capstan_plugin_sdk::object::name(self.object) {
            "" => &self.request.name,
            name => name,
        }
    }

    /// The request's namespace, else the object's.
    pub fn namespace(&self) -> &str {
        match self.request.namespace.as_str() {
            "" => capstan_plugin_sdk::object::namespace(self.object),
            namespace => namespace,
        }
    }
}

impl AdmissionPlugin for RbacEscalation {
    fn review(request: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let Some(object) = checked_object(request) else {
            return Ok(AdmissionResponse::allow());
        };
        let write = Write {
            request,
            object,
            requester: Requester {
                user: &request.user_info.username,
                groups: &request.user_info.groups,
            },
        };
        if write.requester.groups.iter().any(|g| g == SYSTEM_MASTERS)
            || gc_fields::only_gc_fields_change(request)
        {
            return Ok(AdmissionResponse::allow());
        }
        let policy = cache::current_policy(&HostStore)?;
        Ok(check(&policy, &write))
    }
}

/// The object of a create or update of one of the four RBAC resources
/// (not a subresource); None for any other request.
fn checked_object(request: &AdmissionRequest) -> Option<&Value> {
    let writes = matches!(request.operation, Operation::Create | Operation::Update);
    let rbac = request.resource.group == GROUP && request.subresource().is_empty();
    request.object.as_ref().filter(|_| writes && rbac)
}

fn check(policy: &Policy, write: &Write) -> AdmissionResponse {
    match write.request.resource.resource.as_str() {
        "roles" | "clusterroles" => roles::check(policy, write),
        "rolebindings" | "clusterrolebindings" => bindings::check(policy, write),
        _ => AdmissionResponse::allow(),
    }
}

capstan_plugin_sdk::admission_plugin!(RbacEscalation);

#[cfg(test)]
mod tests;
