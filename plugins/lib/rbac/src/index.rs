//! Bindings indexed by the users and groups they name, so that finding the
//! bindings of a request costs time proportional to that user's and its
//! groups' bindings, never to the number of bindings in the cluster.

use std::collections::HashMap;

use crate::objects::{
    service_account_username, Binding, Subject, GROUP_KIND, SERVICE_ACCOUNT_KIND, USER_KIND,
};

/// A binding and the subject in it that names someone: (binding, subject)
/// positions in the list the index was built from.
pub(crate) type Entry = (usize, usize);

/// User name → entries and group name → entries, for one scope (the
/// cluster, or one namespace).
#[derive(Debug, Default)]
pub(crate) struct SubjectIndex {
    users: HashMap<String, Vec<Entry>>,
    groups: HashMap<String, Vec<Entry>>,
}

impl SubjectIndex {
    /// Adds every subject of `binding` (at position `at`) that can apply to
    /// someone: users, groups, and service accounts as their user names.
    pub(crate) fn add(&mut self, at: usize, binding: &Binding) {
        for (position, subject) in binding.subjects.iter().enumerate() {
            self.add_subject((at, position), subject, &binding.namespace);
        }
    }

    fn add_subject(&mut self, entry: Entry, subject: &Subject, binding_namespace: &str) {
        let (map, key) = match subject.kind.as_str() {
            USER_KIND => (&mut self.users, subject.name.clone()),
            GROUP_KIND => (&mut self.groups, subject.name.clone()),
            SERVICE_ACCOUNT_KIND => {
                let namespace = subject.service_account_namespace(binding_namespace);
                if namespace.is_empty() {
                    return;
                }
                let user = service_account_username(namespace, &subject.name);
                (&mut self.users, user)
            }
            _ => return,
        };
        map.entry(key).or_default().push(entry);
    }

    /// The bindings that apply to `user` or one of `groups`, each once with
    /// its first applying subject (as kube's appliesTo), in binding order.
    pub(crate) fn matching(&self, user: &str, groups: &[String]) -> Vec<Entry> {
        let mut entries: Vec<Entry> = self.users.get(user).cloned().unwrap_or_default();
        for group in groups {
            entries.extend(self.groups.get(group).into_iter().flatten().copied());
        }
        entries.sort_unstable();
        entries.dedup_by_key(|(binding, _)| *binding);
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::RoleRef;

    fn binding(namespace: &str, subjects: &[(&str, &str, &str)]) -> Binding {
        Binding {
            namespace: namespace.into(),
            name: "b".into(),
            role_ref: RoleRef::default(),
            subjects: subjects
                .iter()
                .map(|(kind, name, ns)| Subject {
                    kind: kind.to_string(),
                    name: name.to_string(),
                    namespace: ns.to_string(),
                })
                .collect(),
        }
    }

    #[test]
    fn finds_first_applying_subject_once_per_binding() {
        let mut index = SubjectIndex::default();
        index.add(
            0,
            &binding("", &[("Group", "dev", ""), ("User", "alice", "")]),
        );
        index.add(1, &binding("", &[("User", "bob", "")]));
        let groups = vec!["dev".to_string(), "dev".to_string()];
        assert_eq!(index.matching("alice", &groups), vec![(0, 0)]);
        assert_eq!(index.matching("alice", &[]), vec![(0, 1)]);
        assert_eq!(index.matching("bob", &groups), vec![(0, 0), (1, 0)]);
        assert!(index.matching("carol", &[]).is_empty());
    }

    #[test]
    fn service_accounts_need_a_namespace() {
        let mut index = SubjectIndex::default();
        index.add(0, &binding("", &[("ServiceAccount", "sa", "")]));
        index.add(1, &binding("ns", &[("ServiceAccount", "sa", "")]));
        index.add(2, &binding("ns", &[("ServiceAccount", "sa", "other")]));
        index.add(3, &binding("ns", &[("Robot", "sa", "ns")]));
        assert_eq!(
            index.matching("system:serviceaccount:ns:sa", &[]),
            vec![(1, 0)]
        );
        assert_eq!(
            index.matching("system:serviceaccount:other:sa", &[]),
            vec![(2, 0)]
        );
    }
}
