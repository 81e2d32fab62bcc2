//! The functions whose result may be much larger than their arguments, or
//! whose work grows with their contents, replaced by versions that charge
//! the evaluation's budget and check their result's size before building
//! it ([`crate::runtime`]).
//!
//! How they replace the `cel` crate's own: an `Env` finds a call's
//! overload by trying them in the order they were declared, and refuses
//! only a second overload with the same id or the same parameter types.
//! These are declared first, on `Env::default()` before the standard
//! library and the strings extension, with `dyn` parameters (so their
//! types differ from the crate's): every call reaches them, and they
//! answer a call of the wrong types with the crate's "no such overload".
//! Programs are compiled with the standard environment (for its macros,
//! which this one lacks) and run on this one.
//!
//! `format` and `strings.quote` are left to the crate: their result is
//! at most twice their arguments and a bounded amount per clause.

use cel::common::types::{CelInt, CelList, CelString, DYN_TYPE, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use crate::runtime::{admit, charge, tenths};

type Args<'b, 'v> = Vec<CowVal<'b, 'v>>;
type Answer<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

/// Declares the guarded overloads on `env`, before anything else.
pub(crate) fn overloads(env: &mut Env) -> Result<(), DeclarationError> {
    let dyns = |n: usize| (0..n).map(|_| DYN_TYPE).collect::<Vec<_>>();
    env.add_overload(
        "matches",
        "kube_matches",
        dyns(2),
        crate::regex::matches_overload,
    )?;
    env.add_member_overload(
        "matches",
        "kube_string_matches",
        DYN_TYPE,
        dyns(1),
        crate::regex::matches_overload,
    )?;
    for n in [2, 3] {
        let id = format!("kube_string_replace_{n}");
        env.add_member_overload("replace", &id, STRING_TYPE, dyns(n), replace)?;
    }
    for n in [1, 2] {
        let id = format!("kube_string_split_{n}");
        env.add_member_overload("split", &id, STRING_TYPE, dyns(n), split)?;
    }
    for n in [0, 1] {
        let id = format!("kube_list_join_{n}");
        env.add_member_overload("join", &id, DYN_TYPE, dyns(n), join)?;
    }
    Ok(())
}

fn no_overload(name: &str, args: &[CowVal<'_, '_>]) -> ExecutionError {
    let types = args.iter().map(|a| a.get_type().name().to_string());
    ExecutionError::no_such_member_overload(name, types.collect())
}

fn int(value: Option<&CowVal<'_, '_>>) -> Option<Option<i64>> {
    match value {
        None => Some(None),
        Some(v) => v.downcast_ref::<CelInt>().map(|n| Some(*n.inner())),
    }
}

fn chars(s: &str) -> u64 {
    s.chars().count() as u64
}

/// `s.replace(from, to)`, `s.replace(from, to, n)`: kube's cost (two
/// traversals of `s`), the result's length computed before it is built.
fn replace<'b, 'v>(args: Args<'b, 'v>) -> Answer<'b, 'v> {
    let parts = match args.as_slice() {
        [s, from, to, rest @ ..] if rest.len() <= 1 => s
            .downcast_ref::<CelString>()
            .zip(from.downcast_ref::<CelString>())
            .zip(to.downcast_ref::<CelString>())
            .zip(int(rest.first())),
        _ => None,
    };
    let Some((((s, from), to), n)) = parts else {
        return Err(no_overload("replace", &args));
    };
    let (s, from, to) = (s.inner(), from.inner(), to.inner());
    charge("replace", tenths(chars(s), 2))?;
    let found = if from.is_empty() {
        chars(s) + 1
    } else {
        s.matches(from).count() as u64
    };
    let count = match n.map(u64::try_from) {
        Some(Ok(n)) => found.min(n),
        _ => found,
    };
    let len = chars(s) + count.saturating_mul(chars(to)) - count * chars(from).min(chars(s));
    admit("replace", len)?;
    let replaced = match n.map(usize::try_from) {
        Some(Ok(n)) => s.replacen(from, to, n),
        _ => s.replace(from, to),
    };
    Ok(CowVal::owned(CelString::from(replaced)))
}

/// `s.split(sep)`, `s.split(sep, n)`: kube's cost, each element charged.
fn split<'b, 'v>(args: Args<'b, 'v>) -> Answer<'b, 'v> {
    let parts = match args.as_slice() {
        [s, sep, rest @ ..] if rest.len() <= 1 => s
            .downcast_ref::<CelString>()
            .zip(sep.downcast_ref::<CelString>())
            .zip(int(rest.first())),
        _ => None,
    };
    let Some(((s, sep), n)) = parts else {
        return Err(no_overload("split", &args));
    };
    let (s, sep) = (s.inner(), sep.inner());
    charge("split", tenths(chars(s), 2))?;
    let found = if sep.is_empty() {
        chars(s)
    } else {
        s.matches(sep).count() as u64 + 1
    };
    let count = match n.map(u64::try_from) {
        Some(Ok(n)) => found.min(n),
        _ => found,
    };
    // A list's elements are charged one each, as cel-go traverses them.
    admit("split", count.saturating_mul(10))?;
    let pieces: Vec<&str> = match (n, sep.is_empty()) {
        (Some(0), _) => Vec::new(),
        (n, true) => split_chars(s, n),
        (Some(n), false) if n > 0 => s.splitn(n as usize, sep).collect(),
        (_, false) => s.split(sep).collect(),
    };
    let list: Vec<Box<dyn Val + 'v>> = pieces
        .into_iter()
        .map(|p| Box::new(CelString::from(p.to_string())) as Box<dyn Val>)
        .collect();
    Ok(CowVal::owned(CelList::from(list)))
}

/// Splitting between code points, into at most `n` parts (the last one
/// the rest) when `n` is positive.
fn split_chars(s: &str, n: Option<i64>) -> Vec<&str> {
    let limit = n.and_then(|n| usize::try_from(n).ok()).filter(|n| *n > 0);
    let mut parts = Vec::new();
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if limit.is_some_and(|l| parts.len() + 1 == l) {
            break;
        }
        let (head, tail) = rest.split_at(c.len_utf8());
        parts.push(head);
        rest = tail;
    }
    if !rest.is_empty() {
        parts.push(rest);
    }
    parts
}

/// `list.join()`, `list.join(sep)`: the joined length computed first.
fn join<'b, 'v>(args: Args<'b, 'v>) -> Answer<'b, 'v> {
    let sep = match args.get(1) {
        None => Some(""),
        Some(sep) => sep.downcast_ref::<CelString>().map(CelString::inner),
    };
    let list = args.first().and_then(|l| l.as_iterable());
    let (Some(list), Some(sep), true) = (list, sep, args.len() <= 2) else {
        return Err(no_overload("join", &args));
    };
    let mut parts: Vec<&str> = Vec::new();
    let mut items = list.iter();
    while let Some(item) = items.next() {
        match item.downcast_ref::<CelString>() {
            Some(s) => parts.push(s.inner()),
            None => {
                return Err(ExecutionError::UnexpectedType {
                    got: item.get_type().name().to_owned(),
                    want: "string".to_owned(),
                })
            }
        }
    }
    let separators = (parts.len() as u64).saturating_sub(1);
    let len = parts.iter().map(|p| chars(p)).sum::<u64>() + separators * chars(sep);
    charge("join", tenths(len, 2))?;
    admit("join", len)?;
    Ok(CowVal::owned(CelString::from(parts.join(sep))))
}
