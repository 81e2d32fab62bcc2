//! One dispatch for kube's functions: each library answers the calls it
//! knows (by name and by the receiver's type), so that names shared between
//! libraries (`compareTo`, `isLessThan`, …) reach the right one.

use cel::extractors::Arguments;
use cel::objects::Opaque;
use cel::{Context, ExecutionError, FunctionContext, Value};

/// What a library says about a call: `None` when it is not one of its own.
pub(crate) type Answer = Option<Result<Value, ExecutionError>>;

/// A library: `(function name, receiver, arguments)` to an answer.
type Library = fn(&str, Option<&Value>, &[Value]) -> Answer;

const LIBRARIES: &[Library] = &[
    // First: it answers every comprehension step.
    crate::iterate::call,
    crate::quantity::call,
    crate::lists::call,
    crate::regex::call,
    crate::url::call,
    crate::ip::call,
    crate::semver::call,
    crate::format::call,
    crate::sets::call,
    crate::mutation::call,
];

/// Every name the libraries answer to.
const NAMES: &[&str] = &[
    // quantity
    "quantity",
    "isQuantity",
    "add",
    "sub",
    "compareTo",
    "isGreaterThan",
    "isLessThan",
    "asInteger",
    "asApproximateFloat",
    "sign",
    "isInteger",
    // lists
    "isSorted",
    "sum",
    "min",
    "max",
    // regex
    "find",
    "findAll",
    // url
    "url",
    "isURL",
    "getScheme",
    "getHost",
    "getHostname",
    "getPort",
    "getEscapedPath",
    "getQuery",
    // ip and cidr
    "ip",
    "isIP",
    "ip.isCanonical",
    "cidr",
    "isCIDR",
    "family",
    "isUnspecified",
    "isLoopback",
    "isLinkLocalMulticast",
    "isLinkLocalUnicast",
    "isGlobalUnicast",
    "containsIP",
    "containsCIDR",
    "prefixLength",
    "masked",
    // semver
    "semver",
    "isSemver",
    "major",
    "minor",
    "patch",
    // format
    "validate",
    "format.named",
    "format.dns1123Label",
    "format.dns1123Subdomain",
    "format.dns1035Label",
    "format.qualifiedName",
    "format.dns1123LabelPrefix",
    "format.dns1123SubdomainPrefix",
    "format.dns1035LabelPrefix",
    "format.labelValue",
    "format.uri",
    "format.uuid",
    "format.byte",
    "format.date",
    "format.datetime",
    // sets
    "sets.contains",
    "sets.equivalent",
    "sets.intersects",
    // comprehensions
    crate::iterate::TICK,
    // mutations
    crate::mutation::OBJECT,
    "jsonpatch.escapeKey",
];

pub(crate) fn register(context: &mut Context<'static, 'static>) {
    for &name in NAMES {
        let added = context.add_function(
            name,
            move |ftx: &FunctionContext, Arguments(args): Arguments| dispatch(ftx, name, &args),
        );
        debug_assert!(added.is_ok(), "{name}: {added:?}");
    }
}

fn dispatch(ftx: &FunctionContext, name: &str, args: &[Value]) -> Result<Value, ExecutionError> {
    let this = match &ftx.this {
        Some(this) => Some(Value::try_from(this.as_ref())?),
        None => None,
    };
    LIBRARIES
        .iter()
        .find_map(|library| library(name, this.as_ref(), args))
        .unwrap_or_else(|| Err(no_overload(name, this.as_ref(), args)))
}

fn no_overload(name: &str, this: Option<&Value>, args: &[Value]) -> ExecutionError {
    let types: Vec<String> = this.into_iter().chain(args).map(type_name).collect();
    ExecutionError::function_error(
        name,
        format!("no such overload: {name}({})", types.join(", ")),
    )
}

fn type_name(value: &Value) -> String {
    match value {
        Value::Opaque(o) => o.runtime_type_name().to_string(),
        other => other.type_of().to_string(),
    }
}

pub(crate) fn error(function: &str, message: impl ToString) -> ExecutionError {
    ExecutionError::function_error(function, message)
}

/// The opaque value of type `T`, if `value` is one.
pub(crate) fn opaque<T: Opaque>(value: &Value) -> Option<&T> {
    match value {
        Value::Opaque(o) => o.downcast_ref::<T>(),
        _ => None,
    }
}

/// The string, if `value` is one.
pub(crate) fn string(value: &Value) -> Option<&str> {
    match value {
        Value::String(s) => Some(s.as_str()),
        _ => None,
    }
}
