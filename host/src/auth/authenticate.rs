//! The authentication chain: the request's credentials (a verified client
//! certificate, a bearer token) go as one TokenReview to each authenticator
//! in configuration order; the first that says `authenticated` decides the
//! user. No credentials at all → system:anonymous when anonymous access is
//! on; credentials nobody accepts → 401.

use super::transport::Entry;
use crate::apimachinery::status::ApiError;
use crate::apimachinery::user::UserInfo;
use base64::Engine;
use serde_json::{json, Value};

/// The annotation carrying the verified client certificate (see the WIT).
pub const CLIENT_CERTIFICATE_ANNOTATION: &str = "authentication.capstan.dev/client-certificate";

/// What a request presented.
#[derive(Clone, Debug, Default)]
pub struct Credentials {
    /// DER of the client certificate the TLS layer verified against our CA.
    pub certificate: Option<Vec<u8>>,
    pub token: Option<String>,
}

impl Credentials {
    /// The request's credentials; 401 when its bearer token is not UTF-8
    /// (such a token is no one's: it is refused, never taken as absent).
    pub fn new(certificate: Option<Vec<u8>>, headers: &http::HeaderMap) -> Result<Self, ApiError> {
        Ok(Credentials {
            certificate,
            token: bearer_token(headers).map_err(|_| ApiError::unauthorized())?,
        })
    }

    fn is_empty(&self) -> bool {
        self.certificate.is_none() && self.token.is_none()
    }
}

/// `Authorization: Bearer <token>` (scheme case-insensitive, as kube); the
/// token as kube reads it, any UTF-8 included; `Err` when it is not UTF-8.
fn bearer_token(headers: &http::HeaderMap) -> Result<Option<String>, std::str::Utf8Error> {
    let Some(value) = headers.get(http::header::AUTHORIZATION) else {
        return Ok(None);
    };
    let value = value.as_bytes().trim_ascii();
    let Some(space) = value.iter().position(|b| *b == b' ') else {
        return Ok(None);
    };
    let (scheme, token) = (&value[..space], value[space..].trim_ascii());
    if !scheme.eq_ignore_ascii_case(b"bearer") || token.is_empty() {
        return Ok(None);
    }
    std::str::from_utf8(token).map(|t| Some(t.to_string()))
}

pub struct Authenticator {
    entries: Vec<Entry>,
    anonymous: bool,
    /// The audiences of this server's tokens (the TokenReview's spec.audiences).
    audiences: Vec<String>,
}

/// What the chain concluded about one set of credentials.
struct Verdict {
    user: UserInfo,
    audiences: Vec<String>,
}

impl Authenticator {
    pub fn new(entries: Vec<Entry>, anonymous: bool, audiences: Vec<String>) -> Self {
        Authenticator {
            entries,
            anonymous,
            audiences,
        }
    }

    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.name.as_str()).collect()
    }

    /// The user of a request, or 401 Unauthorized.
    pub async fn authenticate(&self, creds: &Credentials) -> Result<UserInfo, ApiError> {
        if creds.is_empty() {
            return match self.anonymous {
                true => Ok(UserInfo::anonymous()),
                false => Err(ApiError::unauthorized()),
            };
        }
        let review = token_review(creds, &self.audiences);
        match self.run(&review).await {
            Some(v) => Ok(v.user.with_authenticated_group()),
            None => Err(ApiError::unauthorized()),
        }
    }

    /// The `status` of a TokenReview (the review API): the token alone, for
    /// `audiences` (the server's when empty).
    pub async fn review_token(&self, token: &str, audiences: &[String]) -> Value {
        let audiences = if audiences.is_empty() {
            &self.audiences
        } else {
            audiences
        };
        let creds = Credentials {
            certificate: None,
            token: Some(token.to_string()),
        };
        match self.run(&token_review(&creds, audiences)).await {
            Some(v) => json!({
                "authenticated": true,
                "user": v.user.with_authenticated_group(),
                "audiences": v.audiences,
            }),
            // kube's answer: `authenticated: false` is Go's omitted zero value.
            None => json!({"user": {}, "error": "invalid bearer token"}),
        }
    }

    async fn run(&self, review: &Value) -> Option<Verdict> {
        for entry in &self.entries {
            match entry.call(review).await {
                Ok(answer) => {
                    if let Some(v) = verdict(&answer, review) {
                        return Some(v);
                    }
                }
                Err(why) => {
                    tracing::warn!(authenticator = %entry.name, error = %why, "authenticator failed")
                }
            }
        }
        None
    }
}

/// The TokenReview sent to authenticators.
fn token_review(creds: &Credentials, audiences: &[String]) -> Value {
    let mut review = json!({
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenReview",
        "metadata": {},
        "spec": {"token": creds.token.clone().unwrap_or_default(), "audiences": audiences},
    });
    if let Some(der) = &creds.certificate {
        let b64 = base64::engine::general_purpose::STANDARD.encode(der);
        review["metadata"]["annotations"] = json!({ CLIENT_CERTIFICATE_ANNOTATION: b64 });
    }
    review
}

/// The user of an answer that says `authenticated`, with a non-empty name.
fn verdict(answer: &Value, review: &Value) -> Option<Verdict> {
    let status = answer.get("status")?;
    if status.get("authenticated") != Some(&Value::Bool(true)) {
        return None;
    }
    let user: UserInfo = serde_json::from_value(status.get("user")?.clone()).ok()?;
    if user.username.is_empty() {
        return None;
    }
    let audiences = status
        .get("audiences")
        .and_then(|a| serde_json::from_value(a.clone()).ok())
        .unwrap_or_else(|| {
            serde_json::from_value(review["spec"]["audiences"].clone()).unwrap_or_default()
        });
    Some(Verdict { user, audiences })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(value: &[u8]) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        let value = http::HeaderValue::from_bytes(value).unwrap();
        h.insert(http::header::AUTHORIZATION, value);
        h
    }

    fn token(value: &[u8]) -> Option<String> {
        bearer_token(&headers(value)).unwrap()
    }

    #[test]
    fn bearer_tokens_are_read_case_insensitively_and_others_ignored() {
        assert_eq!(token(b"Bearer abc").as_deref(), Some("abc"));
        assert_eq!(token(b"bearer  abc ").as_deref(), Some("abc"));
        assert_eq!(token(b"Basic abc"), None);
        assert_eq!(token(b"Basic \xe9"), None);
        assert_eq!(token(b"Bearer "), None);
        assert_eq!(bearer_token(&http::HeaderMap::new()), Ok(None));
    }

    #[tokio::test]
    async fn non_ascii_bearer_tokens_are_401_never_anonymous() {
        let open = Authenticator::new(vec![], true, vec![]);
        let utf8 = Credentials::new(None, &headers("Bearer tök".as_bytes())).unwrap();
        assert_eq!(utf8.token.as_deref(), Some("tök"));
        assert_eq!(open.authenticate(&utf8).await.unwrap_err().code, 401);
        let err = Credentials::new(None, &headers(b"Bearer t\xf6k")).unwrap_err();
        assert_eq!((err.code, err.reason), (401, "Unauthorized"));
    }

    #[test]
    fn the_review_carries_token_audiences_and_certificate() {
        let creds = Credentials {
            certificate: Some(vec![1, 2, 3]),
            token: Some("t".into()),
        };
        let r = token_review(&creds, &["api".to_string()]);
        assert_eq!(r["spec"]["token"], "t");
        assert_eq!(r["spec"]["audiences"], json!(["api"]));
        assert_eq!(
            r["metadata"]["annotations"][CLIENT_CERTIFICATE_ANNOTATION],
            "AQID"
        );
    }

    #[test]
    fn only_authenticated_answers_with_a_name_count() {
        let review = token_review(&Credentials::default(), &["api".to_string()]);
        let yes = json!({"status": {"authenticated": true, "user": {"username": "alice", "groups": ["g"]}}});
        let v = verdict(&yes, &review).unwrap();
        assert_eq!(v.user.username, "alice");
        assert_eq!(v.audiences, vec!["api"]);
        assert!(verdict(&json!({"status": {"authenticated": false}}), &review).is_none());
        let nameless = json!({"status": {"authenticated": true, "user": {}}});
        assert!(verdict(&nameless, &review).is_none());
    }

    #[tokio::test]
    async fn no_credentials_is_anonymous_only_when_enabled() {
        let open = Authenticator::new(vec![], true, vec![]);
        let user = open.authenticate(&Credentials::default()).await.unwrap();
        assert_eq!(user, UserInfo::anonymous());
        let closed = Authenticator::new(vec![], false, vec![]);
        let err = closed
            .authenticate(&Credentials::default())
            .await
            .unwrap_err();
        assert_eq!(err.code, 401);
        let token = Credentials {
            certificate: None,
            token: Some("x".into()),
        };
        assert_eq!(open.authenticate(&token).await.unwrap_err().code, 401);
    }
}
