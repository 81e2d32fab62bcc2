//! Query parameters of resource requests (ListOptions, CreateOptions,
//! UpdateOptions, PatchOptions, DeleteOptions in their URL form), validated as
//! kube-apiserver validates them.

use crate::apimachinery::status::{ApiError, ApiResult, Cause};
use crate::registry::WriteOptions;
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

    /// ListOptions as kube's `ValidateListOptions` checks them, for a list
    /// or (`watch`) a watch: kube's 422 naming `ListOptions.meta.k8s.io`.
    pub fn check_list_options(&self, watch: bool) -> ApiResult<()> {
        let causes = if watch {
            self.watch_option_causes()
        } else {
            self.list_option_causes()
        };
        if causes.is_empty() {
            return Ok(());
        }
        Err(ApiError::invalid("meta.k8s.io", "ListOptions", "", causes))
    }

    fn list_option_causes(&self) -> Vec<Cause> {
        let mut causes = Vec::new();
        let field = "resourceVersionMatch";
        if let Some(m) = self.get(field) {
            let rv = self.get("resourceVersion");
            if rv.is_none() {
                causes.push(Cause::forbidden(
                    field,
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            if self.get("continue").is_some() {
                causes.push(Cause::forbidden(
                    field,
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
            if !matches!(m, "Exact" | "NotOlderThan") {
                causes.push(Cause::not_supported(
                    field,
                    m,
                    &["Exact", "NotOlderThan", ""],
                ));
            }
            if m == "Exact" && rv == Some("0") {
                causes.push(Cause::forbidden(
                    field,
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        if self.get("sendInitialEvents").is_some() {
            causes.push(Cause::forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for list",
            ));
        }
        causes
    }

    fn watch_option_causes(&self) -> Vec<Cause> {
        let mut causes = Vec::new();
        let field = "resourceVersionMatch";
        let m = self.get(field);
        if self.get("sendInitialEvents").is_some() && m != Some("NotOlderThan") {
            causes.push(Cause::forbidden(
                field,
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if let Some(m) = m {
            if self.get("sendInitialEvents").is_none() {
                causes.push(Cause::forbidden(field, "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"));
            }
            if m != "NotOlderThan" {
                causes.push(Cause::not_supported(field, m, &["NotOlderThan"]));
            }
            if self.get("continue").is_some() {
                causes.push(Cause::forbidden(
                    field,
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
        }
        causes
    }

    /// `sendInitialEvents` as Go's strconv.ParseBool reads it; None when absent.
    pub fn send_initial_events(&self) -> ApiResult<Option<bool>> {
        match self.get("sendInitialEvents") {
            None => Ok(None),
            Some("1" | "t" | "T" | "true" | "TRUE" | "True") => Ok(Some(true)),
            Some("0" | "f" | "F" | "false" | "FALSE" | "False") => Ok(Some(false)),
            Some(v) => Err(ApiError::bad_request(format!(
                "strconv.ParseBool: parsing {v:?}: invalid syntax"
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

#[cfg(test)]
mod tests {
    use super::*;

    fn causes(query: &str, watch: bool) -> Vec<String> {
        let q = Query::parse(Some(query), &http::Method::GET);
        match q.check_list_options(watch) {
            Ok(()) => Vec::new(),
            Err(e) => {
                let status = e.to_status();
                assert_eq!(status["code"], 422);
                let causes = status["details"]["causes"].as_array().cloned();
                let text = |c: &serde_json::Value| format!("{}: {}", c["field"], c["message"]);
                causes.unwrap_or_default().iter().map(text).collect()
            }
        }
    }

    #[test]
    fn a_streaming_list_needs_not_older_than_and_a_watch() {
        let streaming = "sendInitialEvents=true&resourceVersionMatch=NotOlderThan";
        assert!(causes(streaming, true).is_empty());
        assert_eq!(
            causes("sendInitialEvents=true", true),
            ["\"resourceVersionMatch\": \"Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan\""]
        );
        assert_eq!(
            causes("sendInitialEvents=true", false),
            ["\"sendInitialEvents\": \"Forbidden: sendInitialEvents is forbidden for list\""]
        );
        let without = causes("resourceVersionMatch=NotOlderThan", true);
        assert!(
            without[0].contains("forbidden for watch unless sendInitialEvents"),
            "{without:?}"
        );
    }

    #[test]
    fn a_list_match_needs_a_resource_version_and_a_known_value() {
        assert!(causes("resourceVersion=5&resourceVersionMatch=Exact", false).is_empty());
        let bad = causes("resourceVersionMatch=Sometimes", false);
        assert_eq!(bad.len(), 2, "{bad:?}");
        assert!(
            bad[1].contains("Unsupported value: \\\"Sometimes\\\""),
            "{bad:?}"
        );
        let zero = causes("resourceVersion=0&resourceVersionMatch=Exact", false);
        assert!(
            zero[0].contains("forbidden for resourceVersion"),
            "{zero:?}"
        );
    }
}
