//! Cost: kube refuses at CRD write a rule whose estimated worst-case cost,
//! times the number of times it may run (the product of the list/map sizes
//! above it), exceeds `STATIC_EXPRESSION_LIMIT`, and a CRD whose rules
//! together exceed `STATIC_CRD_LIMIT`; at run time a call may cost at most
//! `PER_CALL_LIMIT` and a request `RUNTIME_BUDGET`.
//!
//! The `cel` crate has neither cel-go's estimator nor its cost tracker, so
//! one walk of the expression estimates, in cel-go's units and with its
//! size ranges (`checker/cost.go`): 1 per identifier, field selection,
//! index and ordinary call; 10/30/40 for list, map and object literals;
//! a comprehension costs its range plus, per element, its condition and
//! step; the functions whose cost grows with their arguments are priced by
//! kube's and cel-go's formulas ([`calls`]), which also size their results
//! (`replace`'s by kube's formula, `split`, `join`, `+`, …), so that a
//! chain of them is priced on what it builds. Sizes come from a [`Sizes`]:
//! at CRD write the schema's maxLength/maxItems/maxProperties or,
//! unbounded, kube's worst case within a 3 MiB request ([`StaticSizes`]);
//! at run time the actual values ([`ActualSizes`]), so the "actual" cost is
//! this same formula on the real sizes, computed before evaluating; what
//! it cannot see is caught inside the evaluator ([`crate::runtime`]).
//!
//! Where this differs from kube: without a type checker, an operand's type
//! is what the expression shows (a literal, a declared list, a computed
//! list); `+` on operands of unknown type is priced as string
//! concatenation; `format` is sized as its format string plus its
//! arguments, `validate` and the parsers (`url`, `isURL`, `semver`, …) as
//! one traversal of their argument.

mod calls;
mod sizes;

use std::collections::HashMap;

use cel::common::ast::{operators, CallExpr, ComprehensionExpr, Expr, IdedExpr, LiteralValue};

pub(crate) use sizes::{total_size, ActualSizes, Size, Sizes, StaticSizes, Step};

/// kube's `PerCallLimit`.
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// kube's `RuntimeCELCostBudget`, per request.
pub const RUNTIME_BUDGET: i64 = 10_000_000;
/// kube's `StaticEstimatedCostLimit`, per expression.
pub const STATIC_EXPRESSION_LIMIT: u64 = 10_000_000;
/// kube's `StaticEstimatedCRDCostLimit`, all rules of a schema.
pub const STATIC_CRD_LIMIT: u64 = 100_000_000;

/// What the walk knows of an expression: its cost, and of its value the
/// size, the path below `self`, whether it is a list, its elements' size.
#[derive(Clone, Default, Debug)]
struct Estimate {
    cost: u64,
    size: Option<Size>,
    path: Option<Vec<Step>>,
    list: bool,
    item: Option<Size>,
}

impl Estimate {
    fn cost(cost: u64) -> Self {
        Estimate {
            cost,
            ..Estimate::default()
        }
    }

    fn sized(cost: u64, size: Size) -> Self {
        Estimate {
            cost,
            size: Some(size),
            ..Estimate::default()
        }
    }
}

/// The cost of `expression` with sizes from `sizes`.
pub(crate) fn estimate(expression: &IdedExpr, sizes: &dyn Sizes) -> u64 {
    let mut walker = Walker {
        sizes,
        scope: HashMap::new(),
    };
    for name in ["self", "oldSelf"] {
        let root = Estimate {
            path: Some(Vec::new()),
            list: sizes.is_list(&[]),
            ..Estimate::default()
        };
        walker.scope.insert(name.to_string(), root);
    }
    walker.walk(expression).cost
}

struct Walker<'a> {
    sizes: &'a dyn Sizes,
    /// Variables: `self`, `oldSelf`, comprehensions' iteration variables
    /// and accumulators.
    scope: HashMap<String, Estimate>,
}

impl Walker<'_> {
    /// The size of `e` when something bounds it.
    fn known(&self, e: &Estimate) -> Option<Size> {
        e.size
            .or_else(|| e.path.as_ref().and_then(|p| self.sizes.size(p)))
    }

    /// The size of `e`, or the worst case.
    fn size_of(&self, e: &Estimate) -> Size {
        self.known(e)
            .unwrap_or_else(|| Size::upto(self.sizes.fallback()))
    }

    fn is_list(&self, e: &Estimate) -> bool {
        e.list || e.path.as_ref().is_some_and(|p| self.sizes.is_list(p))
    }

    fn is_map(&self, e: &Estimate) -> bool {
        e.path.as_ref().is_some_and(|p| self.sizes.is_map(p))
    }

    /// What iterating over (or indexing) `e` yields.
    fn element(&self, e: &Estimate) -> Estimate {
        let path = e.path.as_ref().map(|p| {
            let mut p = p.clone();
            p.push(if self.sizes.is_map(&p) {
                Step::Key
            } else {
                Step::Element
            });
            p
        });
        let list = path.as_ref().is_some_and(|p| self.sizes.is_list(p));
        Estimate {
            cost: 0,
            size: e.item,
            path,
            list,
            item: None,
        }
    }

    fn walk(&mut self, e: &IdedExpr) -> Estimate {
        match &e.expr {
            Expr::Literal(LiteralValue::String(s)) => {
                Estimate::sized(0, Size::exact(s.inner().chars().count() as u64))
            }
            Expr::Literal(LiteralValue::Bytes(b)) => {
                Estimate::sized(0, Size::exact(b.inner().len() as u64))
            }
            Expr::Literal(_) => Estimate::default(),
            Expr::Ident(name) => Estimate {
                cost: 1,
                ..self.scope.get(name).cloned().unwrap_or_default()
            },
            Expr::Select(select) => {
                let operand = self.walk(&select.operand);
                let path = operand.path.map(|mut p| {
                    p.push(Step::Field(select.field.clone()));
                    p
                });
                let list = path.as_ref().is_some_and(|p| self.sizes.is_list(p));
                Estimate {
                    cost: operand.cost.saturating_add(1),
                    path,
                    list,
                    ..Estimate::default()
                }
            }
            Expr::List(list) => {
                let parts: Vec<Estimate> = list.elements.iter().map(|x| self.walk(x)).collect();
                let item = parts
                    .iter()
                    .map(|p| self.known(p).unwrap_or(Size::exact(1)))
                    .reduce(Size::union);
                Estimate {
                    cost: 10u64.saturating_add(sum(&parts)),
                    size: Some(Size::exact(parts.len() as u64)),
                    list: true,
                    item: Some(item.unwrap_or(Size::exact(0))),
                    path: None,
                }
            }
            Expr::Map(map) => self.entries(30, &map.entries),
            Expr::Struct(s) => self.entries(40, &s.entries),
            Expr::Comprehension(c) => self.comprehension(c),
            Expr::Call(call) => self.call(call),
            _ => Estimate::cost(1),
        }
    }

    fn entries(&mut self, base: u64, entries: &[cel::common::ast::IdedEntryExpr]) -> Estimate {
        use cel::common::ast::EntryExpr;
        let mut cost = base;
        for entry in entries {
            let parts = match &entry.expr {
                EntryExpr::MapEntry(m) => self.walk(&m.key).cost + self.walk(&m.value).cost,
                EntryExpr::StructField(f) => self.walk(&f.value).cost,
            };
            cost = cost.saturating_add(parts);
        }
        Estimate::sized(cost, Size::exact(entries.len() as u64))
    }

    /// Binds `name` to `value` while `f` walks, then restores the scope.
    fn bound<T>(&mut self, vars: Vec<(String, Estimate)>, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved: Vec<(String, Option<Estimate>)> = vars
            .into_iter()
            .map(|(name, value)| (name.clone(), self.scope.insert(name, value)))
            .collect();
        let result = f(self);
        for (name, previous) in saved.into_iter().rev() {
            match previous {
                Some(p) => self.scope.insert(name, p),
                None => self.scope.remove(&name),
            };
        }
        result
    }

    fn comprehension(&mut self, c: &ComprehensionExpr) -> Estimate {
        let range = self.walk(&c.iter_range);
        let count = self.size_of(&range).max;
        let init = self.walk(&c.accu_init);
        let collects = matches!(c.accu_init.expr, Expr::List(_) | Expr::Map(_));
        let accu = Estimate {
            size: collects.then_some(Size::upto(count)).or(init.size),
            list: init.list,
            ..Estimate::default()
        };
        let element = self.element(&range);
        let mut vars = vec![(c.accu_var.clone(), accu.clone())];
        vars.extend(
            std::iter::once(&c.iter_var)
                .chain(c.iter_var2.as_ref())
                .map(|v| (v.clone(), element.clone())),
        );
        let (per_element, step) = self.bound(vars, |w| {
            let cond = w.walk(&c.loop_cond);
            let step = w.walk(&c.loop_step);
            (cond.cost.saturating_add(step.cost), step)
        });
        let result = self.bound(vec![(c.accu_var.clone(), accu)], |w| w.walk(&c.result));
        let fixed = range
            .cost
            .saturating_add(init.cost)
            .saturating_add(result.cost);
        Estimate {
            cost: fixed.saturating_add(count.saturating_mul(per_element)),
            size: collects.then_some(Size::upto(count)).or(result.size),
            list: init.list,
            item: step.item,
            path: None,
        }
    }

    fn call(&mut self, call: &CallExpr) -> Estimate {
        if let Some(x) = crate::iterate::ticked(call) {
            return self.walk(x);
        }
        let namespace = self.namespace(call);
        let target = match namespace {
            Some(_) => None,
            None => call.target.as_ref().map(|t| self.walk(t)),
        };
        let args: Vec<Estimate> = call.args.iter().map(|a| self.walk(a)).collect();
        if call.func_name == operators::CONDITIONAL {
            return self.conditional(&args);
        }
        let inputs = target
            .as_ref()
            .map_or(0, |t| t.cost)
            .saturating_add(sum(&args));
        let name = match namespace {
            Some(ns) => format!("{ns}.{}", call.func_name),
            None => call.func_name.clone(),
        };
        let mut own = self.own(&name, call, target.as_ref(), &args);
        own.cost = own.cost.saturating_add(inputs);
        own
    }

    /// The namespace of a call such as `sets.contains(a, b)` or
    /// `strings.quote(s)`: a target naming no variable.
    fn namespace<'c>(&self, call: &'c CallExpr) -> Option<&'c str> {
        match call.target.as_deref().map(|t| &t.expr) {
            Some(Expr::Ident(ns)) if !self.scope.contains_key(ns) => Some(ns.as_str()),
            _ => None,
        }
    }

    /// `c ? a : b`: the condition and the dearer branch.
    fn conditional(&self, args: &[Estimate]) -> Estimate {
        let [c, a, b] = args else {
            return Estimate::cost(sum(args));
        };
        let size = self.known(a).zip(self.known(b)).map(|(x, y)| x.union(y));
        Estimate {
            cost: c.cost.saturating_add(a.cost.max(b.cost)),
            size,
            list: a.list && b.list,
            item: a.item.zip(b.item).map(|(x, y)| x.union(y)),
            path: None,
        }
    }
}

fn sum(parts: &[Estimate]) -> u64 {
    parts.iter().fold(0u64, |a, e| a.saturating_add(e.cost))
}

/// kube's `getCostErrorMessage`.
pub(crate) fn exceeds_message(name: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_string()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{name} exceeds budget by factor of {factor} (try simplifying the rule, or adding \
         maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

#[cfg(test)]
mod tests;
