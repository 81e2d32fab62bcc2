//! The comprehension macros (`all`, `exists`, `exists_one`/`existsOne`,
//! `map`, `filter`; and `has`) as the CEL standard defines them, with one
//! difference: every step passes a small value (the loop condition, a
//! filter's predicate, a map's element) through `@tick(x)`,
//! which charges the running evaluation one unit and returns `x`
//! ([`crate::runtime`]). cel-go charges every step; the `cel` crate charges
//! nothing, so without this a comprehension nested over a large list from
//! the object (`object.a.all(x, object.a.all(y, ...))`) would run for
//! hours where kube stops at its per-call limit. The shapes the evaluator
//! optimizes (`@result && p`, `@result + [x]` with a literal condition) are
//! kept, and every walker of the AST (cost estimate, type checks) reads
//! `@tick(x)` as `x` ([`ticked`]).

use cel::common::ast::{
    operators, CallExpr, ComprehensionExpr, Expr, IdedExpr, ListExpr, LiteralValue,
};
use cel::parser::{Macro, MacroExprHelper};
use cel::{ParseError, Value};

use crate::call::Answer;

/// The runtime function every comprehension step passes through.
pub const TICK: &str = "@tick";
const RESULT: &str = "@result";

/// `x` of a call `@tick(x)`, for the walkers that read it as `x`.
pub(crate) fn ticked(call: &CallExpr) -> Option<&IdedExpr> {
    match call.args.as_slice() {
        [x] if call.func_name == TICK && call.target.is_none() => Some(x),
        _ => None,
    }
}

/// `@tick(x)`: `x`, once the step is charged.
pub(crate) fn call(name: &str, this: Option<&Value>, args: &[Value]) -> Answer {
    if name != TICK || this.is_some() {
        return None;
    }
    let [x] = args else { return None };
    Some(crate::runtime::charge("comprehension", 1).map(|()| x.clone()))
}

fn tick(h: &mut MacroExprHelper<'_>, x: IdedExpr) -> IdedExpr {
    call_expr(h, TICK, vec![x])
}

type Parts<'a> = (&'a mut Option<IdedExpr>, &'a mut Vec<IdedExpr>);

/// The standard macros, charging their ranges.
pub(crate) fn macros() -> Vec<Macro> {
    vec![
        Macro::global(operators::HAS, 1, |h, t, a| has(h, (t, a)).map(Some)),
        Macro::receiver(operators::ALL, 2, |h, t, a| fold(h, (t, a), true).map(Some)),
        Macro::receiver(operators::EXISTS, 2, |h, t, a| {
            fold(h, (t, a), false).map(Some)
        }),
        Macro::receiver(operators::EXISTS_ONE, 2, |h, t, a| {
            exists_one(h, (t, a)).map(Some)
        }),
        Macro::receiver("existsOne", 2, |h, t, a| exists_one(h, (t, a)).map(Some)),
        Macro::receiver(operators::MAP, 2, |h, t, a| map(h, (t, a)).map(Some)),
        Macro::receiver(operators::MAP, 3, |h, t, a| map(h, (t, a)).map(Some)),
        Macro::receiver(operators::FILTER, 2, |h, t, a| filter(h, (t, a)).map(Some)),
    ]
}

fn call_expr(h: &mut MacroExprHelper<'_>, function: &str, args: Vec<IdedExpr>) -> IdedExpr {
    h.next_expr(Expr::Call(CallExpr {
        func_name: function.to_string(),
        target: None,
        args,
    }))
}

fn ident(h: &mut MacroExprHelper<'_>, name: &str) -> IdedExpr {
    h.next_expr(Expr::Ident(name.to_string()))
}

fn literal(h: &mut MacroExprHelper<'_>, value: LiteralValue) -> IdedExpr {
    h.next_expr(Expr::Literal(value))
}

fn simple_name(h: &MacroExprHelper<'_>, e: IdedExpr) -> Result<String, ParseError> {
    match e.expr {
        Expr::Ident(name) => Ok(name),
        _ => Err(h.new_error(e.id, "argument must be a simple name")),
    }
}

/// The comprehension over `target` binding `var`.
fn comprehension(
    h: &mut MacroExprHelper<'_>,
    target: &mut Option<IdedExpr>,
    var: String,
    (init, cond, step, result): (IdedExpr, IdedExpr, IdedExpr, IdedExpr),
) -> Result<IdedExpr, ParseError> {
    let range = target
        .take()
        .ok_or_else(|| h.new_error(0, "a comprehension needs a target"))?;
    Ok(h.next_expr(Expr::Comprehension(Box::new(ComprehensionExpr {
        iter_range: range,
        iter_var: var,
        iter_var2: None,
        accu_var: RESULT.to_string(),
        accu_init: init,
        loop_cond: cond,
        loop_step: step,
        result,
    }))))
}

fn has(h: &mut MacroExprHelper<'_>, (_, args): Parts<'_>) -> Result<IdedExpr, ParseError> {
    let arg = args.remove(0);
    match arg.expr {
        Expr::Select(mut select) => {
            select.test = true;
            Ok(h.next_expr(Expr::Select(select)))
        }
        _ => Err(h.new_error(arg.id, "invalid argument to has() macro")),
    }
}

/// `all` (`@result && p`, while not false) or `exists` (`@result || p`,
/// while not true).
fn fold(
    h: &mut MacroExprHelper<'_>,
    (t, args): Parts<'_>,
    all: bool,
) -> Result<IdedExpr, ParseError> {
    let predicate = args.remove(1);
    let var = simple_name(h, args.remove(0))?;
    let init = literal(h, LiteralValue::Boolean(all.into()));
    let accu = ident(h, RESULT);
    let going = match all {
        true => accu,
        false => call_expr(h, operators::LOGICAL_NOT, vec![accu]),
    };
    // Outside `@not_strictly_false`, which would absorb the charge's error.
    let going = call_expr(h, operators::NOT_STRICTLY_FALSE, vec![going]);
    let cond = tick(h, going);
    let accu = ident(h, RESULT);
    let connective = if all {
        operators::LOGICAL_AND
    } else {
        operators::LOGICAL_OR
    };
    let step = call_expr(h, connective, vec![accu, predicate]);
    let result = ident(h, RESULT);
    comprehension(h, t, var, (init, cond, step, result))
}

fn exists_one(h: &mut MacroExprHelper<'_>, (t, args): Parts<'_>) -> Result<IdedExpr, ParseError> {
    let predicate = args.remove(1);
    let var = simple_name(h, args.remove(0))?;
    let init = literal(h, LiteralValue::Int(0.into()));
    let always = literal(h, LiteralValue::Boolean(true.into()));
    let cond = tick(h, always);
    let (accu, one) = (ident(h, RESULT), literal(h, LiteralValue::Int(1.into())));
    let plus_one = call_expr(h, operators::ADD, vec![accu, one]);
    let accu = ident(h, RESULT);
    let step = call_expr(h, operators::CONDITIONAL, vec![predicate, plus_one, accu]);
    let (accu, one) = (ident(h, RESULT), literal(h, LiteralValue::Int(1.into())));
    let result = call_expr(h, operators::EQUALS, vec![accu, one]);
    comprehension(h, t, var, (init, cond, step, result))
}

/// `@result + [item]`, guarded by `filter` as `filter ? … : @result`; the
/// step is charged through the filter, or else through the item.
fn append(h: &mut MacroExprHelper<'_>, item: IdedExpr, filter: Option<IdedExpr>) -> IdedExpr {
    let accu = ident(h, RESULT);
    let item = match filter {
        Some(_) => item,
        None => tick(h, item),
    };
    let list = h.next_expr(Expr::List(ListExpr::new(vec![item])));
    let step = call_expr(h, operators::ADD, vec![accu, list]);
    match filter {
        Some(filter) => {
            let (filter, accu) = (tick(h, filter), ident(h, RESULT));
            call_expr(h, operators::CONDITIONAL, vec![filter, step, accu])
        }
        None => step,
    }
}

fn collect(
    h: &mut MacroExprHelper<'_>,
    t: &mut Option<IdedExpr>,
    var: String,
    step: IdedExpr,
) -> Result<IdedExpr, ParseError> {
    let init = h.next_expr(Expr::List(ListExpr::new(Vec::new())));
    let cond = literal(h, LiteralValue::Boolean(true.into()));
    let result = ident(h, RESULT);
    comprehension(h, t, var, (init, cond, step, result))
}

/// `map(x, f)` and `map(x, p, f)`.
fn map(h: &mut MacroExprHelper<'_>, (t, args): Parts<'_>) -> Result<IdedExpr, ParseError> {
    let function = args
        .pop()
        .ok_or_else(|| h.new_error(0, "map needs a function"))?;
    let var = simple_name(h, args.remove(0))?;
    let filter = args.pop();
    let step = append(h, function, filter);
    collect(h, t, var, step)
}

fn filter(h: &mut MacroExprHelper<'_>, (t, args): Parts<'_>) -> Result<IdedExpr, ParseError> {
    let var = args.remove(0);
    let name = simple_name(h, var.clone())?;
    let predicate = args.remove(0);
    let step = append(h, var, Some(predicate));
    collect(h, t, name, step)
}
