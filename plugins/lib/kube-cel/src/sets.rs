//! cel-go's sets extension (ext.Sets, in kube's environment since 1.29):
//! `sets.contains(list, sublist)`, `sets.equivalent(a, b)` and
//! `sets.intersects(a, b)`, comparing elements with CEL equality.

use cel::Value;

use crate::call::Answer;

pub(crate) fn call(name: &str, this: Option<&Value>, args: &[Value]) -> Answer {
    let (None, [Value::List(a), Value::List(b)]) = (this, args) else {
        return None;
    };
    let holds = match name {
        "sets.contains" => contains(a, b),
        "sets.equivalent" => contains(a, b) && contains(b, a),
        "sets.intersects" => b.iter().any(|x| a.contains(x)),
        _ => return None,
    };
    Some(Ok(Value::Bool(holds)))
}

/// Whether every element of `sub` is in `list`.
fn contains(list: &[Value], sub: &[Value]) -> bool {
    sub.iter().all(|x| list.contains(x))
}
