//! Validation errors that name the field and the rule.

use serde::Serialize;
use std::fmt;

/// One broken rule: `content.cta.href: required`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct FieldError {
    /// Dotted path of the offending value, e.g. `content.cta.href` or `slug`.
    pub field: String,
    /// The rule that was broken, in words: `required`, `at most 120 characters`.
    pub rule: String,
}

impl FieldError {
    /// An error for `field` breaking `rule`.
    pub fn new(field: impl Into<String>, rule: impl Into<String>) -> Self {
        Self { field: field.into(), rule: rule.into() }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.rule)
    }
}

/// Every rule a value broke, in the order they were found (never empty).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ValidationErrors(pub Vec<FieldError>);

impl ValidationErrors {
    /// A single error.
    pub fn one(field: impl Into<String>, rule: impl Into<String>) -> Self {
        Self(vec![FieldError::new(field, rule)])
    }

    /// The first error; the one a caller reports when it reports one.
    pub fn first(&self) -> &FieldError {
        // Invariant: constructed only with at least one error.
        &self.0[0]
    }

    /// Turns a list into a result: empty means valid.
    pub fn check(errors: Vec<FieldError>) -> Result<(), ValidationErrors> {
        if errors.is_empty() { Ok(()) } else { Err(ValidationErrors(errors)) }
    }
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&parts.join("; "))
    }
}

impl std::error::Error for ValidationErrors {}
