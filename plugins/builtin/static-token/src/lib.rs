//! Built-in authenticator `static-token`: kube-apiserver's
//! `--token-auth-file` (staging/src/k8s.io/apiserver/pkg/authentication/
//! token/tokenfile/tokenfile.go).
//!
//! Configuration: `{"csv": "<token file contents>"}`, records
//! `token,user name,user uid[,"group1,group2"]` (see [`table`]). The file is
//! parsed once per instance and cached, keyed by its text; an invalid file is
//! an error on every call. A bearer token found in the file authenticates as
//! its user; any other token (or none) is unauthenticated without error.

mod csv;
mod table;

use std::sync::{Arc, Mutex, PoisonError};

use capstan_plugin_sdk::host::{self, Level};
use capstan_plugin_sdk::{AuthenticatorPlugin, TokenReview, TokenReviewStatus};
use serde::Deserialize;

use table::TokenTable;

/// The plugin.
pub struct StaticToken;

#[derive(Debug, Deserialize)]
struct Config {
    csv: String,
}

/// The last token file parsed, with its text.
static CACHE: Mutex<Option<(String, Arc<TokenTable>)>> = Mutex::new(None);

impl AuthenticatorPlugin for StaticToken {
    fn authenticate(review: &TokenReview) -> Result<TokenReviewStatus, String> {
        let token = review.spec.token.as_str();
        if token.is_empty() {
            return Ok(TokenReviewStatus::unauthenticated(""));
        }
        let table = token_table()?;
        Ok(match table.user(token) {
            Some(user) => TokenReviewStatus::authenticated(user.clone()),
            None => TokenReviewStatus::unauthenticated(""),
        })
    }
}

/// The table of the configured file, parsed at most once per file text.
fn token_table() -> Result<Arc<TokenTable>, String> {
    let config: Config = host::config()?;
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((text, table)) = cache.as_ref() {
        if *text == config.csv {
            return Ok(Arc::clone(table));
        }
    }
    let table = Arc::new(TokenTable::parse(&config.csv)?);
    for warning in &table.warnings {
        host::log(Level::Warn, warning);
    }
    *cache = Some((config.csv, Arc::clone(&table)));
    Ok(table)
}

capstan_plugin_sdk::authenticator_plugin!(StaticToken);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::{json, testing, UserInfo};

    fn review(token: &str) -> TokenReview {
        TokenReview {
            spec: capstan_plugin_sdk::access::TokenReviewSpec {
                token: token.to_string(),
                audiences: Vec::new(),
            },
            ..Default::default()
        }
    }

    #[test]
    fn known_token_authenticates_as_its_user() {
        testing::reset();
        testing::set_config(json!({"csv": "s3cret,admin,42,\"system:masters,ops\"\n"}));
        let status = StaticToken::authenticate(&review("s3cret")).unwrap();
        assert_eq!(
            status,
            TokenReviewStatus::authenticated(UserInfo {
                username: "admin".into(),
                uid: "42".into(),
                groups: vec!["system:masters".into(), "ops".into()],
                ..Default::default()
            })
        );
    }

    #[test]
    fn unknown_or_missing_token_is_unauthenticated_without_error() {
        testing::reset();
        testing::set_config(json!({"csv": "s3cret,admin,42\n"}));
        for token in ["nope", "", "s3cret "] {
            let status = StaticToken::authenticate(&review(token)).unwrap();
            assert_eq!(status, TokenReviewStatus::unauthenticated(""));
        }
    }

    #[test]
    fn a_changed_file_is_parsed_again() {
        testing::reset();
        testing::set_config(json!({"csv": "one,first,1\n"}));
        assert!(
            StaticToken::authenticate(&review("one"))
                .unwrap()
                .authenticated
        );
        testing::set_config(json!({"csv": "two,second,2\n"}));
        assert!(
            !StaticToken::authenticate(&review("one"))
                .unwrap()
                .authenticated
        );
        assert!(
            StaticToken::authenticate(&review("two"))
                .unwrap()
                .authenticated
        );
    }

    #[test]
    fn parsing_warnings_are_logged() {
        testing::reset();
        testing::set_config(json!({"csv": "dup,a,1\ndup,b,2\n# unique to this test,x,y\n"}));
        StaticToken::authenticate(&review("dup")).unwrap();
        let logs = testing::logs();
        assert!(logs.contains(&(
            Level::Warn,
            "duplicate token has been found in token file, record number '2'".to_string()
        )));
    }

    #[test]
    fn invalid_file_or_config_is_an_error() {
        testing::reset();
        testing::set_config(json!({"csv": "only,two\n"}));
        let err = StaticToken::authenticate(&review("only")).unwrap_err();
        assert!(err.contains("at least 3 columns"), "{err}");
        testing::set_config(json!({}));
        let err = StaticToken::authenticate(&review("x")).unwrap_err();
        assert!(err.contains("missing field `csv`"), "{err}");
    }

    #[test]
    fn full_token_review_round_trip() {
        testing::reset();
        testing::set_config(json!({"csv": "abc,kubelet,,\"system:nodes\"\n"}));
        let out = capstan_plugin_sdk::run_authenticator::<StaticToken>(
            r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"abc"}}"#,
        )
        .unwrap();
        let out: capstan_plugin_sdk::Value = out.parse().unwrap();
        assert_eq!(
            out["status"]["user"],
            json!({"username": "kubelet", "groups": ["system:nodes"]})
        );
    }
}
