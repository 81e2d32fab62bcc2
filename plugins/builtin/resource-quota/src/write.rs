//! Which requests the plugin looks at, and the objects it counts them against.

use capstan_plugin_sdk::{host, AdmissionRequest, Operation, Value};
use capstan_quota::{handles, is_ignored, GroupResource};

/// A create or update that may change a namespace's quota usage.
pub(crate) struct Write<'a> {
    /// The written resource as GroupResource text (`pods`, `deployments.apps`).
    pub resource: String,
    /// `v1` or `<group>/<version>`, to list the resource.
    pub api_version: String,
    pub namespace: &'a str,
    pub operation: capstan_quota::Operation,
    pub name: &'a str,
    pub object: &'a Value,
    pub old_object: Option<&'a Value>,
}

impl<'a> Write<'a> {
    /// The write, when quota may care: CREATE or UPDATE of a namespaced
    /// object, on the resource itself or the pods' `resize` subresource,
    /// of a resource quota tracks, that its evaluator handles.
    pub fn of(req: &'a AdmissionRequest) -> Option<Write<'a>> {
        let operation = match req.operation {
            Operation::Create => capstan_quota::Operation::Create,
            Operation::Update => capstan_quota::Operation::Update,
            Operation::Delete | Operation::Connect => return None,
        };
        if req.namespace.is_empty() || !matches!(req.subresource(), "" | "resize") {
            return None;
        }
        let gr = GroupResource::new(&req.resource.group, &req.resource.resource);
        if is_ignored(&gr) {
            return None;
        }
        let write = Write {
            resource: gr.to_string(),
            api_version: api_version(&req.resource.group, &req.resource.version),
            namespace: &req.namespace,
            operation,
            name: if req.name.is_empty() {
                req.object.as_ref().map_or("", object_name)
            } else {
                &req.name
            },
            object: req.object.as_ref()?,
            old_object: req.old_object.as_ref(),
        };
        let handled = handles(
            &write.resource,
            req.subresource(),
            operation,
            write.object,
            write.old_object,
        );
        handled.then_some(write)
    }

    /// The namespace's objects of the written resource, without the one
    /// being updated (the quota check adds its stored version back).
    pub fn list_others(&self) -> Result<Vec<Value>, String> {
        let all = host::list_objects(
            &self.api_version,
            &self.resource_plural(),
            Some(self.namespace),
            None,
            None,
        )?;
        let updating = self.operation == capstan_quota::Operation::Update;
        Ok(all
            .into_iter()
            .filter(|o| !(updating && object_name(o) == self.name))
            .collect())
    }

    fn resource_plural(&self) -> String {
        GroupResource::parse(&self.resource).resource
    }
}

fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

fn object_name(object: &Value) -> &str {
    capstan_plugin_sdk::object::name(object)
}
