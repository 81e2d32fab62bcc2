//! API resources named as kube prints a `GroupResource`: `pods`,
//! `deployments.apps`.

use std::fmt;

/// An API group and plural resource; the core group is "".
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct GroupResource {
    pub group: String,
    pub resource: String,
}

impl GroupResource {
    /// A group resource from its parts.
    pub fn new(group: &str, resource: &str) -> GroupResource {
        GroupResource {
            group: group.to_string(),
            resource: resource.to_string(),
        }
    }

    /// Reads `<resource>` or `<resource>.<group>` (the form [`fmt::Display`]
    /// writes and `count/<resource>.<group>` quota keys use).
    pub fn parse(text: &str) -> GroupResource {
        match text.split_once('.') {
            Some((resource, group)) => GroupResource::new(group, resource),
            None => GroupResource::new("", text),
        }
    }
}

impl fmt::Display for GroupResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.resource)
        } else {
            write!(f, "{}.{}", self.resource, self.group)
        }
    }
}

/// Resources quota never tracks (kube's `DefaultIgnoredResources`): virtual
/// resources that are not stored, and events.
pub fn is_ignored(gr: &GroupResource) -> bool {
    const IGNORED: [(&str, &str); 10] = [
        ("", "bindings"),
        ("", "componentstatuses"),
        ("authentication.k8s.io", "tokenreviews"),
        ("authentication.k8s.io", "selfsubjectreviews"),
        ("authorization.k8s.io", "subjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectaccessreviews"),
        ("authorization.k8s.io", "localsubjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectrulesreviews"),
        ("", "events"),
        ("events.k8s.io", "events"),
    ];
    IGNORED
        .iter()
        .any(|(g, r)| gr.group == *g && gr.resource == *r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_kube_form() {
        let gr = GroupResource::parse("deployments.apps");
        assert_eq!(gr, GroupResource::new("apps", "deployments"));
        assert_eq!(gr.to_string(), "deployments.apps");
        let gr = GroupResource::parse("cronjobs.batch.example.io");
        assert_eq!(gr.group, "batch.example.io");
        assert_eq!(GroupResource::parse("pods").to_string(), "pods");
        assert_eq!(GroupResource::parse("pods"), GroupResource::new("", "pods"));
    }

    #[test]
    fn events_and_reviews_are_ignored() {
        assert!(is_ignored(&GroupResource::parse("events")));
        assert!(is_ignored(&GroupResource::parse("events.events.k8s.io")));
        assert!(is_ignored(&GroupResource::parse(
            "subjectaccessreviews.authorization.k8s.io"
        )));
        assert!(!is_ignored(&GroupResource::parse("pods")));
    }
}
