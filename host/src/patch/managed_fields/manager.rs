//! The manager a write without `fieldManager` is recorded under: its
//! User-Agent up to the first `/` (kube's `prefixFromUserAgent`), without
//! unprintable characters, within the 128 bytes a fieldManager may have.

/// The longest manager name (kube's `FieldManagerMaxLength`).
const MAX_LENGTH: usize = 128;

/// `kubectl-create/v1.33.0 (linux/amd64) kubernetes/abc` → `kubectl-create`.
pub fn from_user_agent(user_agent: &str) -> String {
    let prefix = user_agent.split('/').next().unwrap_or_default();
    let mut out = String::new();
    for c in prefix.chars().filter(|c| !c.is_control()) {
        if out.len() + c.len_utf8() > MAX_LENGTH {
            break;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_part_before_the_first_slash() {
        assert_eq!(from_user_agent("curl/8.5.0"), "curl");
        assert_eq!(
            from_user_agent("kubectl-create/v1.33.0 (linux/amd64) kubernetes/abc"),
            "kubectl-create"
        );
        assert_eq!(from_user_agent(""), "");
        assert_eq!(from_user_agent("a\u{7}b/1"), "ab");
        assert_eq!(from_user_agent(&"x".repeat(300)).len(), 128);
    }
}
