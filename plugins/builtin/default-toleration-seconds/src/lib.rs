//! Built-in admission plugin `default-toleration-seconds`, kube-apiserver's
//! DefaultTolerationSeconds: pods that do not tolerate the `not-ready` and
//! `unreachable` NoExecute taints get tolerations for them with
//! `tolerationSeconds` (300 unless configured), so they are evicted from a
//! failed node after five minutes.
//!
//! Configuration (both optional), like kube's flags
//! `--default-not-ready-toleration-seconds` / `--default-unreachable-toleration-seconds`:
//! `{"defaultNotReadyTolerationSeconds": 300, "defaultUnreachableTolerationSeconds": 300}`.

use capstan_plugin_sdk::{
    host, json, object, AdmissionPlugin, AdmissionRequest, AdmissionResponse, JsonPatch, Value,
};
use serde::Deserialize;

const NOT_READY: &str = "node.kubernetes.io/not-ready";
const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// The plugin's configuration.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Config {
    #[serde(default = "five_minutes")]
    default_not_ready_toleration_seconds: i64,
    #[serde(default = "five_minutes")]
    default_unreachable_toleration_seconds: i64,
}

fn five_minutes() -> i64 {
    300
}

/// The plugin.
pub struct DefaultTolerationSeconds;

impl AdmissionPlugin for DefaultTolerationSeconds {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let Some(pod) = req.written_object("", "pods") else {
            return Ok(AdmissionResponse::allow());
        };
        let config: Config = host::config()?;
        let tolerations = object::array(pod, &["spec", "tolerations"]);
        let mut missing = Vec::new();
        if !tolerates(tolerations, NOT_READY) {
            missing.push(toleration(
                NOT_READY,
                config.default_not_ready_toleration_seconds,
            ));
        }
        if !tolerates(tolerations, UNREACHABLE) {
            missing.push(toleration(
                UNREACHABLE,
                config.default_unreachable_toleration_seconds,
            ));
        }
        Ok(AdmissionResponse::allow().with_patch(append(pod, missing).ops()))
    }
}

/// A toleration with an empty key tolerates every taint; an empty effect every effect.
fn tolerates(tolerations: &[Value], key: &str) -> bool {
    tolerations.iter().any(|t| {
        let t_key = t.get("key").and_then(Value::as_str).unwrap_or("");
        let effect = t.get("effect").and_then(Value::as_str).unwrap_or("");
        (t_key == key || t_key.is_empty()) && (effect == "NoExecute" || effect.is_empty())
    })
}

fn toleration(key: &str, seconds: i64) -> Value {
    json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds})
}

fn append(pod: &Value, missing: Vec<Value>) -> JsonPatch {
    let has_list = object::get(pod, &["spec", "tolerations"]).is_some_and(Value::is_array);
    if missing.is_empty() {
        JsonPatch::new()
    } else if has_list {
        missing.into_iter().fold(JsonPatch::new(), |p, t| {
            p.add(["spec", "tolerations", "-"], t)
        })
    } else {
        JsonPatch::new().add(["spec", "tolerations"], Value::Array(missing))
    }
}

capstan_plugin_sdk::admission_plugin!(DefaultTolerationSeconds);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::testing;
    use capstan_plugin_sdk::Operation;

    fn review(pod: Value) -> (AdmissionResponse, Value) {
        let req = testing::request(Operation::Create, "v1", "pods", "Pod", "ns", pod.clone());
        let r = DefaultTolerationSeconds::review(&req).unwrap();
        let out = testing::apply_patch(&pod, &r).unwrap();
        (r, out)
    }

    #[test]
    fn adds_both_tolerations_with_300_seconds() {
        testing::reset();
        let (_, out) = review(json!({"metadata": {"name": "p"}, "spec": {"containers": []}}));
        assert_eq!(
            out["spec"]["tolerations"],
            json!([
                {"key": NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ])
        );
    }

    #[test]
    fn keeps_existing_and_appends_only_the_missing_one() {
        testing::reset();
        let mine = json!({"key": NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10});
        let other = json!({"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"});
        let (_, out) = review(json!({"spec": {"tolerations": [mine.clone(), other.clone()]}}));
        let list = out["spec"]["tolerations"].as_array().unwrap();
        assert_eq!(list.len(), 3);
        assert_eq!(list[0], mine);
        assert_eq!(list[1], other);
        assert_eq!(list[2]["key"], UNREACHABLE);
    }

    #[test]
    fn wildcard_toleration_means_nothing_to_add() {
        testing::reset();
        let (r, _) = review(json!({"spec": {"tolerations": [{"operator": "Exists"}]}}));
        assert!(r.allowed && r.patch.is_none());
    }

    #[test]
    fn configured_seconds_are_used_and_bad_config_fails() {
        testing::reset();
        testing::set_config(json!({"defaultNotReadyTolerationSeconds": 60}));
        let (_, out) = review(json!({"spec": {}}));
        assert_eq!(out["spec"]["tolerations"][0]["tolerationSeconds"], 60);
        assert_eq!(out["spec"]["tolerations"][1]["tolerationSeconds"], 300);
        testing::set_config(json!({"notReady": 1}));
        let req = testing::request(
            Operation::Create,
            "v1",
            "pods",
            "Pod",
            "ns",
            json!({"spec": {}}),
        );
        assert!(DefaultTolerationSeconds::review(&req).is_err());
    }

    #[test]
    fn non_pods_are_ignored() {
        testing::reset();
        let req = testing::request(
            Operation::Create,
            "v1",
            "services",
            "Service",
            "ns",
            json!({"spec": {}}),
        );
        assert!(DefaultTolerationSeconds::review(&req)
            .unwrap()
            .patch
            .is_none());
    }
}
