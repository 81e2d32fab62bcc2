//! Regular expressions as cel-go compiles them (Go's RE2), for the standard
//! `matches` and kube's regex library (k8s.io/apiserver/pkg/cel/library/
//! regex.go): `string.find(regex)`, `string.findAll(regex)`,
//! `string.findAll(regex, n)`.
//!
//! - Perl classes are ASCII, as in RE2 (`\w` is `[0-9A-Za-z_]`, `\d`
//!   `[0-9]`, `\s` `[\t\n\f\r ]`): a pattern such as `\w{1000}` compiles to
//!   a thousand small classes, not a thousand Unicode tables.
//! - The compiled program is bounded ([`COMPILED_SIZE_LIMIT`]: Capstan's
//!   bound, in place of RE2's "expression too large"), so a pattern taken
//!   from an object fails fast instead of compiling for long.
//! - Each distinct pattern is compiled once: a bounded cache
//!   ([`MAX_CACHED`] patterns of at most [`MAX_CACHED_PATTERN`] bytes),
//!   emptied when full, holds patterns and their errors, and compiles
//!   outside its lock.
//! - Each call charges kube's cost to the evaluation's budget (string
//!   length × pattern length, see [`crate::runtime`]).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use cel::common::types::CelString;
use cel::common::value::CowVal;
use cel::{ExecutionError, Value};

use crate::call::{error, string, Answer};
use crate::runtime::{self, regex_factor, tenths};

/// The most memory a compiled pattern may take (regex's `size_limit`).
pub const COMPILED_SIZE_LIMIT: usize = 1 << 20;
/// Patterns kept compiled.
pub const MAX_CACHED: usize = 256;
/// The longest pattern kept compiled (longer ones compile per call).
pub const MAX_CACHED_PATTERN: usize = 16 * 1024;

type Compiled = Result<Arc<regex::Regex>, String>;

static COMPILED: LazyLock<Mutex<HashMap<String, Compiled>>> = LazyLock::new(Mutex::default);

/// `pattern` compiled as RE2 would, or Go's error text.
pub(crate) fn compiled(pattern: &str) -> Compiled {
    let cacheable = pattern.len() <= MAX_CACHED_PATTERN;
    if cacheable {
        let cache = COMPILED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = cache.get(pattern) {
            return found.clone();
        }
    }
    let built = build(pattern);
    if cacheable {
        let mut cache = COMPILED.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= MAX_CACHED {
            cache.clear();
        }
        cache.insert(pattern.to_string(), built.clone());
    }
    built
}

fn build(pattern: &str) -> Compiled {
    regex::RegexBuilder::new(&ascii_classes(pattern))
        .size_limit(COMPILED_SIZE_LIMIT)
        .dfa_size_limit(COMPILED_SIZE_LIMIT)
        .build()
        .map(Arc::new)
        .map_err(|e| go_error(pattern, &e))
}

/// Go's `error parsing regexp: <what>: `<pattern>``, with regex's reason.
fn go_error(pattern: &str, e: &regex::Error) -> String {
    let reason = match e {
        regex::Error::CompiledTooBig(_) => "expression too large".to_string(),
        regex::Error::Syntax(text) => text
            .lines()
            .rev()
            .find_map(|l| l.trim().strip_prefix("error: "))
            .unwrap_or("invalid syntax")
            .to_string(),
        other => other.to_string(),
    };
    format!("error parsing regexp: {reason}: `{pattern}`")
}

/// RE2's ASCII Perl classes in regex's syntax: each `\d`, `\D`, `\s`, `\S`,
/// `\w`, `\W` becomes an explicit class (nested where it is inside one).
fn ascii_classes(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(next) = chars.next() else {
            out.push(c);
            break;
        };
        match next {
            'd' => out.push_str("[0-9]"),
            'D' => out.push_str("[^0-9]"),
            's' => out.push_str(r"[\t\n\f\r ]"),
            'S' => out.push_str(r"[^\t\n\f\r ]"),
            'w' => out.push_str("[0-9A-Za-z_]"),
            'W' => out.push_str("[^0-9A-Za-z_]"),
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

/// kube's cost of matching `text` against `pattern`: one traversal of the
/// text per four characters of the pattern.
fn match_cost(text: &str, pattern: &str) -> u64 {
    let text = tenths(text.chars().count() as u64 + 1, 1);
    text.saturating_mul(regex_factor(pattern.chars().count() as u64))
}

/// The standard `matches`, charged and compiled once per pattern.
pub(crate) fn matches(text: &str, pattern: &str) -> Result<bool, ExecutionError> {
    runtime::charge("matches", match_cost(text, pattern))?;
    let re = compiled(pattern).map_err(|e| error("matches", e))?;
    Ok(re.is_match(text))
}

/// `matches` as an overload: `s.matches(p)` or `matches(s, p)`.
pub(crate) fn matches_overload<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let strings = match args.as_slice() {
        [t, p] => t
            .downcast_ref::<CelString>()
            .zip(p.downcast_ref::<CelString>()),
        _ => None,
    };
    let Some((text, pattern)) = strings else {
        let types = args.iter().map(|a| a.get_type().name().to_string());
        return Err(ExecutionError::no_such_overload("matches", types.collect()));
    };
    let found = matches(text.inner(), pattern.inner())?;
    Ok(CowVal::owned(cel::common::types::CelBool::from(found)))
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
    Some(find(name, text, pattern, limit))
}

fn find(name: &str, text: &str, pattern: &str, limit: i64) -> Result<Value, ExecutionError> {
    runtime::charge(name, match_cost(text, pattern))?;
    let re = compiled(pattern).map_err(|e| error(name, e))?;
    if name == "find" {
        let found = re.find(text).map(|m| m.as_str().to_string());
        return Ok(Value::String(Arc::new(found.unwrap_or_default())));
    }
    let all = re
        .find_iter(text)
        .map(|m| Value::String(Arc::new(m.as_str().to_string())));
    let found: Vec<Value> = match usize::try_from(limit) {
        Ok(n) => all.take(n).collect(),
        Err(_) => all.collect(),
    };
    Ok(Value::List(Arc::new(found)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perl_classes_are_ascii_as_in_re2() {
        let re = compiled(r"^\w+$").unwrap();
        assert!(re.is_match("abc_09"));
        assert!(!re.is_match("été"), "\\w is ASCII in RE2");
        assert!(compiled(r"^[\d-]+$").unwrap().is_match("1-2"));
        assert!(!compiled(r"^\d$").unwrap().is_match("٣"));
        assert!(compiled(r"^[^\W]$").unwrap().is_match("a"));
        assert!(
            compiled(r"^\\d$").unwrap().is_match(r"\d"),
            "an escaped backslash"
        );
    }

    #[test]
    fn long_repetitions_compile_fast_or_fail_fast() {
        let start = std::time::Instant::now();
        assert!(compiled(r"\w{1000}").is_ok());
        let too_large = compiled(r"(\w{1000}){1000}").unwrap_err();
        assert!(
            too_large.starts_with("error parsing regexp: expression too large"),
            "{too_large}"
        );
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn errors_read_as_go_s() {
        let e = compiled("(").unwrap_err();
        assert_eq!(e, "error parsing regexp: unclosed group: `(`");
    }
}
