//! Arguments: parsing JSON into a tool's Rust type with errors that name the
//! parameter and what was accepted, and generating the JSON Schema from the
//! same type so the two cannot disagree.

use crate::tool::ToolError;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Parses `value` into `T`; unknown parameters, wrong types and bad enum
/// values become validation errors that name the parameter. A whole-number
/// float (`375.0`) is taken where an integer is expected, as JSON Schema
/// allows; `375.5` is refused.
pub fn parse<T: DeserializeOwned>(value: Value) -> Result<T, ToolError> {
    let value = if value.is_null() { Value::Object(Default::default()) } else { value };
    if !value.is_object() {
        return Err(ToolError::invalid("arguments must be a JSON object", "Pass the parameters as an object."));
    }
    quire_core::json::from_value(value).map_err(|err| {
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
        for key in ["$schema", "title", "$defs", "description"] {
            map.remove(key);
        }
        map.entry("properties").or_insert_with(|| Value::Object(Default::default()));
    }
    tidy(&mut value);
    value
}

/// Makes a generated schema lean for models: an optional parameter is just
/// its type (null is allowed only where the description says what null
/// means), free-form JSON parameters are objects, and integer formats and
/// null defaults are dropped.
fn tidy(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    // The keyword (a string); a parameter named `format` is a schema.
    if map.get("format").is_some_and(Value::is_string) {
        map.remove("format");
    }
    if map.get("default") == Some(&Value::Null) {
        map.remove("default");
    }
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for prop in props.values_mut() {
            let Value::Object(p) = prop else { continue };
            let null_means_something = p.get("description").and_then(Value::as_str).is_some_and(|d| d.contains("null"));
            if !null_means_something {
                if let Some(Value::Array(types)) = p.get("type") {
                    let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
                    if kept.len() == 1 {
                        p.insert("type".into(), kept[0].clone());
                    }
                }
                if let Some(Value::Array(values)) = p.get_mut("enum") {
                    values.retain(|v| !v.is_null());
                }
            }
            let typed = ["type", "anyOf", "oneOf", "enum", "const"].iter().any(|k| p.contains_key(*k));
            if !typed {
                p.insert("type".into(), Value::String("object".into()));
            }
        }
    }
    split_type_union(map);
    for value in map.values_mut() {
        match value {
            Value::Object(_) => tidy(value),
            Value::Array(items) => items.iter_mut().for_each(tidy),
            _ => {}
        }
    }
}

/// Rewrites `"type": ["string", "null"]` as `anyOf` branches of one type
/// each: the same values are accepted, and clients that map schemas onto a
/// single-type dialect (Gemini's OpenAPI subset, MCP Inspector's portability
/// check) can read it. Keywords about the value (enum, items, bounds) go with
/// its branch; the description stays on the property.
fn split_type_union(map: &mut serde_json::Map<String, Value>) {
    let Some(Value::Array(types)) = map.get("type") else { return };
    if types.len() < 2 {
        if let Some(only) = types.first().cloned() {
            map.insert("type".into(), only);
        }
        return;
    }
    let types = types.clone();
    map.remove("type");
    const ANNOTATIONS: [&str; 5] = ["description", "title", "default", "examples", "deprecated"];
    let constraints: Vec<String> = map.keys().filter(|k| !ANNOTATIONS.contains(&k.as_str())).cloned().collect();
    let mut shared = serde_json::Map::new();
    for key in constraints {
        if let Some(value) = map.remove(&key) {
            shared.insert(key, value);
        }
    }
    let branches = types
        .into_iter()
        .map(|t| {
            if t == "null" {
                return serde_json::json!({ "type": "null" });
            }
            let mut branch = shared.clone();
            if let Some(Value::Array(values)) = branch.get_mut("enum") {
                values.retain(|v| !v.is_null());
            }
            branch.insert("type".into(), t);
            Value::Object(branch)
        })
        .collect();
    map.insert("anyOf".into(), Value::Array(branches));
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

    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    #[allow(dead_code)]
    struct Patch {
        /// New parent; null moves it to the root.
        #[serde(default, deserialize_with = "quire_core::input::double_option")]
        #[schemars(with = "Option<String>")]
        parent_id: Option<Option<String>>,
        /// New status; null clears it.
        #[serde(default, deserialize_with = "quire_core::input::double_option")]
        #[schemars(with = "Option<quire_core::model::PublishStatus>")]
        status: Option<Option<quire_core::model::PublishStatus>>,
    }

    #[test]
    fn nullable_parameters_are_any_of_single_types() {
        let schema = schema_of::<Patch>();
        let text = schema.to_string();
        assert!(!text.contains("[\"string\",\"null\"]"), "{text}");
        let parent = &schema["properties"]["parentId"];
        assert_eq!(parent["anyOf"], json!([{"type": "string"}, {"type": "null"}]), "{parent}");
        assert_eq!(parent["description"], "New parent; null moves it to the root.");
        let status = &schema["properties"]["status"];
        let branches = status["anyOf"].as_array().unwrap();
        assert!(branches.contains(&json!({"type": "null"})), "{status}");
        assert!(
            branches.iter().any(|b| b["enum"] == json!(["draft", "published", "unpublished"])),
            "the enum goes with its non-null branch: {status}"
        );
        // Parsing is untouched: absent, null and a value stay three answers.
        let absent: Patch = parse(json!({})).unwrap();
        let cleared: Patch = parse(json!({"parentId": null})).unwrap();
        let set: Patch = parse(json!({"parentId": "pg_1"})).unwrap();
        assert_eq!((absent.parent_id, cleared.parent_id, set.parent_id), (None, Some(None), Some(Some("pg_1".into()))));
    }

    #[test]
    fn whole_floats_are_integers() {
        let args: Args = parse(json!({"name": "x", "limit": 10.0})).unwrap();
        assert_eq!(args.limit, Some(10));
        assert_eq!(err(json!({"name": "x", "limit": 10.5})), "limit: expected a whole number, got 10.5");
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
