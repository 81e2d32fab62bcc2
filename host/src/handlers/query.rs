//! Query parameters of resource requests (ListOptions, CreateOptions,
//! UpdateOptions, PatchOptions, DeleteOptions in their URL form), validated as
//! kube-apiserver validates them.

use crate::registry::WriteOptions;
use crate::status::{ApiError, ApiResult};
use std::collections::HashMap;

/// The decoded query string (last value wins, as Go's url.Values.Get does for the first; duplicates are rare).
pub struct Query(HashMap<String, String>);

impl Query {
    pub fn parse(raw: Option<&str>) -> Self {
        let mut map = HashMap::new();
        for (k, v) in url::form_urlencoded::parse(raw.unwrap_or_default().as_bytes()) {
            map.entry(k.into_owned()).or_insert_with(|| v.into_owned());
        }
        Query(map)
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .map(String::as_str)
            .filter(|s| !s.is_empty())
    }

    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true") | Some("1"))
    }

    pub fn int(&self, key: &str) -> ApiResult<Option<i64>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.parse::<i64>().map(Some).map_err(|_| {
                ApiError::bad_request(format!("invalid value for {key}: {v:?} is not an integer"))
            }),
        }
    }

    /// `dryRun`: only `All` is accepted.
    pub fn write_options(&self) -> ApiResult<WriteOptions<'static>> {
        match self.get("dryRun") {
            None => Ok(WriteOptions::default()),
            Some("All") => Ok(WriteOptions {
                dry_run: true,
                ..WriteOptions::default()
            }),
            Some(other) => Err(ApiError::bad_request(format!(
                "dryRun: Unsupported value: {other:?}: supported values: \"All\""
            ))),
        }
    }

    /// `fieldValidation`: Ignore, Warn (the default) or Strict.
    pub fn field_validation(&self) -> ApiResult<FieldValidation> {
        match self.get("fieldValidation") {
            None | Some("Warn") => Ok(FieldValidation::Warn),
            Some("Strict") => Ok(FieldValidation::Strict),
            Some("Ignore") => Ok(FieldValidation::Ignore),
            Some(other) => Err(ApiError::bad_request(format!(
                "fieldValidation: Unsupported value: {other:?}: supported values: \"Ignore\", \"Strict\", \"Warn\""
            ))),
        }
    }

    /// `fieldManager`: at most 128 printable characters.
    pub fn check_field_manager(&self) -> ApiResult<()> {
        match self.get("fieldManager") {
            Some(m) if m.len() > 128 => Err(ApiError::bad_request(
                "fieldManager: Too long: may not be more than 128 bytes".to_string(),
            )),
            Some(m) if m.chars().any(|c| c.is_control()) => Err(ApiError::bad_request(format!(
                "fieldManager: Invalid value: {m:?}: must only contain printable characters"
            ))),
            _ => Ok(()),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FieldValidation {
    Ignore,
    Warn,
    Strict,
}
