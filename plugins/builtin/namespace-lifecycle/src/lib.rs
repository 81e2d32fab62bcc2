//! Built-in admission plugin `namespace-lifecycle`, kube-apiserver's
//! NamespaceLifecycle: no new content in missing or terminating namespaces,
//! and the system namespaces (default, kube-system, kube-public) can't be deleted.
//!
//! Whether a namespace is terminating is remembered between calls until
//! namespaces change (their watermark); a namespace not found is looked up
//! again every time, as kube's live lookup does.

use std::cell::RefCell;

use capstan_plugin_sdk::{
    host, object, AdmissionPlugin, AdmissionRequest, AdmissionResponse, Operation, Remembered,
};

thread_local! {
    /// Namespace name → terminating, for namespaces that exist.
    static NAMESPACES: RefCell<Remembered<Option<bool>>> =
        const { RefCell::new(Remembered::new("v1", "namespaces")) };
}

/// Namespaces that may never be deleted.
const IMMORTAL: [&str; 3] = ["default", "kube-system", "kube-public"];

/// The plugin.
pub struct NamespaceLifecycle;

impl AdmissionPlugin for NamespaceLifecycle {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let is_namespace = req.kind.group.is_empty() && req.kind.kind == "Namespace";
        if is_namespace {
            return Ok(namespace_operation(req));
        }
        if req.namespace.is_empty()
            || req.operation == Operation::Delete
            || req.operation == Operation::Connect
            || is_access_review(req)
        {
            return Ok(AdmissionResponse::allow());
        }
        check_namespace(req)
    }
}

/// Operations on namespaces themselves: only deleting an immortal one is refused.
fn namespace_operation(req: &AdmissionRequest) -> AdmissionResponse {
    if req.operation == Operation::Delete && IMMORTAL.contains(&req.name.as_str()) {
        return AdmissionResponse::forbidden(req, "this namespace may not be deleted");
    }
    AdmissionResponse::allow()
}

/// Access reviews are answered in any namespace, existing or not.
fn is_access_review(req: &AdmissionRequest) -> bool {
    req.resource.group == "authorization.k8s.io"
        && req.resource.resource == "localsubjectaccessreviews"
}

/// Creates and updates need the namespace to exist; creates need it active.
fn check_namespace(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
    let Some(terminating) = terminating(&req.namespace)? else {
        return Ok(AdmissionResponse::not_found(
            "",
            "namespaces",
            &req.namespace,
        ));
    };
    if req.operation != Operation::Create || !terminating {
        return Ok(AdmissionResponse::allow());
    }
    let message = format!(
        "unable to create new content in namespace {} because it is being terminated",
        req.namespace
    );
    Ok(AdmissionResponse::forbidden(req, &message).with_cause(
        "NamespaceTerminating",
        "metadata.namespace",
        &message,
    ))
}

/// Whether the namespace is terminating; None when it does not exist.
fn terminating(name: &str) -> Result<Option<bool>, String> {
    let read = || {
        let namespace = host::get_object("v1", "namespaces", None, name)?;
        Ok(namespace.map(|n| object::get_str(&n, &["status", "phase"]) == Some("Terminating")))
    };
    NAMESPACES.with(|cache| cache.borrow_mut().get_or_read(name, read, Option::is_some))
}

capstan_plugin_sdk::admission_plugin!(NamespaceLifecycle);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::{json, testing};

    fn namespace(name: &str, phase: &str) {
        testing::put_object(
            "v1",
            "namespaces",
            json!({"metadata": {"name": name}, "status": {"phase": phase}}),
        );
    }

    fn create_pod(ns: &str) -> AdmissionRequest {
        testing::request(
            Operation::Create,
            "v1",
            "pods",
            "Pod",
            ns,
            json!({"metadata": {"name": "web"}}),
        )
    }

    #[test]
    fn create_in_missing_namespace_is_not_found() {
        testing::reset();
        let r = NamespaceLifecycle::review(&create_pod("ghost")).unwrap();
        assert!(!r.allowed);
        assert_eq!(r.code(), 404);
        assert_eq!(r.message(), "namespaces \"ghost\" not found");
    }

    #[test]
    fn create_in_terminating_namespace_is_forbidden() {
        testing::reset();
        namespace("doomed", "Terminating");
        let r = NamespaceLifecycle::review(&create_pod("doomed")).unwrap();
        assert_eq!(r.code(), 403);
        assert_eq!(
            r.message(),
            "pods \"web\" is forbidden: unable to create new content in namespace doomed because it is being terminated"
        );
        let causes = &r.status.as_ref().unwrap().details.as_ref().unwrap().causes;
        assert_eq!(causes[0].cause_type, "NamespaceTerminating");
        assert_eq!(causes[0].field, "metadata.namespace");
    }

    #[test]
    fn create_in_active_namespace_and_update_in_terminating_are_allowed() {
        testing::reset();
        namespace("live", "Active");
        namespace("doomed", "Terminating");
        assert!(
            NamespaceLifecycle::review(&create_pod("live"))
                .unwrap()
                .allowed
        );
        let mut update = create_pod("doomed");
        update.operation = Operation::Update;
        assert!(NamespaceLifecycle::review(&update).unwrap().allowed);
    }

    #[test]
    fn a_namespace_that_starts_terminating_is_seen_at_once() {
        testing::reset();
        namespace("team", "Active");
        assert!(
            NamespaceLifecycle::review(&create_pod("team"))
                .unwrap()
                .allowed
        );
        namespace("team", "Terminating");
        assert_eq!(
            NamespaceLifecycle::review(&create_pod("team"))
                .unwrap()
                .code(),
            403
        );
        assert_eq!(
            NamespaceLifecycle::review(&create_pod("later"))
                .unwrap()
                .code(),
            404
        );
        namespace("later", "Active");
        assert!(
            NamespaceLifecycle::review(&create_pod("later"))
                .unwrap()
                .allowed
        );
    }

    #[test]
    fn update_in_missing_namespace_is_not_found_but_delete_is_allowed() {
        testing::reset();
        let mut req = create_pod("ghost");
        req.operation = Operation::Update;
        assert_eq!(NamespaceLifecycle::review(&req).unwrap().code(), 404);
        req.operation = Operation::Delete;
        assert!(NamespaceLifecycle::review(&req).unwrap().allowed);
    }

    #[test]
    fn system_namespaces_may_not_be_deleted() {
        testing::reset();
        for name in IMMORTAL {
            let req = AdmissionRequest {
                name: name.to_string(),
                ..testing::request(
                    Operation::Delete,
                    "v1",
                    "namespaces",
                    "Namespace",
                    "",
                    json!({}),
                )
            };
            let r = NamespaceLifecycle::review(&req).unwrap();
            assert_eq!(r.code(), 403);
            assert_eq!(
                r.message(),
                format!("namespaces \"{name}\" is forbidden: this namespace may not be deleted")
            );
        }
        let other = AdmissionRequest {
            name: "team-a".into(),
            ..testing::request(
                Operation::Delete,
                "v1",
                "namespaces",
                "Namespace",
                "",
                json!({}),
            )
        };
        assert!(NamespaceLifecycle::review(&other).unwrap().allowed);
    }

    #[test]
    fn cluster_scoped_objects_and_store_errors() {
        testing::reset();
        let node = testing::request(
            Operation::Create,
            "v1",
            "nodes",
            "Node",
            "",
            json!({"metadata": {"name": "n"}}),
        );
        assert!(NamespaceLifecycle::review(&node).unwrap().allowed);
        testing::fail_reads(Some("store unavailable"));
        assert_eq!(
            NamespaceLifecycle::review(&create_pod("x")).unwrap_err(),
            "store unavailable"
        );
    }

    #[test]
    fn full_review_round_trip() {
        testing::reset();
        let input = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "1", "operation": "CREATE", "namespace": "ghost",
                "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "resource": {"group": "", "version": "v1", "resource": "configmaps"},
                "object": {"metadata": {"name": "c"}}}});
        let out =
            capstan_plugin_sdk::run_admission::<NamespaceLifecycle>(&input.to_string()).unwrap();
        let out: capstan_plugin_sdk::Value = serde_json_from(&out);
        assert_eq!(out["response"]["uid"], "1");
        assert_eq!(out["response"]["status"]["reason"], "NotFound");
    }

    fn serde_json_from(text: &str) -> capstan_plugin_sdk::Value {
        text.parse().unwrap()
    }
}
