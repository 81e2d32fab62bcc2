//! `metadata.managedFields` entries, read and written as kube's field
//! manager does: who (manager, operation, apiVersion, subresource), when,
//! and the set of fields. Entries of one manager, operation and
//! subresource (and, for Update, apiVersion) are one entry.

use serde_json::{json, Map, Value};

use super::set::Fields;

/// One entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub manager: String,
    pub operation: String,
    pub api_version: String,
    pub time: Option<String>,
    pub subresource: String,
    pub fields: Fields,
}

impl Entry {
    pub fn is_apply(&self) -> bool {
        self.operation == "Apply"
    }

    /// kube's manager identifier (`BuildManagerIdentifier`): an applier
    /// is the same manager whatever apiVersion it applies with.
    pub fn identity(&self) -> String {
        let mut id = Map::new();
        id.insert("manager".into(), json!(self.manager));
        id.insert("operation".into(), json!(self.operation));
        if !self.is_apply() {
            id.insert("apiVersion".into(), json!(self.api_version));
        }
        if !self.subresource.is_empty() {
            id.insert("subresource".into(), json!(self.subresource));
        }
        Value::Object(id).to_string()
    }

    /// The time in whole seconds since the epoch (0 without one).
    pub fn seconds(&self) -> i64 {
        seconds(self.time.as_deref())
    }

    fn from_json(value: &Value) -> Option<Entry> {
        let text = |field: &str| value.get(field).and_then(Value::as_str).unwrap_or_default();
        let operation = text("operation");
        let valid = matches!(operation, "Apply" | "Update")
            && !text("apiVersion").is_empty()
            && text("fieldsType") == "FieldsV1";
        if !valid {
            return None;
        }
        let fields = match value.get("fieldsV1") {
            None | Some(Value::Null) => Fields::default(),
            Some(v1) => Fields::from_v1(v1)?,
        };
        Some(Entry {
            manager: text("manager").to_string(),
            operation: operation.to_string(),
            api_version: text("apiVersion").to_string(),
            time: value
                .get("time")
                .and_then(Value::as_str)
                .map(str::to_string),
            subresource: text("subresource").to_string(),
            fields,
        })
    }

    fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("manager".into(), json!(self.manager));
        out.insert("operation".into(), json!(self.operation));
        out.insert("apiVersion".into(), json!(self.api_version));
        if let Some(time) = &self.time {
            out.insert("time".into(), json!(time));
        }
        out.insert("fieldsType".into(), json!("FieldsV1"));
        out.insert("fieldsV1".into(), self.fields.to_v1());
        if !self.subresource.is_empty() {
            out.insert("subresource".into(), json!(self.subresource));
        }
        Value::Object(out)
    }
}

/// What `managedFields` holds: None when it is not a list of valid
/// entries (kube then starts from no entries); a later entry of the same
/// identity replaces an earlier one.
pub fn decode(managed: Option<&Value>) -> Option<Vec<Entry>> {
    let list = match managed {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(_) => return None,
    };
    let mut out: Vec<Entry> = Vec::with_capacity(list.len());
    for value in list {
        let entry = Entry::from_json(value)?;
        out.retain(|e| e.identity() != entry.identity());
        out.push(entry);
    }
    Some(out)
}

/// Whether a written `managedFields` asks to clear them: `[]` or `[{}]`.
pub fn is_reset(managed: Option<&Value>) -> bool {
    match managed.and_then(Value::as_array).map(Vec::as_slice) {
        Some([]) => true,
        Some([only]) => only.as_object().is_some_and(Map::is_empty),
        _ => false,
    }
}

/// The entries in kube's order: Apply before Update, then by time (to the
/// second), manager, apiVersion and subresource.
pub fn encode(mut entries: Vec<Entry>) -> Value {
    entries.sort_by_key(|e| {
        let text = |s: &str| s.to_string();
        let (op, manager, version, sub) =
            (&e.operation, &e.manager, &e.api_version, &e.subresource);
        (
            text(op),
            e.seconds(),
            text(manager),
            text(version),
            text(sub),
        )
    });
    Value::Array(entries.iter().map(Entry::to_json).collect())
}

/// Encoded entries (as server-side apply keeps them) put in [`encode`]'s order.
pub fn sort_encoded(entries: &mut [Value]) {
    entries.sort_by_cached_key(|e| {
        let text = |field: &str| {
            e.get(field)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let time = seconds(e.get("time").and_then(Value::as_str));
        (
            text("operation"),
            time,
            text("manager"),
            text("apiVersion"),
            text("subresource"),
        )
    });
}

/// An entry's time in whole seconds since the epoch (0 without one).
fn seconds(time: Option<&str>) -> i64 {
    let parsed = time.and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok());
    parsed.map(|t| t.timestamp()).unwrap_or(0)
}

/// kube's `maxUpdateManagers`: past this many Update entries, the oldest
/// are merged into one `ancient-changes` entry per apiVersion.
pub const MAX_UPDATE_MANAGERS: usize = 10;

/// The name of the entry old Update entries are merged into.
const ANCIENT_CHANGES: &str = "ancient-changes";

/// Caps the Update entries as kube's `capManagersManager` does.
pub fn cap_updates(entries: &mut Vec<Entry>) {
    let mut updaters: Vec<(i64, String)> = entries
        .iter()
        .filter(|e| !e.is_apply())
        .map(|e| (e.seconds(), e.identity()))
        .collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    updaters.sort();
    let mut length = updaters.len();
    let mut first_of_version: Vec<(String, String)> = Vec::new();
    for (_, id) in updaters {
        if length <= MAX_UPDATE_MANAGERS {
            break;
        }
        let Some(at) = entries.iter().position(|e| e.identity() == id) else {
            continue;
        };
        let version = entries[at].api_version.clone();
        if !first_of_version.iter().any(|(v, _)| *v == version) {
            first_of_version.push((version, id));
            continue;
        }
        let merged = entries.remove(at);
        into_bucket(entries, &first_of_version, merged);
        length -= 1;
    }
}

/// Merges `old` into its apiVersion's `ancient-changes` entry, which the
/// first old entry of that version becomes.
fn into_bucket(entries: &mut [Entry], firsts: &[(String, String)], old: Entry) {
    let bucket_of = |e: &Entry| {
        e.manager == ANCIENT_CHANGES
            && !e.is_apply()
            && e.subresource.is_empty()
            && e.api_version == old.api_version
    };
    if !entries.iter().any(bucket_of) {
        let first = firsts.iter().find(|(v, _)| *v == old.api_version);
        let first = first.and_then(|(_, id)| entries.iter_mut().find(|e| e.identity() == *id));
        if let Some(first) = first {
            first.manager = ANCIENT_CHANGES.into();
            first.subresource.clear();
        }
    }
    if let Some(bucket) = entries.iter_mut().find(|e| bucket_of(e)) {
        bucket.fields.union(&old.fields);
        bucket.time = old.time;
    }
}
