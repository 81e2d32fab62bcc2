//! kube's lists library (k8s.io/apiserver/pkg/cel/library/lists.go):
//! `isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf` on lists.

use std::cmp::Ordering;

use cel::common::types::{DYN_TYPE, LIST_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError, Value};

use crate::call::{error, Answer};

/// `indexOf` and `lastIndexOf` on lists: declared on the environment, where
/// the strings extension declares them on strings.
pub(crate) fn overloads(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload(
        "indexOf",
        "list.indexOf(dyn)",
        LIST_TYPE,
        vec![DYN_TYPE],
        index_of,
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "list.lastIndexOf(dyn)",
        LIST_TYPE,
        vec![DYN_TYPE],
        last_index_of,
    )
}

fn index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (list, needle) = list_and_value(&args)?;
    int(list.iter().position(|v| *v == needle))
}

fn last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (list, needle) = list_and_value(&args)?;
    int(list.iter().rposition(|v| *v == needle))
}

fn list_and_value(args: &[CowVal<'_, '_>]) -> Result<(Vec<Value>, Value), ExecutionError> {
    let [list, needle] = args else {
        return Err(error("indexOf", "expected a list and a value"));
    };
    match Value::try_from(list.as_ref())? {
        Value::List(items) => Ok((items.to_vec(), Value::try_from(needle.as_ref())?)),
        _ => Err(error("indexOf", "expected a list")),
    }
}

fn int<'b, 'v>(index: Option<usize>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let index = index.map_or(-1, |i| i as i64);
    let boxed: Box<dyn Val> = Value::Int(index).try_into()?;
    Ok(CowVal::Owned(boxed))
}

pub(crate) fn call(name: &str, this: Option<&Value>, args: &[Value]) -> Answer {
    let (Some(Value::List(list)), []) = (this, args) else {
        return None;
    };
    Some(match name {
        "isSorted" => is_sorted(list),
        "sum" => sum(list),
        "min" => extreme(name, list, Ordering::Less),
        "max" => extreme(name, list, Ordering::Greater),
        _ => return None,
    })
}

fn compare(a: &Value, b: &Value) -> Result<Ordering, ExecutionError> {
    a.partial_cmp(b)
        .ok_or_else(|| ExecutionError::ValuesNotComparable(a.clone(), b.clone()))
}

fn is_sorted(list: &[Value]) -> Result<Value, ExecutionError> {
    for pair in list.windows(2) {
        if compare(&pair[0], &pair[1])?.is_gt() {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

fn sum(list: &[Value]) -> Result<Value, ExecutionError> {
    let Some((first, rest)) = list.split_first() else {
        return Ok(Value::Int(0));
    };
    rest.iter().try_fold(first.clone(), |total, item| {
        let added = match (&total, item) {
            (Value::Int(a), Value::Int(b)) => a.checked_add(*b).map(Value::Int),
            (Value::UInt(a), Value::UInt(b)) => a.checked_add(*b).map(Value::UInt),
            (Value::Float(a), Value::Float(b)) => Some(Value::Float(a + b)),
            _ => return Err(error("sum", "no such overload")),
        };
        added.ok_or_else(|| ExecutionError::Overflow("add", total.clone(), item.clone()))
    })
}

/// kube's `min`/`max`: the first of the smallest (largest) elements.
fn extreme(name: &str, list: &[Value], wanted: Ordering) -> Result<Value, ExecutionError> {
    let Some((first, rest)) = list.split_first() else {
        return Err(error(name, format!("{name} called on empty list")));
    };
    rest.iter().try_fold(first.clone(), |best, item| {
        Ok(if compare(item, &best)? == wanted {
            item.clone()
        } else {
            best
        })
    })
}
