//! The policy of an instance, kept between calls (authorizer instances are
//! reused) and rebuilt only when the watermark of one of the four RBAC
//! resources moved. The watermarks are read before listing, so a change
//! made while listing shows up as a moved watermark on the next call.
//!
//! The cache is thread-local: on wasm32 that is one static per instance;
//! natively each test thread has its own, so tests cannot see each other's.

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::Value;

use crate::policy::{Lists, Policy};

/// The API version of the RBAC objects.
pub const API_VERSION: &str = "rbac.authorization.k8s.io/v1";

/// The four RBAC resources the policy is built from.
pub const RESOURCES: [&str; 4] = [
    "clusterroles",
    "clusterrolebindings",
    "roles",
    "rolebindings",
];

/// Where the objects come from (the plugin host, or a test double).
pub trait Store {
    /// The watermark of `resource` (rbac.authorization.k8s.io/v1).
    fn watermark(&self, resource: &str) -> Result<String, String>;
    /// Every object of `resource` (rbac.authorization.k8s.io/v1), all namespaces.
    fn list(&self, resource: &str) -> Result<Vec<Value>, String>;
}

struct Cached {
    watermarks: Vec<String>,
    policy: Rc<Policy>,
}

thread_local! {
    static CACHE: RefCell<Option<Cached>> = const { RefCell::new(None) };
}

/// The current policy: the cached one while the watermarks are unchanged,
/// else one built from fresh lists (and cached).
pub fn current_policy(store: &impl Store) -> Result<Rc<Policy>, String> {
    let watermarks = RESOURCES
        .iter()
        .map(|r| store.watermark(r))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(policy) = cached(&watermarks) {
        return Ok(policy);
    }
    let policy = Rc::new(Policy::new(&load(store)?));
    let entry = Cached {
        watermarks,
        policy: Rc::clone(&policy),
    };
    CACHE.with(|c| *c.borrow_mut() = Some(entry));
    Ok(policy)
}

/// Drops the cached policy (the next call rebuilds it).
pub fn forget() {
    CACHE.with(|c| *c.borrow_mut() = None);
}

fn cached(watermarks: &[String]) -> Option<Rc<Policy>> {
    CACHE.with(|c| {
        let cache = c.borrow();
        let entry = cache.as_ref()?;
        (entry.watermarks == watermarks).then(|| Rc::clone(&entry.policy))
    })
}

fn load(store: &impl Store) -> Result<Lists, String> {
    Ok(Lists {
        cluster_roles: store.list("clusterroles")?,
        cluster_role_bindings: store.list("clusterrolebindings")?,
        roles: store.list("roles")?,
        role_bindings: store.list("rolebindings")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[derive(Default)]
    struct Fake {
        mark: Cell<u32>,
        lists: Cell<u32>,
        fail: Cell<bool>,
    }

    impl Store for Fake {
        fn watermark(&self, resource: &str) -> Result<String, String> {
            if self.fail.get() {
                return Err("down".into());
            }
            Ok(format!("{resource}:{}", self.mark.get()))
        }
        fn list(&self, _resource: &str) -> Result<Vec<Value>, String> {
            self.lists.set(self.lists.get() + 1);
            Ok(Vec::new())
        }
    }

    #[test]
    fn rebuilds_only_when_a_watermark_moves() {
        forget();
        let store = Fake::default();
        current_policy(&store).unwrap();
        current_policy(&store).unwrap();
        assert_eq!(store.lists.get(), 4);
        store.mark.set(1);
        current_policy(&store).unwrap();
        assert_eq!(store.lists.get(), 8);
        forget();
        current_policy(&store).unwrap();
        assert_eq!(store.lists.get(), 12);
    }

    #[test]
    fn store_errors_are_returned() {
        forget();
        let store = Fake::default();
        store.fail.set(true);
        assert_eq!(current_policy(&store).unwrap_err(), "down");
    }
}
