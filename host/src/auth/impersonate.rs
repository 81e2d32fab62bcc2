//! Impersonation (`kubectl --as`, `--as-group`, `--as-uid`): the
//! Impersonate-* headers replace the requester by another user, each part
//! authorized with the `impersonate` verb as kube-apiserver does.
//!
//! Values are read as kube-apiserver reads them: Go keeps a header's bytes
//! as they came, so a UTF-8 `Impersonate-User: josé` impersonates `josé`.
//! Bytes that are not UTF-8 cannot name anyone here: such a header fails
//! the request (400); it is never skipped, which would run the request as
//! the impersonator itself.

use super::attributes::{Attributes, ResourceAttributes};
use super::authorize::Authorizer;
use crate::apimachinery::status::ApiError;
use crate::apimachinery::user::{service_account_parts, UserInfo, AUTHENTICATED};
use std::collections::BTreeMap;

pub const USER: &str = "impersonate-user";
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
    /// The first Impersonate-* header whose bytes are not UTF-8.
    unreadable: Option<String>,
}

fn wanted(headers: &http::HeaderMap) -> Wanted {
    let mut w = Wanted::default();
    for (name, value) in headers {
        let name = name.as_str();
        if !is_impersonation(name) {
            continue;
        }
        match read(name, value) {
            Some((key, value)) => w.add(name, key, value),
            None => {
                w.unreadable.get_or_insert_with(|| name.to_string());
            }
        }
    }
    // As Go's Header.Get: the first value counts, and an empty one is none.
    w.user = w.user.filter(|u| !u.is_empty());
    w.uid = w.uid.filter(|u| !u.is_empty());
    w
}

impl Wanted {
    fn add(&mut self, name: &str, extra_key: Option<String>, value: String) {
        match (name, extra_key) {
            (USER, _) => {
                self.user.get_or_insert(value);
            }
            (UID, _) => {
                self.uid.get_or_insert(value);
            }
            (GROUP, _) => self.groups.push(value),
            (_, Some(key)) => self.extra.entry(key).or_default().push(value),
            _ => {}
        }
    }
}

fn is_impersonation(name: &str) -> bool {
    matches!(name, USER | UID | GROUP) || name.starts_with(EXTRA_PREFIX)
}

/// The extra key (for Impersonate-Extra-*) and the value of one header;
/// `None` when either is not UTF-8.
fn read(name: &str, value: &http::HeaderValue) -> Option<(Option<String>, String)> {
    let value = std::str::from_utf8(value.as_bytes()).ok()?.to_string();
    let key = match name.strip_prefix(EXTRA_PREFIX) {
        Some(key) => Some(String::from_utf8(path_unescape(key)).ok()?),
        None => None,
    };
    Some((key, value))
}

/// Go's `url.PathUnescape` as kube's `unescapeExtraKey` uses it: `%XX`
/// decoded, `+` kept; the key unchanged when an escape is malformed.
fn path_unescape(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        match bytes.get(i + 1..i + 3).and_then(hex_byte) {
            Some(b) => out.push(b),
            None => return bytes.to_vec(),
        }
        i += 3;
    }
    out
}

fn hex_byte(pair: &[u8]) -> Option<u8> {
    let digit = |c: u8| (c as char).to_digit(16);
    Some((digit(pair[0])? * 16 + digit(pair[1])?) as u8)
}

/// Anything to impersonate besides the user.
fn has_parts(w: &Wanted) -> bool {
    w.uid.is_some() || !w.groups.is_empty() || !w.extra.is_empty() || w.unreadable.is_some()
}

/// The header as clients spell it (Go's canonical form).
fn canonical(name: &str) -> String {
    name.split('-')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect::<Vec<_>>()
        .join("-")
}

fn unreadable(header: &str) -> ApiError {
    ApiError::bad_request(format!(
        "invalid {} header: the value is not valid UTF-8",
        canonical(header)
    ))
}

/// The user the request acts as: `requester` itself without Impersonate-*
/// headers; the impersonated user when every part of it is allowed; 403
/// (kube's message) for the first part that is not; 400 when a header
/// cannot be read; 500 (as kube) for parts without a user.
pub async fn resolve(
    authorizer: &Authorizer,
    requester: UserInfo,
    headers: &http::HeaderMap,
) -> Result<UserInfo, ApiError> {
    let w = wanted(headers);
    let names_user = headers.get(USER).is_some_and(|v| !v.is_empty());
    if !names_user {
        return match has_parts(&w) {
            false => Ok(requester),
            true => Err(ApiError::internal(
                "requested impersonation of groups, uid or extra without impersonating a user",
            )),
        };
    }
    if let Some(header) = &w.unreadable {
        return Err(unreadable(header));
    }
    let Some(user) = w.user.clone() else {
        return Err(unreadable(USER));
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
    if !groups.iter().any(|g| g == AUTHENTICATED) && user != crate::apimachinery::user::ANONYMOUS {
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
        let pairs: Vec<(&str, &[u8])> = pairs.iter().map(|(k, v)| (*k, v.as_bytes())).collect();
        raw_headers(&pairs)
    }

    /// Headers with any bytes as values (what curl or a proxy may send).
    fn raw_headers(pairs: &[(&str, &[u8])]) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                http::HeaderValue::from_bytes(v).unwrap(),
            );
        }
        h
    }

    fn master() -> UserInfo {
        UserInfo {
            username: "proxy".into(),
            groups: vec![crate::apimachinery::user::MASTERS.into()],
            ..Default::default()
        }
    }

    async fn resolve_as_master(h: &http::HeaderMap) -> Result<UserInfo, ApiError> {
        resolve(&Authorizer::new(vec![]), master(), h).await
    }

    #[tokio::test]
    async fn utf8_names_are_impersonated_as_kube_reads_them() {
        let user = resolve_as_master(&headers(&[("Impersonate-User", "josé")]))
            .await
            .unwrap();
        assert_eq!(user.username, "josé");
        assert_eq!(user.groups, vec![AUTHENTICATED]);
    }

    #[tokio::test]
    async fn unreadable_headers_fail_and_never_run_as_the_impersonator() {
        for (name, value) in [
            ("Impersonate-User", &b"jos\xe9"[..]),
            ("Impersonate-Group", b"\xff"),
            ("Impersonate-Uid", b"\xc3"),
            ("Impersonate-Extra-Scopes", b"\xe9t\xe9"),
            ("Impersonate-Extra-%ff", b"x"),
        ] {
            let mut pairs: Vec<(&str, &[u8])> = vec![(name, value)];
            if name != "Impersonate-User" {
                pairs.push(("Impersonate-User", b"jane"));
            }
            let err = resolve_as_master(&raw_headers(&pairs)).await.unwrap_err();
            assert_eq!((err.code, err.reason), (400, "BadRequest"), "{name}");
            assert_eq!(
                err.message,
                format!("invalid {name} header: the value is not valid UTF-8")
            );
        }
    }

    #[tokio::test]
    async fn parts_without_a_user_are_kubes_500_even_when_unreadable() {
        for pairs in [
            vec![("Impersonate-Group", &b"\xe9"[..])],
            vec![("Impersonate-Uid", b"1")],
            vec![("Impersonate-User", b""), ("Impersonate-Group", b"dev")],
        ] {
            let err = resolve_as_master(&raw_headers(&pairs)).await.unwrap_err();
            assert_eq!(err.code, 500, "{pairs:?}");
        }
        let alone = resolve_as_master(&headers(&[("Impersonate-User", "")]))
            .await
            .unwrap();
        assert_eq!(alone, master());
    }

    #[test]
    fn the_first_user_counts_and_extra_keys_are_path_unescaped() {
        let w = wanted(&headers(&[
            ("Impersonate-User", "first"),
            ("Impersonate-User", "second"),
            ("Impersonate-Extra-%C3%A9", "1"),
            ("Impersonate-Extra-a+b", "2"),
            ("Impersonate-Extra-%41%zz", "3"),
        ]));
        assert_eq!(w.user.as_deref(), Some("first"));
        let keys: Vec<&str> = w.extra.keys().map(String::as_str).collect();
        assert_eq!(keys, vec!["%41%zz", "a+b", "é"]);
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
