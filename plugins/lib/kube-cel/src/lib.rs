//! Kubernetes' CEL libraries (k8s.io/apiserver/pkg/cel/library) on top of
//! the `cel` crate, for every CEL user of Capstan: the host's
//! matchConditions, and CRD validation rules and admission policies, in the
//! host or in a plugin (it builds for wasm32-wasip2).
//!
//! - [`env`]: a new environment with the CEL standard library, cel-go's
//!   strings extension (as kube enables it), and the overloads of kube's
//!   that share a name with it or the standard library (`list.indexOf`,
//!   `string(ip)`, …).
//! - [`context`]: a root context over [`env`] with kube's functions:
//!   quantity, lists, regex, url, ip, cidr, semver, format and sets. Bind the
//!   variables on it.
//! - [`compile`]: an expression compiled with [`env`]'s macros.
//!
//! - [`ValidationRules`]: a CRD version's `x-kubernetes-validations`,
//!   compiled once and evaluated per request ([`rules`]).
//! - [`metered`]: an evaluation within a cost budget and a deadline,
//!   enforced inside the evaluator ([`runtime`]).
//!
//! Errors are kube's texts, as `cel::ExecutionError::FunctionError`s.

pub mod ast;
pub mod authz;
mod call;
mod format;
mod guarded;
mod ip;
mod iterate;
mod lists;
pub mod mutation;
pub mod policy_types;
mod quantity;
mod regex;
pub mod rules;
pub mod runtime;
mod semver;
mod sets;
mod url;

use std::sync::{Arc, LazyLock};

use cel::{Context, Env, Program};

pub use cel;
pub use rules::{
    evaluation_error, is_identifier, DeadlineExceeded, ProblemKind, RuleProblem, RuleViolation,
    ValidationRules, ViolationKind,
};
pub use runtime::{metered, Budget, Spent};

/// JSON as CEL, untyped (as kube binds `object`, `request`, …): integers
/// are `int`, not `uint`.
pub fn json_value(value: &serde_json::Value) -> cel::Value {
    rules::convert::dynamic(value)
}

/// [`env`], built once: what programs are compiled with.
static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| Arc::new(env()));

/// The environment programs run in: [`env`]'s functions, with the guarded
/// ones ([`guarded`]) declared first so that they answer their calls. It
/// has no macros, which only compiling needs.
static RUN_ENV: LazyLock<Arc<Env>> = LazyLock::new(|| {
    let mut env = Env::default();
    let guarded = guarded::overloads(&mut env);
    debug_assert!(guarded.is_ok(), "{guarded:?}");
    Arc::new(extend(env.with_stdlib()))
});

/// The environment kube's expressions compile in.
pub fn env() -> Env {
    let mut env = Env::default().with_stdlib();
    for m in iterate::macros() {
        let added = env.add_macro(m);
        debug_assert!(added.is_ok(), "{added:?}");
    }
    extend(env)
}

/// The strings extension and kube's overloads of standard names.
fn extend(mut env: Env) -> Env {
    // Fixed declarations on a fresh environment, so a failure is a bug in
    // this crate.
    let declared = env
        .add_extension(cel::extensions::strings)
        .and_then(|()| env.add_extension(lists::overloads))
        .and_then(|()| env.add_extension(ip::overloads));
    debug_assert!(declared.is_ok(), "{declared:?}");
    env
}

/// A root context with kube's libraries; add the variables to it. Run
/// programs on it within [`metered`] to bound them by a budget.
pub fn context() -> Context<'static, 'static> {
    let mut context = Context::with_env(Arc::clone(&RUN_ENV));
    call::register(&mut context);
    context
}

thread_local! {
    /// This thread's root context: kube's functions and the authorizer
    /// library, registered once (a few microseconds each time otherwise).
    static ROOT: Context<'static, 'static> = {
        let mut root = context();
        authz::register(&mut root);
        root
    };
}

/// Runs `f` with a fresh scope of this thread's root context (kube's
/// libraries and `authorizer`'s functions): bind the variables on it.
pub fn with_scope<T>(f: impl FnOnce(Context<'_, 'static>) -> T) -> T {
    ROOT.with(|root| f(root.new_inner_scope()))
}

/// Compiles `expression` for [`context`].
pub fn compile(expression: &str) -> Result<Program, String> {
    // cel-go indents the quoted source line and its pointer by one space.
    ENV.compile(expression)
        .map_err(|e| e.to_string().replace("\n|", "\n |"))
}

#[cfg(test)]
mod tests;
