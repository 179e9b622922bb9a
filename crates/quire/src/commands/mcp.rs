//! `quire mcp`: the MCP server over stdio, as the local admin or a token's
//! holder.

use super::AnyResult;
use crate::cli::CallerArgs;
use crate::config::Config;
use crate::services::{DataDir, Existing, cli_context, seed, services};

/// Serves MCP on stdin and stdout until the client goes away.
pub async fn run(caller: CallerArgs, tools: String, interactive: bool, config: &Config, data: &DataDir) -> AnyResult {
    use rmcp::ServiceExt;
    let mode = quire_mcp::ToolMode::parse(&tools)?;
    let store = data.open_existing(Existing::Directory).await?;
    if store.sites().await?.is_empty() {
        seed(&store, &data.path, config).await?;
    }
    let mut ctx = cli_context(&store, config, caller).await?;
    ctx.surface = quire_core::model::Surface::Mcp;
    if interactive {
        ctx.policy = quire_tools::ApprovalPolicy::Conversational;
    }
    let registry = std::sync::Arc::new(quire_tools::Registry::new(services(&store, &data.path, config)?));
    let server = quire_mcp::QuireMcp::new(registry, quire_mcp::Caller::Fixed(Box::new(ctx)), mode);
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    store.close().await;
    Ok(())
}
