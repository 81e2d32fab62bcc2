//! allOf, anyOf, oneOf and not: kube-openapi's schemaPropsValidator, which
//! reports a failing anyOf/oneOf by its branch with the most matches.

use super::{validate_value, Outcome};
use crate::catalogue::custom::schema::node::Node;
use crate::catalogue::custom::schema::problems::Problem;
use kube_rules::gofmt::quote as go_quote;
use serde_json::Value;

/// The value and its correlated old value, as the junctors pass them on.
#[derive(Clone, Copy)]
struct Subject<'a> {
    data: &'a Value,
    path: &'a str,
    old: Option<&'a Value>,
}

impl Subject<'_> {
    fn against(&self, branch: &Node) -> Outcome {
        validate_value(branch, self.data, self.path, self.old)
    }
}

pub(super) fn junctors(node: &Node, data: &Value, path: &str, old: Option<&Value>) -> Outcome {
    let mut main = Outcome::default();
    let subject = Subject { data, path, old };
    if !node.any_of.is_empty() {
        any_of(&node.any_of, subject, &mut main);
    }
    if !node.one_of.is_empty() {
        one_of(&node.one_of, subject, &mut main);
    }
    if !node.all_of.is_empty() {
        all_of(&node.all_of, subject, &mut main);
    }
    if let Some(not) = &node.not {
        if subject.against(not).is_valid() {
            main.push(Problem::composite(format!(
                "{} must not validate the schema (not)",
                go_quote(path)
            )));
        }
    }
    main.count += 1;
    main
}

fn any_of(branches: &[Node], subject: Subject, main: &mut Outcome) {
    let path = subject.path;
    let mut best: Option<Outcome> = None;
    for branch in branches {
        let result = subject.against(branch);
        if result.is_valid() {
            main.merge(result);
            return;
        }
        if best.as_ref().is_none_or(|b| result.count > b.count) {
            best = Some(result);
        }
    }
    main.push(Problem::composite(format!(
        "{} must validate at least one schema (anyOf)",
        go_quote(path)
    )));
    if let Some(best) = best {
        main.merge(best);
    }
}

fn one_of(branches: &[Node], subject: Subject, main: &mut Outcome) {
    let path = subject.path;
    let mut best: Option<Outcome> = None;
    let mut first_success: Option<Outcome> = None;
    let mut validated = 0;
    for branch in branches {
        let result = subject.against(branch);
        if result.is_valid() {
            validated += 1;
            best = None;
            first_success.get_or_insert(result);
            continue;
        }
        if validated == 0 && best.as_ref().is_none_or(|b| result.count > b.count) {
            best = Some(result);
        }
    }
    if validated == 1 {
        if let Some(success) = first_success {
            main.merge(success);
        }
        return;
    }
    let found = if validated == 0 {
        "Found none valid".to_string()
    } else {
        format!("Found {validated} valid alternatives")
    };
    main.push(Problem::composite(format!(
        "{} must validate one and only one schema (oneOf). {found}",
        go_quote(path)
    )));
    if let Some(best) = best {
        main.merge(best);
    }
}

fn all_of(branches: &[Node], subject: Subject, main: &mut Outcome) {
    let path = subject.path;
    let mut validated = 0;
    for branch in branches {
        let result = subject.against(branch);
        if result.is_valid() {
            validated += 1;
        }
        main.merge(result);
    }
    if validated != branches.len() {
        let extra = if validated == 0 {
            ". None validated"
        } else {
            ""
        };
        main.push(Problem::composite(format!(
            "{} must validate all the schemas (allOf){extra}",
            go_quote(path)
        )));
    }
}
