//! The test fixture of the official MCP conformance suite: the `test_*`
//! tools, prompts and resources its server scenarios call, with the answers
//! they expect, plus `logging` and resource subscriptions for `test://`
//! URIs. It exists only on a server built with
//! [`crate::QuireMcp::with_test_fixture`], which `quire serve` does only
//! when `QUIRE_MCP_TEST_FIXTURE=1` is set at its start; nothing here reaches
//! the site's content, and a server without it lists none of it.
//!
//! The answers are written as the JSON the suite reads, which is also the
//! simplest way to say exactly what each one is.

use quire_tools::CallContext;
use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::time::Duration;

/// A 1×1 red PNG.
const IMAGE: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A WAV file without samples.
const AUDIO: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// Whether `name` is a tool of the fixture.
pub fn is_tool(name: &str) -> bool {
    TOOLS.iter().any(|(n, _)| *n == name)
}

/// Whether `uri` is a resource of the fixture.
pub fn is_resource(uri: &str) -> bool {
    uri.starts_with("test://")
}

/// Whether `name` is a prompt of the fixture.
pub fn is_prompt(name: &str) -> bool {
    name.starts_with("test_")
}

fn typed<T: DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|e| ErrorData::internal_error(format!("fixture: {e}"), None))
}

/// The fixture's tools and their descriptions; every one takes no argument
/// but those [`input_schema`] names.
const TOOLS: &[(&str, &str)] = &[
    ("test_simple_text", "Tests simple text content response"),
    ("test_image_content", "Tests image content response"),
    ("test_audio_content", "Tests audio content response"),
    ("test_embedded_resource", "Tests embedded resource content response"),
    ("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)"),
    ("test_tool_with_logging", "Tests tool that emits log messages during execution"),
    ("test_tool_with_progress", "Tests tool that reports progress notifications"),
    ("test_error_handling", "Tests error response handling"),
    ("test_reconnection", "Tests SSE stream disconnection and client reconnection (SEP-1699)"),
    ("test_sampling", "Tests server-initiated sampling (LLM completion request)"),
    ("test_elicitation", "Tests server-initiated elicitation (user input request)"),
    ("test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034"),
    ("test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330"),
    ("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)"),
];

fn input_schema(name: &str) -> Value {
    let string = |description: &str| json!({"type": "string", "description": description});
    match name {
        "test_sampling" => json!({
            "type": "object",
            "properties": {"prompt": string("The prompt to send to the LLM")},
            "required": ["prompt"]
        }),
        "test_elicitation" => json!({
            "type": "object",
            "properties": {"message": string("The message to show the user")},
            "required": ["message"]
        }),
        // SEP-1613: kept as written, `$schema`, `$defs` and all.
        "json_schema_2020_12_tool" => json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}
            },
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
            "additionalProperties": false
        }),
        _ => json!({"type": "object", "properties": {}}),
    }
}

/// The fixture's tools as listed.
pub fn tools() -> Result<Vec<Tool>, ErrorData> {
    TOOLS
        .iter()
        .map(|(name, description)| {
            typed(json!({"name": name, "description": description, "inputSchema": input_schema(name)}))
        })
        .collect()
}

fn text(text: impl Into<String>) -> Value {
    json!({"type": "text", "text": text.into()})
}

fn result(content: Vec<Value>) -> Result<CallToolResponse, ErrorData> {
    typed::<CallToolResult>(json!({"content": content})).map(Into::into)
}

/// Sends `message` to the client's log at level info.
#[allow(deprecated)] // logging is deprecated by the next protocol revision (SEP-2577)
async fn log(context: &RequestContext<RoleServer>, message: &str) -> Result<(), ErrorData> {
    let param =
        LoggingMessageNotificationParam::new(LoggingLevel::Info, json!(message)).with_logger("quire-test-fixture");
    context.peer.notify_logging_message(param).await.map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

/// A request to the client, answered as JSON (sampling and elicitation
/// are sent as written, so the suite sees exactly its schemas).
async fn ask(context: &RequestContext<RoleServer>, method: &str, params: Value) -> Result<Value, String> {
    let request = ServerRequest::CustomRequest(CustomRequest::new(method, Some(params)));
    let answer = context.peer.send_request(request).await.map_err(|e| e.to_string())?;
    serde_json::to_value(answer).map_err(|e| e.to_string())
}

/// Calls a fixture tool. Progress goes through the call's own channel, as
/// every long tool's does.
pub async fn call(
    name: &str,
    args: &JsonObject,
    ctx: &CallContext,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let pause = || tokio::time::sleep(Duration::from_millis(50));
    match name {
        "test_simple_text" => result(vec![text("This is a simple text response for testing.")]),
        "test_image_content" => result(vec![json!({"type": "image", "data": IMAGE, "mimeType": "image/png"})]),
        "test_audio_content" => result(vec![json!({"type": "audio", "data": AUDIO, "mimeType": "audio/wav"})]),
        "test_embedded_resource" => result(vec![json!({"type": "resource", "resource": {
            "uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."
        }})]),
        "test_multiple_content_types" => result(vec![
            text("Multiple content types test:"),
            json!({"type": "image", "data": IMAGE, "mimeType": "image/png"}),
            json!({"type": "resource", "resource": {
                "uri": "test://mixed-content-resource", "mimeType": "application/json",
                "text": json!({"test": "data", "value": 123}).to_string()
            }}),
        ]),
        "test_tool_with_logging" => {
            for (i, message) in
                ["Tool execution started", "Tool processing data", "Tool execution completed"].into_iter().enumerate()
            {
                if i > 0 {
                    pause().await;
                }
                log(context, message).await?;
            }
            result(vec![text("Tool with logging executed successfully")])
        }
        "test_tool_with_progress" => {
            for done in [0, 50, 100] {
                if done > 0 {
                    pause().await;
                }
                if let Some(progress) = &ctx.progress {
                    progress.report(done, Some(100), format!("Completed step {done} of 100"));
                }
            }
            result(vec![text("Tool with progress executed successfully")])
        }
        "test_error_handling" => typed::<CallToolResult>(json!({
            "isError": true,
            "content": [text("This tool intentionally returns an error for testing")]
        }))
        .map(Into::into),
        "test_reconnection" => {
            pause().await;
            result(vec![text("Reconnection test completed successfully.")])
        }
        "test_sampling" => {
            let prompt = args.get("prompt").and_then(Value::as_str).unwrap_or_default();
            let params = json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                "maxTokens": 100
            });
            let answer = match ask(context, "sampling/createMessage", params).await {
                Ok(answer) => format!("LLM response: {}", answer["content"]["text"].as_str().unwrap_or("No response")),
                Err(e) => format!("Sampling not supported or error: {e}"),
            };
            result(vec![text(answer)])
        }
        "test_elicitation" | "test_elicitation_sep1034_defaults" | "test_elicitation_sep1330_enums" => {
            let params = elicitation(name, args);
            let answer = match ask(context, "elicitation/create", params).await {
                Ok(answer) => format!("User response: action={}, content={}", answer["action"], answer["content"]),
                Err(e) => format!("Elicitation not supported or error: {e}"),
            };
            result(vec![text(answer)])
        }
        "json_schema_2020_12_tool" => {
            result(vec![text(format!("JSON Schema 2020-12 tool called with: {}", Value::Object(args.clone())))])
        }
        _ => Err(ErrorData::invalid_params(format!("unknown tool: {name}"), None)),
    }
}

/// The `elicitation/create` parameters of each elicitation tool.
fn elicitation(name: &str, args: &JsonObject) -> Value {
    match name {
        "test_elicitation_sep1034_defaults" => json!({
            "message": "Please review and update the form fields with defaults",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "User name", "default": "John Doe"},
                    "age": {"type": "integer", "description": "User age", "default": 30},
                    "score": {"type": "number", "description": "User score", "default": 95.5},
                    "status": {
                        "type": "string", "description": "User status",
                        "enum": ["active", "inactive", "pending"], "default": "active"
                    },
                    "verified": {"type": "boolean", "description": "Verification status", "default": true}
                },
                "required": []
            }
        }),
        "test_elicitation_sep1330_enums" => json!({
            "message": "Please select options from the enum fields",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "untitledSingle": {
                        "type": "string", "description": "Select one option", "enum": ["option1", "option2", "option3"]
                    },
                    "titledSingle": {
                        "type": "string", "description": "Select one option with titles",
                        "oneOf": [
                            {"const": "value1", "title": "First Option"},
                            {"const": "value2", "title": "Second Option"},
                            {"const": "value3", "title": "Third Option"}
                        ]
                    },
                    "legacyEnum": {
                        "type": "string", "description": "Select one option (legacy)",
                        "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]
                    },
                    "untitledMulti": {
                        "type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3,
                        "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
                    },
                    "titledMulti": {
                        "type": "array", "description": "Select multiple options with titles", "minItems": 1, "maxItems": 3,
                        "items": {"anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"}
                        ]}
                    }
                },
                "required": []
            }
        }),
        _ => json!({
            "message": args.get("message").and_then(Value::as_str).unwrap_or("Please respond"),
            "requestedSchema": {
                "type": "object",
                "properties": {"response": {"type": "string", "description": "User's response"}},
                "required": ["response"]
            }
        }),
    }
}

/// The fixture's resources.
pub fn resources() -> Result<Vec<Resource>, ErrorData> {
    [
        ("test://static-text", "static-text", "A static text resource for testing", "text/plain"),
        ("test://static-binary", "static-binary", "A static binary resource (image) for testing", "image/png"),
        ("test://watched-resource", "watched-resource", "A resource clients may subscribe to", "text/plain"),
    ]
    .into_iter()
    .map(|(uri, name, description, mime)| {
        typed(json!({"uri": uri, "name": name, "description": description, "mimeType": mime}))
    })
    .collect()
}

/// The fixture's resource template.
pub fn templates() -> Result<Vec<ResourceTemplate>, ErrorData> {
    Ok(vec![typed(json!({
        "uriTemplate": "test://template/{id}/data",
        "name": "template",
        "description": "A resource template with parameter substitution",
        "mimeType": "application/json"
    }))?])
}

/// Reads a fixture resource.
pub fn read(uri: &str) -> Result<ReadResourceResponse, ErrorData> {
    let contents = match uri {
        "test://static-text" => {
            json!({"uri": uri, "mimeType": "text/plain", "text": "This is the content of the static text resource."})
        }
        "test://static-binary" => json!({"uri": uri, "mimeType": "image/png", "blob": IMAGE}),
        "test://watched-resource" => json!({"uri": uri, "mimeType": "text/plain", "text": "Watched resource content"}),
        _ => match uri.strip_prefix("test://template/").and_then(|rest| rest.strip_suffix("/data")) {
            Some(id) if !id.is_empty() && !id.contains('/') => json!({
                "uri": uri,
                "mimeType": "application/json",
                "text": json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
            }),
            _ => return Err(ErrorData::resource_not_found(format!("no fixture resource {uri}"), None)),
        },
    };
    typed::<ReadResourceResult>(json!({"contents": [contents]})).map(Into::into)
}

/// The fixture's prompts.
pub fn prompts() -> Result<Vec<Prompt>, ErrorData> {
    let argument = |name: &str, description: &str| json!({"name": name, "description": description, "required": true});
    [
        json!({"name": "test_simple_prompt", "title": "Simple Test Prompt", "description": "A simple prompt without arguments"}),
        json!({
            "name": "test_prompt_with_arguments", "title": "Prompt With Arguments",
            "description": "A prompt with required arguments",
            "arguments": [argument("arg1", "First test argument"), argument("arg2", "Second test argument")]
        }),
        json!({
            "name": "test_prompt_with_embedded_resource", "title": "Prompt With Embedded Resource",
            "description": "A prompt that includes an embedded resource",
            "arguments": [argument("resourceUri", "URI of the resource to embed")]
        }),
        json!({"name": "test_prompt_with_image", "title": "Prompt With Image", "description": "A prompt that includes image content"}),
    ]
    .into_iter()
    .map(typed)
    .collect()
}

/// A fixture prompt filled with its arguments.
pub fn prompt(name: &str, args: &JsonObject) -> Result<GetPromptResponse, ErrorData> {
    let arg = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    let user = |content: Value| json!({"role": "user", "content": content});
    let messages = match name {
        "test_simple_prompt" => vec![user(text("This is a simple prompt for testing."))],
        "test_prompt_with_arguments" => {
            vec![user(text(format!("Prompt with arguments: arg1='{}', arg2='{}'", arg("arg1"), arg("arg2"))))]
        }
        "test_prompt_with_embedded_resource" => vec![
            user(json!({"type": "resource", "resource": {
                "uri": arg("resourceUri"), "mimeType": "text/plain", "text": "Embedded resource content for testing."
            }})),
            user(text("Please process the embedded resource above.")),
        ],
        "test_prompt_with_image" => vec![
            user(json!({"type": "image", "data": IMAGE, "mimeType": "image/png"})),
            user(text("Please analyze the image above.")),
        ],
        _ => return Err(ErrorData::invalid_params(format!("no prompt named \"{name}\""), None)),
    };
    typed::<GetPromptResult>(json!({"messages": messages})).map(Into::into)
}
