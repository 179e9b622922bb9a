//! Quire's MCP server.
//!
//! A thin [`rmcp::ServerHandler`] over the tool registry: `tools/list` is
//! generated from the registry (only the tools the caller's group may use,
//! with annotations from each tool's metadata), and `tools/call` goes through
//! [`Registry::call`], so permissions, validation and the approval flow of
//! destructive tools are exactly those of every other surface. A tool's own
//! failure is an `isError` result carrying its message and hint; protocol
//! errors are kept for protocol problems.

mod prompts;
mod resources;

use quire_core::model::Surface;
use quire_tools::{CallContext, Category, Registry, full_schema};
use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// Which tools a server offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolMode {
    /// Every tool the caller may use.
    All,
    /// Only read-only tools.
    ReadOnly,
}

impl ToolMode {
    /// Parses `all` or `readonly`.
    pub fn parse(value: &str) -> Result<Self, String> {
        match value {
            "all" => Ok(ToolMode::All),
            "readonly" => Ok(ToolMode::ReadOnly),
            other => Err(format!("--tools \"{other}\" is not one of all, readonly")),
        }
    }
}

/// Resolves the caller of an HTTP request from its bearer token.
pub type Authenticator = Arc<dyn Fn(String) -> Pin<Box<dyn Future<Output = Option<CallContext>> + Send>> + Send + Sync>;

/// How a server learns who is calling.
#[derive(Clone)]
pub enum Caller {
    /// One caller for the whole connection (stdio).
    Fixed(Box<CallContext>),
    /// The bearer token of each HTTP request.
    Bearer(Authenticator),
}

/// The MCP server over a registry.
#[derive(Clone)]
pub struct QuireMcp {
    registry: Arc<Registry>,
    caller: Caller,
    mode: ToolMode,
}

impl QuireMcp {
    /// A server for `caller` offering the tools of `mode`.
    pub fn new(registry: Arc<Registry>, caller: Caller, mode: ToolMode) -> Self {
        Self { registry, caller, mode }
    }

    async fn context(&self, request: &RequestContext<RoleServer>) -> Result<CallContext, ErrorData> {
        match &self.caller {
            Caller::Fixed(ctx) => Ok((**ctx).clone()),
            Caller::Bearer(auth) => {
                let token = request
                    .extensions
                    .get::<http::request::Parts>()
                    .and_then(|p| p.headers.get(http::header::AUTHORIZATION))
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
                    .map(|t| t.trim().to_string())
                    .ok_or_else(|| ErrorData::invalid_request("a bearer token is required", None))?;
                let mut ctx =
                    auth(token).await.ok_or_else(|| ErrorData::invalid_request("the token is not valid", None))?;
                ctx.surface = Surface::Mcp;
                Ok(ctx)
            }
        }
    }

    fn offered(&self, ctx: &CallContext, tool: &quire_tools::Tool) -> bool {
        quire_tools::permits(ctx.group, tool) && (self.mode == ToolMode::All || tool.read_only)
    }
}

/// The MCP description of a tool: schema, title and annotations from its metadata.
pub fn mcp_tool(tool: &quire_tools::Tool) -> Tool {
    let schema = match full_schema(tool) {
        Value::Object(map) => map,
        _ => Default::default(),
    };
    let mut t = Tool::new(tool.name, tool.description, Arc::new(schema)).with_annotations(
        ToolAnnotations::new()
            .read_only(tool.read_only)
            .destructive(tool.destructive)
            .idempotent(tool.idempotent)
            .open_world(tool.category == Category::External),
    );
    t.title = Some(title_of(tool.name));
    t
}

/// `updateNavItem` → `Update nav item`.
fn title_of(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            out.push(' ');
            out.extend(c.to_lowercase());
        } else if i == 0 {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A short text rendering of a tool result for clients that show text.
fn render(result: &Value) -> String {
    if result["success"] == false {
        return format!(
            "Error ({}): {}\nHint: {}",
            result["errorCode"].as_str().unwrap_or("INTERNAL"),
            result["error"].as_str().unwrap_or_default(),
            result["hint"].as_str().unwrap_or_default()
        );
    }
    serde_json::to_string_pretty(result).unwrap_or_default()
}

impl ServerHandler for QuireMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_prompts().enable_resources().build())
            .with_server_info(Implementation::new("quire", env!("CARGO_PKG_VERSION")).with_title("Quire CMS"))
            .with_instructions(format!(
                "Manage a Quire site: pages, sections, posts, navigation, entries, images, archive. \
                 Destructive tools return a preview with a confirmationId; a person approves it in Quire, \
                 then call again with that confirmationId.\n{}",
                quire_tools::RULES
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let ctx = self.context(&context).await?;
        let tools = self.registry.tools().iter().filter(|t| self.offered(&ctx, t)).map(mcp_tool).collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let ctx = self.context(&context).await?;
        let args = Value::Object(request.arguments.unwrap_or_default());
        let name = request.name.to_string();
        let result = match self.registry.get(&name) {
            Some(tool) if !self.offered(&ctx, tool) => serde_json::json!({
                "success": false, "error": format!("{name} is not offered to this client"), "errorCode": "FORBIDDEN",
                "hint": "Use one of the tools from tools/list.",
            }),
            _ => self.registry.call(&ctx, &name, args).await,
        };
        let text = vec![ContentBlock::text(render(&result))];
        let mut out =
            if result["success"] == false { CallToolResult::error(text) } else { CallToolResult::success(text) };
        out.structured_content = Some(result);
        Ok(out.into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        prompts::get(&request.name, &args).map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let ctx = self.context(&context).await?;
        Ok(ListResourcesResult::with_all_items(resources::list(self.registry.services(), &ctx).await?))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let ctx = self.context(&context).await?;
        Ok(resources::read(self.registry.services(), &ctx, &request.uri).await?.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_follow_the_tool_metadata() {
        for tool in quire_tools::catalog() {
            let t = mcp_tool(&tool);
            let a = t.annotations.clone().unwrap();
            assert_eq!(a.read_only_hint, Some(tool.read_only), "{}", tool.name);
            assert_eq!(a.destructive_hint, Some(tool.destructive), "{}", tool.name);
            assert_eq!(a.idempotent_hint, Some(tool.idempotent), "{}", tool.name);
            assert_eq!(a.open_world_hint, Some(false), "{}", tool.name);
            assert_eq!(t.input_schema.get("type").and_then(Value::as_str), Some("object"));
        }
    }

    #[test]
    fn titles_and_modes() {
        assert_eq!(title_of("updateNavItem"), "Update nav item");
        assert_eq!(title_of("getPage"), "Get page");
        assert_eq!(ToolMode::parse("readonly"), Ok(ToolMode::ReadOnly));
        assert!(ToolMode::parse("some").unwrap_err().contains("all, readonly"));
    }
}
