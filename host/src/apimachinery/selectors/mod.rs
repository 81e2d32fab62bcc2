//! Label and field selectors, evaluated the way kube-apiserver does.
//!
//! * [`label`] implements the `labelSelector` query grammar
//!   (`a=b`, `a!=b`, `a in (x,y)`, `!a`, ...) and `metav1.LabelSelector`
//!   objects (`matchLabels` / `matchExpressions`).
//! * [`field`] implements the `fieldSelector` query grammar and the per-kind
//!   list of selectable fields, including kube's rejection messages.
//!
//! Every parse or validation error is a `String` carrying the exact message a
//! real apiserver puts in its `400 BadRequest` Status.

pub mod field;
pub mod field_rules;
mod field_values;
pub mod label;
mod label_parse;
pub(crate) mod validation;

pub use field::{check_custom_fields_supported, check_fields_supported, parse_field_selector};
pub use field::{FieldOp, FieldSelector, FieldTerm};
pub use field_rules::{field_labels_for, FieldLabels};
pub use label::{format_labels, from_label_selector_object, parse_label_selector};
pub use label::{LabelSelector, Operator, Requirement};
