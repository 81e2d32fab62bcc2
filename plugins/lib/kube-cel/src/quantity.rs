//! kube's quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go):
//! `quantity(string)`, `isQuantity(string)` and the member functions of a
//! quantity, on Capstan's one quantity parser (`capstan-quota`).

use std::cmp::Ordering;
use std::sync::Arc;

use capstan_quota::Quantity;
use cel::objects::Opaque;
use cel::{ExecutionError, Value};

use crate::call::{error, opaque, string, Answer};

/// apimachinery's `resource.ErrFormatWrong`.
const FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/// A quantity as a CEL value, `kubernetes.Quantity`; equal when their
/// values are.
#[derive(Debug, PartialEq, Eq)]
pub struct KubeQuantity(pub Quantity);

impl Opaque for KubeQuantity {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Quantity"
    }
}

fn value(q: Quantity) -> Value {
    Value::Opaque(Arc::new(KubeQuantity(q)))
}

pub(crate) fn call(name: &str, this: Option<&Value>, args: &[Value]) -> Answer {
    match (this, args) {
        (None, [text]) => global(name, string(text)?),
        (Some(q), args) => member(name, opaque::<KubeQuantity>(q)?.0, args),
        _ => None,
    }
}

fn global(name: &str, text: &str) -> Answer {
    match name {
        "quantity" => Some(
            Quantity::parse(text)
                .map(value)
                .map_err(|_| error(name, FORMAT_WRONG)),
        ),
        "isQuantity" => Some(Ok(Value::Bool(Quantity::parse(text).is_ok()))),
        _ => None,
    }
}

fn member(name: &str, q: Quantity, args: &[Value]) -> Answer {
    let result = match (name, args) {
        ("sign", []) => Ok(Value::Int(sign(q))),
        ("isInteger", []) => Ok(Value::Bool(as_integer(q).is_some())),
        ("asInteger", []) => as_integer(q)
            .map(Value::Int)
            .ok_or_else(|| error(name, "cannot convert value to integer")),
        ("asApproximateFloat", []) => Ok(Value::Float(q.nanos() as f64 / 1e9)),
        ("add", [other]) => operand(other)
            .map(|o| value(q + o))
            .ok_or_else(|| mismatch(name)),
        ("sub", [other]) => operand(other)
            .map(|o| value(q - o))
            .ok_or_else(|| mismatch(name)),
        ("compareTo", [other]) => compared(other, q).map(|o| Value::Int(o as i64)),
        ("isGreaterThan", [other]) => compared(other, q).map(|o| Value::Bool(o.is_gt())),
        ("isLessThan", [other]) => compared(other, q).map(|o| Value::Bool(o.is_lt())),
        _ => return None,
    };
    Some(result)
}

fn sign(q: Quantity) -> i64 {
    match q.nanos().cmp(&0) {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }
}

/// `Quantity.AsInt64`: whole and within int64.
fn as_integer(q: Quantity) -> Option<i64> {
    const NANO: i128 = 1_000_000_000;
    (q.nanos() % NANO == 0)
        .then(|| i64::try_from(q.nanos() / NANO).ok())
        .flatten()
}

/// The other operand of `add`/`sub`: a quantity or an int.
fn operand(other: &Value) -> Option<Quantity> {
    match other {
        Value::Int(i) => Some(Quantity::from_units(*i)),
        other => opaque::<KubeQuantity>(other).map(|q| q.0),
    }
}

fn compared(other: &Value, q: Quantity) -> Result<Ordering, ExecutionError> {
    opaque::<KubeQuantity>(other)
        .map(|o| q.cmp(&o.0))
        .ok_or_else(|| error("compareTo", "no such overload"))
}

fn mismatch(name: &str) -> ExecutionError {
    error(name, "no such overload")
}
