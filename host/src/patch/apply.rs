//! Server-side apply (`application/apply-patch+yaml`) with managedFields:
//! each manager's applied fields are recorded (operation Apply, FieldsV1);
//! a field the manager applied before and no longer applies is removed
//! unless another manager also owns it; a field another Apply manager owns
//! with a different value is a conflict (409) unless the apply is forced,
//! which takes the fields over. Then the applied configuration is merged
//! into the object as a strategic merge patch.
//!
//! Writes other than apply keep managedFields but do not record Update
//! entries, so conflicts are found between appliers only.

use serde_json::{json, Value};

use super::field_set::{self, FieldSet};
use super::strategic::apply_merge;
use super::strategic::schema::Schema;
use super::{PatchError, SchemaLookup};

/// Who applies, and how.
pub struct Applier<'a> {
    pub manager: &'a str,
    pub force: bool,
    /// apiVersion recorded with the manager's fields.
    pub api_version: &'a str,
    /// Status is a subresource: the main resource's apply does not own it.
    pub skip_status: bool,
    /// The subresource applied to ("" for the object itself), recorded
    /// with the manager's entry.
    pub subresource: &'a str,
}

/// Why an apply was refused.
#[derive(Debug)]
pub enum ApplyError {
    Patch(PatchError),
    /// (manager, its apiVersion, field path) for each conflicting field.
    Conflicts(Vec<(String, String, String)>),
}

/// The object after `who` applies `applied` to `current` (`None`: creating).
pub fn server_side_apply(
    current: Option<&Value>,
    applied: &Value,
    who: &Applier<'_>,
    root_schema: Option<&str>,
    schemas: &dyn SchemaLookup,
) -> Result<Value, ApplyError> {
    let mut applied = applied.clone();
    if let Some(meta) = applied.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    let schema = Schema::root_for_apply(root_schema, schemas);
    let mine = field_set::of_object(&applied, schema, who.skip_status);
    let entries = current.map(managed_entries).unwrap_or_default();
    let (previous, mut others): (Vec<Value>, Vec<Value>) =
        entries.into_iter().partition(|e| is_own(e, who));
    let conflicts = conflicts(&others, &mine, current, &applied);
    if !conflicts.is_empty() && !who.force {
        return Err(ApplyError::Conflicts(conflicts));
    }
    if who.force {
        for entry in &mut others {
            let theirs = fields_of(entry);
            entry["fieldsV1"] = Value::Object(field_set::difference(&theirs, &mine));
        }
        others.retain(|e| !fields_of(e).is_empty());
    }
    let owned_by_others = others.iter().fold(FieldSet::new(), |all, e| {
        field_set::union(&all, &fields_of(e))
    });
    let before: FieldSet = previous
        .iter()
        .map(fields_of)
        .fold(FieldSet::new(), |a, b| field_set::union(&a, &b));
    let dropped = field_set::difference(&field_set::difference(&before, &mine), &owned_by_others);
    let mut base = current.cloned().unwrap_or_else(|| json!({}));
    field_set::remove_from(&mut base, &dropped);
    let mut merged =
        apply_merge(&base, &applied, root_schema, schemas).map_err(ApplyError::Patch)?;
    others.push(entry(who, mine));
    set_managed_fields(&mut merged, others)?;
    Ok(merged)
}

/// Whether `entry` is `who`'s earlier apply (same manager and subresource).
fn is_own(entry: &Value, who: &Applier<'_>) -> bool {
    let subresource = entry["subresource"].as_str().unwrap_or_default();
    entry["manager"] == who.manager
        && entry["operation"] == "Apply"
        && subresource == who.subresource
}

/// Puts `entries` into the object's metadata (in kube's order); 400 when there is no object
/// or metadata to put them in (a body whose `metadata` is not a map).
fn set_managed_fields(object: &mut Value, mut entries: Vec<Value>) -> Result<(), ApplyError> {
    crate::patch::managed_fields::sort_encoded(&mut entries);
    let not_a_map =
        || ApplyError::Patch(PatchError::BadRequest("metadata must be an object".into()));
    let object = object.as_object_mut().ok_or_else(not_a_map)?;
    let metadata = object.entry("metadata").or_insert_with(|| json!({}));
    if metadata.is_null() {
        *metadata = json!({});
    }
    let metadata = metadata.as_object_mut().ok_or_else(not_a_map)?;
    metadata.insert("managedFields".into(), Value::Array(entries));
    Ok(())
}

/// The object's managedFields entries; entries that are not maps are
/// nobody's and are dropped.
fn managed_entries(object: &Value) -> Vec<Value> {
    let entries = object
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array);
    entries
        .into_iter()
        .flatten()
        .filter(|e| e.is_object())
        .cloned()
        .collect()
}

fn fields_of(entry: &Value) -> FieldSet {
    entry["fieldsV1"].as_object().cloned().unwrap_or_default()
}

/// Fields other Apply managers own whose value the applied one changes.
fn conflicts(
    others: &[Value],
    mine: &FieldSet,
    current: Option<&Value>,
    applied: &Value,
) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for other in others.iter().filter(|e| e["operation"] == "Apply") {
        let shared = field_set::intersection(mine, &fields_of(other));
        let now = field_set::leaves(&shared, current);
        let wanted = field_set::leaves(&shared, Some(applied));
        for ((path, have), (_, want)) in now.into_iter().zip(wanted) {
            if have.is_some() && have != want {
                let manager = other["manager"].as_str().unwrap_or_default().to_string();
                let version = other["apiVersion"].as_str().unwrap_or_default().to_string();
                out.push((manager, version, path));
            }
        }
    }
    out
}

fn entry(who: &Applier<'_>, fields: FieldSet) -> Value {
    let mut entry = json!({
        "manager": who.manager,
        "operation": "Apply",
        "apiVersion": who.api_version,
        "time": crate::apimachinery::meta::now(),
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    });
    if !who.subresource.is_empty() {
        entry["subresource"] = json!(who.subresource);
    }
    entry
}

/// An apply configuration (a MutatingAdmissionPolicy's `Object{…}`)
/// merged into `current` as server-side apply merges, without recording
/// who owns the fields (kube's `ApplyStructuredMergeDiff`). Atomic lists,
/// maps and structs in it are refused: setting one would drop the fields it
/// does not name.
pub fn merge_apply_configuration(
    current: &Value,
    applied: &Value,
    root_schema: &str,
    schemas: &dyn SchemaLookup,
) -> Result<Value, String> {
    let mut atomics = Vec::new();
    let root = crate::patch::managed_fields::schema::Type::root(root_schema, schemas);
    find_atomics(&mut String::new(), applied, root, &mut atomics);
    if !atomics.is_empty() {
        return Err(format!(
            "invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: {}",
            atomics.join(", ")
        ));
    }
    apply_merge(current, applied, Some(root_schema), schemas)
        .map_err(|e| format!("failed to merge patch: {}", e.status_message()))
}

/// The paths (`.spec.selector`, `.args[0]`) of the atomic lists, maps and
/// structs in `value`; only declared fields are followed, as kube does.
fn find_atomics(
    path: &mut String,
    value: &Value,
    ty: crate::patch::managed_fields::schema::Type<'_>,
    out: &mut Vec<String>,
) {
    use crate::patch::managed_fields::schema::ListType;
    match value {
        Value::Object(fields) if ty.is_object() => {
            if ty.atomic_map() {
                out.push(path.clone());
            }
            for (key, v) in fields {
                let (field, declared) = ty.field(key);
                if declared {
                    let len = path.len();
                    path.push('.');
                    path.push_str(key);
                    find_atomics(path, v, field, out);
                    path.truncate(len);
                }
            }
        }
        Value::Array(items) => {
            if ty.list_type() == ListType::Atomic {
                out.push(path.clone());
            }
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                find_atomics(path, item, ty.items(), out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// kube's wording: `Apply failed with 1 conflict: conflict with "m" using v1: .data.k`.
pub fn conflict_message(conflicts: &[(String, String, String)]) -> String {
    let n = conflicts.len();
    let plural = if n == 1 { "" } else { "s" };
    let mut by_manager: Vec<(&str, &str, Vec<&str>)> = Vec::new();
    for (manager, version, path) in conflicts {
        match by_manager.iter_mut().find(|(m, _, _)| m == manager) {
            Some((_, _, paths)) => paths.push(path),
            None => by_manager.push((manager, version, vec![path])),
        }
    }
    let groups: Vec<String> = by_manager
        .iter()
        .map(|(manager, version, paths)| {
            let using = if version.is_empty() {
                String::new()
            } else {
                format!(" using {version}")
            };
            if paths.len() == 1 {
                format!("conflict with \"{manager}\"{using}: {}", paths[0])
            } else {
                let list: Vec<String> = paths.iter().map(|p| format!("- {p}")).collect();
                format!("conflicts with \"{manager}\"{using}:\n{}", list.join("\n"))
            }
        })
        .collect();
    format!(
        "Apply failed with {n} conflict{plural}: {}",
        groups.join("\n")
    )
}

#[cfg(test)]
mod tests;
