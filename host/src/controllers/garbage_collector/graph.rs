//! The garbage collector's view of the store: every object's uid, key,
//! owners and deletion state, and the reverse index from owners to their
//! dependents. Changes return the uids whose situation they may change.

use std::collections::{BTreeSet, HashMap};

use serde::Deserialize;

use crate::apimachinery::meta;
use crate::registry::Propagation;
use crate::storage::{Event, EventKind, KeyValue};

/// One owner reference of an object.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerRef {
    #[serde(default)]
    pub uid: String,
    /// The owner's foreground deletion waits for this dependent.
    #[serde(default, rename = "blockOwnerDeletion")]
    pub blocks: Option<bool>,
}

/// What the collector knows of one object.
#[derive(Clone, Debug)]
pub struct Node {
    pub uid: String,
    pub key: String,
    pub owners: Vec<OwnerRef>,
    /// Has a deletionTimestamp.
    pub deleting: bool,
    pub finalizers: Vec<String>,
}

impl Node {
    pub fn has_finalizer(&self, finalizer: &str) -> bool {
        self.finalizers.iter().any(|f| f == finalizer)
    }

    fn deleting_in_foreground(&self) -> bool {
        self.deleting && self.has_finalizer(meta::FOREGROUND_FINALIZER)
    }
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    #[serde(default)]
    uid: String,
    #[serde(default)]
    owner_references: Vec<OwnerRef>,
    #[serde(default)]
    deletion_timestamp: Option<String>,
    #[serde(default)]
    finalizers: Vec<String>,
}

#[derive(Deserialize)]
struct Object {
    #[serde(default)]
    metadata: Metadata,
}

impl Node {
    /// The node of a stored object; `None` when it has no uid or is not JSON.
    fn from_kv(kv: &KeyValue) -> Option<Node> {
        let object: Object = serde_json::from_slice(&kv.value).ok()?;
        let m = object.metadata;
        (!m.uid.is_empty()).then(|| Node {
            uid: m.uid,
            key: kv.key.clone(),
            owners: m.owner_references,
            deleting: m.deletion_timestamp.is_some(),
            finalizers: m.finalizers,
        })
    }
}

#[derive(Default)]
pub struct Graph {
    nodes: HashMap<String, Node>,
    /// Storage key → uid.
    by_key: HashMap<String, String>,
    /// Owner uid → uids of the objects that reference it.
    dependents: HashMap<String, BTreeSet<String>>,
}

impl Graph {
    /// Records the stored object `kv`; returns the uids to look at.
    pub fn put(&mut self, kv: &KeyValue) -> BTreeSet<String> {
        let mut touched = self.remove(&kv.key);
        let Some(node) = Node::from_kv(kv) else {
            return touched;
        };
        for owner in &node.owners {
            self.dependents
                .entry(owner.uid.clone())
                .or_default()
                .insert(node.uid.clone());
            touched.insert(owner.uid.clone());
        }
        touched.insert(node.uid.clone());
        self.by_key.insert(node.key.clone(), node.uid.clone());
        self.nodes.insert(node.uid.clone(), node);
        touched
    }

    /// Applies one watch event; returns the uids to look at.
    pub fn apply(&mut self, event: &Event) -> BTreeSet<String> {
        match event.kind {
            EventKind::Put => self.put(&event.kv),
            EventKind::Delete => self.remove(&event.kv.key),
        }
    }

    /// Forgets the object at `key`; returns its owners and dependents.
    fn remove(&mut self, key: &str) -> BTreeSet<String> {
        let mut touched = BTreeSet::new();
        let Some(uid) = self.by_key.remove(key) else {
            return touched;
        };
        let Some(node) = self.nodes.remove(&uid) else {
            return touched;
        };
        for owner in &node.owners {
            if let Some(set) = self.dependents.get_mut(&owner.uid) {
                set.remove(&uid);
                if set.is_empty() {
                    self.dependents.remove(&owner.uid);
                }
            }
            touched.insert(owner.uid.clone());
        }
        touched.extend(self.dependents.get(&uid).into_iter().flatten().cloned());
        touched
    }

    pub fn node(&self, uid: &str) -> Option<&Node> {
        self.nodes.get(uid)
    }

    /// Every object with owners or a garbage collector finalizer.
    pub fn all(&self) -> BTreeSet<String> {
        self.nodes
            .values()
            .filter(|n| {
                !n.owners.is_empty()
                    || n.has_finalizer(meta::FOREGROUND_FINALIZER)
                    || n.has_finalizer(meta::ORPHAN_FINALIZER)
            })
            .map(|n| n.uid.clone())
            .collect()
    }

    /// The live objects that reference `owner`.
    pub fn dependents<'a>(&'a self, owner: &str) -> impl Iterator<Item = &'a Node> + 'a {
        self.dependents
            .get(owner)
            .into_iter()
            .flatten()
            .filter_map(|uid| self.nodes.get(uid))
    }

    /// How many dependents still hold `owner`'s foreground deletion.
    pub fn blocking_dependents(&self, owner: &str) -> usize {
        self.dependents(owner)
            .filter(|d| {
                d.owners
                    .iter()
                    .any(|r| r.uid == owner && r.blocks == Some(true))
            })
            .count()
    }

    /// Whether `node` is garbage, and how to delete it: every owner gone
    /// (Background), or every owner gone or deleting in foreground, one
    /// of them deleting (Foreground). `None`: keep it.
    pub fn verdict(&self, node: &Node) -> Option<Propagation> {
        if node.owners.is_empty() {
            return None;
        }
        let mut foreground = false;
        for owner in &node.owners {
            match self.nodes.get(&owner.uid) {
                None => {}
                Some(o) if o.deleting_in_foreground() => foreground = true,
                Some(_) => return None,
            }
        }
        Some(if foreground {
            Propagation::Foreground
        } else {
            Propagation::Background
        })
    }
}
