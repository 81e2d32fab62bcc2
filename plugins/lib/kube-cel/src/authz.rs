//! kube's `authorizer` library for admission policies
//! (k8s.io/apiserver/pkg/cel/library/authz.go): `authorizer.group('apps')
//! .resource('deployments').namespace(ns).name(n).check('update')
//! .allowed()`, `authorizer.path('/healthz').check('get')`,
//! `authorizer.serviceAccount(ns, name)` (the same checks for that
//! account), `authorizer.requestResource` (the request's own resource) and
//! a decision's `allowed()`, `reason()`, `errored()`, `error()`. The checks
//! are answered by the embedder's [`Authorize`]; each costs kube's 350 000,
//! so an expression within kube's per-call limit makes at most two.

use std::cell::RefCell;
use std::sync::Arc;

use cel::extractors::Arguments;
use cel::objects::{Key, Map, Opaque};
use cel::{Context, ExecutionError, FunctionContext, Value};

/// kube's cost of one `check`.
const CHECK_COST: u64 = 350_000;

/// Who is asking: a user's name, groups, uid and extra.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub groups: Vec<String>,
}

/// One authorization question.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Check {
    pub user: Option<User>,
    pub verb: String,
    /// None for a path check.
    pub resource: Option<ResourceCheck>,
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourceCheck {
    pub group: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
}

/// The answer: allowed or not, why, and an error if the authorizer failed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Decision {
    pub allowed: bool,
    pub reason: String,
    pub error: Option<String>,
}

/// Answers checks (Capstan's authorizer chain in the host).
pub trait Authorize: Send + Sync {
    fn authorize(&self, check: &Check) -> Decision;
}

/// The value of `authorizer` (`None` user: the request's).
#[derive(Debug, PartialEq, Eq)]
struct Authorizer(Option<User>);

/// `authorizer.group(g)` and `.resource(r)` and beyond, before `check`.
#[derive(Debug, PartialEq, Eq)]
struct Pending {
    user: Option<User>,
    resource: Option<ResourceCheck>,
    path: String,
}

#[derive(Debug, PartialEq, Eq)]
struct Answered(Decision);

impl Opaque for Authorizer {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.authorization.Authorizer"
    }
}

impl Opaque for Pending {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.authorization.ResourceCheck"
    }
}

impl Opaque for Answered {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.authorization.Decision"
    }
}

/// The `authorizer` variable for a request on `request` (its resource),
/// with `authorizer.requestResource`.
pub fn variable(request: ResourceCheck) -> Value {
    let pending = Pending {
        user: None,
        resource: Some(request),
        path: String::new(),
    };
    let map = std::collections::HashMap::from([
        (
            Key::from("requestResource"),
            Value::Opaque(Arc::new(pending)),
        ),
        (
            Key::from("@authorizer"),
            Value::Opaque(Arc::new(Authorizer(None))),
        ),
    ]);
    Value::Map(Map { map: Arc::new(map) })
}

const NAMES: [&str; 12] = [
    "group",
    "resource",
    "subresource",
    "namespace",
    "name",
    "path",
    "serviceAccount",
    "check",
    "allowed",
    "reason",
    "errored",
    "error",
];

thread_local! {
    /// Who answers this thread's checks now (see [`with_authorizer`]).
    static CURRENT: RefCell<Option<Arc<dyn Authorize>>> = const { RefCell::new(None) };
}

/// Runs `f` (evaluations on this thread) with its checks answered by `by`.
pub fn with_authorizer<T>(by: Option<Arc<dyn Authorize>>, f: impl FnOnce() -> T) -> T {
    let outer = CURRENT.with(|c| c.replace(by));
    let result = f();
    CURRENT.with(|c| c.replace(outer));
    result
}

/// Adds the library's functions to a root context; they are answered by
/// the authorizer of [`with_authorizer`].
pub(crate) fn register(context: &mut Context<'static, 'static>) {
    for name in NAMES {
        let added = context.add_function(
            name,
            move |ftx: &FunctionContext, Arguments(args): Arguments| {
                let this = match &ftx.this {
                    Some(this) => Value::try_from(this.as_ref())?,
                    None => return Err(error(name, "no such overload")),
                };
                let by = CURRENT.with(|c| c.borrow().clone());
                let by = by.ok_or_else(|| error(name, "no authorizer is available"))?;
                call(name, &this, &args, by.as_ref())
            },
        );
        debug_assert!(added.is_ok(), "{name}: {added:?}");
    }
}

fn error(function: &str, message: &str) -> ExecutionError {
    ExecutionError::function_error(function, message)
}

fn string_arg(function: &str, args: &[Value], i: usize) -> Result<String, ExecutionError> {
    match args.get(i) {
        Some(Value::String(s)) => Ok(s.to_string()),
        _ => Err(error(function, "no such overload")),
    }
}

fn opaque<T: Opaque>(v: &Value) -> Option<&T> {
    match v {
        Value::Opaque(o) => (o.as_ref() as &dyn std::any::Any).downcast_ref::<T>(),
        _ => None,
    }
}

/// The authorizer a receiver stands for: `authorizer` itself (a map
/// holding it) or a service account's.
fn authorizer_of(this: &Value) -> Option<&Authorizer> {
    if let Value::Map(m) = this {
        return m
            .map
            .get(&Key::from("@authorizer"))
            .and_then(opaque::<Authorizer>);
    }
    opaque::<Authorizer>(this)
}

fn call(
    name: &str,
    this: &Value,
    args: &[Value],
    by: &dyn Authorize,
) -> Result<Value, ExecutionError> {
    let pending = |p: Pending| Ok(Value::Opaque(Arc::new(p)));
    if let Some(a) = authorizer_of(this) {
        return match name {
            "group" => pending(Pending {
                user: a.0.clone(),
                resource: Some(ResourceCheck {
                    group: string_arg(name, args, 0)?,
                    ..ResourceCheck::default()
                }),
                path: String::new(),
            }),
            "path" => pending(Pending {
                user: a.0.clone(),
                resource: None,
                path: string_arg(name, args, 0)?,
            }),
            "serviceAccount" => {
                let (ns, sa) = (string_arg(name, args, 0)?, string_arg(name, args, 1)?);
                Ok(Value::Opaque(Arc::new(Authorizer(Some(User {
                    name: format!("system:serviceaccount:{ns}:{sa}"),
                    groups: vec![
                        "system:serviceaccounts".into(),
                        format!("system:serviceaccounts:{ns}"),
                    ],
                })))))
            }
            _ => Err(error(name, "no such overload")),
        };
    }
    if let Some(p) = opaque::<Pending>(this) {
        return match (name, &p.resource) {
            ("check", _) => check(p, &string_arg(name, args, 0)?, by),
            (field @ ("resource" | "subresource" | "namespace" | "name"), Some(r)) => {
                let mut r = r.clone();
                let value = string_arg(name, args, 0)?;
                match field {
                    "resource" => r.resource = value,
                    "subresource" => r.subresource = value,
                    "namespace" => r.namespace = value,
                    _ => r.name = value,
                }
                pending(Pending {
                    user: p.user.clone(),
                    resource: Some(r),
                    path: String::new(),
                })
            }
            _ => Err(error(name, "no such overload")),
        };
    }
    if let Some(Answered(d)) = opaque::<Answered>(this) {
        return match name {
            "allowed" => Ok(Value::Bool(d.allowed)),
            "reason" => Ok(Value::from(d.reason.as_str())),
            "errored" => Ok(Value::Bool(d.error.is_some())),
            "error" => Ok(Value::from(d.error.as_deref().unwrap_or(""))),
            _ => Err(error(name, "no such overload")),
        };
    }
    Err(error(name, "no such overload"))
}

fn check(p: &Pending, verb: &str, by: &dyn Authorize) -> Result<Value, ExecutionError> {
    crate::runtime::charge("check", CHECK_COST)?;
    let question = Check {
        user: p.user.clone(),
        verb: verb.to_string(),
        resource: p.resource.clone(),
        path: p.path.clone(),
    };
    Ok(Value::Opaque(Arc::new(Answered(by.authorize(&question)))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Allows `get`, denies the rest; remembers what it was asked.
    #[derive(Default)]
    struct Fake(Mutex<Vec<Check>>);

    impl Authorize for Fake {
        fn authorize(&self, check: &Check) -> Decision {
            self.0.lock().unwrap().push(check.clone());
            Decision {
                allowed: check.verb == "get",
                reason: format!("asked {}", check.verb),
                error: None,
            }
        }
    }

    fn eval(fake: &Arc<Fake>, expression: &str) -> Result<Value, String> {
        let program = crate::compile(expression).unwrap();
        let by: Arc<dyn Authorize> = fake.clone();
        with_authorizer(Some(by), || {
            crate::with_scope(|mut scope| {
                let request = ResourceCheck {
                    group: "apps".into(),
                    resource: "deployments".into(),
                    namespace: "ns".into(),
                    name: "web".into(),
                    ..ResourceCheck::default()
                };
                scope.add_variable_from_value("authorizer", variable(request));
                let (result, _) =
                    crate::metered(crate::Budget::per_call(), || program.execute(&scope));
                result.map_err(|e| e.to_string())
            })
        })
    }

    #[test]
    fn checks_carry_kubes_attributes_and_answers() {
        let fake = Arc::new(Fake::default());
        let e = "authorizer.group('apps').resource('deployments').subresource('scale').namespace('ns').name('web').check('get').allowed()";
        assert_eq!(eval(&fake, e), Ok(Value::Bool(true)));
        let asked = fake.0.lock().unwrap().pop().unwrap();
        assert_eq!(
            (
                asked.user,
                asked.verb.as_str(),
                asked.resource.unwrap().subresource.as_str()
            ),
            (None, "get", "scale")
        );
        let e = "authorizer.serviceAccount('ns', 'sa').path('/healthz').check('post').reason()";
        assert_eq!(eval(&fake, e), Ok(Value::from("asked post")));
        let asked = fake.0.lock().unwrap().pop().unwrap();
        assert_eq!(asked.path, "/healthz");
        assert_eq!(asked.user.unwrap().name, "system:serviceaccount:ns:sa");
        let e = "authorizer.requestResource.check('delete').errored() || authorizer.requestResource.check('update').allowed()";
        assert_eq!(eval(&fake, e), Ok(Value::Bool(false)));
        assert_eq!(
            fake.0
                .lock()
                .unwrap()
                .last()
                .unwrap()
                .resource
                .as_ref()
                .unwrap()
                .name,
            "web"
        );
    }

    #[test]
    fn a_third_check_in_one_expression_is_past_the_per_call_limit() {
        let fake = Arc::new(Fake::default());
        let check = "authorizer.group('').resource('pods').check('get').allowed()";
        let e = format!("{check} && {check} && {check}");
        let err = eval(&fake, &e).unwrap_err();
        assert!(err.contains(crate::runtime::COST_LIMIT_EXCEEDED), "{err}");
        assert_eq!(fake.0.lock().unwrap().len(), 2);
    }
}
