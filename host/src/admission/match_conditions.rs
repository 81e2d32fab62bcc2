//! CEL matchConditions of webhooks (and of configuration entries, with the
//! same meaning): after rules and selectors matched, every condition must be
//! true for the entry to be called. A false condition skips the entry even
//! when another could not be evaluated; otherwise an evaluation error is the
//! entry's failure (its failurePolicy decides).
//!
//! Variables, as in kube-apiserver: `object` (null for DELETE), `oldObject`
//! (null for CREATE) and `request` (the AdmissionRequest: kind, resource,
//! subResource, name, namespace, operation, userInfo, dryRun, …). The CEL
//! standard library and kube's libraries (`kube-cel`: quantity, lists,
//! regex, url, ip/cidr, strings) are available; the `authorizer` variable is
//! not (using it is an evaluation error).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use kube_cel::cel::Program;
use serde_json::Value;

/// Who answers `authorizer` checks, and the request's own resource.
pub type Authorizer = (
    Arc<dyn kube_cel::authz::Authorize>,
    kube_cel::authz::ResourceCheck,
);

/// kube-apiserver's limit per webhook.
const MAX_CONDITIONS: usize = 64;

/// One named, compiled condition.
#[derive(Clone)]
struct Condition {
    name: String,
    text: String,
    program: Arc<Program>,
}

/// The conditions of one entry (empty: always called).
#[derive(Clone, Default)]
pub struct MatchConditions(Vec<Condition>);

impl std::fmt::Debug for MatchConditions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|c| c.name.as_str()).collect();
        f.debug_tuple("MatchConditions").field(&names).finish()
    }
}

/// What an entry's conditions say about one request.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    Call,
    Skip,
    /// A condition could not be evaluated (and none was false).
    Error(String),
}

impl MatchConditions {
    /// Parses and compiles `[{name, expression}, …]`; an error names the
    /// condition and the compiler's message.
    pub fn parse(conditions: Option<&Value>) -> Result<MatchConditions, String> {
        let Some(list) = conditions.filter(|v| !v.is_null()) else {
            return Ok(MatchConditions::default());
        };
        let list = list
            .as_array()
            .ok_or("matchConditions must be a list of {name, expression}")?;
        if list.len() > MAX_CONDITIONS {
            return Err(format!(
                "matchConditions: Too many: {}: must have at most {MAX_CONDITIONS} items",
                list.len()
            ));
        }
        list.iter()
            .enumerate()
            .map(|(i, c)| compile_one(i, c))
            .collect::<Result<Vec<_>, _>>()
            .map(MatchConditions)
    }

    /// The conditions' compiled programs.
    pub fn programs(&self) -> impl Iterator<Item = &Program> {
        self.0.iter().map(|c| c.program.as_ref())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Evaluates every condition against `object`, `oldObject` and
    /// `request`, with `authorizer` when one is given.
    pub fn evaluate(
        &self,
        object: &Value,
        old_object: &Value,
        request: &Value,
        authorizer: Option<Authorizer>,
    ) -> Outcome {
        let (by, request_resource) = authorizer.unzip();
        kube_cel::authz::with_authorizer(by, || {
            kube_cel::with_scope(|mut context| {
                for (name, value) in [
                    ("object", object),
                    ("oldObject", old_object),
                    ("request", request),
                ] {
                    context.add_variable_from_value(name, kube_cel::json_value(value));
                }
                if let Some(r) = request_resource {
                    context.add_variable_from_value("authorizer", kube_cel::authz::variable(r));
                }
                self.evaluate_in(&context)
            })
        })
    }

    /// Evaluates every condition in `context` (its variables bound): a
    /// false one skips, else the first error is the outcome (webhooks').
    pub fn evaluate_in(&self, context: &kube_cel::cel::Context) -> Outcome {
        self.evaluate_with(context, |c, why, _| {
            format!("failed evaluating match condition {:?}: {why}", c.name)
        })
        .map_err(|mut errors| errors.swap_remove(0))
        .unwrap_or_else(Outcome::Error)
    }

    /// [`MatchConditions::evaluate_in`] as kube's admission policies word
    /// it: every error, `expression '…' resulted in error: …` (two or
    /// more as `[a, b]`).
    pub fn evaluate_for_policy(&self, context: &kube_cel::cel::Context) -> Outcome {
        self.evaluate_with(context, |c, _, kube| {
            format!("expression '{}' resulted in error: {kube}", c.text)
        })
        .unwrap_or_else(|errors| match errors.len() {
            1 => Outcome::Error(errors.join("")),
            _ => Outcome::Error(format!("[{}]", errors.join(", "))),
        })
    }

    /// Call or Skip; Err with the errors when none was false, each worded
    /// by `word` from the error's own text and kube's.
    fn evaluate_with(
        &self,
        context: &kube_cel::cel::Context,
        word: impl Fn(&Condition, &str, &str) -> String,
    ) -> Result<Outcome, Vec<String>> {
        let mut errors = Vec::new();
        // Each condition within kube's per-call limit, enforced inside the
        // evaluator, and the request's deadline.
        let budget = kube_cel::Budget {
            deadline: crate::cpu::deadline(),
            ..kube_cel::Budget::per_call()
        };
        for condition in &self.0 {
            let (result, spent) = kube_cel::metered(budget, || condition.program.execute(context));
            if spent.exceeded || spent.interrupted {
                let why = kube_cel::runtime::COST_LIMIT_EXCEEDED;
                errors.push(word(condition, why, why));
                continue;
            }
            match result {
                Ok(kube_cel::cel::Value::Bool(true)) => {}
                Ok(kube_cel::cel::Value::Bool(false)) => return Ok(Outcome::Skip),
                Ok(other) => errors.push(format!(
                    "match condition {:?} must evaluate to bool, not {other:?}",
                    condition.name
                )),
                Err(e) => {
                    let kube = kube_cel::evaluation_error(&e);
                    errors.push(word(condition, &e.to_string(), &kube));
                }
            }
        }
        match errors.is_empty() {
            true => Ok(Outcome::Call),
            false => Err(errors),
        }
    }
}

fn compile_one(index: usize, condition: &Value) -> Result<Condition, String> {
    let field = format!("matchConditions[{index}]");
    let name = condition
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| format!("{field}.name: Required value"))?;
    let expression = condition
        .get("expression")
        .and_then(Value::as_str)
        .filter(|e| !e.trim().is_empty())
        .ok_or_else(|| format!("{field}.expression: Required value"))?;
    let program = compiled(expression).map_err(|e| {
        format!("{field}.expression: Invalid value: {expression:?}: compilation failed: {e}")
    })?;
    Ok(Condition {
        name: name.to_string(),
        text: expression.to_string(),
        program,
    })
}

/// Compiled programs by expression: webhook entries are rebuilt per request.
static COMPILED: LazyLock<Mutex<HashMap<String, Arc<Program>>>> = LazyLock::new(Default::default);
const MAX_COMPILED: usize = 4096;

/// `expression` compiled, from the cache of compiled programs when seen before.
pub fn compiled(expression: &str) -> Result<Arc<Program>, String> {
    let mut cache = COMPILED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(program) = cache.get(expression) {
        return Ok(program.clone());
    }
    let program = Arc::new(kube_cel::compile(expression)?);
    if cache.len() >= MAX_COMPILED {
        cache.clear();
    }
    cache.insert(expression.to_string(), program.clone());
    Ok(program)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn conditions(list: Value) -> MatchConditions {
        MatchConditions::parse(Some(&list)).unwrap()
    }

    fn request(user: &str) -> Value {
        json!({"operation": "CREATE", "userInfo": {"username": user}, "resource": {"group": "", "version": "v1", "resource": "configmaps"}})
    }

    #[test]
    fn all_true_calls_and_one_false_skips() {
        let c = conditions(json!([
            {"name": "not-admin", "expression": "request.userInfo.username != 'admin'"},
            {"name": "labelled", "expression": "has(object.metadata.labels) && 'team' in object.metadata.labels"},
        ]));
        let labelled = json!({"metadata": {"labels": {"team": "a"}}});
        assert_eq!(
            c.evaluate(&labelled, &Value::Null, &request("bob"), None),
            Outcome::Call
        );
        assert_eq!(
            c.evaluate(&labelled, &Value::Null, &request("admin"), None),
            Outcome::Skip
        );
        let bare = json!({"metadata": {}});
        assert_eq!(
            c.evaluate(&bare, &Value::Null, &request("bob"), None),
            Outcome::Skip
        );
    }

    #[test]
    fn a_false_condition_wins_over_an_error() {
        let c = conditions(json!([
            {"name": "broken", "expression": "object.metadata.labels.missing == 'x'"},
            {"name": "never", "expression": "false"},
        ]));
        let obj = json!({"metadata": {"labels": {}}});
        assert_eq!(
            c.evaluate(&obj, &Value::Null, &request("bob"), None),
            Outcome::Skip
        );
    }

    #[test]
    fn errors_and_non_booleans_name_the_condition() {
        let c = conditions(
            json!([{"name": "broken", "expression": "object.metadata.labels.missing == 'x'"}]),
        );
        let obj = json!({"metadata": {"labels": {}}});
        match c.evaluate(&obj, &Value::Null, &request("bob"), None) {
            Outcome::Error(why) => assert!(why.contains("\"broken\""), "{why}"),
            other => panic!("{other:?}"),
        }
        let c = conditions(json!([{"name": "number", "expression": "1 + 1"}]));
        assert!(matches!(
            c.evaluate(&obj, &Value::Null, &request("bob"), None),
            Outcome::Error(_)
        ));
    }

    #[test]
    fn bad_expressions_and_missing_fields_are_rejected_when_parsed() {
        let err =
            MatchConditions::parse(Some(&json!([{"name": "x", "expression": "!("}]))).unwrap_err();
        assert!(
            err.starts_with("matchConditions[0].expression: Invalid value"),
            "{err}"
        );
        let err = MatchConditions::parse(Some(&json!([{"expression": "true"}]))).unwrap_err();
        assert_eq!(err, "matchConditions[0].name: Required value");
        let many: Vec<Value> = (0..65)
            .map(|i| json!({"name": format!("c{i}"), "expression": "true"}))
            .collect();
        assert!(MatchConditions::parse(Some(&Value::Array(many))).is_err());
    }

    #[test]
    fn kube_libraries_are_available() {
        let c = conditions(json!([
            {"name": "small", "expression": "quantity(object.spec.memory).isLessThan(quantity('1Gi'))"},
            {"name": "https", "expression": "url(object.spec.endpoint).getScheme() == 'https'"},
            {"name": "private", "expression": "cidr('10.0.0.0/8').containsIP(object.spec.ip)"},
        ]));
        let obj = |memory: &str| json!({"spec": {"memory": memory, "endpoint": "https://example.com:8443/x", "ip": "10.1.2.3"}});
        assert_eq!(
            c.evaluate(&obj("512Mi"), &Value::Null, &request("bob"), None),
            Outcome::Call
        );
        assert_eq!(
            c.evaluate(&obj("2Gi"), &Value::Null, &request("bob"), None),
            Outcome::Skip
        );
        match c.evaluate(&obj("lots"), &Value::Null, &request("bob"), None) {
            Outcome::Error(why) => assert!(why.contains("quantities must match"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn delete_requests_see_a_null_object() {
        let c = conditions(
            json!([{"name": "deleting", "expression": "object == null && oldObject.metadata.name == 'x'"}]),
        );
        let old = json!({"metadata": {"name": "x"}});
        assert_eq!(
            c.evaluate(&Value::Null, &old, &request("bob"), None),
            Outcome::Call
        );
    }
}
