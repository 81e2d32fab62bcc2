//! What a write changed, as structured-merge-diff's `Compare` finds it: the
//! paths added or modified and the paths removed between the live object
//! and the new one. A leaf (scalar, atomic list or map, empty container)
//! is compared by value; a path whose value is new is added itself as well
//! as everything below it. One walk over both objects.

use serde_json::{Map, Value};

use super::schema::{ListType, Type};
use super::set::Fields;

/// The paths a write added or modified, and those it removed.
#[derive(Debug, Default)]
pub struct Comparison {
    pub changed: Fields,
    pub removed: Fields,
}

/// Compares `live` (None: nothing) with `new` under `ty`.
pub fn compare(live: Option<&Value>, new: Option<&Value>, ty: Type<'_>) -> Comparison {
    let mut walk = Walk::default();
    walk.compare(live, new, ty);
    walk.out
}

#[derive(Default)]
struct Walk {
    path: Vec<String>,
    out: Comparison,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Scalar,
    List,
    Map,
}

/// What the value is (None for null: the schema decides).
fn shape(value: Option<&Value>) -> Option<Shape> {
    match value? {
        Value::Null => None,
        Value::Array(_) => Some(Shape::List),
        Value::Object(_) => Some(Shape::Map),
        _ => Some(Shape::Scalar),
    }
}

fn is_empty(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => true,
        Some(Value::Array(items)) => items.is_empty(),
        Some(Value::Object(map)) => map.is_empty(),
        Some(_) => false,
    }
}

impl Walk {
    fn compare(&mut self, lhs: Option<&Value>, rhs: Option<&Value>, ty: Type<'_>) {
        if self.visit(lhs, rhs, ty) {
            return;
        }
        if lhs.is_none() {
            self.out.changed.insert(&self.path);
        } else if rhs.is_none() {
            self.out.removed.insert(&self.path);
        }
    }

    /// Visits the values; true when they were compared as a leaf.
    fn visit(&mut self, lhs: Option<&Value>, rhs: Option<&Value>, ty: Type<'_>) -> bool {
        let shape = match (shape(lhs), shape(rhs)) {
            (Some(l), Some(r)) if l != r => return self.leaf(lhs, rhs),
            (Some(s), _) | (None, Some(s)) => s,
            (None, None) => return self.leaf(lhs, rhs),
        };
        let both_empty = is_empty(lhs) && is_empty(rhs);
        match shape {
            Shape::Scalar => self.leaf(lhs, rhs),
            Shape::List => match ty.list_type() {
                ListType::Atomic => self.leaf(lhs, rhs),
                _ if both_empty => self.leaf(lhs, rhs),
                list_type => {
                    self.list(items(lhs), items(rhs), &list_type, ty);
                    false
                }
            },
            Shape::Map if ty.atomic_map() || both_empty || !ty.is_object() => self.leaf(lhs, rhs),
            Shape::Map => {
                self.map(entries(lhs), entries(rhs), ty);
                false
            }
        }
    }

    fn leaf(&mut self, lhs: Option<&Value>, rhs: Option<&Value>) -> bool {
        match (lhs, rhs) {
            (None, _) => self.out.changed.insert(&self.path),
            (_, None) => self.out.removed.insert(&self.path),
            (Some(l), Some(r)) if l != r => self.out.changed.insert(&self.path),
            _ => {}
        }
        true
    }

    fn map(
        &mut self,
        lhs: Option<&Map<String, Value>>,
        rhs: Option<&Map<String, Value>>,
        ty: Type<'_>,
    ) {
        let in_metadata = self.path.len() == 1 && self.path[0] == "f:metadata";
        let keys = lhs.into_iter().flat_map(|m| m.keys()).chain(
            rhs.into_iter()
                .flat_map(|m| m.keys())
                .filter(|k| !lhs.is_some_and(|l| l.contains_key(*k))),
        );
        let keys: Vec<&String> = keys.collect();
        for key in keys {
            // The entries are the field manager's own bookkeeping.
            if in_metadata && key == "managedFields" {
                continue;
            }
            let (field, _) = ty.field(key);
            self.path.push(format!("f:{key}"));
            self.compare(
                lhs.and_then(|m| m.get(key)),
                rhs.and_then(|m| m.get(key)),
                field,
            );
            self.path.pop();
        }
    }

    fn list(&mut self, lhs: &[Value], rhs: &[Value], list_type: &ListType, ty: Type<'_>) {
        let mut groups: Vec<(String, Vec<&Value>, Vec<&Value>)> = Vec::new();
        let mut index = std::collections::HashMap::new();
        for (side, items) in [(0, lhs), (1, rhs)] {
            for item in items {
                let Some(pe) = item_element(item, list_type) else {
                    continue;
                };
                let at = *index.entry(pe.clone()).or_insert_with(|| {
                    groups.push((pe, Vec::new(), Vec::new()));
                    groups.len() - 1
                });
                let group = &mut groups[at];
                if side == 0 {
                    group.1.push(item);
                } else {
                    group.2.push(item);
                }
            }
        }
        let items_ty = ty.items();
        for (pe, l, r) in groups {
            self.path.push(pe);
            match (l.len(), r.len()) {
                (0..=1, 0..=1) => self.compare(l.first().copied(), r.first().copied(), items_ty),
                (2.., 2..) if l != r => self.out.changed.insert(&self.path),
                (2.., 2..) => {}
                (2.., _) => {
                    if let Some(first) = r.first() {
                        self.compare(None, Some(first), items_ty);
                    }
                    self.out.removed.insert(&self.path);
                }
                (_, _) => {
                    if let Some(first) = l.first() {
                        self.compare(Some(first), None, items_ty);
                    }
                    self.out.changed.insert(&self.path);
                }
            }
            self.path.pop();
        }
    }
}

fn items(value: Option<&Value>) -> &[Value] {
    value
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn entries(value: Option<&Value>) -> Option<&Map<String, Value>> {
    value.and_then(Value::as_object)
}

/// The path element of a list item: `k:{…}` by the list's keys (sorted by
/// name, as structured-merge-diff orders them), `v:<json>` for a set's
/// item; None for an item that has neither.
pub fn item_element(item: &Value, list_type: &ListType) -> Option<String> {
    match list_type {
        ListType::Atomic => None,
        ListType::Set => Some(format!("v:{item}")),
        ListType::Map(keys) => {
            let fields = item.as_object()?;
            let mut names: Vec<&String> = keys.iter().filter(|k| fields.contains_key(*k)).collect();
            if names.is_empty() {
                return None;
            }
            names.sort();
            let parts: Vec<String> = names
                .iter()
                .map(|k| format!("{}:{}", Value::String((*k).clone()), fields[k.as_str()]))
                .collect();
            Some(format!("k:{{{}}}", parts.join(",")))
        }
    }
}
