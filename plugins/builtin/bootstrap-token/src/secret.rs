//! The checks kube makes on a bootstrap token Secret once its name matched
//! a token, in kube's order (bootstrap.go `AuthenticateToken`), and the
//! group list (cluster-bootstrap/util/secrets `GetGroups`).

use std::collections::BTreeSet;

use base64::Engine;
use capstan_plugin_sdk::{object, Value};

/// `bootstrapapi.SecretTypeBootstrapToken`.
const SECRET_TYPE: &str = "bootstrap.kubernetes.io/token";
/// `bootstrapapi.BootstrapDefaultGroup`.
const DEFAULT_GROUP: &str = "system:bootstrappers";
/// `bootstrapapi.BootstrapGroupPattern`, for messages.
const GROUP_PATTERN: &str = r"\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\z";

/// A Secret named `bootstrap-token-<id>` in kube-system.
pub struct BootstrapSecret<'a> {
    object: &'a Value,
}

impl<'a> BootstrapSecret<'a> {
    pub fn new(object: &'a Value) -> Self {
        BootstrapSecret { object }
    }

    /// The user's groups when the secret accepts `id.token_secret` at `now`
    /// (Unix seconds); otherwise why not (the end of kube's log line).
    pub fn groups_for(
        &self,
        id: &str,
        token_secret: &str,
        now: i64,
    ) -> Result<Vec<String>, String> {
        if object::get(self.object, &["metadata", "deletionTimestamp"])
            .is_some_and(|v| !v.is_null())
        {
            return Err("is deleted and awaiting removal".into());
        }
        let has_data = self.object.get("data").is_some_and(Value::is_object);
        if object::get_str(self.object, &["type"]) != Some(SECRET_TYPE) || !has_data {
            return Err(format!("has invalid type, expected {SECRET_TYPE}."));
        }
        if !constant_time_eq(
            self.data("token-secret").as_bytes(),
            token_secret.as_bytes(),
        ) {
            return Err("has invalid value for key token-secret.".into());
        }
        if self.data("token-id") != id {
            return Err(format!(
                "has invalid value for key token-id, expected {id}."
            ));
        }
        if self.has_expired(now) {
            return Err("has expired.".into());
        }
        if self.data("usage-bootstrap-authentication") != "true" {
            return Err("not marked usage-bootstrap-authentication=true.".into());
        }
        self.groups()
            .map_err(|e| format!("has invalid value for key auth-extra-groups: {e}."))
    }

    /// `GetData`: the decoded value of `data[key]`, "" when absent or undecodable.
    fn data(&self, key: &str) -> String {
        let Some(text) = object::get_str(self.object, &["data", key]) else {
            return String::new();
        };
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .unwrap_or_default()
    }

    /// `HasExpired`: an expiration that does not parse counts as expired;
    /// none means the token never expires.
    fn has_expired(&self, now: i64) -> bool {
        let expiration = self.data("expiration");
        if expiration.is_empty() {
            return false;
        }
        kube_time::parse_rfc3339(&expiration).is_none_or(|at| at - now <= 0)
    }

    /// `GetGroups`: the default group and every extra group, sorted and unique.
    fn groups(&self) -> Result<Vec<String>, String> {
        let mut groups = BTreeSet::from([DEFAULT_GROUP.to_string()]);
        let extra = self.data("auth-extra-groups");
        if !extra.is_empty() {
            for group in extra.split(',') {
                if !valid_group(group) {
                    return Err(format!(
                        "bootstrap group \"{group}\" is invalid (must match {GROUP_PATTERN})"
                    ));
                }
                groups.insert(group.to_string());
            }
        }
        Ok(groups.into_iter().collect())
    }
}

/// `system:bootstrappers:` then 1 to 256 of `[a-z0-9:-]`, the last one `[a-z0-9]`.
fn valid_group(group: &str) -> bool {
    let Some(rest) = group.strip_prefix("system:bootstrappers:") else {
        return false;
    };
    let allowed = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b':' || b == b'-';
    let last_ok = rest
        .bytes()
        .last()
        .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    (1..=256).contains(&rest.len()) && last_ok && rest.bytes().all(allowed)
}

/// Compares without stopping at the first difference (`subtle.ConstantTimeCompare`).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_names_follow_kubes_pattern() {
        assert!(valid_group(
            "system:bootstrappers:kubeadm:default-node-token"
        ));
        assert!(valid_group("system:bootstrappers:a"));
        assert!(valid_group(&format!(
            "system:bootstrappers:{}",
            "a".repeat(256)
        )));
        assert!(!valid_group(&format!(
            "system:bootstrappers:{}",
            "a".repeat(257)
        )));
        assert!(!valid_group("system:bootstrappers:"));
        assert!(!valid_group("system:bootstrappers:ends-with-"));
        assert!(!valid_group("system:bootstrappers:Upper"));
        assert!(!valid_group("system:masters"));
        assert!(!valid_group(" system:bootstrappers:a"));
    }

    #[test]
    fn constant_time_eq_compares_whole_values() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
        assert!(constant_time_eq(b"", b""));
    }
}
