//! Query parameters of resource requests (ListOptions, CreateOptions,
//! UpdateOptions, PatchOptions, DeleteOptions in their URL form), validated as
//! kube-apiserver validates them.

use crate::registry::WriteOptions;
use crate::status::{ApiError, ApiResult, Cause};
use std::collections::HashMap;

/// The decoded query string (the first value of a repeated key, as Go's
/// url.Values.Get), and the options kind it is read as.
pub struct Query {
    values: HashMap<String, String>,
    /// `CreateOptions`, `UpdateOptions`, `PatchOptions` or `DeleteOptions`:
    /// what kube names in a 422 for a bad option of a write.
    options_kind: &'static str,
}

impl Query {
    pub fn parse(raw: Option<&str>, method: &http::Method) -> Self {
        let mut values = HashMap::new();
        for (k, v) in url::form_urlencoded::parse(raw.unwrap_or_default().as_bytes()) {
            values
                .entry(k.into_owned())
                .or_insert_with(|| v.into_owned());
        }
        let options_kind = match *method {
            http::Method::PUT => "UpdateOptions",
            http::Method::PATCH => "PatchOptions",
            http::Method::DELETE => "DeleteOptions",
            _ => "CreateOptions",
        };
        Query {
            values,
            options_kind,
        }
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.values
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
            // kube's query conversion reports strconv's error as is.
            Some(v) => v.parse::<i64>().map(Some).map_err(|_| {
                ApiError::bad_request(format!("strconv.ParseInt: parsing {v:?}: invalid syntax"))
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
            Some(other) => {
                Err(self.unsupported("dryRun", &format!("[]string{{{other:?}}}"), "\"All\""))
            }
        }
    }

    /// `fieldValidation`: Ignore, Warn (the default) or Strict.
    pub fn field_validation(&self) -> ApiResult<FieldValidation> {
        match self.get("fieldValidation") {
            None | Some("Warn") => Ok(FieldValidation::Warn),
            Some("Strict") => Ok(FieldValidation::Strict),
            Some("Ignore") => Ok(FieldValidation::Ignore),
            Some(other) => Err(self.unsupported(
                "fieldValidation",
                &format!("{other:?}"),
                "\"\", \"Ignore\", \"Strict\", \"Warn\"",
            )),
        }
    }

    /// kube's 422 for an option value it does not support (`value` as Go's `%#v`).
    fn unsupported(&self, field: &str, value: &str, supported: &str) -> ApiError {
        let cause = Cause {
            reason: "FieldValueNotSupported",
            field: field.into(),
            message: format!("Unsupported value: {value}: supported values: {supported}"),
        };
        ApiError::invalid("meta.k8s.io", self.options_kind, "", vec![cause])
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
