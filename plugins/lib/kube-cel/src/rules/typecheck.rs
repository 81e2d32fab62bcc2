//! The part of cel-go's type check the `cel` crate lacks that rule authors
//! meet most: a field selected on `self` (or `oldSelf`, or a comprehension
//! variable over them) that the schema does not declare is refused at CRD
//! write with `undefined field 'x'`. Where the type is not known
//! (preserve-unknown-fields, int-or-string, a resource's metadata, computed
//! values) nothing is checked.

use std::collections::HashMap;

use cel::common::ast::{operators, Expr, IdedExpr};

use super::schema::{Kind, Node};

/// The first undeclared field selected in `e`: the select's id and field.
pub(crate) fn undefined_field(e: &IdedExpr, root: &Node) -> Option<(u64, String)> {
    let mut scope: HashMap<String, Option<&Node>> = HashMap::new();
    scope.insert("self".to_string(), Some(root));
    scope.insert("oldSelf".to_string(), Some(root));
    let mut found = None;
    walk(e, &mut scope, &mut found);
    found
}

type Scope<'n> = HashMap<String, Option<&'n Node>>;

/// The node `e` evaluates to, if known; the first error into `found`.
fn walk<'n>(
    e: &IdedExpr,
    scope: &mut Scope<'n>,
    found: &mut Option<(u64, String)>,
) -> Option<&'n Node> {
    if found.is_some() {
        return None;
    }
    match &e.expr {
        Expr::Ident(name) => scope.get(name).copied().flatten(),
        Expr::Select(select) => {
            let operand = walk(&select.operand, scope, found)?;
            if operand.kind != Kind::Object {
                return element(operand, false);
            }
            let child = operand.field(&select.field);
            let meta = matches!(select.field.as_str(), "apiVersion" | "kind" | "metadata");
            if child.is_none() && !(operand.resource_root && meta) {
                *found = Some((e.id, select.field.clone()));
            }
            child
        }
        Expr::Call(call) if crate::iterate::ticked(call).is_some() => {
            walk(crate::iterate::ticked(call)?, scope, found)
        }
        Expr::Call(call) => {
            let target = call.target.as_deref().and_then(|t| walk(t, scope, found));
            let first = call.args.first().map(|a| walk(a, scope, found));
            for arg in call.args.iter().skip(1) {
                walk(arg, scope, found);
            }
            match (call.func_name.as_str(), first) {
                (operators::INDEX, Some(Some(list))) => element(list, false),
                _ => target.filter(|_| false),
            }
        }
        Expr::Comprehension(c) => {
            let range = walk(&c.iter_range, scope, found);
            let variable = range.and_then(|r| element(r, true));
            let saved = scope.insert(c.iter_var.clone(), variable);
            for part in [&c.accu_init, &c.loop_cond, &c.loop_step, &c.result] {
                walk(part, scope, found);
            }
            match saved {
                Some(previous) => scope.insert(c.iter_var.clone(), previous),
                None => scope.remove(&c.iter_var),
            };
            None
        }
        Expr::List(list) => {
            for x in &list.elements {
                walk(x, scope, found);
            }
            None
        }
        _ => None,
    }
}

/// An element of a list (or a value of a map; its keys when `keys`,
/// which have no schema).
fn element(node: &Node, keys: bool) -> Option<&Node> {
    match node.kind {
        Kind::List => node.items.as_deref(),
        Kind::Map if !keys => node.additional.as_deref(),
        _ => None,
    }
}
