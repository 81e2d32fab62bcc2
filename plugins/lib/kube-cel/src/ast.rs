//! Walking a compiled expression: every node, in source order.

use cel::common::ast::{EntryExpr, Expr, IdedExpr};

/// Calls `f` on every node of `e`.
pub fn visit(e: &IdedExpr, f: &mut impl FnMut(&IdedExpr)) {
    f(e);
    match &e.expr {
        Expr::Select(s) => visit(&s.operand, f),
        Expr::Call(c) => {
            c.target.iter().for_each(|t| visit(t, f));
            c.args.iter().for_each(|a| visit(a, f));
        }
        Expr::List(l) => l.elements.iter().for_each(|x| visit(x, f)),
        Expr::Map(m) => m.entries.iter().for_each(|e| visit_entry(&e.expr, f)),
        Expr::Struct(s) => s.entries.iter().for_each(|e| visit_entry(&e.expr, f)),
        Expr::Comprehension(c) => {
            for part in [
                &c.iter_range,
                &c.accu_init,
                &c.loop_cond,
                &c.loop_step,
                &c.result,
            ] {
                visit(part, f);
            }
        }
        _ => {}
    }
}

fn visit_entry(entry: &EntryExpr, f: &mut impl FnMut(&IdedExpr)) {
    match entry {
        EntryExpr::MapEntry(m) => {
            visit(&m.key, f);
            visit(&m.value, f);
        }
        EntryExpr::StructField(s) => visit(&s.value, f),
    }
}
