//! kube's regex library (k8s.io/apiserver/pkg/cel/library/regex.go):
//! `string.find(regex)`, `string.findAll(regex)`, `string.findAll(regex, n)`,
//! each pattern compiled once (cel-go precompiles constant patterns). The
//! standard `matches` is the `cel` crate's own, which compiles per call (the
//! crate does not let a library replace it).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use cel::Value;

use crate::call::{error, string, Answer};

/// Compiled patterns; emptied when full (patterns may come from data).
static COMPILED: LazyLock<Mutex<HashMap<String, Arc<regex::Regex>>>> =
    LazyLock::new(Mutex::default);
const MAX_COMPILED: usize = 256;

fn compiled(pattern: &str) -> Result<Arc<regex::Regex>, regex::Error> {
    let mut cache = COMPILED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(re) = cache.get(pattern) {
        return Ok(Arc::clone(re));
    }
    let re = Arc::new(regex::Regex::new(pattern)?);
    if cache.len() >= MAX_COMPILED {
        cache.clear();
    }
    cache.insert(pattern.to_string(), Arc::clone(&re));
    Ok(re)
}

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
    let re = match compiled(pattern) {
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
