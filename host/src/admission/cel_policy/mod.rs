//! The API's CEL admission policies and their bindings, evaluated in the
//! host: MutatingAdmissionPolicies (`mutating.rs`, where the chain has a
//! `builtin:mutating-admission-policy` entry; by default kube's position,
//! before the mutating webhooks) and ValidatingAdmissionPolicies
//! (admissionregistration.k8s.io/v1, at `builtin:validating-admission-policy`,
//! before the validating webhooks), as kube's dispatcher does:
//! each policy whose matchConstraints take the request, with each of its
//! bindings whose matchResources take it, once per param the binding's
//! paramRef finds. A failed validation acts as the binding's
//! validationActions say: Deny (the first denial is the request's error,
//! in kube's words and with the validation's reason), Warn (a Warning
//! header) or Audit (an audit annotation, logged). An expression that
//! cannot be evaluated, or a binding that cannot be configured, is decided
//! by the policy's failurePolicy.
//!
//! Policies and bindings are read through a watch and compiled once per
//! change (`compile.rs`); params and namespaces are read from the watch
//! cache (`params.rs`); the evaluation (`evaluate.rs`) runs through
//! `cpu::for_request`.

mod authorizer;
pub mod compile;
pub mod evaluate;
pub mod mutating;
mod params;
pub use params::Lookups;
pub mod type_check;

use std::sync::{Arc, Mutex};

use kube_cel::cel::Value as CelValue;
use serde_json::{json, Value};

use self::compile::{Binding, MatchResources, NamedRule, Policy};
use self::evaluate::{Annotation, Decision, Evaluation, Input};
use super::config::{FailurePolicy, Phase};
use super::matcher::{labels_of, RequestAttributes};
use super::review::ReviewRequest;
use super::watched::{list, Watched};
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
use crate::registry::store_reader::StoreReader;

const GROUP: &str = "admissionregistration.k8s.io";

/// The API's admission policies of one kind (Validating or Mutating) and
/// their bindings, as last changed.
pub struct AdmissionPolicies {
    reader: Arc<StoreReader>,
    /// What `authorizer` checks ask.
    auth: Arc<crate::auth::Auth>,
    policies_res: ResourceInfo,
    bindings_res: ResourceInfo,
    policies: Watched<Vec<Arc<Policy>>>,
    bindings: Watched<Vec<Arc<Binding>>>,
    read: fn(&Value) -> Policy,
}

/// A denial (or a failure under failurePolicy Fail), for the error.
struct Denied {
    policy: String,
    binding: Option<String>,
    message: String,
    reason: &'static str,
}

impl AdmissionPolicies {
    /// The policies of `phase`'s kind, if the catalogue serves them
    /// (MutatingAdmissionPolicies only behind their feature gate).
    pub fn new(
        reader: Arc<StoreReader>,
        auth: Arc<crate::auth::Auth>,
        phase: Phase,
    ) -> Option<AdmissionPolicies> {
        let (kind, versions, read): (_, &[&str], fn(&Value) -> Policy) = match phase {
            Phase::Validating => ("validating", &["v1"], Policy::read),
            Phase::Mutating => ("mutating", &["v1beta1", "v1alpha1"], Policy::read_mutating),
        };
        let catalogue = reader.catalogue.get();
        let lookup = |plural: &str| {
            let found = versions
                .iter()
                .find_map(|v| catalogue.lookup(GROUP, v, plural));
            found.cloned()
        };
        let policies_res = lookup(&format!("{kind}admissionpolicies"))?;
        let bindings_res = lookup(&format!("{kind}admissionpolicybindings"))?;
        Some(AdmissionPolicies {
            policies: Watched::follow(&reader.registry, &policies_res),
            bindings: Watched::follow(&reader.registry, &bindings_res),
            reader,
            auth,
            policies_res,
            bindings_res,
            read,
        })
    }

    /// The policies (by name) and bindings (by name) in effect.
    async fn current(&self) -> (Vec<Arc<Policy>>, Vec<Arc<Binding>>) {
        let policies = match self.policies.current() {
            Some(s) => s.built(read_all(self.read)).clone(),
            None => read_all(self.read)(&self.listed(&self.policies_res).await),
        };
        if policies.is_empty() {
            return (policies, Vec::new());
        }
        let bindings = match self.bindings.current() {
            Some(s) => s.built(read_all(Binding::read)).clone(),
            None => read_all(Binding::read)(&self.listed(&self.bindings_res).await),
        };
        (policies, bindings)
    }

    async fn listed(&self, res: &ResourceInfo) -> Vec<Value> {
        list(&self.reader.registry, res).await.unwrap_or_else(|e| {
            tracing::warn!(resource = %res.plural, error = %e, "could not read admission policies");
            Vec::new()
        })
    }

    /// Runs every policy that takes the request; the first denial is the
    /// error, warnings go to `warnings`.
    pub async fn validate(
        &self,
        req: &ReviewRequest,
        obj: Option<&Value>,
        old: Option<&Value>,
        warnings: &Mutex<Vec<String>>,
    ) -> ApiResult<()> {
        let (policies, bindings) = self.current().await;
        if policies.is_empty() {
            return Ok(());
        }
        let env = Environment {
            lookups: self.reader.as_ref(),
            auth: Some(self.auth.clone()),
        };
        run_policies(&env, (&policies, &bindings), (req, obj, old), warnings).await
    }
}

/// Where a run of policies reads, and who answers `authorizer` (None: a
/// check is an error the expression sees).
pub struct Environment<'a> {
    pub lookups: &'a dyn Lookups,
    pub auth: Option<Arc<crate::auth::Auth>>,
}

/// kube's dispatcher over `policies` and their `bindings` for one request;
/// the first denial is the error, warnings go to `warnings`.
pub async fn run_policies(
    env: &Environment<'_>,
    (policies, bindings): (&[Arc<Policy>], &[Arc<Binding>]),
    (req, obj, old): (&ReviewRequest, Option<&Value>, Option<&Value>),
    warnings: &Mutex<Vec<String>>,
) -> ApiResult<()> {
    let mut run = Run {
        env,
        req,
        attrs: super::chain::attributes(req),
        obj,
        old,
        namespace: None,
        input: None,
        denied: Vec::new(),
        config_error: "Invalid",
        warnings,
    };
    for policy in policies {
        let mine = bindings.iter().filter(|b| b.policy == policy.name);
        for (binding, params) in run.invocations(policy, mine).await {
            run.validate(policy, binding, params).await;
        }
    }
    match run.denied.into_iter().next() {
        Some(d) => Err(denial(req, obj, old, d)),
        None => Ok(()),
    }
}

fn read_all<T>(read: fn(&Value) -> T) -> impl Fn(&[Value]) -> Vec<Arc<T>> {
    move |items| {
        let mut items: Vec<&Value> = items.iter().collect();
        items.sort_by_key(|o| o.pointer("/metadata/name").and_then(Value::as_str));
        items.into_iter().map(|o| Arc::new(read(o))).collect()
    }
}

/// One request's pass over the policies.
struct Run<'a> {
    env: &'a Environment<'a>,
    req: &'a ReviewRequest,
    attrs: RequestAttributes,
    obj: Option<&'a Value>,
    old: Option<&'a Value>,
    /// The request's namespace, read once when first needed.
    namespace: Option<Option<Value>>,
    /// The CEL variables, converted once when first needed (again if a
    /// later policy reads the namespace the first one did not).
    input: Option<(Arc<Input>, bool)>,
    denied: Vec<Denied>,
    /// The reason of a configuration error's denial (kube's validating
    /// dispatcher says Invalid, its generic one Forbidden).
    config_error: &'static str,
    warnings: &'a Mutex<Vec<String>>,
}

impl Run<'_> {
    /// The bindings of `policy` that take the request, each with the params
    /// it runs with; configuration errors are recorded on the way.
    async fn invocations<'b>(
        &mut self,
        policy: &Policy,
        bindings: impl Iterator<Item = &'b Arc<Binding>>,
    ) -> Vec<(&'b Binding, Vec<CelValue>)> {
        let mut out = Vec::new();
        if !self.matches(&policy.constraints, true).await {
            return out;
        }
        if let Some(why) = &policy.error {
            let message = format!("failed to configure policy: {why}");
            self.failed(policy, None, message);
            return out;
        }
        for binding in bindings {
            if let Some(params) = self.binding_params(policy, binding).await {
                out.push((binding.as_ref(), params));
            }
        }
        out
    }

    /// The params `binding` runs `policy` with, if it takes the request.
    async fn binding_params(
        &mut self,
        policy: &Policy,
        binding: &Binding,
    ) -> Option<Vec<CelValue>> {
        if let Some(m) = &binding.match_resources {
            if !self.matches(m, false).await {
                return None;
            }
        }
        if let Some(why) = &binding.error {
            let message = format!("failed to configure binding: {why}");
            self.failed(policy, Some(binding), message);
            return None;
        }
        match params::collect(self.env.lookups, policy, binding, self.req).await {
            Ok(p) if p.is_empty() => None,
            Ok(p) => Some(p),
            Err(why) => {
                let message = format!("failed to configure binding: {why}");
                self.failed(policy, Some(binding), message);
                None
            }
        }
    }

    /// Evaluates a ValidatingAdmissionPolicy for each param.
    async fn validate(&mut self, policy: &Policy, binding: &Binding, params: Vec<CelValue>) {
        let input = self.input(policy.reads_namespace).await;
        for param in params {
            let evaluation = off_loop(policy, || evaluate::evaluate(policy, &input, &param));
            self.apply(policy, binding, evaluation);
        }
    }

    /// A configuration error: denied under failurePolicy Fail, else nothing.
    fn failed(&mut self, policy: &Policy, binding: Option<&Binding>, message: String) {
        tracing::warn!(policy = %policy.name, binding = ?binding.map(|b| &b.name), error = %message, "admission policy failed");
        if policy.failure_policy == FailurePolicy::Fail {
            self.denied.push(Denied {
                policy: policy.name.clone(),
                binding: binding.map(|b| b.name.clone()),
                message,
                reason: self.config_error,
            });
        }
    }

    /// What one evaluation's decisions do, by the binding's actions.
    fn apply(&mut self, policy: &Policy, binding: &Binding, evaluation: Evaluation) {
        let fail = policy.failure_policy == FailurePolicy::Fail;
        let (decisions, annotations) = match evaluation {
            Evaluation::Skipped => return,
            Evaluation::Failed(why) => (vec![Decision::Error(why)], Vec::new()),
            Evaluation::Done {
                decisions,
                annotations,
            } => (decisions, annotations),
        };
        for (index, decision) in decisions.into_iter().enumerate() {
            let (message, reason) = match decision {
                Decision::Admit => continue,
                Decision::Error(why) if !fail => {
                    tracing::warn!(policy = %policy.name, binding = %binding.name, error = %why, "admission policy expression failed and was ignored");
                    continue;
                }
                Decision::Error(why) => (why, "Invalid"),
                Decision::Deny { message, reason } => (message, reason),
            };
            self.act(policy, binding, index, message, reason);
        }
        for annotation in annotations {
            match annotation {
                Annotation::Publish { key, value } => {
                    let key = format!("{}/{key}", policy.name);
                    tracing::info!(%key, %value, "admission policy audit annotation");
                    crate::audit::annotate(&key, &value);
                }
                Annotation::Error(why) if fail => self.denied.push(Denied {
                    policy: policy.name.clone(),
                    binding: Some(binding.name.clone()),
                    message: why,
                    reason: "Invalid",
                }),
                Annotation::Error(_) => {}
            }
        }
    }

    fn act(
        &mut self,
        policy: &Policy,
        binding: &Binding,
        index: usize,
        message: String,
        reason: &'static str,
    ) {
        if binding.audit {
            let value = json!([{
                "message": message,
                "policy": policy.name,
                "binding": binding.name,
                "expressionIndex": index,
                "validationActions": binding.actions,
            }]);
            let key = "validation.policy.admission.k8s.io/validation_failure";
            tracing::info!(key, value = %value, "admission policy audit annotation");
            crate::audit::annotate(key, &value.to_string());
        }
        if binding.warn {
            let warning = format!(
                "Validation failed for ValidatingAdmissionPolicy '{}' with binding '{}': {message}",
                policy.name, binding.name
            );
            if let Ok(mut w) = self.warnings.lock() {
                w.push(warning);
            }
        }
        if binding.deny {
            self.denied.push(Denied {
                policy: policy.name.clone(),
                binding: Some(binding.name.clone()),
                message,
                reason,
            });
        }
    }

    /// kube's matching: namespace and object selectors, excluded rules,
    /// then the rules (none: everything, for a binding's matchResources).
    async fn matches(&mut self, m: &MatchResources, rules_required: bool) -> bool {
        let object_ok = m.object_selector.is_everything()
            || m.object_selector.matches(&labels_of(self.obj))
            || m.object_selector.matches(&labels_of(self.old));
        if !object_ok || m.excluded.iter().any(|r| self.rule_matches(r)) {
            return false;
        }
        let rules_ok = if m.rules.is_empty() {
            !rules_required
        } else {
            m.rules.iter().any(|r| self.rule_matches(r))
        };
        if !rules_ok {
            return false;
        }
        if m.namespace_selector.is_everything() {
            return true;
        }
        match self.namespace_labels().await {
            Some(labels) => m.namespace_selector.matches(&labels),
            None => true, // cluster-scoped: namespaceSelector does not apply
        }
    }

    fn rule_matches(&self, r: &NamedRule) -> bool {
        r.rule.matches(&self.attrs) && (r.names.is_empty() || r.names.contains(&self.req.name))
    }

    fn is_namespace(&self) -> bool {
        self.req.kind_group.is_empty() && self.req.kind == "Namespace"
    }

    /// The labels the namespaceSelector sees: the namespace's own for a
    /// namespace, the request's namespace's, None when cluster-scoped.
    async fn namespace_labels(&mut self) -> Option<serde_json::Map<String, Value>> {
        if self.is_namespace() || (self.req.group.is_empty() && self.req.resource == "namespaces") {
            return Some(labels_of(self.obj.or(self.old)));
        }
        self.req.namespace.as_ref()?;
        Some(labels_of(self.namespace().await.as_ref()))
    }

    async fn namespace(&mut self) -> Option<Value> {
        if self.namespace.is_none() {
            let read = match &self.req.namespace {
                Some(ns) if !self.is_namespace() => params::namespace(self.env.lookups, ns).await,
                _ => None,
            };
            self.namespace = Some(read);
        }
        self.namespace.clone().flatten()
    }

    async fn input(&mut self, with_namespace: bool) -> Arc<Input> {
        if let Some((input, has_namespace)) = &self.input {
            if *has_namespace || !with_namespace {
                return input.clone();
            }
        }
        let namespace = match with_namespace {
            true => self.namespace().await,
            false => None,
        };
        let (req, obj, old) = (self.req, self.obj, self.old);
        let authorizer = self.env.auth.clone().map(|auth| authorizer_for(auth, req));
        let input = crate::cpu::for_request(|| {
            Arc::new(Input {
                object: cel_value(obj),
                old_object: cel_value(old),
                request: cel_value(Some(&req.request_value())),
                namespace_object: cel_value(namespace.as_ref().map(namespace_object).as_ref()),
                authorizer,
            })
        });
        self.input = Some((input.clone(), with_namespace));
        input
    }
}

/// Runs a policy's CEL off the async workers when it may be heavy: a
/// loop's cost grows with the object, whatever the request's size.
fn off_loop<T>(policy: &Policy, work: impl FnOnce() -> T) -> T {
    match policy.loops {
        true => crate::cpu::heavy(work),
        false => crate::cpu::for_request(work),
    }
}

/// The `authorizer` of expressions about `req`: its user's checks answered
/// by `auth`'s authorizer chain, and its resource.
pub fn authorizer_for(
    auth: Arc<crate::auth::Auth>,
    req: &ReviewRequest,
) -> super::match_conditions::Authorizer {
    let by = authorizer::ChainAuthorizer {
        auth,
        user: req.user.clone(),
    };
    (Arc::new(by), request_resource(req))
}

/// `authorizer.requestResource`: the request's resource.
fn request_resource(req: &ReviewRequest) -> kube_cel::authz::ResourceCheck {
    kube_cel::authz::ResourceCheck {
        group: req.group.clone(),
        resource: req.resource.clone(),
        subresource: req.subresource.clone(),
        namespace: req.namespace.clone().unwrap_or_default(),
        name: req.name.clone(),
    }
}

/// kube's `CreateNamespaceObject`: the namespace without managedFields.
fn namespace_object(ns: &Value) -> Value {
    let mut ns = ns.clone();
    if let Some(meta) = ns.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    ns
}

pub fn cel_value(v: Option<&Value>) -> CelValue {
    v.map_or(CelValue::Null, kube_cel::json_value)
}

/// kube's `admission.NewForbidden` with the denial's reason and code.
fn denial(req: &ReviewRequest, obj: Option<&Value>, old: Option<&Value>, d: Denied) -> ApiError {
    let message = match &d.binding {
        Some(b) => format!(
            "ValidatingAdmissionPolicy '{}' with binding '{b}' denied request: {}",
            d.policy, d.message
        ),
        None => format!(
            "ValidatingAdmissionPolicy '{}' denied request: {}",
            d.policy, d.message
        ),
    };
    let name = resource_name(req, obj.or(old));
    ApiError::admission_forbidden(&req.group, &req.resource, &name, &message, d.reason)
}

/// kube's `extractResourceName`: the request's name, else the object's
/// name or generateName, else "Unknown".
pub(super) fn resource_name(req: &ReviewRequest, obj: Option<&Value>) -> String {
    if !req.name.is_empty() {
        return req.name.clone();
    }
    let meta = |key: &str| {
        obj.and_then(|o| o.pointer(&format!("/metadata/{key}")))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(String::from)
    };
    meta("name")
        .or_else(|| meta("generateName"))
        .unwrap_or_else(|| "Unknown".to_string())
}
