//! `capstan policy test POLICIES.yaml FIXTURES`: plain
//! Validating- and MutatingAdmissionPolicy YAML (policies, their bindings,
//! and any other objects, such as params) against the same fixtures as a
//! bundle's policies (`fixtures.rs`), offline: the harness kubectl users
//! lack for admission policies. A mutating policy's case may say what the
//! mutated object must contain (`object:`). A case names a policy; it runs with that policy's
//! bindings of the file (none: one binding with `validationActions:
//! [Deny]`), params and namespaces found among the file's other objects and
//! the case's `<case>.cluster.yaml`, through the server's own dispatcher
//! (`admission::cel_policy::run_policies`), so verdicts and messages are the
//! server's. `authorizer` checks fail offline (their `errored()` is true).

use std::path::Path;
use std::sync::Arc;

use anyhow::anyhow;
use serde_json::Value;

use super::admission_policies::{default_binding, offline_verdict, Bundled};
use super::fixture_cluster::FixtureCluster;
use super::fixtures::{judge, Case, Outcome, Verdict};
use crate::admission::cel_policy::compile::{Binding, Policy};

/// The policies, bindings and other objects of one YAML file.
pub struct CelPolicies {
    policies: Vec<Arc<Policy>>,
    bindings: Vec<Arc<Binding>>,
    mutating: Vec<Arc<Policy>>,
    mutating_bindings: Vec<Arc<Binding>>,
    objects: Vec<Value>,
}

/// Whether `path` names admission-policy YAML rather than a bundle.
pub fn is_policy_yaml(path: &str) -> bool {
    let p = Path::new(path);
    p.is_file() && p.extension().is_some_and(|e| e == "yaml" || e == "yml")
}

impl CelPolicies {
    pub fn read(path: &Path) -> anyhow::Result<CelPolicies> {
        let objects = FixtureCluster::read_objects(path)?;
        let kind = |o: &Value| o["kind"].as_str().unwrap_or_default().to_string();
        let (mut policies, mut bindings, mut rest) = (Vec::new(), Vec::new(), Vec::new());
        let (mut mutating, mut mutating_bindings) = (Vec::new(), Vec::new());
        for o in objects {
            match kind(&o).as_str() {
                "ValidatingAdmissionPolicy" => policies.push(Arc::new(Policy::read(&o))),
                "ValidatingAdmissionPolicyBinding" => bindings.push(Arc::new(Binding::read(&o))),
                "MutatingAdmissionPolicy" => mutating.push(Arc::new(Policy::read_mutating(&o))),
                "MutatingAdmissionPolicyBinding" => {
                    mutating_bindings.push(Arc::new(Binding::read(&o)))
                }
                _ => rest.push(o),
            }
        }
        if policies.is_empty() && mutating.is_empty() {
            return Err(anyhow!(
                "{}: no ValidatingAdmissionPolicy or MutatingAdmissionPolicy",
                path.display()
            ));
        }
        Ok(CelPolicies {
            policies,
            bindings,
            mutating,
            mutating_bindings,
            objects: rest,
        })
    }

    pub fn len(&self) -> usize {
        self.policies.len() + self.mutating.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Runs every case.
    pub async fn run(&self, cases: &[Case]) -> anyhow::Result<Vec<Outcome>> {
        let mut out = Vec::with_capacity(cases.len());
        for case in cases {
            let verdict = self.verdict(case).await?;
            out.push(judge(case, verdict));
        }
        Ok(out)
    }

    async fn verdict(&self, case: &Case) -> anyhow::Result<Result<Verdict, String>> {
        let name = &case.expect.policy;
        if let Some(policy) = self.mutating.iter().find(|p| &p.name == name) {
            let bindings = bindings_of(&self.mutating_bindings, name);
            let cluster = case.cluster.extended(&self.objects)?;
            return Ok(mutated(policy, bindings, case, cluster).await);
        }
        let Some(policy) = self.policies.iter().find(|p| &p.name == name) else {
            return Ok(Err(format!("the file has no admission policy {name:?}")));
        };
        let bindings = bindings_of(&self.bindings, name);
        let bundled = Bundled {
            policy: policy.clone(),
            bindings,
            rules: Vec::new(),
        };
        let cluster = case.cluster.extended(&self.objects)?;
        Ok(Ok(offline_verdict(&bundled, case, cluster).await))
    }
}

/// The bindings of policy `name` (none: the default one).
fn bindings_of(all: &[Arc<Binding>], name: &str) -> Vec<Arc<Binding>> {
    let mut bindings: Vec<Arc<Binding>> =
        all.iter().filter(|b| b.policy == name).cloned().collect();
    if bindings.is_empty() {
        bindings.push(Arc::new(default_binding(name)));
    }
    bindings
}

/// A MutatingAdmissionPolicy's verdict: the object as it leaves it, or
/// its error.
async fn mutated(
    policy: &Arc<Policy>,
    bindings: Vec<Arc<Binding>>,
    case: &Case,
    cluster: Arc<FixtureCluster>,
) -> Result<Verdict, String> {
    use crate::admission::cel_policy::mutating::{run_mutations, Reinvocation};
    use crate::admission::cel_policy::Environment;
    let request = &case.review["request"];
    let req = crate::admission::review::ReviewRequest::from_request(request)
        .ok_or("the review's request has no known operation")?;
    let obj = request["object"].clone();
    if obj.is_null() {
        return Err("a mutating admission policy needs the review's object".into());
    }
    let old = Some(&request["oldObject"]).filter(|o| !o.is_null());
    let lookups = super::admission_policies::Offline { cluster };
    let env = Environment {
        lookups: &lookups,
        auth: None,
    };
    let warnings = std::sync::Mutex::new(Vec::new());
    let policies = [policy.clone()];
    let mut state = Reinvocation::default();
    let sets = (&policies[..], &bindings[..]);
    let run = run_mutations(&env, sets, (&req, obj, old), &warnings, (&mut state, false)).await;
    Ok(match run {
        Ok(object) => Verdict {
            allowed: true,
            object: Some(object),
            ..Verdict::default()
        },
        Err(e) => Verdict {
            allowed: false,
            message: e.message,
            ..Verdict::default()
        },
    })
}
