//! What rules report, as kube's `field.Error`s: violations at request time
//! (`spec.replicas: Invalid value: "object": must be at most maxReplicas`)
//! and problems at CRD write, plus kube's wording for evaluation errors.

use cel::ExecutionError;

/// A `field.Error` type a violation may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViolationKind {
    Invalid,
    Forbidden,
    Required,
    Duplicate,
    /// `field.InternalError`.
    Internal,
}

impl ViolationKind {
    /// The `metav1.StatusCause` reason (`FieldValueInvalid`, …).
    pub fn reason(self) -> &'static str {
        match self {
            ViolationKind::Invalid => "FieldValueInvalid",
            ViolationKind::Forbidden => "FieldValueForbidden",
            ViolationKind::Required => "FieldValueRequired",
            ViolationKind::Duplicate => "FieldValueDuplicate",
            ViolationKind::Internal => "InternalError",
        }
    }
}

/// A rule an object breaks (or could not be checked against).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleViolation {
    /// kube's field path: `spec.items[2]`, `spec.labels[key]`; `<nil>` for
    /// the object itself, as kube prints a nil path.
    pub field: String,
    pub kind: ViolationKind,
    /// The message: the rule's, the messageExpression's, or kube's.
    pub detail: String,
    /// The schema type of the value (`object`, `string`, `integer`, … or
    /// empty for int-or-string), kube's "value" of an Invalid or Duplicate.
    pub value_type: String,
}

impl RuleViolation {
    /// kube's `field.Error.Error()`: `spec.x: Invalid value: "object": …`.
    pub fn message(&self) -> String {
        format!("{}: {}", self.field, self.body())
    }

    /// kube's `field.Error.ErrorBody()`: the message without the field.
    pub fn body(&self) -> String {
        let quoted = kube_rules::gofmt::quote(&self.value_type);
        match self.kind {
            ViolationKind::Invalid => format!("Invalid value: {quoted}: {}", self.detail),
            ViolationKind::Forbidden => format!("Forbidden: {}", self.detail),
            ViolationKind::Required => format!("Required value: {}", self.detail),
            ViolationKind::Duplicate => format!("Duplicate value: {quoted}"),
            ViolationKind::Internal => format!("Internal error: {}", self.detail),
        }
    }
}

/// A `field.Error` type a CRD-write problem may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemKind {
    Invalid,
    Forbidden,
    Required,
    NotSupported,
    Internal,
}

/// What is wrong with a rule of a schema, at CRD write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleProblem {
    /// kube's path: `….properties[spec].x-kubernetes-validations[0].rule`.
    pub field: String,
    pub kind: ProblemKind,
    /// The bad value as kube prints it (Go syntax: `"text"`, `true`,
    /// `apiextensions.ValidationRule{…}`), for Invalid and NotSupported.
    pub value: String,
    pub detail: String,
}

impl RuleProblem {
    pub(crate) fn new(field: String, kind: ProblemKind, value: String, detail: String) -> Self {
        RuleProblem {
            field,
            kind,
            value,
            detail,
        }
    }

    /// The `metav1.StatusCause` reason.
    pub fn reason(&self) -> &'static str {
        match self.kind {
            ProblemKind::Invalid => "FieldValueInvalid",
            ProblemKind::Forbidden => "FieldValueForbidden",
            ProblemKind::Required => "FieldValueRequired",
            ProblemKind::NotSupported => "FieldValueNotSupported",
            ProblemKind::Internal => "InternalError",
        }
    }

    /// kube's `field.Error.Error()`.
    pub fn message(&self) -> String {
        format!("{}: {}", self.field, self.body())
    }

    /// kube's `field.Error.ErrorBody()`: the message without the field.
    pub fn body(&self) -> String {
        match self.kind {
            ProblemKind::Invalid => format!("Invalid value: {}: {}", self.value, self.detail),
            ProblemKind::Forbidden => format!("Forbidden: {}", self.detail),
            ProblemKind::Required => format!("Required value: {}", self.detail),
            ProblemKind::NotSupported => {
                format!("Unsupported value: {}: {}", self.value, self.detail)
            }
            ProblemKind::Internal => format!("Internal error: {}", self.detail),
        }
    }
}

/// cel-go's text for an evaluation error (`no such key: x`, …).
pub fn evaluation_error(error: &ExecutionError) -> String {
    match error {
        ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
        ExecutionError::IndexOutOfBounds(index) => {
            format!("index out of bounds: {}", plain(index))
        }
        ExecutionError::DivisionByZero(_) => "division by zero".to_string(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_string(),
        ExecutionError::Overflow(..) => "integer overflow".to_string(),
        ExecutionError::NoSuchOverload(_) | ExecutionError::UnsupportedBinaryOperator(..) => {
            "no such overload".to_string()
        }
        ExecutionError::FunctionError { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

fn plain(value: &cel::Value) -> String {
    match value {
        cel::Value::Int(i) => i.to_string(),
        cel::Value::UInt(u) => u.to_string(),
        other => format!("{other:?}"),
    }
}
