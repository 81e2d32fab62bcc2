//! The `field.Error` message selectors and object metadata report; the
//! checks themselves (qualified names, label values) and Go's quoting are
//! `kube_rules`'.

/// A `field.Invalid(path, value, detail).Error()` message; `value` is
/// already rendered (quoted string or JSON).
pub(crate) fn invalid(path: &str, value: &str, detail: &str) -> String {
    format!("{path}: Invalid value: {value}: {detail}")
}
