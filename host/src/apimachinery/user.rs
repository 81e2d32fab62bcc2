//! The authenticated user (authentication.k8s.io/v1 UserInfo) that every
//! later stage sees: authorization, admission's userInfo, the review APIs.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const ANONYMOUS: &str = "system:anonymous";
pub const UNAUTHENTICATED: &str = "system:unauthenticated";
pub const AUTHENTICATED: &str = "system:authenticated";
/// Members of this group may do anything (kube-apiserver's privileged group).
pub const MASTERS: &str = "system:masters";

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserInfo {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub username: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// The user of requests without credentials, when anonymous access is on.
    pub fn anonymous() -> Self {
        UserInfo {
            username: ANONYMOUS.into(),
            groups: vec![UNAUTHENTICATED.into()],
            ..Default::default()
        }
    }

    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }

    /// Adds system:authenticated, as kube-apiserver does for every user an
    /// authenticator recognised (not for system:anonymous).
    pub fn with_authenticated_group(mut self) -> Self {
        if self.username != ANONYMOUS && !self.in_group(AUTHENTICATED) {
            self.groups.push(AUTHENTICATED.into());
        }
        self
    }

    /// The `(namespace, name)` of a service account user name.
    pub fn service_account(&self) -> Option<(&str, &str)> {
        service_account_parts(&self.username)
    }
}

/// Splits `system:serviceaccount:<namespace>:<name>`.
pub fn service_account_parts(username: &str) -> Option<(&str, &str)> {
    let rest = username.strip_prefix("system:serviceaccount:")?;
    let (ns, name) = rest.split_once(':')?;
    (!ns.is_empty() && !name.is_empty() && !name.contains(':')).then_some((ns, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authenticated_group_is_added_once_and_never_to_anonymous() {
        let u = UserInfo {
            username: "alice".into(),
            groups: vec!["dev".into()],
            ..Default::default()
        }
        .with_authenticated_group()
        .with_authenticated_group();
        assert_eq!(u.groups, vec!["dev", AUTHENTICATED]);
        let anon = UserInfo::anonymous().with_authenticated_group();
        assert_eq!(anon.groups, vec![UNAUTHENTICATED]);
    }

    #[test]
    fn service_account_names() {
        assert_eq!(
            service_account_parts("system:serviceaccount:ns:sa"),
            Some(("ns", "sa"))
        );
        assert_eq!(service_account_parts("system:serviceaccount:ns"), None);
        assert_eq!(service_account_parts("alice"), None);
    }
}
