//! Impersonation (`kubectl --as`, `--as-group`, `--as-uid`): the
//! Impersonate-* headers replace the requester by another user, each part
//! authorized with the `impersonate` verb as kube-apiserver does.

use super::attributes::{Attributes, ResourceAttributes};
use super::authorize::Authorizer;
use super::user::{service_account_parts, UserInfo, AUTHENTICATED};
use crate::status::ApiError;
use std::collections::BTreeMap;

const USER: &str = "impersonate-user";
const UID: &str = "impersonate-uid";
const GROUP: &str = "impersonate-group";
const EXTRA_PREFIX: &str = "impersonate-extra-";

/// The user to act as, when the request impersonates.
#[derive(Debug, Default, PartialEq)]
struct Wanted {
    user: Option<String>,
    uid: Option<String>,
    groups: Vec<String>,
    extra: BTreeMap<String, Vec<String>>,
}

fn wanted(headers: &http::HeaderMap) -> Wanted {
    let mut w = Wanted::default();
    for (name, value) in headers {
        let Ok(value) = value.to_str() else { continue };
        let value = value.to_string();
        match name.as_str() {
            USER => w.user = Some(value),
            UID => w.uid = Some(value),
            GROUP => w.groups.push(value),
            other => {
                if let Some(key) = other.strip_prefix(EXTRA_PREFIX) {
                    let key = percent_decode(key);
                    w.extra.entry(key).or_default().push(value);
                }
            }
        }
    }
    w
}

fn percent_decode(text: &str) -> String {
    url::form_urlencoded::parse(format!("k={text}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| text.to_string())
}

fn is_empty(w: &Wanted) -> bool {
    w.user.is_none() && w.uid.is_none() && w.groups.is_empty() && w.extra.is_empty()
}

/// The user the request acts as: `requester` itself without Impersonate-*
/// headers; the impersonated user when every part of it is allowed; 403
/// (kube's message) for the first part that is not.
pub async fn resolve(
    authorizer: &Authorizer,
    requester: UserInfo,
    headers: &http::HeaderMap,
) -> Result<UserInfo, ApiError> {
    let w = wanted(headers);
    if is_empty(&w) {
        return Ok(requester);
    }
    let Some(user) = w.user.clone() else {
        return Err(ApiError::internal(
            "requested impersonation of groups, uid or extra without impersonating a user",
        ));
    };
    for check in checks(&w, &user) {
        authorizer
            .check(&Attributes::resource(
                requester.clone(),
                "impersonate",
                check,
            ))
            .await?;
    }
    Ok(impersonated(w, user))
}

/// One `impersonate` check per impersonated part.
fn checks(w: &Wanted, user: &str) -> Vec<ResourceAttributes> {
    let mut out = vec![match service_account_parts(user) {
        Some((ns, name)) => target("", "serviceaccounts", "", name, ns),
        None => target("", "users", "", user, ""),
    }];
    out.extend(w.groups.iter().map(|g| target("", "groups", "", g, "")));
    out.extend(
        w.uid
            .iter()
            .map(|u| target("authentication.k8s.io", "uids", "", u, "")),
    );
    for (key, values) in &w.extra {
        for v in values {
            out.push(target("authentication.k8s.io", "userextras", key, v, ""));
        }
    }
    out
}

fn target(group: &str, resource: &str, sub: &str, name: &str, ns: &str) -> ResourceAttributes {
    ResourceAttributes {
        namespace: ns.into(),
        group: group.into(),
        version: String::new(),
        resource: resource.into(),
        subresource: sub.into(),
        name: name.into(),
    }
}

fn impersonated(w: Wanted, user: String) -> UserInfo {
    let mut groups = w.groups;
    if let Some((ns, _)) = service_account_parts(&user) {
        if groups.is_empty() {
            groups = vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{ns}"),
            ];
        }
    }
    if !groups.iter().any(|g| g == AUTHENTICATED) && user != super::user::ANONYMOUS {
        groups.push(AUTHENTICATED.into());
    }
    UserInfo {
        username: user,
        uid: w.uid.unwrap_or_default(),
        groups,
        extra: w.extra,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    #[test]
    fn headers_are_collected() {
        let w = wanted(&headers(&[
            ("Impersonate-User", "jane"),
            ("Impersonate-Group", "dev"),
            ("Impersonate-Group", "ops"),
            ("Impersonate-Extra-Scopes%2Fx", "a"),
        ]));
        assert_eq!(w.user.as_deref(), Some("jane"));
        assert_eq!(w.groups, vec!["dev", "ops"]);
        assert_eq!(w.extra["scopes/x"], vec!["a"]);
        assert_eq!(checks(&w, "jane").len(), 4);
    }

    #[test]
    fn service_accounts_are_checked_as_such_and_get_their_groups() {
        let w = Wanted {
            user: Some("system:serviceaccount:ns:robot".into()),
            ..Default::default()
        };
        let c = checks(&w, "system:serviceaccount:ns:robot");
        assert_eq!(
            (
                c[0].resource.as_str(),
                c[0].namespace.as_str(),
                c[0].name.as_str()
            ),
            ("serviceaccounts", "ns", "robot")
        );
        let u = impersonated(w, "system:serviceaccount:ns:robot".into());
        assert_eq!(
            u.groups,
            vec![
                "system:serviceaccounts",
                "system:serviceaccounts:ns",
                AUTHENTICATED
            ]
        );
    }

    #[tokio::test]
    async fn refused_without_permission_and_untouched_without_headers() {
        let chain = Authorizer::new(vec![]);
        let bob = UserInfo {
            username: "bob".into(),
            ..Default::default()
        };
        let same = resolve(&chain, bob.clone(), &http::HeaderMap::new())
            .await
            .unwrap();
        assert_eq!(same, bob);
        let err = resolve(
            &chain,
            bob.clone(),
            &headers(&[("Impersonate-User", "jane")]),
        )
        .await
        .unwrap_err();
        assert_eq!(
            err.message,
            r#"users "jane" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope"#
        );
        let err = resolve(&chain, bob, &headers(&[("Impersonate-Group", "g")]))
            .await
            .unwrap_err();
        assert_eq!(err.code, 500);
    }
}
