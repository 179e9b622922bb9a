//! Arguments: parsing JSON into a tool's Rust type with errors that name the
//! parameter and what was accepted, and generating the JSON Schema from the
//! same type so the two cannot disagree.

use crate::tool::ToolError;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Parses `value` into `T`; unknown parameters, wrong types and bad enum
/// values become validation errors that name the parameter.
pub fn parse<T: DeserializeOwned>(value: Value) -> Result<T, ToolError> {
    let value = if value.is_null() { Value::Object(Default::default()) } else { value };
    if !value.is_object() {
        return Err(ToolError::invalid("arguments must be a JSON object", "Pass the parameters as an object."));
    }
    serde_path_to_error::deserialize(value).map_err(|err| {
        let path = err.path().to_string();
        let message = friendly(&path, &err.into_inner().to_string());
        ToolError::invalid(message, "Fix the named parameter and call again; nothing was changed.")
    })
}

/// Turns serde's message into `param: what is wrong`.
fn friendly(path: &str, raw: &str) -> String {
    let at = |p: &str| {
        if path == "." || path.is_empty() {
            p.to_string()
        } else if p.is_empty() {
            path.to_string()
        } else {
            format!("{path}.{p}")
        }
    };
    let ticks = |s: &str| -> Vec<String> { s.split('`').skip(1).step_by(2).map(str::to_string).collect() };
    if let Some(rest) = raw.strip_prefix("unknown field ") {
        let names = ticks(rest);
        let field = names.first().cloned().unwrap_or_default();
        let accepted = names.get(1..).map(|a| a.join(", ")).unwrap_or_default();
        let field_path = if path == "." || path.is_empty() { field.clone() } else { path.to_string() };
        return if accepted.is_empty() {
            format!("{field_path}: unknown parameter (this tool takes none)")
        } else {
            format!("{field_path}: unknown parameter (accepted: {accepted})")
        };
    }
    if let Some(rest) = raw.strip_prefix("missing field ") {
        let names = ticks(rest);
        return format!("{}: required", at(names.first().map(String::as_str).unwrap_or_default()));
    }
    if let Some(rest) = raw.strip_prefix("unknown variant ") {
        let names = ticks(rest);
        let given = names.first().cloned().unwrap_or_default();
        return format!(
            "{}: \"{given}\" is not one of {}",
            at(""),
            names.get(1..).map(|a| a.join(", ")).unwrap_or_default()
        );
    }
    if let Some(rest) = raw.strip_prefix("invalid type: ") {
        let (got, expected) = rest.split_once(", expected ").unwrap_or((rest, "another type"));
        return format!("{}: expected {expected}, got {got}", at(""));
    }
    format!("{}: {raw}", at(""))
}

/// The JSON Schema of `T`: draft 2020-12, every subschema inline (no `$ref`),
/// without `$schema` and `title`, as OpenAI, Anthropic and MCP accept.
pub fn schema_of<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
        })
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    let mut value = serde_json::to_value(schema).unwrap_or_default();
    if let Value::Object(map) = &mut value {
        map.remove("$schema");
        map.remove("title");
        map.remove("$defs");
        map.entry("properties").or_insert_with(|| Value::Object(Default::default()));
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        /// A name.
        name: String,
        /// A status.
        status: Option<quire_core::model::PublishStatus>,
        /// A count.
        limit: Option<u32>,
    }

    fn err(v: Value) -> String {
        parse::<Args>(v).unwrap_err().message
    }

    #[test]
    fn errors_name_the_parameter() {
        assert_eq!(
            err(json!({"name": "x", "status": "live"})),
            "status: \"live\" is not one of draft, published, unpublished"
        );
        assert_eq!(err(json!({})), "name: required");
        assert_eq!(err(json!({"name": "x", "colour": 1})), "colour: unknown parameter (accepted: name, status, limit)");
        assert_eq!(err(json!({"name": "x", "limit": "ten"})), "limit: expected u32, got string \"ten\"");
        assert_eq!(err(json!([1])), "arguments must be a JSON object");
    }

    #[test]
    fn schema_is_inline_and_described() {
        let schema = schema_of::<Args>();
        assert!(!schema.to_string().contains("$ref"));
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["properties"]["name"]["description"], "A name.");
    }
}
