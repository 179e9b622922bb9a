//! Provider-neutral conversation types: what the runtime stores and what
//! each provider adapter translates to and from its wire format.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One message of a conversation. The system prompt is not a message: it is
/// rebuilt before every step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    /// What the user wrote.
    User {
        /// The text.
        content: String,
    },
    /// What the model answered: text, tool calls, or both.
    Assistant {
        /// The text (may be empty).
        #[serde(default)]
        content: String,
        /// Tool calls, in the order the model made them.
        #[serde(default, rename = "toolCalls", skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call.
    Tool {
        /// The call it answers.
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        /// The tool's name.
        name: String,
        /// The result, as JSON text.
        content: String,
        /// Whether the call failed.
        #[serde(default, rename = "isError")]
        is_error: bool,
    },
}

impl Message {
    /// The message as the database stores it.
    pub fn to_json(&self) -> Value {
        // A message is strings and a list of them: it always serialises.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id of the call.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments exactly as the model wrote them (JSON text, possibly malformed).
    pub arguments: String,
}

impl ToolCall {
    /// The arguments as JSON (none is an empty object); malformed text
    /// gives the parse error.
    pub fn parsed_arguments(&self) -> Result<Value, serde_json::Error> {
        if self.arguments.trim().is_empty() {
            return Ok(Value::Object(Default::default()));
        }
        serde_json::from_str(&self.arguments)
    }
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: Value,
}

/// Everything one model call needs.
#[derive(Debug, Clone, Serialize)]
pub struct ChatRequest {
    /// Model name.
    pub model: String,
    /// System prompt.
    pub system: String,
    /// The conversation.
    pub messages: Vec<Message>,
    /// Tools the model may call this step.
    pub tools: Vec<ToolSpec>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Most output tokens.
    pub max_tokens: u32,
    /// Stream the answer.
    pub stream: bool,
}

/// Token usage of a call (or a sum of calls).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
}

impl Usage {
    /// Adds another usage to this one.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
    }
}

/// What the model answered in one call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatResponse {
    /// Text.
    pub text: String,
    /// Tool calls.
    pub tool_calls: Vec<ToolCall>,
    /// Tokens used.
    pub usage: Usage,
    /// Why the model stopped (`stop`, `tool_calls`, `end_turn`, `length`, ...).
    pub finish_reason: Option<String>,
}

/// A piece of a streamed answer, as it arrives.
#[derive(Debug, Clone, PartialEq)]
pub enum Delta {
    /// More text.
    Text(String),
    /// A tool call begins.
    ToolCallStart {
        /// Position of the call in the answer.
        index: usize,
        /// Its id.
        id: String,
        /// The tool.
        name: String,
    },
    /// More of a tool call's argument text.
    ToolCallArgs {
        /// Position of the call in the answer.
        index: usize,
        /// The text.
        delta: String,
    },
}
