//! Where an applying rule comes from: a binding and its subject, described
//! as kube's rule resolver describes them in authorization reasons
//! (`clusterRoleBindingDescriber` / `roleBindingDescriber` in
//! `pkg/registry/rbac/validation/rule.go`).

use std::fmt;

use crate::objects::{Binding, Subject, SERVICE_ACCOUNT_KIND};
use kube_rules::gofmt::quote;

/// A binding and the subject in it that applied to the request's user.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    pub binding: &'a Binding,
    pub subject: &'a Subject,
}

impl fmt::Display for Source<'_> {
    /// `ClusterRoleBinding "admins" of ClusterRole "admin" to Group "ops"` or
    /// `RoleBinding "b/ns" of Role "r" to ServiceAccount "sa/ns"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let binding = self.binding;
        let (kind, name) = if binding.is_cluster() {
            ("ClusterRoleBinding", binding.name.clone())
        } else {
            (
                "RoleBinding",
                format!("{}/{}", binding.name, binding.namespace),
            )
        };
        write!(
            f,
            "{kind} {} of {} {} to {}",
            quote(&name),
            binding.role_ref.kind,
            quote(&binding.role_ref.name),
            describe_subject(self.subject, &binding.namespace)
        )
    }
}

/// kube's `describeSubject`: `Kind "name"`, or for a service account
/// `ServiceAccount "name/namespace"` (namespace defaulting to the binding's).
fn describe_subject(subject: &Subject, binding_namespace: &str) -> String {
    if subject.kind == SERVICE_ACCOUNT_KIND {
        let namespace = subject.service_account_namespace(binding_namespace);
        let name = format!("{}/{}", subject.name, namespace);
        return format!("{} {}", subject.kind, quote(&name));
    }
    format!("{} {}", subject.kind, quote(&subject.name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::RoleRef;

    fn binding(namespace: &str) -> Binding {
        Binding {
            namespace: namespace.into(),
            name: "b".into(),
            role_ref: RoleRef {
                kind: "ClusterRole".into(),
                name: "admin".into(),
                ..Default::default()
            },
            subjects: Vec::new(),
        }
    }

    fn subject(kind: &str, name: &str, namespace: &str) -> Subject {
        Subject {
            kind: kind.into(),
            name: name.into(),
            namespace: namespace.into(),
        }
    }

    #[test]
    fn describes_cluster_role_bindings() {
        let b = binding("");
        let s = subject("Group", "system:masters", "");
        assert_eq!(
            Source {
                binding: &b,
                subject: &s
            }
            .to_string(),
            "ClusterRoleBinding \"b\" of ClusterRole \"admin\" to Group \"system:masters\""
        );
        let sa = subject("ServiceAccount", "sa", "kube-system");
        assert_eq!(
            Source { binding: &b, subject: &sa }.to_string(),
            "ClusterRoleBinding \"b\" of ClusterRole \"admin\" to ServiceAccount \"sa/kube-system\""
        );
    }

    #[test]
    fn describes_role_bindings_with_their_namespace() {
        let b = binding("ns");
        let sa = subject("ServiceAccount", "sa", "");
        assert_eq!(
            Source {
                binding: &b,
                subject: &sa
            }
            .to_string(),
            "RoleBinding \"b/ns\" of ClusterRole \"admin\" to ServiceAccount \"sa/ns\""
        );
        let user = subject("User", "alice", "");
        assert_eq!(
            Source {
                binding: &b,
                subject: &user
            }
            .to_string(),
            "RoleBinding \"b/ns\" of ClusterRole \"admin\" to User \"alice\""
        );
    }
}
