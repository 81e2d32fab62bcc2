//! Where the estimate's sizes come from: the schema's bounds at CRD write
//! ([`StaticSizes`]), the values `self` is bound to at run time
//! ([`ActualSizes`]).

use cel::Value as Cel;

use super::super::schema::{Kind, Node, MAX_REQUEST_SIZE};

/// One step from `self` to a value below it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    Field(String),
    /// An element of a list, a value of a map.
    Element,
    /// A key of a map.
    Key,
}

/// A size range (characters, bytes, elements), cel-go's `SizeEstimate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Size {
    pub min: u64,
    pub max: u64,
}

impl Size {
    pub(crate) fn exact(n: u64) -> Size {
        Size { min: n, max: n }
    }

    pub(crate) fn upto(max: u64) -> Size {
        Size { min: 0, max }
    }

    pub(crate) fn add(self, other: Size) -> Size {
        Size {
            min: self.min.saturating_add(other.min),
            max: self.max.saturating_add(other.max),
        }
    }

    pub(crate) fn mul(self, other: Size) -> Size {
        Size {
            min: self.min.saturating_mul(other.min),
            max: self.max.saturating_mul(other.max),
        }
    }

    pub(crate) fn union(self, other: Size) -> Size {
        Size {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }
}

/// Where sizes come from.
pub(crate) trait Sizes {
    /// The size of the value at `path` below `self`.
    fn size(&self, path: &[Step]) -> Option<Size>;
    /// Whether the value at `path` is a map (iterated by key).
    fn is_map(&self, path: &[Step]) -> bool;
    /// Whether the value at `path` is a list.
    fn is_list(&self, path: &[Step]) -> bool;
    /// The size of a value not reached by a path (a computed string, list).
    fn fallback(&self) -> u64;
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
    fn size(&self, path: &[Step]) -> Option<Size> {
        if path.last() == Some(&Step::Key) {
            return Some(Size::upto(MAX_REQUEST_SIZE - 2));
        }
        self.node(path).map(|n| Size::upto(n.max_elements))
    }
    fn is_map(&self, path: &[Step]) -> bool {
        self.node(path).is_some_and(|n| n.kind == Kind::Map)
    }
    fn is_list(&self, path: &[Step]) -> bool {
        self.node(path).is_some_and(|n| n.kind == Kind::List)
    }
    fn fallback(&self) -> u64 {
        MAX_REQUEST_SIZE - 2
    }
}

/// Sizes from the values `self` is bound to: the range of those a path
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
    fn size(&self, path: &[Step]) -> Option<Size> {
        let mut range: Option<Size> = None;
        visit(self.value, path, &mut |v| {
            let size = Size::exact(size_of_value(v).unwrap_or(1));
            range = Some(range.map_or(size, |r| r.union(size)));
        });
        Some(range.unwrap_or(Size::exact(0)))
    }
    fn is_map(&self, path: &[Step]) -> bool {
        let mut map = false;
        visit(self.value, path, &mut |v| map |= matches!(v, Cel::Map(_)));
        map
    }
    fn is_list(&self, path: &[Step]) -> bool {
        let mut list = false;
        visit(self.value, path, &mut |v| list |= matches!(v, Cel::List(_)));
        list
    }
    fn fallback(&self) -> u64 {
        self.total
    }
}
