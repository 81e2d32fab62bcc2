//! kube's format library (k8s.io/apiserver/pkg/cel/library/format.go):
//! `format.dns1123Label()` … `format.datetime()`, `format.named(name)` (an
//! optional) and `<Format>.validate(string)`, which is `optional.none()` for
//! a valid string and otherwise the optional list of kube's messages
//! (apimachinery's `IsDNS1123Label`, `IsQualifiedName`, …).

use std::sync::Arc;

use cel::objects::{Opaque, OptionalValue};
use cel::Value;

use crate::call::{opaque, string, Answer};

/// A named format, `kubernetes.NamedFormat`.
#[derive(Debug, PartialEq, Eq)]
pub struct Format(&'static str);

impl Opaque for Format {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.NamedFormat"
    }
}

/// The names `format.<name>()` and `format.named(name)` know.
pub(crate) const NAMES: &[&str] = &[
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

pub(crate) fn call(name: &str, this: Option<&Value>, args: &[Value]) -> Answer {
    match (this, args) {
        (Some(this), [text]) if name == "validate" => {
            let format = opaque::<Format>(this)?;
            Some(Ok(validated(format.0, string(text)?)))
        }
        (None, [text]) if name == "format.named" => {
            let wanted = string(text)?;
            let found = NAMES.iter().find(|n| **n == wanted);
            let value = found.map(|n| Value::Opaque(Arc::new(Format(n))));
            Some(Ok(optional(value)))
        }
        (None, []) => {
            let short = name.strip_prefix("format.")?;
            let found = NAMES.iter().find(|n| **n == short)?;
            Some(Ok(Value::Opaque(Arc::new(Format(found)))))
        }
        _ => None,
    }
}

fn optional(value: Option<Value>) -> Value {
    Value::Opaque(Arc::new(match value {
        Some(v) => OptionalValue::of(v),
        None => OptionalValue::none(),
    }))
}

fn validated(format: &str, text: &str) -> Value {
    let errors = problems(format, text);
    if errors.is_empty() {
        return optional(None);
    }
    let list: Vec<Value> = errors.into_iter().map(Value::from).collect();
    optional(Some(Value::List(Arc::new(list))))
}

/// kube's messages for `text` in `format`.
fn problems(format: &str, text: &str) -> Vec<String> {
    match format {
        "dns1123Label" => kube_rules::dns1123_label(text),
        "dns1123Subdomain" => kube_rules::dns1123_subdomain(text),
        "dns1035Label" => kube_rules::dns1035_label(text),
        "qualifiedName" => kube_rules::qualified_name(text),
        "dns1123LabelPrefix" => kube_rules::name_is_dns_label(text, true),
        "dns1123SubdomainPrefix" => kube_rules::name_is_dns_subdomain(text, true),
        "dns1035LabelPrefix" => kube_rules::name_is_dns1035_label(text, true),
        "labelValue" => kube_rules::label_value(text),
        "uri" => strfmt::uri(text),
        "uuid" => strfmt::check(strfmt::is_uuid(text), "does not match the UUID format"),
        "byte" => strfmt::check(strfmt::is_base64(text), "invalid base64"),
        "date" => strfmt::check(strfmt::is_date(text), "invalid date"),
        _ => strfmt::check(strfmt::is_datetime(text), "invalid datetime"),
    }
}

mod strfmt;
