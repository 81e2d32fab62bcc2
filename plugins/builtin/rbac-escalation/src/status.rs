//! The errors kube's rbac registry answers with, worded as apimachinery's
//! `NewForbidden`, `NewNotFound`, `NewBadRequest` and an error that is not
//! a Status (code 500, reason Unknown) are.

use capstan_plugin_sdk::{AdmissionResponse, StatusDetails};
use capstan_rbac::GROUP;
use kube_rules::gofmt::quote;

/// `<resource>.rbac.authorization.k8s.io`.
fn group_resource(resource: &str) -> String {
    format!("{resource}.{GROUP}")
}

fn details(resource: &str, name: &str) -> StatusDetails {
    StatusDetails {
        name: name.to_string(),
        group: GROUP.to_string(),
        kind: resource.to_string(),
        causes: Vec::new(),
    }
}

/// 403 `<resource>.rbac.authorization.k8s.io "<name>" is forbidden: <message>`
/// (without the name when it is empty).
pub fn forbidden(resource: &str, name: &str, message: &str) -> AdmissionResponse {
    let subject = match name {
        "" => group_resource(resource),
        name => format!("{} {}", group_resource(resource), quote(name)),
    };
    AdmissionResponse::deny(
        403,
        "Forbidden",
        format!("{subject} is forbidden: {message}"),
    )
    .with_details(details(resource, name))
}

/// 404 `<resource>.rbac.authorization.k8s.io "<name>" not found`.
pub fn not_found(resource: &str, name: &str) -> AdmissionResponse {
    let message = format!("{} {} not found", group_resource(resource), quote(name));
    AdmissionResponse::deny(404, "NotFound", message).with_details(details(resource, name))
}

/// 400 with `message`.
pub fn bad_request(message: &str) -> AdmissionResponse {
    AdmissionResponse::deny(400, "BadRequest", message)
}

/// 500 with reason Unknown (""), as kube answers a plain Go error.
pub fn internal(message: &str) -> AdmissionResponse {
    AdmissionResponse::deny(500, "", message)
}
