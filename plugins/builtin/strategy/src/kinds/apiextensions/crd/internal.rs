//! The v1 spec as kube's internal version sees it after conversion
//! (`Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_...`):
//! `spec.version` is the first version's name, and a schema, subresources or
//! printer columns every version carries identically move to the top level
//! (`spec.validation`, `spec.subresources`, `spec.additionalPrinterColumns`).
//! Then `validateCustomResourceDefinitionSpec` in kube's order.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::{names, schema};
use crate::common::{self, text};
use kube_rules::gofmt;

const SCOPES: [&str; 2] = ["Cluster", "Namespaced"];
const STRATEGIES: [&str; 2] = ["None", "Webhook"];

/// One version, with what stayed per-version after conversion.
pub struct Version<'a> {
    pub name: String,
    served: bool,
    pub storage: bool,
    deprecated: bool,
    deprecation_warning: Option<&'a Value>,
    schema: Option<&'a Value>,
    subresources: Option<&'a Value>,
    columns: Option<&'a Value>,
    selectable: Option<&'a Value>,
}

/// The internal spec.
pub struct Spec<'a> {
    spec: &'a Value,
    versions: Vec<Version<'a>>,
    validation: Option<&'a Value>,
    subresources: Option<&'a Value>,
}

impl<'a> Spec<'a> {
    pub fn from(spec: &'a Value) -> Spec<'a> {
        let raw = common::list(spec, "versions");
        let identical = |key: &str| {
            raw.first()
                .map(|first| raw.iter().all(|v| v.get(key) == first.get(key)))
                .unwrap_or(false)
        };
        let (move_schema, move_sub) = (identical("schema"), identical("subresources"));
        let move_columns = identical("additionalPrinterColumns");
        let versions = raw
            .iter()
            .map(|v| Version {
                name: text(v, "name").to_string(),
                served: v.get("served").and_then(Value::as_bool).unwrap_or(false),
                storage: v.get("storage").and_then(Value::as_bool).unwrap_or(false),
                deprecated: v
                    .get("deprecated")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                deprecation_warning: v.get("deprecationWarning"),
                schema: v.get("schema").filter(|_| !move_schema),
                subresources: v.get("subresources").filter(|_| !move_sub),
                columns: v.get("additionalPrinterColumns").filter(|_| !move_columns),
                selectable: v.get("selectableFields"),
            })
            .collect();
        let first = raw.first();
        Spec {
            spec,
            versions,
            validation: first.and_then(|v| v.get("schema")).filter(|_| move_schema),
            subresources: first
                .and_then(|v| v.get("subresources"))
                .filter(|_| move_sub),
        }
    }

    pub fn versions(&self) -> &[Version<'a>] {
        &self.versions
    }

    pub fn group(&self) -> &str {
        text(self.spec, "group")
    }

    pub fn plural(&self) -> &str {
        self.spec
            .pointer("/names/plural")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// `validateCustomResourceDefinitionSpec` for a create's options.
    pub fn validate(&self) -> Vec<Cause> {
        let mut causes = self.group_errors();
        causes.extend(enum_string("spec.scope", text(self.spec, "scope"), &SCOPES));
        causes.extend(self.schemas_required());
        causes.extend(self.version_errors());
        causes.extend(self.version_list_errors());
        causes.extend(self.names_errors());
        let status_enabled = self.any_status_enabled();
        causes.extend(schema::validation(
            self.validation,
            status_enabled,
            "spec.validation",
        ));
        causes.extend(self.conversion_errors());
        causes
    }

    fn group_errors(&self) -> Vec<Cause> {
        let group = self.group();
        if group.is_empty() {
            return vec![common::required("spec.group", "")];
        }
        let errs = kube_rules::dns1123_subdomain(group);
        if !errs.is_empty() {
            return vec![common::invalid_str("spec.group", group, &errs.join(","))];
        }
        if group.split('.').count() < 2 {
            let detail = "should be a domain with at least one dot";
            return vec![common::invalid_str("spec.group", group, detail)];
        }
        Vec::new()
    }

    /// RequireOpenAPISchema: every version needs a schema when none is shared.
    fn schemas_required(&self) -> Vec<Cause> {
        if has_schema(self.validation) {
            return Vec::new();
        }
        (self.versions.iter().enumerate())
            .filter(|(_, v)| !has_schema(v.schema))
            .map(|(i, _)| {
                common::required(&format!("spec.versions[{i}].schema.openAPIV3Schema"), "")
            })
            .collect()
    }

    fn version_errors(&self) -> Vec<Cause> {
        let mut causes = Vec::new();
        for (i, v) in self.versions.iter().enumerate() {
            let at = format!("spec.versions[{i}]");
            let errs = kube_rules::dns1035_label(&v.name);
            if !errs.is_empty() {
                causes.push(common::invalid_str(
                    &format!("{at}.name"),
                    &v.name,
                    &errs.join(","),
                ));
            }
            causes.extend(deprecation_warning(v, &at));
            let status = has_status(v.subresources.or(self.subresources));
            causes.extend(schema::validation(
                v.schema,
                status,
                &format!("{at}.schema"),
            ));
        }
        causes
    }

    fn version_list_errors(&self) -> Vec<Cause> {
        let mut causes = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let unique = self.versions.iter().all(|v| seen.insert(v.name.as_str()));
        if !unique {
            causes.push(self.invalid_versions("must contain unique version names"));
        }
        if self.versions.iter().filter(|v| v.storage).count() != 1 {
            causes.push(
                self.invalid_versions("must have exactly one version marked as storage version"),
            );
        }
        if let Some(first) = self.versions.first().filter(|v| !v.name.is_empty()) {
            let errs = kube_rules::dns1035_label(&first.name);
            if !errs.is_empty() {
                causes.push(common::invalid_str(
                    "spec.version",
                    &first.name,
                    &errs.join(","),
                ));
            }
        }
        causes
    }

    fn invalid_versions(&self, detail: &str) -> Cause {
        common::invalid("spec.versions", &self.rendered_versions(), detail)
    }

    fn names_errors(&self) -> Vec<Cause> {
        let names = self.spec.get("names").unwrap_or(&Value::Null);
        let mut causes = Vec::new();
        for key in ["plural", "singular", "kind", "listKind"] {
            if text(names, key).is_empty() {
                causes.push(common::required(&format!("spec.names.{key}"), ""));
            }
        }
        causes.extend(names::validate(names, "spec.names"));
        causes
    }

    fn any_status_enabled(&self) -> bool {
        has_status(self.subresources) || self.versions.iter().any(|v| has_status(v.subresources))
    }

    /// `validateCustomResourceConversion` (the webhook's client config is
    /// checked for presence only).
    fn conversion_errors(&self) -> Vec<Cause> {
        let Some(conversion) = self.spec.get("conversion").filter(|c| !c.is_null()) else {
            return Vec::new();
        };
        let at = "spec.conversion";
        let strategy = text(conversion, "strategy");
        let mut causes = enum_string(&format!("{at}.strategy"), strategy, &STRATEGIES);
        let config = conversion
            .get("webhook")
            .and_then(|w| w.get("clientConfig"));
        if strategy == "Webhook" && config.is_none() {
            let detail = "required when strategy is set to Webhook";
            causes.push(common::required(
                &format!("{at}.webhookClientConfig"),
                detail,
            ));
        }
        if strategy != "Webhook" && conversion.get("webhook").is_some_and(|w| !w.is_null()) {
            let detail = "should not be set when strategy is not set to Webhook";
            causes.push(common::forbidden(
                &format!("{at}.webhookClientConfig"),
                detail,
            ));
        }
        causes
    }

    /// `spec.Versions` as Go's `%#v` prints the internal slice. Pointers that
    /// are set print as an address in kube; a fixed one stands in for it here.
    fn rendered_versions(&self) -> String {
        let items: Vec<String> = self.versions.iter().map(rendered_version).collect();
        format!(
            "[]apiextensions.CustomResourceDefinitionVersion{{{}}}",
            items.join(", ")
        )
    }
}

fn rendered_version(v: &Version<'_>) -> String {
    let pointer = |ty: &str, set: bool| {
        let at = if set { "0xc000000000" } else { "nil" };
        format!("(*{ty})({at})")
    };
    let slice = |ty: &str, value: Option<&Value>| match value.and_then(Value::as_array) {
        Some(items) if !items.is_empty() => format!("[]{ty}{{...}}"),
        _ => format!("[]{ty}(nil)"),
    };
    format!(
        "apiextensions.CustomResourceDefinitionVersion{{Name:{}, Served:{}, Storage:{}, \
         Deprecated:{}, DeprecationWarning:{}, Schema:{}, Subresources:{}, \
         AdditionalPrinterColumns:{}, SelectableFields:{}}}",
        gofmt::quote(&v.name),
        v.served,
        v.storage,
        v.deprecated,
        pointer(
            "string",
            v.deprecation_warning.is_some_and(|w| !w.is_null())
        ),
        pointer(
            "apiextensions.CustomResourceValidation",
            v.schema.is_some_and(|s| !s.is_null())
        ),
        pointer(
            "apiextensions.CustomResourceSubresources",
            v.subresources.is_some_and(|s| !s.is_null())
        ),
        slice("apiextensions.CustomResourceColumnDefinition", v.columns),
        slice("apiextensions.SelectableField", v.selectable),
    )
}

/// `ValidateDeprecationWarning` for one version.
fn deprecation_warning(v: &Version<'_>, at: &str) -> Vec<Cause> {
    let Some(warning) = v.deprecation_warning.and_then(Value::as_str) else {
        return Vec::new();
    };
    let field = format!("{at}.deprecationWarning");
    let mut errs = Vec::new();
    if !v.deprecated {
        errs.push("can only be set for deprecated versions".to_string());
    } else {
        if warning.len() > 256 {
            errs.push("must be <= 256 characters long".to_string());
        }
        if warning.is_empty() {
            errs.push("must not be an empty string".to_string());
        }
        if let Some((i, _)) = warning.char_indices().find(|(_, c)| c.is_control()) {
            errs.push(format!(
                "must only contain printable UTF-8 characters; control character found at index {i}"
            ));
        }
    }
    errs.iter()
        .map(|e| common::invalid_str(&field, warning, e))
        .collect()
}

/// `validateEnumStrings` with `required`.
fn enum_string(field: &str, value: &str, accepted: &[&str]) -> Vec<Cause> {
    if value.is_empty() {
        return vec![common::required(field, "")];
    }
    if accepted.contains(&value) {
        return Vec::new();
    }
    vec![common::not_supported(field, value, accepted)]
}

fn has_schema(validation: Option<&Value>) -> bool {
    validation
        .and_then(|v| v.get("openAPIV3Schema"))
        .is_some_and(|s| !s.is_null())
}

fn has_status(subresources: Option<&Value>) -> bool {
    subresources
        .and_then(|s| s.get("status"))
        .is_some_and(|s| !s.is_null())
}
