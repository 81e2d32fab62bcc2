//! The own cost of a call and the size of its result: cel-go's
//! `functionCost` for the standard functions and kube's `CostEstimator`
//! (k8s.io/apiserver/pkg/cel/library/cost.go) for its libraries and the
//! strings extension. Factors are cel-go's: 0.1 per character traversed
//! (`tenths(n, 1)`), 0.2 to traverse and build (`tenths(n, 2)`), 0.25 per
//! pattern character (`regex_factor`).

use cel::common::ast::{operators, CallExpr, Expr, LiteralValue};

use super::{Estimate, Size, Walker};
use crate::runtime::{regex_factor, tenths};

impl Walker<'_> {
    /// The call's own cost, and what it knows of its result.
    pub(super) fn own(
        &self,
        name: &str,
        call: &CallExpr,
        target: Option<&Estimate>,
        args: &[Estimate],
    ) -> Estimate {
        let first = target.or(args.first());
        let second = if target.is_some() {
            args.first()
        } else {
            args.get(1)
        };
        let size = |e: Option<&Estimate>| e.map_or(Size::exact(0), |e| self.size_of(e));
        let traverse = |e: Option<&Estimate>| tenths(size(e).max, 1);
        match name {
            operators::LOGICAL_AND | operators::LOGICAL_OR => Estimate::default(),
            operators::INDEX | operators::OPT_INDEX | operators::OPT_SELECT => {
                self.index(call, first)
            }
            operators::EQUALS
            | operators::NOT_EQUALS
            | operators::LESS
            | operators::LESS_EQUALS
            | operators::GREATER
            | operators::GREATER_EQUALS => {
                // Scalars have a size of 1: they compare at a cost of 1.
                let scalar =
                    |e: Option<&Estimate>| e.and_then(|e| self.known(e)).map_or(1, |s| s.max);
                Estimate::cost(tenths(scalar(first).min(scalar(second)), 1))
            }
            operators::ADD => self.add(first, second),
            operators::IN if second.is_some_and(|m| self.is_map(m)) => Estimate::cost(1),
            operators::IN => Estimate::cost(size(second).max),
            "dyn" => Estimate {
                cost: 1,
                ..first.cloned().unwrap_or_default()
            },
            "contains" if target.is_some() => {
                Estimate::cost(traverse(first).saturating_mul(traverse(second)))
            }
            "startsWith" | "endsWith" if target.is_some() => Estimate::cost(traverse(second)),
            "matches" => Estimate::cost(regex_cost(size(first), size(second))),
            "find" | "findAll" if target.is_some() => {
                let found = Size::upto(size(first).max);
                Estimate {
                    cost: regex_cost(size(first), size(second)),
                    size: Some(found),
                    list: name == "findAll",
                    item: Some(found),
                    path: None,
                }
            }
            "lowerAscii" | "upperAscii" | "substring" | "trim" | "reverse" if target.is_some() => {
                Estimate::sized(traverse(first), size(first))
            }
            "charAt" if target.is_some() => Estimate::sized(1, Size::upto(1)),
            "replace" if target.is_some() && args.len() >= 2 => {
                let result = replaced(size(first), size(args.first()), size(args.get(1)));
                Estimate::sized(tenths(size(first).max, 2), result)
            }
            "split" if target.is_some() => self.split(call, size(first)),
            "join" if target.is_some() => self.join(first, second),
            "format" if target.is_some() => {
                let list = second.map_or(Size::exact(0), |l| self.joined(l));
                Estimate::sized(traverse(first), size(first).add(list))
            }
            "strings.quote" => {
                let s = size(first);
                let quoted = Size {
                    min: s.min.saturating_add(2),
                    max: s.max.saturating_mul(2).saturating_add(2),
                };
                Estimate::sized(traverse(first), quoted)
            }
            "bytes" => {
                let s = size(first);
                Estimate::sized(traverse(first), Size::upto(s.max.saturating_mul(4)))
            }
            "string" => match first.and_then(|e| self.known(e)) {
                Some(s) => Estimate::sized(tenths(s.max, 1).max(1), s),
                None => Estimate::cost(1),
            },
            "isSorted" | "sum" | "min" | "max" | "indexOf" | "lastIndexOf" if target.is_some() => {
                Estimate::cost(self.list_traversal(first))
            }
            "ip.isCanonical" => Estimate::cost(traverse(first).saturating_mul(2)),
            "ip" if target.is_some() => Estimate::cost(1),
            "url" | "isURL" | "ip" | "isIP" | "cidr" | "isCIDR" | "quantity" | "isQuantity"
            | "semver" | "isSemver" | "validate" => Estimate::cost(traverse(args.first()).max(1)),
            "containsIP" | "containsCIDR" => {
                // Two 16-byte addresses compared; a CIDR's mask too; a
                // string argument parsed first.
                let base = if name == "containsIP" { 4 } else { 7 };
                let parsed = second.and_then(|s| s.size).map_or(0, |s| tenths(s.max, 1));
                Estimate::cost(base + parsed)
            }
            "sets.contains" | "sets.equivalent" | "sets.intersects" => {
                Estimate::cost(size(first).max.saturating_mul(size(second).max))
            }
            _ => Estimate::cost(1),
        }
    }

    /// `a[i]`, `a[?i]`, `a.?f`: the element's path and size.
    fn index(&self, call: &CallExpr, first: Option<&Estimate>) -> Estimate {
        let Some(first) = first else {
            return Estimate::cost(1);
        };
        let field = match (&call.func_name[..], call.args.get(1).map(|a| &a.expr)) {
            (operators::OPT_SELECT, Some(Expr::Literal(LiteralValue::String(s)))) => {
                Some(s.inner().to_string())
            }
            _ => None,
        };
        let mut element = match field {
            Some(f) => {
                let path = first.path.clone().map(|mut p| {
                    p.push(super::Step::Field(f));
                    p
                });
                let list = path.as_ref().is_some_and(|p| self.sizes.is_list(p));
                Estimate {
                    path,
                    list,
                    ..Estimate::default()
                }
            }
            None => {
                let mut e = self.element(first);
                if e.path.as_ref().and_then(|p| p.last()) == Some(&super::Step::Key) {
                    // A map indexed by key yields a value, not a key.
                    if let Some(p) = e.path.as_mut() {
                        p.pop();
                        p.push(super::Step::Element);
                    }
                }
                e
            }
        };
        element.cost = 1;
        element
    }

    /// `a + b`: lists concatenate at a cost of 1, strings and bytes are
    /// copied (cel-go's `add_list`, `add_string`), numbers add at 1.
    fn add(&self, a: Option<&Estimate>, b: Option<&Estimate>) -> Estimate {
        let (Some(a), Some(b)) = (a, b) else {
            return Estimate::cost(1);
        };
        let size = match (self.known(a), self.known(b)) {
            (None, None) => None,
            (x, y) => Some(x.unwrap_or(Size::exact(0)).add(y.unwrap_or(Size::exact(0)))),
        };
        if self.is_list(a) || self.is_list(b) {
            let item = match (a.item, b.item) {
                (Some(x), Some(y)) => Some(x.union(y)),
                (x, y) => x.or(y),
            };
            let size = Some(self.size_of(a).add(self.size_of(b)));
            return Estimate {
                cost: 1,
                size,
                list: true,
                item,
                path: None,
            };
        }
        let cost = tenths(size.map_or(0, |s| s.max), 1).max(1);
        Estimate {
            cost,
            size,
            ..Estimate::default()
        }
    }

    /// kube's `split`: two traversals; at most as many parts as
    /// characters, or as a constant count.
    fn split(&self, call: &CallExpr, s: Size) -> Estimate {
        let count = match call.args.get(1).map(|a| &a.expr) {
            Some(Expr::Literal(LiteralValue::Int(n))) => u64::try_from(*n.inner()).ok(),
            _ => None,
        };
        Estimate {
            cost: tenths(s.max, 2),
            size: Some(Size::upto(count.unwrap_or(s.max))),
            list: true,
            item: Some(Size::upto(s.max)),
            path: None,
        }
    }

    /// kube's `join`: the list's size times its elements', plus the
    /// separators.
    fn join(&self, list: Option<&Estimate>, sep: Option<&Estimate>) -> Estimate {
        let Some(list) = list else {
            return Estimate::cost(1);
        };
        let mut joined = self.joined(list);
        if let Some(sep) = sep {
            let n = self.size_of(list);
            let separators = Size {
                min: n.min.saturating_sub(1),
                max: n.max.saturating_sub(1),
            };
            joined = joined.add(self.size_of(sep).mul(separators));
        }
        Estimate::sized(tenths(joined.max, 1), joined)
    }

    /// Every element of `list` end to end.
    fn joined(&self, list: &Estimate) -> Size {
        self.size_of(list).mul(self.item_size(list))
    }

    fn item_size(&self, list: &Estimate) -> Size {
        let element = self.element(list);
        self.known(&element)
            .unwrap_or_else(|| Size::upto(self.sizes.fallback()))
    }

    /// kube's list functions: each element compared once, a string
    /// element also traversed; a string target traversed once.
    fn list_traversal(&self, target: Option<&Estimate>) -> u64 {
        let Some(t) = target else { return 1 };
        let n = self.size_of(t).max;
        if !self.is_list(t) {
            return tenths(n, 1);
        }
        let element = self.element(t);
        let per_element = 1 + self.known(&element).map_or(0, |s| tenths(s.max, 1));
        n.saturating_mul(per_element)
    }
}

/// cel-go's `matches` (and kube's `find`): a traversal of the text (plus
/// one character) per four characters of the pattern.
fn regex_cost(text: Size, pattern: Size) -> u64 {
    tenths(text.max.saturating_add(1), 1).saturating_mul(regex_factor(pattern.max))
}

/// kube's `replace` estimate: the most replacements of the shortest
/// match by the longest replacement, the fewest of the longest by the
/// shortest.
fn replaced(s: Size, from: Size, to: Size) -> Size {
    let (mut count, mut retained) = (Size::exact(0), Size::exact(0));
    if from.min == 0 {
        count.max = s.max.saturating_add(1);
        retained.max = s.max;
    } else if to.max <= from.min {
        retained.max = s.max;
    } else {
        count.max = s.max.div_ceil(from.min);
    }
    if from.max == 0 {
        count.min = s.min.saturating_add(1);
        retained.min = s.min;
    } else if from.max <= to.min {
        retained.min = s.min;
    } else {
        count.min = s.min.div_ceil(from.max);
    }
    count.mul(to).add(retained)
}
