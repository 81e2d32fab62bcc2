//! A bundle's CEL policies: besides Wasm components, a policy of a bundle
//! may be a ValidatingAdmissionPolicy with its bindings (none: one with
//! `validationActions: [Deny]`), so one signed artifact ships both kinds.
//!
//! In a source folder the policy names a YAML file:
//!
//! ```yaml
//! policies:
//!   - name: replica-limit
//!     admissionPolicy: replica-limit.yaml   # the policy and its bindings
//! ```
//!
//! `capstan policy build` checks it (one ValidatingAdmissionPolicy, only its
//! own bindings, every expression compiles) and stores it as a layer of its
//! own ([`super::ADMISSION_POLICY_MEDIA_TYPE`]: `{"policy": …, "bindings":
//! […]}`, JSON). Loaded by a PolicyBundle it runs at the bundle's
//! `policies: validating` marker with the PolicyBundle's mode, through the
//! server's own dispatcher (`admission::cel_policy::run_policies`) behind
//! the same review-in, answer-out transport as a component; `capstan policy
//! test` runs it offline against the same fixtures.

use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::anyhow;
use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::fixture_cluster::{resource_of_kind, FixtureCluster};
use super::fixtures::{Case, Verdict};
use crate::admission::cel_policy::compile::{Binding, ParamKind, Policy};
use crate::admission::cel_policy::{run_policies, Environment, Lookups};
use crate::admission::matcher::Rule;
use crate::admission::review::ReviewRequest;
use crate::transport::ReviewTransport;

/// A policy file's bound (and a layer's).
pub const MAX_POLICY_BYTES: u64 = 1 << 20;
/// At most this many bindings of one policy.
const MAX_BINDINGS: usize = 64;

/// One ValidatingAdmissionPolicy and its bindings, compiled.
pub struct Bundled {
    pub policy: Arc<Policy>,
    pub bindings: Vec<Arc<Binding>>,
    /// matchConstraints' rules (without resource names): the requests the
    /// chain hands it; the dispatcher matches exactly.
    pub rules: Vec<Rule>,
}

/// The layer of a source policy file: its policy and bindings checked,
/// as JSON.
pub fn layer_from_file(name: &str, path: &Path) -> anyhow::Result<Vec<u8>> {
    let objects = FixtureCluster::read_objects(path)?;
    let layer = layer_of(objects).map_err(|e| anyhow!("policy {name}: {e}"))?;
    parse_layer(&layer).map_err(|e| anyhow!("policy {name}: {e}"))?;
    Ok(layer)
}

fn layer_of(objects: Vec<Value>) -> Result<Vec<u8>, String> {
    let is = |o: &Value, kind: &str| {
        o["apiVersion"] == "admissionregistration.k8s.io/v1" && o["kind"] == kind
    };
    let (policies, rest): (Vec<Value>, Vec<Value>) = objects
        .into_iter()
        .partition(|o| is(o, "ValidatingAdmissionPolicy"));
    let [policy] = <[Value; 1]>::try_from(policies).map_err(|found| {
        format!(
            "the file must hold one admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy, it holds {}",
            found.len()
        )
    })?;
    let name = policy.pointer("/metadata/name").and_then(Value::as_str);
    let mut bindings = Vec::new();
    for o in rest {
        if !is(&o, "ValidatingAdmissionPolicyBinding") {
            return Err(format!(
                "the file may hold only the policy and its ValidatingAdmissionPolicyBindings, not a {} {}",
                o["apiVersion"], o["kind"]
            ));
        }
        if o.pointer("/spec/policyName").and_then(Value::as_str) != name {
            return Err("a binding in the file binds another policy".into());
        }
        bindings.push(o);
    }
    serde_json::to_vec(&json!({"policy": policy, "bindings": bindings})).map_err(|e| e.to_string())
}

/// A layer read back: the policy must compile, the bindings be its own.
pub fn parse_layer(bytes: &[u8]) -> Result<Bundled, String> {
    if bytes.len() as u64 > MAX_POLICY_BYTES {
        return Err(format!("more than {MAX_POLICY_BYTES} bytes"));
    }
    let layer: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("not an admission policy layer: {e}"))?;
    let policy = Policy::read(&layer["policy"]);
    if let Some(why) = &policy.error {
        return Err(format!("ValidatingAdmissionPolicy {}: {why}", policy.name));
    }
    if let Some(why) = compile_error(&policy) {
        return Err(format!("ValidatingAdmissionPolicy {}: {why}", policy.name));
    }
    let listed = layer["bindings"].as_array().cloned().unwrap_or_default();
    if listed.len() > MAX_BINDINGS {
        return Err(format!("more than {MAX_BINDINGS} bindings"));
    }
    let mut bindings: Vec<Arc<Binding>> =
        listed.iter().map(|b| Arc::new(Binding::read(b))).collect();
    if bindings.iter().any(|b| b.policy != policy.name) {
        return Err("a binding binds another policy".into());
    }
    if bindings.is_empty() {
        bindings.push(Arc::new(default_binding(&policy.name)));
    }
    let rules = policy
        .constraints
        .rules
        .iter()
        .map(|r| r.rule.clone())
        .collect();
    Ok(Bundled {
        policy: Arc::new(policy),
        bindings,
        rules,
    })
}

/// The binding a policy without one runs with.
pub fn default_binding(policy: &str) -> Binding {
    Binding::read(&json!({
        "metadata": {"name": policy},
        "spec": {"policyName": policy, "validationActions": ["Deny"]},
    }))
}

/// The first expression of `policy` that does not compile.
fn compile_error(policy: &Policy) -> Option<String> {
    let expressions = policy
        .variables
        .iter()
        .map(|(_, e)| e)
        .chain(
            policy
                .validations
                .iter()
                .flat_map(|v| std::iter::once(&v.expression).chain(v.message_expression.as_ref())),
        )
        .chain(policy.audit_annotations.iter().map(|a| &a.value));
    expressions.into_iter().find_map(|e| {
        let why = e.program.as_ref().err()?;
        Some(format!("{:?}: compilation failed: {why}", e.text))
    })
}

/// What `bundled` answers to an AdmissionReview: its response, as a
/// built-in policy's (the denial's status as the dispatcher words it).
pub async fn answer(bundled: &Bundled, review: &Value, env: &Environment<'_>) -> Value {
    let request = &review["request"];
    let uid = request["uid"].clone();
    let Some(req) = ReviewRequest::from_request(request) else {
        let status = json!({"code": 400, "reason": "BadRequest",
                            "message": "the review's request has no known operation"});
        return json!({"uid": uid, "allowed": false, "status": status});
    };
    let present = |v: &Value| (!v.is_null()).then_some(v.clone());
    let (obj, old) = (present(&request["object"]), present(&request["oldObject"]));
    let warnings = Mutex::new(Vec::new());
    let policies = [bundled.policy.clone()];
    let sets = (&policies[..], &bundled.bindings[..]);
    let verdict = run_policies(env, sets, (&req, obj.as_ref(), old.as_ref()), &warnings).await;
    let warnings = warnings.into_inner().unwrap_or_default();
    match verdict {
        Ok(()) => json!({"uid": uid, "allowed": true, "warnings": warnings}),
        Err(e) => {
            let mut status = json!({"code": e.code, "reason": e.reason, "message": e.message});
            if let Some(details) = e.details {
                status["details"] = *details;
            }
            json!({"uid": uid, "allowed": false, "status": status, "warnings": warnings})
        }
    }
}

/// A bundled CEL policy behind the chain's transport: review in, answer out.
pub struct CelTransport {
    pub bundled: Arc<Bundled>,
    /// Where params and namespaces are read.
    pub lookups: Arc<dyn Lookups>,
    /// Who answers `authorizer` checks (None: they fail).
    pub auth: Option<Arc<crate::auth::Auth>>,
}

impl ReviewTransport for CelTransport {
    fn call<'a>(&'a self, review: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let review: Value =
                serde_json::from_str(review).map_err(|e| format!("the review is not JSON: {e}"))?;
            let env = Environment {
                lookups: self.lookups.as_ref(),
                auth: self.auth.clone(),
            };
            let response = answer(&self.bundled, &review, &env).await;
            let out = json!({
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "response": response,
            });
            Ok(out.to_string())
        })
    }
}

/// A fixture case's objects, as bundled and file policies read them
/// offline (`capstan policy test`).
pub struct Offline {
    pub cluster: Arc<FixtureCluster>,
}

impl Lookups for Offline {
    fn reader(&self) -> &dyn crate::wasm::ObjectReader {
        self.cluster.as_ref()
    }

    fn resource_of(&self, kind: &ParamKind) -> Option<(String, bool)> {
        Some(resource_of_kind(&kind.group, &kind.version, &kind.kind))
    }

    fn catalogue(&self) -> Arc<crate::catalogue::Catalogue> {
        Arc::new(crate::catalogue::Catalogue::builtin())
    }
}

/// What `bundled` answers a fixture case offline (`authorizer` checks
/// fail: their `errored()` is true).
pub(crate) async fn offline_verdict(
    bundled: &Bundled,
    case: &Case,
    cluster: Arc<FixtureCluster>,
) -> Verdict {
    let lookups = Offline { cluster };
    let env = Environment {
        lookups: &lookups,
        auth: None,
    };
    let response = answer(bundled, &case.review, &env).await;
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    match response["allowed"].as_bool() == Some(true) {
        true => {
            let warned: Vec<String> = response["warnings"]
                .as_array()
                .into_iter()
                .flatten()
                .map(text)
                .collect();
            Verdict {
                allowed: true,
                message: warned.join("; "),
                note: if warned.is_empty() {
                    ""
                } else {
                    " with warnings"
                },
                object: None,
            }
        }
        false => Verdict {
            allowed: false,
            message: text(&response["status"]["message"]),
            ..Verdict::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(expression: &str) -> Value {
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
               "metadata": {"name": "p"},
               "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": ["apps"],
                   "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"]}]},
                   "validations": [{"expression": expression}]}})
    }

    fn binding(policy: &str) -> Value {
        json!({"apiVersion": "admissionregistration.k8s.io/v1",
               "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "b"},
               "spec": {"policyName": policy, "validationActions": ["Warn"]}})
    }

    #[test]
    fn a_layer_holds_one_policy_and_only_its_bindings() {
        let layer = layer_of(vec![policy("object.spec.replicas <= 5")]).unwrap();
        let bundled = parse_layer(&layer).unwrap();
        assert_eq!(bundled.bindings[0].name, "p", "the default binding");
        assert!(bundled.bindings[0].deny);
        assert_eq!(bundled.rules[0].resources, ["deployments"]);
        let with_binding = layer_of(vec![policy("true"), binding("p")]).unwrap();
        assert!(parse_layer(&with_binding).unwrap().bindings[0].warn);

        let two = layer_of(vec![policy("true"), policy("true")]).unwrap_err();
        assert!(two.contains("it holds 2"), "{two}");
        let other = layer_of(vec![policy("true"), binding("q")]).unwrap_err();
        assert!(other.contains("binds another policy"), "{other}");
        let stray = layer_of(vec![
            policy("true"),
            json!({"apiVersion": "v1", "kind": "Pod"}),
        ]);
        assert!(stray.unwrap_err().contains("not a \"v1\" \"Pod\""));
        let broken = layer_of(vec![policy("object.spec.replicas <=")]).unwrap();
        let err = parse_layer(&broken).err().unwrap();
        assert!(err.contains("compilation failed"), "{err}");
    }
}
