//! What the person has on screen: proposeFormValues offers new values for
//! the fields of the form they are editing. The tool saves nothing; the
//! agent's runtime hands the proposal to the person's screen, where each
//! value appears in its field to keep or discard, and only their own save
//! writes it.

use crate::catalog::ProposeFormValuesArgs;
use crate::tool::*;
use serde_json::{Value, json};

/// Most fields one proposal sets.
const MOST_FIELDS: usize = 50;
/// Longest value, in characters.
const LONGEST: usize = 20_000;

pub(crate) async fn propose_form_values(_call: &Call<'_>, a: ProposeFormValuesArgs) -> ToolResult {
    if a.values.is_empty() {
        return Err(ToolError::invalid("values: at least one field", "Name the fields the form context lists."));
    }
    if a.values.len() > MOST_FIELDS {
        return Err(ToolError::invalid(format!("values: at most {MOST_FIELDS} fields"), "Propose fewer at once."));
    }
    for (name, value) in &a.values {
        if name.trim().is_empty() || name.chars().count() > 100 {
            return Err(ToolError::invalid("values: a field name is empty or too long", "Use the form's field names."));
        }
        let long = match value {
            Value::String(s) => s.chars().count() > LONGEST,
            Value::Bool(_) | Value::Number(_) => false,
            _ => {
                return Err(ToolError::invalid(
                    format!("values.{name}: expected text, a number or true/false"),
                    "A form field holds one plain value.",
                ));
            }
        };
        if long {
            return Err(ToolError::invalid(format!("values.{name}: at most {LONGEST} characters"), "Shorten it."));
        }
    }
    let names: Vec<&str> = a.values.keys().map(String::as_str).collect();
    Ok(json!({
        "success": true,
        "values": a.values,
        "reason": a.reason,
        "message": format!(
            "Proposed {} in the form on screen; the person keeps or discards each, and nothing is saved until they save.",
            names.join(", ")
        ),
    }))
}
