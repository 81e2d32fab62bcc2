//! A set of field paths, as structured-merge-diff's `fieldpath.Set` holds
//! them and `FieldsV1` writes them: a tree whose edges are path elements
//! (`f:<field>`, `k:{"<key>":…}` for an item of a list merged by key,
//! `v:<json>` for an item of a set) and whose nodes may be members
//! themselves (written `.` when the node also has children, `{}` when it
//! has none).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// A field set. The root is never a member.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fields {
    member: bool,
    children: BTreeMap<String, Fields>,
}

impl Fields {
    pub fn is_empty(&self) -> bool {
        !self.member && self.children.is_empty()
    }

    /// Adds `path` (its last element becomes a member).
    pub fn insert(&mut self, path: &[String]) {
        let mut node = self;
        for element in path {
            node = node.children.entry(element.clone()).or_default();
        }
        node.member = true;
    }

    /// Whether `path` is a member.
    #[cfg(test)]
    pub fn has(&self, path: &[&str]) -> bool {
        let mut node = self;
        for element in path {
            match node.children.get(*element) {
                Some(next) => node = next,
                None => return false,
            }
        }
        node.member
    }

    /// Removes the member `path` (only that path, not what is below it).
    pub fn remove(&mut self, path: &[&str]) {
        let Some((first, rest)) = path.split_first() else {
            self.member = false;
            return;
        };
        if let Some(child) = self.children.get_mut(*first) {
            child.remove(rest);
            if child.is_empty() {
                self.children.remove(*first);
            }
        }
    }

    /// Every path in `self` or `other`.
    pub fn union(&mut self, other: &Fields) {
        self.member |= other.member;
        for (key, theirs) in &other.children {
            self.children.entry(key.clone()).or_default().union(theirs);
        }
    }

    /// The paths of `self` that are not members of `other` (paths below a
    /// member of `other` stay: fieldpath's `Difference`).
    pub fn difference(&self, other: &Fields) -> Fields {
        let mut out = Fields {
            member: self.member && !other.member,
            children: BTreeMap::new(),
        };
        for (key, mine) in &self.children {
            let rest = match other.children.get(key) {
                Some(theirs) => mine.difference(theirs),
                None => mine.clone(),
            };
            if !rest.is_empty() {
                out.children.insert(key.clone(), rest);
            }
        }
        out
    }

    /// The paths of `self` neither in `other` nor below a member of it
    /// (fieldpath's `RecursiveDifference`).
    pub fn recursive_difference(&self, other: &Fields) -> Fields {
        let mut out = Fields {
            member: self.member && !other.member,
            children: BTreeMap::new(),
        };
        for (key, mine) in &self.children {
            let rest = match other.children.get(key) {
                Some(theirs) if theirs.member => continue,
                Some(theirs) => mine.recursive_difference(theirs),
                None => mine.clone(),
            };
            if !rest.is_empty() {
                out.children.insert(key.clone(), rest);
            }
        }
        out
    }

    /// The set read from its `FieldsV1` form; None when that is not one
    /// (a value that is not an object anywhere in the tree).
    pub fn from_v1(value: &Value) -> Option<Fields> {
        let map = value.as_object()?;
        let mut out = Fields::default();
        for (key, child) in map {
            if key == "." {
                out.member = true;
                continue;
            }
            let mut node = Fields::from_v1(child)?;
            if node.children.is_empty() {
                node.member = true;
            }
            out.children.insert(key.clone(), node);
        }
        Some(out)
    }

    /// The `FieldsV1` form: `.` first, then the elements in order.
    pub fn to_v1(&self) -> Value {
        Value::Object(self.v1_children())
    }

    fn v1_children(&self) -> Map<String, Value> {
        let mut out = Map::new();
        if self.member && !self.children.is_empty() {
            out.insert(".".into(), Value::Object(Map::new()));
        }
        for (key, child) in &self.children {
            out.insert(key.clone(), Value::Object(child.v1_children()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(v: Value) -> Fields {
        Fields::from_v1(&v).expect("a FieldsV1 object")
    }

    #[test]
    fn reads_and_writes_fields_v1() {
        let v = json!({"f:data": {".": {}, "f:a": {}}, "f:spec": {"f:x": {}}});
        let s = set(v.clone());
        assert!(s.has(&["f:data"]));
        assert!(!s.has(&["f:spec"]));
        assert!(s.has(&["f:spec", "f:x"]));
        assert_eq!(s.to_v1(), v);
    }

    #[test]
    fn difference_keeps_what_is_below_a_removed_member() {
        let a = set(json!({"f:data": {".": {}, "f:a": {}}}));
        let b = set(json!({"f:data": {}}));
        assert_eq!(a.difference(&b).to_v1(), json!({"f:data": {"f:a": {}}}));
        assert_eq!(a.recursive_difference(&b).to_v1(), json!({}));
    }

    #[test]
    fn union() {
        let mut a = set(json!({"f:a": {}, "f:b": {"f:c": {}}}));
        let b = set(json!({"f:b": {"f:c": {}, "f:d": {}}}));
        a.union(&b);
        assert_eq!(a.to_v1(), json!({"f:a": {}, "f:b": {"f:c": {}, "f:d": {}}}));
    }

    #[test]
    fn removing_a_member_prunes_empty_nodes() {
        let mut a = set(json!({"f:metadata": {".": {}, "f:name": {}}, "f:kind": {}}));
        a.remove(&["f:metadata", "f:name"]);
        a.remove(&["f:kind"]);
        assert_eq!(a.to_v1(), json!({"f:metadata": {}}));
        a.remove(&["f:metadata"]);
        assert!(a.is_empty());
    }
}
