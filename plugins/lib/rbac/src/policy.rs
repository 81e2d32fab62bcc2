//! The RBAC policy of a cluster, built once from the four lists of objects
//! and indexed for fast decisions, with kube's rule resolution
//! (`pkg/registry/rbac/validation/rule.go`, DefaultRuleResolver): every
//! ClusterRoleBinding applies, RoleBindings only in the request's namespace,
//! and a RoleBinding may reference a ClusterRole (scoped to its namespace).

use std::collections::HashMap;
use std::ops::ControlFlow;

use serde_json::Value;

use crate::index::SubjectIndex;
use crate::objects::{Binding, Role, RoleRef, CLUSTER_ROLE_KIND, ROLE_KIND};
use crate::rules::PolicyRule;
use crate::source::Source;
use crate::GROUP;

/// The objects a policy is built from, as `list_objects` returns them.
#[derive(Debug, Clone, Default)]
pub struct Lists {
    pub cluster_roles: Vec<Value>,
    pub cluster_role_bindings: Vec<Value>,
    pub roles: Vec<Value>,
    pub role_bindings: Vec<Value>,
}

/// Why the rules of a binding could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolutionError {
    /// The referenced Role (in `namespace`) or ClusterRole does not exist.
    RoleNotFound { kind: String, name: String },
    /// `roleRef.kind` is neither Role nor ClusterRole.
    UnsupportedKind(String),
}

impl ResolutionError {
    /// The message of kube's RBAC authorizer, which reads roles through
    /// client-go listers: `clusterrole.rbac.authorization.k8s.io "x" not found`.
    pub fn authorizer_message(&self) -> String {
        self.message(|kind| kind.to_ascii_lowercase())
    }

    /// The message of kube's rbac registry, which reads roles from storage:
    /// `clusterroles.rbac.authorization.k8s.io "x" not found`.
    pub fn registry_message(&self) -> String {
        self.message(|kind| format!("{}s", kind.to_ascii_lowercase()))
    }

    fn message(&self, resource: impl Fn(&str) -> String) -> String {
        match self {
            ResolutionError::RoleNotFound { kind, name } => format!(
                "{}.{GROUP} {} not found",
                resource(kind),
                kube_rules::gofmt::quote(name)
            ),
            ResolutionError::UnsupportedKind(kind) => format!(
                "unsupported role reference kind: {}",
                kube_rules::gofmt::quote(kind)
            ),
        }
    }
}

/// What a visitor is shown: a rule and the binding it comes from, or an
/// error resolving one binding's rules.
#[derive(Debug)]
pub enum Visit<'a> {
    Rule(Source<'a>, &'a PolicyRule),
    Error(ResolutionError),
}

/// All rules that apply to a user in a namespace, and the errors met.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resolution {
    pub rules: Vec<PolicyRule>,
    pub errors: Vec<ResolutionError>,
}

/// The indexed policy.
#[derive(Debug, Default)]
pub struct Policy {
    cluster_roles: HashMap<String, Role>,
    /// namespace → name → Role.
    roles: HashMap<String, HashMap<String, Role>>,
    cluster_bindings: Vec<Binding>,
    role_bindings: Vec<Binding>,
    cluster_index: SubjectIndex,
    /// namespace → index of that namespace's RoleBindings.
    namespace_index: HashMap<String, SubjectIndex>,
}

impl Policy {
    /// Builds the policy; malformed objects are skipped.
    pub fn new(lists: &Lists) -> Policy {
        let mut policy = Policy::default();
        for role in lists
            .cluster_roles
            .iter()
            .filter_map(|o| Role::from_json(o, false))
        {
            policy.cluster_roles.insert(role.name.clone(), role);
        }
        for role in lists.roles.iter().filter_map(|o| Role::from_json(o, true)) {
            let namespace = policy.roles.entry(role.namespace.clone()).or_default();
            namespace.insert(role.name.clone(), role);
        }
        let cluster = lists.cluster_role_bindings.iter();
        policy.cluster_bindings = cluster
            .filter_map(|o| Binding::from_json(o, false))
            .collect();
        let namespaced = lists.role_bindings.iter();
        policy.role_bindings = namespaced
            .filter_map(|o| Binding::from_json(o, true))
            .collect();
        policy.index_bindings();
        policy
    }

    fn index_bindings(&mut self) {
        for (at, binding) in self.cluster_bindings.iter().enumerate() {
            self.cluster_index.add(at, binding);
        }
        for (at, binding) in self.role_bindings.iter().enumerate() {
            let index = self.namespace_index.entry(binding.namespace.clone());
            index.or_default().add(at, binding);
        }
    }

    /// The number of bindings (cluster and namespaced) in the policy.
    pub fn binding_count(&self) -> usize {
        self.cluster_bindings.len() + self.role_bindings.len()
    }

    /// kube's `GetRoleReferenceRules`: the rules of the role a binding in
    /// `binding_namespace` ("" for a ClusterRoleBinding) references.
    pub fn role_ref_rules(
        &self,
        role_ref: &RoleRef,
        binding_namespace: &str,
    ) -> Result<&[PolicyRule], ResolutionError> {
        let role = match role_ref.kind.as_str() {
            ROLE_KIND => self
                .roles
                .get(binding_namespace)
                .and_then(|roles| roles.get(&role_ref.name)),
            CLUSTER_ROLE_KIND => self.cluster_roles.get(&role_ref.name),
            other => return Err(ResolutionError::UnsupportedKind(other.to_string())),
        };
        role.map(|r| r.rules.as_slice())
            .ok_or_else(|| ResolutionError::RoleNotFound {
                kind: role_ref.kind.clone(),
                name: role_ref.name.clone(),
            })
    }

    /// The ClusterRole named `name`, if any.
    pub fn cluster_role(&self, name: &str) -> Option<&Role> {
        self.cluster_roles.get(name)
    }

    /// kube's `VisitRulesFor`: shows `visitor` every rule that applies to
    /// the user in `namespace` ("" = cluster-wide only) until it breaks.
    pub fn visit_rules_for(
        &self,
        user: &str,
        groups: &[String],
        namespace: &str,
        visitor: &mut dyn FnMut(Visit<'_>) -> ControlFlow<()>,
    ) {
        let cluster = (&self.cluster_index, self.cluster_bindings.as_slice());
        if self.visit_scope(cluster, user, groups, visitor).is_break() || namespace.is_empty() {
            return;
        }
        if let Some(index) = self.namespace_index.get(namespace) {
            let scope = (index, self.role_bindings.as_slice());
            let _ = self.visit_scope(scope, user, groups, visitor);
        }
    }

    fn visit_scope(
        &self,
        (index, bindings): (&SubjectIndex, &[Binding]),
        user: &str,
        groups: &[String],
        visitor: &mut dyn FnMut(Visit<'_>) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        for (at, position) in index.matching(user, groups) {
            let Some(binding) = bindings.get(at) else {
                continue;
            };
            let Some(subject) = binding.subjects.get(position) else {
                continue;
            };
            match self.role_ref_rules(&binding.role_ref, &binding.namespace) {
                Err(error) => visitor(Visit::Error(error))?,
                Ok(rules) => {
                    for rule in rules {
                        visitor(Visit::Rule(Source { binding, subject }, rule))?;
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// kube's `RulesFor`: every rule that applies to the user in
    /// `namespace`, and the errors met resolving them.
    pub fn resolve(&self, user: &str, groups: &[String], namespace: &str) -> Resolution {
        let mut resolution = Resolution::default();
        self.visit_rules_for(user, groups, namespace, &mut |visit| {
            match visit {
                Visit::Rule(_, rule) => resolution.rules.push(rule.clone()),
                Visit::Error(error) => resolution.errors.push(error),
            }
            ControlFlow::Continue(())
        });
        resolution
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{binding, cluster_role, role};
    use crate::rules::rule;

    fn policy() -> Policy {
        Policy::new(&Lists {
            cluster_roles: vec![cluster_role("view", &[rule(&["get"], &[""], &["pods"])])],
            roles: vec![role("ns", "edit", &[rule(&["create"], &[""], &["pods"])])],
            cluster_role_bindings: vec![binding("", "v", "ClusterRole", "view", "User", "alice")],
            role_bindings: vec![
                binding("ns", "e", "Role", "edit", "User", "alice"),
                binding("ns", "m", "Role", "missing", "User", "alice"),
                binding("other", "x", "ClusterRole", "view", "User", "alice"),
            ],
        })
    }

    #[test]
    fn resolves_cluster_rules_everywhere_and_namespace_rules_in_their_namespace() {
        let p = policy();
        assert_eq!(p.binding_count(), 4);
        let cluster = p.resolve("alice", &[], "");
        assert_eq!(cluster.rules, vec![rule(&["get"], &[""], &["pods"])]);
        assert!(cluster.errors.is_empty());
        let ns = p.resolve("alice", &[], "ns");
        assert_eq!(ns.rules.len(), 2);
        assert_eq!(
            ns.errors,
            vec![ResolutionError::RoleNotFound {
                kind: "Role".into(),
                name: "missing".into()
            }]
        );
        assert!(p.resolve("bob", &[], "ns").rules.is_empty());
    }

    #[test]
    fn resolution_errors_read_like_kube() {
        let missing = ResolutionError::RoleNotFound {
            kind: "ClusterRole".into(),
            name: "x".into(),
        };
        assert_eq!(
            missing.authorizer_message(),
            "clusterrole.rbac.authorization.k8s.io \"x\" not found"
        );
        assert_eq!(
            missing.registry_message(),
            "clusterroles.rbac.authorization.k8s.io \"x\" not found"
        );
        assert_eq!(
            ResolutionError::UnsupportedKind("Bogus".into()).authorizer_message(),
            "unsupported role reference kind: \"Bogus\""
        );
    }

    #[test]
    fn role_refs_resolve_by_kind_and_namespace() {
        let p = policy();
        let edit = RoleRef {
            kind: "Role".into(),
            name: "edit".into(),
            ..Default::default()
        };
        assert!(p.role_ref_rules(&edit, "ns").is_ok());
        assert!(p.role_ref_rules(&edit, "other").is_err());
        assert!(p.role_ref_rules(&edit, "").is_err());
        assert!(p.cluster_role("view").is_some());
    }

    #[test]
    fn visiting_stops_when_the_visitor_breaks() {
        let p = policy();
        let mut seen = 0;
        p.visit_rules_for("alice", &[], "ns", &mut |_| {
            seen += 1;
            ControlFlow::Break(())
        });
        assert_eq!(seen, 1);
    }
}
