//! Cost: kube refuses at CRD write a rule whose estimated worst-case cost,
//! times the number of times it may run (the product of the list/map sizes
//! above it), exceeds `STATIC_EXPRESSION_LIMIT`, and a CRD whose rules
//! together exceed `STATIC_CRD_LIMIT`; at run time a call may cost at most
//! `PER_CALL_LIMIT` and a request `RUNTIME_BUDGET`.
//!
//! The `cel` crate has neither cel-go's estimator nor its cost tracker, so
//! one walk of the expression does both, in cel-go's units: 1 per
//! identifier, field selection, index and ordinary call; 10/30/40 for list,
//! map and object literals; string traversal at 0.1 per character (regex at
//! 0.25 per pattern character); a comprehension (`all`, `exists`, `map`,
//! `filter`, `exists_one`) costs its range plus, per element, its condition
//! and step. Sizes come from a [`Sizes`]: at CRD write the schema's
//! maxLength/maxItems/maxProperties or, unbounded, kube's worst case within
//! a 3 MiB request ([`StaticSizes`]); at run time the actual value
//! ([`ActualSizes`]), so the "actual" cost is this same formula on the real
//! sizes, computed before evaluating, not counted while evaluating as
//! cel-go does. Our numbers are close to kube's for the usual rules
//! (comparisons, has(), size(), string functions, one level of
//! comprehension) and higher for some library calls that cel-go prices
//! lower; a rule kube accepts near the limit may be refused here.

use std::collections::HashMap;

use cel::common::ast::{operators, CallExpr, ComprehensionExpr, Expr, IdedExpr, LiteralValue};
use cel::Value as Cel;

use super::schema::{Kind, Node, MAX_REQUEST_SIZE};

/// kube's `PerCallLimit`.
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// kube's `RuntimeCELCostBudget`, per request.
pub const RUNTIME_BUDGET: i64 = 10_000_000;
/// kube's `StaticEstimatedCostLimit`, per expression.
pub const STATIC_EXPRESSION_LIMIT: u64 = 10_000_000;
/// kube's `StaticEstimatedCRDCostLimit`, all rules of a schema.
pub const STATIC_CRD_LIMIT: u64 = 100_000_000;

/// One step from `self` to a value below it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    Field(String),
    /// An element of a list, a value of a map.
    Element,
    /// A key of a map.
    Key,
}

/// Where sizes come from.
pub(crate) trait Sizes {
    /// The size (characters, elements) of the value at `path` below `self`.
    fn size(&self, path: &[Step]) -> Option<u64>;
    /// Whether the value at `path` is a map (iterated by key).
    fn is_map(&self, path: &[Step]) -> bool;
    /// The size of a value not reached by a path (a computed string, list).
    fn fallback(&self) -> u64;
}

#[derive(Clone, Default)]
struct Estimate {
    cost: u64,
    size: Option<u64>,
    path: Option<Vec<Step>>,
}

impl Estimate {
    fn cost(cost: u64) -> Self {
        Estimate {
            cost,
            ..Estimate::default()
        }
    }
}

/// The cost of `expression` with sizes from `sizes`.
pub(crate) fn estimate(expression: &IdedExpr, sizes: &dyn Sizes) -> u64 {
    let mut walker = Walker {
        sizes,
        scope: HashMap::new(),
        accumulators: HashMap::new(),
    };
    walker.scope.insert("self".to_string(), Some(Vec::new()));
    walker.scope.insert("oldSelf".to_string(), Some(Vec::new()));
    walker.walk(expression).cost
}

struct Walker<'a> {
    sizes: &'a dyn Sizes,
    scope: HashMap<String, Option<Vec<Step>>>,
    /// Comprehension accumulators: at most as large as their range.
    accumulators: HashMap<String, u64>,
}

/// `ceil(size * factor)` for factors in tenths/quarters.
fn traversal(size: u64, per_mille: u64) -> u64 {
    size.saturating_mul(per_mille).div_ceil(1000)
}

impl Walker<'_> {
    fn size_of(&self, e: &Estimate) -> u64 {
        e.size
            .or_else(|| e.path.as_ref().and_then(|p| self.sizes.size(p)))
            .unwrap_or_else(|| self.sizes.fallback())
    }

    fn walk(&mut self, e: &IdedExpr) -> Estimate {
        match &e.expr {
            Expr::Literal(LiteralValue::String(s)) => Estimate {
                size: Some(s.inner().chars().count() as u64),
                ..Estimate::default()
            },
            Expr::Literal(_) => Estimate::default(),
            Expr::Ident(name) => Estimate {
                cost: 1,
                path: self.scope.get(name).cloned().flatten(),
                size: self.accumulators.get(name).copied(),
            },
            Expr::Select(select) => {
                let operand = self.walk(&select.operand);
                let path = operand.path.map(|mut p| {
                    p.push(Step::Field(select.field.clone()));
                    p
                });
                let own = u64::from(!select.test);
                Estimate {
                    cost: operand.cost.saturating_add(own),
                    path,
                    size: None,
                }
            }
            Expr::List(list) => {
                let parts: Vec<Estimate> = list.elements.iter().map(|x| self.walk(x)).collect();
                Estimate {
                    cost: 10u64.saturating_add(sum(&parts)),
                    size: Some(list.elements.len() as u64),
                    path: None,
                }
            }
            Expr::Map(map) => self.entries(30, map.entries.len(), &map.entries),
            Expr::Struct(s) => self.entries(40, s.entries.len(), &s.entries),
            Expr::Comprehension(c) => self.comprehension(c),
            Expr::Call(call) => self.call(call),
            _ => Estimate::cost(1),
        }
    }

    fn entries(
        &mut self,
        base: u64,
        n: usize,
        entries: &[cel::common::ast::IdedEntryExpr],
    ) -> Estimate {
        use cel::common::ast::EntryExpr;
        let mut cost = base;
        for entry in entries {
            let parts = match &entry.expr {
                EntryExpr::MapEntry(m) => self.walk(&m.key).cost + self.walk(&m.value).cost,
                EntryExpr::StructField(f) => self.walk(&f.value).cost,
            };
            cost = cost.saturating_add(parts);
        }
        Estimate {
            cost,
            size: Some(n as u64),
            path: None,
        }
    }

    fn comprehension(&mut self, c: &ComprehensionExpr) -> Estimate {
        let range = self.walk(&c.iter_range);
        let count = self.size_of(&range);
        let element = range.path.as_ref().map(|p| {
            let mut p = p.clone();
            p.push(if self.sizes.is_map(&p) {
                Step::Key
            } else {
                Step::Element
            });
            p
        });
        let outer_accu = self.accumulators.insert(c.accu_var.clone(), count);
        let saved: Vec<(String, Option<Option<Vec<Step>>>)> = std::iter::once(&c.iter_var)
            .chain(c.iter_var2.as_ref())
            .map(|v| (v.clone(), self.scope.insert(v.clone(), element.clone())))
            .collect();
        let per_element = self
            .walk(&c.loop_cond)
            .cost
            .saturating_add(self.walk(&c.loop_step).cost);
        for (name, previous) in saved {
            match previous {
                Some(p) => self.scope.insert(name, p),
                None => self.scope.remove(&name),
            };
        }
        let fixed = range
            .cost
            .saturating_add(self.walk(&c.accu_init).cost)
            .saturating_add(self.walk(&c.result).cost);
        match outer_accu {
            Some(n) => self.accumulators.insert(c.accu_var.clone(), n),
            None => self.accumulators.remove(&c.accu_var),
        };
        Estimate {
            cost: fixed.saturating_add(count.saturating_mul(per_element)),
            size: Some(count),
            path: None,
        }
    }

    fn call(&mut self, call: &CallExpr) -> Estimate {
        let target = call.target.as_ref().map(|t| self.walk(t));
        let args: Vec<Estimate> = call.args.iter().map(|a| self.walk(a)).collect();
        let inputs = target
            .as_ref()
            .map_or(0, |t| t.cost)
            .saturating_add(sum(&args));
        let (own, size, path) = self.own_cost(call, target.as_ref(), &args);
        Estimate {
            cost: inputs.saturating_add(own),
            size,
            path,
        }
    }

    /// An operand's size when it is known (a literal, a computed string or
    /// list, a value the schema bounds); 0 for values without one.
    fn known_size(&self, e: Option<&Estimate>) -> u64 {
        e.and_then(|e| {
            e.size
                .or_else(|| e.path.as_ref().and_then(|p| self.sizes.size(p)))
        })
        .unwrap_or(0)
    }

    /// The call's own cost, and its result's size or path.
    fn own_cost(
        &self,
        call: &CallExpr,
        target: Option<&Estimate>,
        args: &[Estimate],
    ) -> (u64, Option<u64>, Option<Vec<Step>>) {
        let first = target.or(args.first());
        let size = |e: Option<&Estimate>| e.map_or(0, |e| self.size_of(e));
        let second = if target.is_some() {
            args.first()
        } else {
            args.get(1)
        };
        match call.func_name.as_str() {
            operators::LOGICAL_AND
            | operators::LOGICAL_OR
            | operators::LOGICAL_NOT
            | operators::CONDITIONAL
            | operators::NOT_STRICTLY_FALSE => (0, None, None),
            operators::INDEX | operators::OPT_INDEX | operators::OPT_SELECT => {
                let path = first.and_then(|e| e.path.clone()).map(|mut p| {
                    match (&call.func_name[..], args.get(1).map(|_| &call.args[1].expr)) {
                        (operators::OPT_SELECT, Some(Expr::Literal(LiteralValue::String(s)))) => {
                            p.push(Step::Field(s.inner().to_string()))
                        }
                        _ => p.push(Step::Element),
                    }
                    p
                });
                (1, None, path)
            }
            operators::EQUALS
            | operators::NOT_EQUALS
            | operators::LESS
            | operators::LESS_EQUALS
            | operators::GREATER
            | operators::GREATER_EQUALS => {
                // Only sized operands (strings, lists, maps) are traversed:
                // booleans and numbers compare at a cost of 1, as in cel-go.
                let smaller = self.known_size(first).min(self.known_size(second));
                (1u64.saturating_add(traversal(smaller, 100)), None, None)
            }
            operators::ADD => {
                // Numbers add at a cost of 1; strings and lists are copied.
                let total = self
                    .known_size(first)
                    .saturating_add(self.known_size(second));
                (
                    1u64.saturating_add(traversal(total, 100)),
                    Some(total),
                    None,
                )
            }
            operators::IN => (1u64.saturating_add(size(second)), None, None),
            "size" | "has" => (1, None, None),
            "contains" | "find" | "findAll" if target.is_some() => {
                let cost = traversal(size(first), 100).saturating_mul(traversal(size(second), 100));
                (1u64.saturating_add(cost), size(first).into(), None)
            }
            "matches" => {
                let cost = traversal(size(first), 100).saturating_mul(traversal(size(second), 250));
                (1u64.saturating_add(cost), None, None)
            }
            "sets.contains" | "sets.equivalent" | "sets.intersects" => (
                1u64.saturating_add(size(first).saturating_mul(size(second))),
                None,
                None,
            ),
            "startsWith" | "endsWith" => (
                1u64.saturating_add(traversal(size(second), 100)),
                None,
                None,
            ),
            "isSorted" | "sum" | "min" | "max" | "indexOf" | "lastIndexOf" | "join" => {
                (1u64.saturating_add(size(first)), None, None)
            }
            _ => {
                // Conversions and string/library functions: one traversal
                // of the (first) string or list argument.
                let n = size(first);
                (1u64.saturating_add(traversal(n, 100)), Some(n), None)
            }
        }
    }
}

fn sum(parts: &[Estimate]) -> u64 {
    parts.iter().fold(0u64, |a, e| a.saturating_add(e.cost))
}

/// Sizes from the schema: bounds, or kube's worst case.
pub(crate) struct StaticSizes<'a>(pub &'a Node);

impl StaticSizes<'_> {
    fn node(&self, path: &[Step]) -> Option<&Node> {
        let mut node = self.0;
        for step in path {
            node = match step {
                Step::Field(name) => node.field(name)?,
                Step::Element => node.items.as_deref().or(node.additional.as_deref())?,
                Step::Key => return None,
            };
        }
        Some(node)
    }
}

impl Sizes for StaticSizes<'_> {
    fn size(&self, path: &[Step]) -> Option<u64> {
        if path.last() == Some(&Step::Key) {
            return Some(MAX_REQUEST_SIZE - 2);
        }
        self.node(path).map(|n| n.max_elements)
    }
    fn is_map(&self, path: &[Step]) -> bool {
        self.node(path).is_some_and(|n| n.kind == Kind::Map)
    }
    fn fallback(&self) -> u64 {
        MAX_REQUEST_SIZE - 2
    }
}

/// Sizes from the values `self` is bound to: the largest of those a path
/// reaches; `total` (every character and element of `self`) for others.
pub(crate) struct ActualSizes<'a> {
    pub value: &'a Cel,
    pub total: u64,
}

fn size_of_value(value: &Cel) -> Option<u64> {
    match value {
        Cel::String(s) => Some(s.chars().count() as u64),
        Cel::List(l) => Some(l.len() as u64),
        Cel::Map(m) => Some(m.map.len() as u64),
        Cel::Bytes(b) => Some(b.len() as u64),
        _ => None,
    }
}

/// Every character and element of `value`.
pub(crate) fn total_size(value: &Cel) -> u64 {
    match value {
        Cel::List(l) => l.iter().map(total_size).sum::<u64>() + l.len() as u64,
        Cel::Map(m) => m
            .map
            .iter()
            .map(|(k, v)| total_size(&Cel::from(k)) + total_size(v))
            .sum::<u64>()
            .saturating_add(m.map.len() as u64),
        other => size_of_value(other).unwrap_or(1),
    }
}

/// The values at `path` below `value`, visited one by one.
fn visit(value: &Cel, path: &[Step], f: &mut dyn FnMut(&Cel)) {
    let Some((step, rest)) = path.split_first() else {
        f(value);
        return;
    };
    match (step, value) {
        (Step::Field(name), Cel::Map(m)) => {
            if let Some(v) = m.map.get(&cel::objects::Key::String(name.clone().into())) {
                visit(v, rest, f);
            }
        }
        (Step::Element, Cel::List(l)) => l.iter().for_each(|v| visit(v, rest, f)),
        (Step::Element, Cel::Map(m)) => m.map.values().for_each(|v| visit(v, rest, f)),
        (Step::Key, Cel::Map(m)) => m.map.keys().for_each(|k| visit(&Cel::from(k), rest, f)),
        _ => {}
    }
}

impl Sizes for ActualSizes<'_> {
    fn size(&self, path: &[Step]) -> Option<u64> {
        let mut largest = None;
        visit(self.value, path, &mut |v| {
            let size = size_of_value(v).unwrap_or(1);
            largest = Some(largest.map_or(size, |l: u64| l.max(size)));
        });
        Some(largest.unwrap_or(0))
    }
    fn is_map(&self, path: &[Step]) -> bool {
        let mut map = false;
        visit(self.value, path, &mut |v| map |= matches!(v, Cel::Map(_)));
        map
    }
    fn fallback(&self) -> u64 {
        self.total
    }
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
