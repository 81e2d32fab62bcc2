//! MutatingAdmissionPolicies, as kube's mutating dispatcher runs them:
//! every policy (by name) whose matchConstraints take the request, with
//! each of its bindings that takes it, once per param; its match
//! conditions, then its mutations in order, each evaluated against the
//! object as the mutations before it left it. An `ApplyConfiguration`'s
//! `Object{…}` is merged as server-side apply merges (atomic lists, maps
//! and structs refused); a `JSONPatch` list is applied as a PATCH request's
//! (a failed `test` changes nothing). Errors (configuration, evaluation,
//! patching) are decided by the policy's failurePolicy; the first one under
//! Fail is the request's 403, in kube's words: `policy 'p' with binding 'b'
//! denied request: …`. DELETE is never mutated.
//!
//! Reinvocation (kube's `policyReinvokeContext`): a policy with
//! reinvocationPolicy IfNeeded runs once more, in the chain's second pass,
//! when a later policy or mutating entry changed the object after it ran.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use kube_cel::cel::Value as CelValue;
use serde_json::Value;

use super::compile::{Binding, PatchType, Policy};
use super::evaluate::{self, Input, Outcome};
use super::{cel_value, off_loop, AdmissionPolicies, Denied, Environment, Run};
use crate::admission::config::FailurePolicy;
use crate::admission::review::ReviewRequest;
use crate::apimachinery::status::{ApiError, ApiResult};

/// One invocation: policy, binding and the param's position.
type Key = (String, String, usize);

/// What the chain keeps between its passes for the mutating policies.
#[derive(Default)]
pub struct Reinvocation {
    /// The IfNeeded invocations that ran.
    invoked: HashSet<Key>,
    /// Those to run again: something changed the object after them.
    marked: HashSet<Key>,
    /// The object as the policies last left it.
    last_output: Option<Value>,
}

impl Reinvocation {
    /// Whether the chain's second pass should run the policies again.
    pub fn wanted(&self, obj: &Value) -> bool {
        !self.marked.is_empty()
            || (!self.invoked.is_empty() && self.last_output.as_ref() != Some(obj))
    }

    fn mark_invoked(&mut self) {
        self.marked.extend(self.invoked.iter().cloned());
    }
}

impl AdmissionPolicies {
    /// Runs the MutatingAdmissionPolicies that take the request (all of
    /// them, or in the chain's second pass, `reinvoking`, those marked to
    /// run again); the object as they leave it.
    pub async fn mutate(
        &self,
        req: &ReviewRequest,
        obj: Value,
        old: Option<&Value>,
        warnings: &Mutex<Vec<String>>,
        (state, reinvoking): (&mut Reinvocation, bool),
    ) -> ApiResult<Value> {
        if req.operation == "DELETE" {
            return Ok(obj);
        }
        let (policies, bindings) = self.current().await;
        if policies.is_empty() {
            return Ok(obj);
        }
        let env = Environment {
            lookups: self.reader.as_ref(),
            auth: Some(self.auth.clone()),
        };
        let sets = (&policies[..], &bindings[..]);
        run_mutations(&env, sets, (req, obj, old), warnings, (state, reinvoking)).await
    }
}

/// kube's mutating dispatcher over `policies` and their `bindings`.
pub async fn run_mutations(
    env: &Environment<'_>,
    (policies, bindings): (&[Arc<Policy>], &[Arc<Binding>]),
    (req, obj, old): (&ReviewRequest, Value, Option<&Value>),
    warnings: &Mutex<Vec<String>>,
    (state, reinvoking): (&mut Reinvocation, bool),
) -> ApiResult<Value> {
    // What matching sees: the object as it came to the policies.
    let arrived = obj.clone();
    let mut run = Run {
        env,
        req,
        attrs: crate::admission::chain::attributes(req),
        obj: Some(&arrived),
        old,
        namespace: None,
        input: None,
        denied: Vec::new(),
        config_error: "Forbidden",
        warnings,
    };
    let mut invocations = Vec::new();
    for policy in policies {
        let mine = bindings.iter().filter(|b| b.policy == policy.name);
        for (binding, params) in run.invocations(policy, mine).await {
            for (index, param) in params.into_iter().enumerate() {
                invocations.push((policy, binding, index, param));
            }
        }
    }
    if reinvoking && state.last_output.as_ref() != Some(&obj) {
        state.mark_invoked();
    }
    let mut obj = obj;
    for (policy, binding, index, param) in invocations {
        let key = (policy.name.clone(), binding.name.clone(), index);
        if reinvoking && !state.marked.remove(&key) {
            continue;
        }
        let before = obj.clone();
        obj = run.invoke(policy, binding, &param, obj).await;
        if obj != before {
            state.mark_invoked();
        }
        if policy.reinvoke_if_needed {
            state.invoked.insert(key);
        }
    }
    state.last_output = Some(obj.clone());
    match run.denied.into_iter().next() {
        Some(d) => Err(denial(req, Some(&arrived), d)),
        None => Ok(obj),
    }
}

impl Run<'_> {
    /// One policy, binding and param: its match conditions against the
    /// object as it stands, then each mutation; failures are recorded.
    async fn invoke(
        &mut self,
        policy: &Policy,
        binding: &Binding,
        param: &CelValue,
        mut obj: Value,
    ) -> Value {
        let base = self.input(policy.reads_namespace).await;
        let input = |obj: &Value| Input {
            object: cel_value(Some(obj)),
            old_object: base.old_object.clone(),
            request: base.request.clone(),
            namespace_object: base.namespace_object.clone(),
            authorizer: base.authorizer.clone(),
        };
        let now = input(&obj);
        match off_loop(policy, || evaluate::conditions(policy, &now, param)) {
            Outcome::Skip => return obj,
            Outcome::Error(why) => {
                self.mutation_failed(policy, binding, why);
                return obj;
            }
            Outcome::Call => {}
        }
        let catalogue = self.env.lookups.catalogue();
        let schema = catalogue
            .lookup(&self.req.group, &self.req.version, &self.req.resource)
            .map(|r| r.schema_name.clone())
            .unwrap_or_default();
        for index in 0..policy.mutations.len() {
            let now = input(&obj);
            let result = off_loop(policy, || {
                let value = evaluate::mutation(policy, index, &now, param)?;
                patched(policy, index, &value, &obj, (&schema, catalogue.schemas()))
            });
            match result {
                Ok(Some(new)) => obj = new,
                Ok(None) => {}
                Err(why) => self.mutation_failed(policy, binding, why),
            }
        }
        obj
    }

    /// An evaluation or patch error: denied (reason Invalid) under
    /// failurePolicy Fail, else logged.
    fn mutation_failed(&mut self, policy: &Policy, binding: &Binding, message: String) {
        tracing::warn!(policy = %policy.name, binding = %binding.name, error = %message, "mutating admission policy failed");
        if policy.failure_policy == FailurePolicy::Fail {
            self.denied.push(Denied {
                policy: policy.name.clone(),
                binding: Some(binding.name.clone()),
                message,
                reason: "Invalid",
            });
        }
    }
}

/// `obj` with mutation `index`'s `value` applied (None: unchanged).
fn patched(
    policy: &Policy,
    index: usize,
    value: &CelValue,
    obj: &Value,
    (schema, schemas): (&str, &crate::catalogue::Schemas),
) -> Result<Option<Value>, String> {
    let mutation = &policy.mutations[index];
    if let Some(mismatch) = mutation
        .expression
        .literals
        .as_ref()
        .and_then(|l| l.mismatch())
    {
        return Err(mismatch.to_string());
    }
    let json = kube_cel::mutation::to_json(value).map_err(|e| format!("type mismatch: {e}"))?;
    match mutation.patch_type {
        PatchType::ApplyConfiguration => {
            crate::patch::merge_apply_configuration(obj, &json, schema, schemas)
                .map(Some)
                .map_err(|e| format!("error applying patch: {e}"))
        }
        PatchType::JsonPatch => {
            let Value::Array(ops) = json else {
                return Err(
                    "type mismatch: JSONPatchType.expression should evaluate to array".into(),
                );
            };
            let ops: Vec<serde_json::Map<String, Value>> = ops
                .into_iter()
                .filter_map(|op| match op {
                    Value::Object(op) => Some(op),
                    _ => None,
                })
                .collect();
            crate::patch::apply_policy_patch(obj, &ops).map_err(|e| format!("JSON Patch: {e}"))
        }
    }
}

/// kube's error for a failed mutating policy: `admission.NewForbidden`'s
/// status with the message replaced by the policy's (so without the
/// `... is forbidden:` prefix), its reason, code 403.
fn denial(req: &ReviewRequest, obj: Option<&Value>, d: Denied) -> ApiError {
    let message = match &d.binding {
        Some(b) => format!(
            "policy '{}' with binding '{b}' denied request: {}",
            d.policy, d.message
        ),
        None => format!("policy \"{}\" denied request: {}", d.policy, d.message),
    };
    let name = super::resource_name(req, obj);
    ApiError::policy_denied(&req.group, &req.resource, &name, &message, d.reason)
}
