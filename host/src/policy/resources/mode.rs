//! A PolicyBundle's mode, applied to each answer of its policies: Enforce
//! denies as the policy says; Warn allows and turns the denial into a
//! warning; Audit allows and records the violation (a log line at info).
//! The message a client sees names the policy as `<PolicyBundle>/<policy>`:
//! `policy baseline/disallow-latest-tag: pods "p" is forbidden: ...`.
//! Outside Enforce a mutating policy's patch is dropped (it would change
//! what Warn and Audit promise to leave alone). Every call is measured
//! (`metrics.rs`): its verdict per mode, or its failure's kind, and its time.

use super::metrics::PolicyMetrics;
use crate::transport::ReviewTransport;
use crate::wasm::PluginFailure;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
pub enum Mode {
    #[default]
    Enforce,
    Warn,
    Audit,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Enforce => "Enforce",
            Mode::Warn => "Warn",
            Mode::Audit => "Audit",
        }
    }
}

/// A policy's transport with its PolicyBundle's mode applied to the answer.
pub struct ModeTransport {
    pub inner: Arc<dyn ReviewTransport>,
    /// `<PolicyBundle>/<policy>`.
    pub policy: String,
    pub mode: Mode,
    pub metrics: Arc<PolicyMetrics>,
}

impl ReviewTransport for ModeTransport {
    fn call<'a>(&'a self, review: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let started = Instant::now();
            let answer = self.inner.call(review).await;
            self.metrics.timed(&self.policy, started.elapsed());
            match answer {
                Ok(answer) => Ok(self.apply(review, answer)),
                Err(e) => {
                    let kind = PluginFailure::kind_of_message(&e);
                    self.metrics.failed(&self.policy, kind);
                    tracing::warn!(policy = %self.policy, kind, error = %e, "policy call failed");
                    Err(e)
                }
            }
        })
    }
}

impl ModeTransport {
    /// The answer as the mode makes it; an answer that is not an
    /// AdmissionReview is left for the chain to refuse.
    pub fn apply(&self, review: &str, answer: String) -> String {
        let Ok(mut doc) = serde_json::from_str::<Value>(&answer) else {
            return answer;
        };
        let Some(resp) = doc.get_mut("response").and_then(Value::as_object_mut) else {
            return answer;
        };
        if self.mode != Mode::Enforce {
            resp.remove("patch");
            resp.remove("patchType");
        }
        if resp.get("allowed") != Some(&Value::Bool(false)) {
            self.metrics.decided(&self.policy, "allowed", self.mode);
            return if self.mode == Mode::Enforce {
                answer
            } else {
                doc.to_string()
            };
        }
        self.metrics.decided(&self.policy, "denied", self.mode);
        let said = resp
            .get("status")
            .and_then(|s| s.get("message"))
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
            .unwrap_or("denied the request without explanation");
        let message = format!("policy {}: {said}", self.policy);
        match self.mode {
            Mode::Enforce => {
                let status = resp
                    .entry("status")
                    .or_insert_with(|| Value::Object(Default::default()));
                if let Some(status) = status.as_object_mut() {
                    status.insert("message".into(), Value::String(message));
                }
            }
            Mode::Warn => {
                allow(resp);
                let warnings = resp
                    .entry("warnings")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Some(w) = warnings.as_array_mut() {
                    w.push(Value::String(message));
                }
            }
            Mode::Audit => {
                allow(resp);
                self.audit(review, &message);
            }
        }
        doc.to_string()
    }

    /// The audit record of a violation: the request's audit event's
    /// annotation `policies.capstan.dev/<bundle>.<policy>`, a log line, and
    /// a PolicyReport soon.
    fn audit(&self, review: &str, message: &str) {
        self.metrics.violations.notify_one();
        let key = format!("policies.capstan.dev/{}", self.policy.replace('/', "."));
        crate::audit::annotate(&key, message);
        let req: Value = serde_json::from_str::<Value>(review)
            .ok()
            .and_then(|mut r| r.get_mut("request").map(Value::take))
            .unwrap_or_default();
        let text = |p: &str| {
            req.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let (bundle, policy) = self.policy.split_once('/').unwrap_or((&self.policy, ""));
        tracing::info!(
            bundle = %bundle,
            policy = %policy,
            uid = %text("/uid"),
            operation = %text("/operation"),
            resource = %text("/resource/resource"),
            namespace = %text("/namespace"),
            name = %text("/name"),
            violation = %message,
            "policy violation audited"
        );
    }
}

fn allow(resp: &mut serde_json::Map<String, Value>) {
    resp.insert("allowed".into(), Value::Bool(true));
    resp.remove("status");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Deny;

    impl ReviewTransport for Deny {
        fn call<'a>(&'a self, _review: &'a str) -> BoxFuture<'a, Result<String, String>> {
            Box::pin(async {
                Ok(json!({"response": {"uid": "u", "allowed": false,
                    "patch": "W10=", "patchType": "JSONPatch",
                    "status": {"code": 403, "reason": "Forbidden", "message": "pods \"p\" is forbidden: latest"}}})
                .to_string())
            })
        }
    }

    fn transport(mode: Mode, counters: &Arc<PolicyMetrics>) -> ModeTransport {
        ModeTransport {
            inner: Arc::new(Deny),
            policy: "baseline/disallow-latest-tag".into(),
            mode,
            metrics: counters.clone(),
        }
    }

    async fn answer(mode: Mode, counters: &Arc<PolicyMetrics>) -> Value {
        let review = json!({"request": {"uid": "u", "name": "p", "namespace": "default"}});
        let text = transport(mode, counters)
            .call(&review.to_string())
            .await
            .unwrap();
        serde_json::from_str(&text).unwrap()
    }

    const SAID: &str = "policy baseline/disallow-latest-tag: pods \"p\" is forbidden: latest";

    #[tokio::test]
    async fn enforce_denies_naming_the_policy() {
        let counters = Arc::default();
        let a = answer(Mode::Enforce, &counters).await;
        assert_eq!(a["response"]["allowed"], false);
        assert_eq!(a["response"]["status"]["message"], SAID);
        assert_eq!(a["response"]["status"]["code"], 403);
        assert_eq!(
            counters.get("baseline/disallow-latest-tag", "denied", Mode::Enforce),
            1
        );
    }

    #[tokio::test]
    async fn warn_allows_with_the_message_as_a_warning() {
        let counters = Arc::default();
        let a = answer(Mode::Warn, &counters).await;
        assert_eq!(a["response"]["allowed"], true);
        assert_eq!(a["response"]["warnings"], json!([SAID]));
        assert!(a["response"].get("status").is_none());
        assert!(
            a["response"].get("patch").is_none(),
            "no patch outside Enforce"
        );
        assert_eq!(
            counters.get("baseline/disallow-latest-tag", "denied", Mode::Warn),
            1
        );
    }

    #[tokio::test]
    async fn audit_allows_without_a_warning_and_counts() {
        let counters = Arc::default();
        let a = answer(Mode::Audit, &counters).await;
        assert_eq!(a["response"]["allowed"], true);
        assert!(a["response"].get("warnings").is_none());
        assert!(a["response"].get("patch").is_none());
        use futures_util::FutureExt;
        assert!(
            counters.violations.notified().now_or_never().is_some(),
            "the background audit is told of the violation"
        );
        answer(Mode::Audit, &counters).await;
        assert_eq!(
            counters.get("baseline/disallow-latest-tag", "denied", Mode::Audit),
            2
        );
        assert_eq!(
            counters.get("baseline/disallow-latest-tag", "denied", Mode::Enforce),
            0
        );
    }

    #[test]
    fn answers_that_are_not_reviews_are_left_alone() {
        let counters = Arc::default();
        let t = transport(Mode::Warn, &counters);
        assert_eq!(t.apply("{}", "garbage".into()), "garbage");
    }
}
