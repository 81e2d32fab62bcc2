//! Built-in authenticator `bootstrap-token`: kube-apiserver's bootstrap token
//! authenticator (plugin/pkg/auth/authenticator/token/bootstrap/bootstrap.go,
//! with k8s.io/cluster-bootstrap's token and secret helpers).
//!
//! A bearer token `<id>.<secret>` (`[a-z0-9]{6}\.[a-z0-9]{16}`) is looked up
//! as the Secret `kube-system/bootstrap-token-<id>`. It authenticates as
//! `system:bootstrap:<id>` in `system:bootstrappers` plus the secret's
//! `auth-extra-groups` (sorted, de-duplicated) when the secret is not being
//! deleted, has type `bootstrap.kubernetes.io/token`, its `token-secret` and
//! `token-id` match, its `expiration` (RFC 3339) has not passed and
//! `usage-bootstrap-authentication` is `true`. Every other case is
//! unauthenticated without an error text, as in kube (the reason is logged at
//! debug level). No configuration; the clock is WASI's.

mod secret;

use capstan_plugin_sdk::host::{self, Level};
use capstan_plugin_sdk::{AuthenticatorPlugin, TokenReview, TokenReviewStatus, UserInfo};

use secret::BootstrapSecret;

/// `bootstrapapi.BootstrapUserPrefix`.
const USER_PREFIX: &str = "system:bootstrap:";

/// The plugin.
pub struct BootstrapToken;

impl AuthenticatorPlugin for BootstrapToken {
    fn authenticate(review: &TokenReview) -> Result<TokenReviewStatus, String> {
        let Some((id, token_secret)) = parse_token(&review.spec.token) else {
            return Ok(TokenReviewStatus::unauthenticated(""));
        };
        let name = format!("bootstrap-token-{id}");
        let Some(object) = host::get_object("v1", "secrets", Some("kube-system"), &name)? else {
            host::log(
                Level::Debug,
                &format!("No secret of name {name} to match bootstrap bearer token"),
            );
            return Ok(TokenReviewStatus::unauthenticated(""));
        };
        let secret = BootstrapSecret::new(&object);
        Ok(
            match secret.groups_for(id, token_secret, kube_time::now_unix()) {
                Ok(groups) => TokenReviewStatus::authenticated(UserInfo {
                    username: format!("{USER_PREFIX}{id}"),
                    groups,
                    ..Default::default()
                }),
                Err(why) => {
                    let message =
                        format!("Bootstrap secret kube-system/{name} matching bearer token {why}");
                    host::log(Level::Debug, &message);
                    TokenReviewStatus::unauthenticated("")
                }
            },
        )
    }
}

/// `bootstraptokenutil.ParseToken`: `\A([a-z0-9]{6})\.([a-z0-9]{16})\z` → (id, secret).
fn parse_token(token: &str) -> Option<(&str, &str)> {
    let (id, secret) = token.split_once('.')?;
    let valid = |part: &str, len: usize| {
        part.len() == len
            && part
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    (valid(id, 6) && valid(secret, 16)).then_some((id, secret))
}

capstan_plugin_sdk::authenticator_plugin!(BootstrapToken);

#[cfg(test)]
mod tests;
