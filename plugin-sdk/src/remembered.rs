//! Reads an instance keeps between its calls (instances are reused) while
//! the `watermark` of their resource stays where it was: a hot admission
//! plugin then reads the store only after the resource changed. The
//! watermark is read before the store, so a change made while reading shows
//! up as a moved watermark on the next call.
//!
//! Keep it in a `thread_local!` (one per instance on wasm32; natively one per
//! test thread):
//!
//! ```ignore
//! thread_local! {
//!     static NAMESPACES: RefCell<Remembered<Option<bool>>> =
//!         const { RefCell::new(Remembered::new("v1", "namespaces")) };
//! }
//! ```

use std::collections::BTreeMap;

use crate::host;

/// Entries kept at most; past that, everything is forgotten at once.
const MAX_ENTRIES: usize = 4096;

/// Values read from one resource, by key, valid for one watermark.
pub struct Remembered<T> {
    api_version: &'static str,
    resource: &'static str,
    watermark: Option<String>,
    entries: BTreeMap<String, T>,
}

impl<T: Clone> Remembered<T> {
    /// Nothing remembered yet of `resource` in `api_version`.
    pub const fn new(api_version: &'static str, resource: &'static str) -> Self {
        Remembered {
            api_version,
            resource,
            watermark: None,
            entries: BTreeMap::new(),
        }
    }

    /// The value of `key`: the one remembered while the resource has not
    /// changed, else `read()`'s, remembered when `keep` says so (leave out
    /// answers that must be read again each time, such as "not found").
    pub fn get_or_read(
        &mut self,
        key: &str,
        read: impl FnOnce() -> Result<T, String>,
        keep: impl FnOnce(&T) -> bool,
    ) -> Result<T, String> {
        let mark = host::watermark(self.api_version, self.resource)?;
        if self.watermark.as_deref() != Some(mark.as_str()) {
            self.entries.clear();
            self.watermark = Some(mark);
        }
        if let Some(value) = self.entries.get(key) {
            return Ok(value.clone());
        }
        let value = read()?;
        if keep(&value) {
            if self.entries.len() >= MAX_ENTRIES {
                self.entries.clear();
            }
            self.entries.insert(key.to_string(), value.clone());
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;
    use serde_json::json;
    use std::cell::Cell;

    #[test]
    fn reads_again_only_after_the_resource_changed() {
        testing::reset();
        let reads = Cell::new(0);
        let mut cache = Remembered::new("v1", "namespaces");
        let mut get = |key: &str, found: bool| {
            cache.get_or_read(
                key,
                || {
                    reads.set(reads.get() + 1);
                    Ok(found)
                },
                |found| *found,
            )
        };
        assert_eq!(get("a", true), Ok(true));
        assert_eq!(get("a", true), Ok(true));
        assert_eq!(reads.get(), 1);
        // Answers `keep` refuses are read every time.
        get("gone", false).unwrap();
        get("gone", false).unwrap();
        assert_eq!(reads.get(), 3);
        testing::put_object("v1", "namespaces", json!({"metadata": {"name": "b"}}));
        get("a", true).unwrap();
        assert_eq!(reads.get(), 4);
        // Another resource's changes keep what was read.
        testing::put_object("v1", "configmaps", json!({"metadata": {"name": "c"}}));
        get("a", true).unwrap();
        assert_eq!(reads.get(), 4);
    }
}
