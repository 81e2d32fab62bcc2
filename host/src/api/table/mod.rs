//! Server-side Table output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`).
//! The rows come from where the resource's printing rules live: the strategy
//! plugin's "table" phase for built-in kinds (kube's printers), the CRD's
//! `additionalPrinterColumns` for custom resources (`custom.rs`), and kube's
//! default convertor (NAME, CREATED AT) for kinds without a printer. This
//! module assembles the Table around them: the embedded objects
//! (`includeObject`) and the list metadata.

mod build;
pub mod custom;
mod default;
mod json_path;

pub use build::{build_table, strip_column_definitions};
pub use default::{name_column, CREATION_DESCRIPTION};

/// The `includeObject` table option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IncludeObject {
    /// `object` is null in every row.
    None,
    /// `object` is a `PartialObjectMetadata` (kube's default).
    #[default]
    Metadata,
    /// `object` is the full object.
    Object,
}

/// Parses `includeObject`; an unknown value is kube's 400 message
/// (`ValidateTableOptions`, as the Table conversion words it).
pub fn parse_include_object(q: Option<&str>) -> Result<IncludeObject, String> {
    match q.unwrap_or("") {
        "" | "Metadata" => Ok(IncludeObject::Metadata),
        "None" => Ok(IncludeObject::None),
        "Object" => Ok(IncludeObject::Object),
        other => Err(format!(
            "Unable to convert to Table as requested: includeObject: Invalid value: {}: must be 'Metadata', 'Object', 'None', or empty",
            serde_json::Value::from(other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_object_values() {
        assert_eq!(parse_include_object(None), Ok(IncludeObject::Metadata));
        assert_eq!(parse_include_object(Some("None")), Ok(IncludeObject::None));
        assert_eq!(
            parse_include_object(Some("Object")),
            Ok(IncludeObject::Object)
        );
        assert_eq!(
            parse_include_object(Some("all")).unwrap_err(),
            "Unable to convert to Table as requested: includeObject: Invalid value: \"all\": must be 'Metadata', 'Object', 'None', or empty"
        );
    }
}
