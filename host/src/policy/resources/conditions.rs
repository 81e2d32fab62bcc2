//! A PolicyBundle load's outcome (its steps: Pulled, Verified; its result)
//! and the status it gives the PolicyBundle. Every message is cut to
//! [`MAX_MESSAGE`] characters (kube's condition message bound is 32 KiB;
//! ours is smaller so a status and a log line stay readable), whatever
//! produced it.

use super::loaded::Refusal;
use crate::apimachinery::conditions::set_condition;
use crate::apimachinery::meta;
use serde_json::{json, Value};

/// A condition's (and a refusal's) message is cut to this many characters.
pub const MAX_MESSAGE: usize = 2048;

/// A refusal, its message cut to [`MAX_MESSAGE`].
pub fn refusal(reason: &'static str, message: String) -> Refusal {
    Refusal {
        reason,
        message: crate::policy::bundles::clip(&message, MAX_MESSAGE),
    }
}

/// One step's condition (Pulled, Verified).
#[derive(Clone, Debug)]
pub struct Step {
    pub ok: bool,
    pub reason: &'static str,
    pub message: String,
}

/// A step, its message cut to [`MAX_MESSAGE`].
pub fn step(ok: bool, reason: &'static str, message: String) -> Step {
    Step {
        ok,
        reason,
        message: crate::policy::bundles::clip(&message, MAX_MESSAGE),
    }
}

/// What a load did: its steps and its result (the digest and policies in effect).
pub struct Outcome {
    pub source: String,
    pub pulled: Option<Step>,
    pub verified: Option<Step>,
    /// The digest of the bundle read and checked (None: not read).
    pub loaded: Option<String>,
    pub result: Result<(String, Vec<String>), Refusal>,
}

impl Default for Outcome {
    fn default() -> Outcome {
        Outcome {
            source: String::new(),
            pulled: None,
            verified: None,
            loaded: None,
            result: Err(refusal("InternalError", "not loaded".into())),
        }
    }
}

/// The status after a load of `generation`: Pulled, Verified, Loaded
/// (the bundle read, its digests checked), Compiled (the selected policies
/// built; Unknown when the bundle was not read) and Ready conditions; after a refusal, the digest and policies of the state
/// still in effect.
pub fn desired_status(old: Option<&Value>, generation: i64, outcome: &Outcome) -> Value {
    let mut status = old.cloned().unwrap_or(json!({}));
    status["observedGeneration"] = json!(generation);
    let condition = |kind: &str, ok: bool, reason: &str, message: &str| {
        let verdict = match (ok, reason) {
            (true, "NotRequired" | "BundleNotRead") => "Unknown",
            (true, _) => "True",
            (false, _) => "False",
        };
        let message = crate::policy::bundles::clip(message, MAX_MESSAGE);
        json!({"type": kind, "status": verdict,
               "reason": reason, "message": message,
               "lastTransitionTime": meta::now(), "observedGeneration": generation})
    };
    for (kind, s) in [("Pulled", &outcome.pulled), ("Verified", &outcome.verified)] {
        if let Some(s) = s {
            set_condition(&mut status, condition(kind, s.ok, s.reason, &s.message));
        }
    }
    let loaded = match &outcome.loaded {
        Some(digest) => step(
            true,
            "Loaded",
            format!("bundle {digest}: every blob's digest checked"),
        ),
        None => match &outcome.result {
            Err(r) => step(false, r.reason, r.message.clone()),
            Ok(_) => step(true, "Loaded", String::new()),
        },
    };
    set_condition(
        &mut status,
        condition("Loaded", loaded.ok, loaded.reason, &loaded.message),
    );
    let compiled = match (&outcome.result, &outcome.loaded) {
        (Ok((_, policies)), _) => step(
            true,
            "Compiled",
            format!("compiled: {}", policies.join(", ")),
        ),
        (Err(r), Some(_)) => step(false, r.reason, r.message.clone()),
        (Err(_), None) => step(true, "BundleNotRead", "the bundle was not read".to_string()),
    };
    set_condition(
        &mut status,
        condition("Compiled", compiled.ok, compiled.reason, &compiled.message),
    );
    match &outcome.result {
        Ok((digest, policies)) => {
            status["digest"] = json!(digest);
            status["source"] = json!(outcome.source);
            status["policies"] = json!(policies);
            let ready = format!("in effect: {}", policies.join(", "));
            set_condition(
                &mut status,
                condition("Ready", true, "PoliciesInEffect", &ready),
            );
        }
        Err(r) => {
            let kept = match status.get("digest").and_then(Value::as_str) {
                Some(d) => format!("{}; the previous bundle ({d}) stays in effect", r.message),
                None => format!("{}; none of its policies are in effect", r.message),
            };
            set_condition(&mut status, condition("Ready", false, r.reason, &kept));
        }
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conditions(status: &Value) -> Vec<(String, String, String)> {
        status["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let s = |k: &str| c[k].as_str().unwrap().to_string();
                (s("type"), s("status"), s("reason"))
            })
            .collect()
    }

    #[test]
    fn a_refusal_keeps_the_previous_bundle_and_says_so() {
        let good = Outcome {
            loaded: Some("sha256:aa".to_string()),
            result: Ok(("sha256:aa".to_string(), vec!["b/p".to_string()])),
            ..Outcome::default()
        };
        let first = desired_status(None, 1, &good);
        assert_eq!(
            conditions(&first),
            [
                ("Loaded".into(), "True".into(), "Loaded".into()),
                ("Compiled".into(), "True".into(), "Compiled".into()),
                ("Ready".into(), "True".into(), "PoliciesInEffect".into())
            ]
        );
        let uncompiled = Outcome {
            loaded: Some("sha256:cc".to_string()),
            result: Err(refusal("InvalidSettings", "policy p: settings: bad".into())),
            ..Outcome::default()
        };
        assert_eq!(
            conditions(&desired_status(Some(&first), 2, &uncompiled)),
            [
                ("Loaded".into(), "True".into(), "Loaded".into()),
                ("Compiled".into(), "False".into(), "InvalidSettings".into()),
                ("Ready".into(), "False".into(), "InvalidSettings".into())
            ]
        );
        let bad = Outcome {
            result: Err(refusal(
                "InvalidBundle",
                "bundle x.tar: blob sha256:bb: tampered".into(),
            )),
            ..Outcome::default()
        };
        let second = desired_status(Some(&first), 2, &bad);
        assert_eq!(second["observedGeneration"], 2);
        assert_eq!(second["digest"], "sha256:aa");
        assert_eq!(
            conditions(&second)[1],
            ("Compiled".into(), "Unknown".into(), "BundleNotRead".into())
        );
        assert_eq!(
            second["conditions"][2]["message"],
            "bundle x.tar: blob sha256:bb: tampered; the previous bundle (sha256:aa) stays in effect"
        );
        assert_eq!(second["conditions"][2]["reason"], "InvalidBundle");
        let never = desired_status(None, 1, &bad);
        assert!(never["conditions"][2]["message"]
            .as_str()
            .unwrap()
            .ends_with("none of its policies are in effect"));
    }
}
