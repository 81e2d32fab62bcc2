//! Built-in admission plugin `priority`, kube-apiserver's Priority:
//! - a Pod created gets `spec.priority` (and `spec.preemptionPolicy`) from
//!   the PriorityClass it names, or from the global default class (whose
//!   name it then gets), or 0 and PreemptLowerPriority when there is none;
//!   a class that does not exist, or a priority or policy the pod sets that
//!   differs from the class's, is refused with kube's 403;
//! - a Pod updated keeps the priority and policy it had when the update
//!   leaves them out;
//! - a PriorityClass may be the global default only when no other is.
//!
//! Runs in both phases, as kube's plugin mutates and validates: what it
//! checks holds again for the object the mutating phase produced.

mod classes;
mod pods;

use capstan_plugin_sdk::{AdmissionPlugin, AdmissionRequest, AdmissionResponse};

/// The plugin.
pub struct Priority;

impl AdmissionPlugin for Priority {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        if let Some(pod) = req.written_object("", "pods") {
            return Ok(pods::admit(req, pod));
        }
        if let Some(class) = req.written_object("scheduling.k8s.io", "priorityclasses") {
            return Ok(classes::validate(req, class));
        }
        Ok(AdmissionResponse::allow())
    }
}

capstan_plugin_sdk::admission_plugin!(Priority);

#[cfg(test)]
mod tests;
