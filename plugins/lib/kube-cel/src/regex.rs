//! kube's regex library (k8s.io/apiserver/pkg/cel/library/regex.go):
//! `string.find(regex)`, `string.findAll(regex)`, `string.findAll(regex, n)`.

use std::sync::Arc;

use cel::Value;

use crate::call::{error, string, Answer};

pub(crate) fn call(name: &str, this: Option<&Value>, args: &[Value]) -> Answer {
    let text = string(this?)?;
    let (pattern, limit) = match args {
        [p] => (string(p)?, -1),
        [p, Value::Int(n)] => (string(p)?, *n),
        _ => return None,
    };
    if name != "find" && name != "findAll" || (name == "find" && args.len() != 1) {
        return None;
    }
    let re = match regex::Regex::new(pattern) {
        Ok(re) => re,
        Err(e) => return Some(Err(error(name, e))),
    };
    Some(Ok(if name == "find" {
        Value::String(Arc::new(
            re.find(text)
                .map(|m| m.as_str().to_string())
                .unwrap_or_default(),
        ))
    } else {
        let all = re
            .find_iter(text)
            .map(|m| Value::String(Arc::new(m.as_str().to_string())));
        let found: Vec<Value> = match usize::try_from(limit) {
            Ok(n) => all.take(n).collect(),
            Err(_) => all.collect(),
        };
        Value::List(Arc::new(found))
    }))
}
