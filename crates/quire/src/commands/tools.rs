//! `quire tools list | show | call`: the tool registry on the terminal.

use super::{AnyResult, Outcome};
use crate::cli::ToolsCommand;
use crate::config::Config;
use crate::services::{DataDir, Existing, cli_context, services};

/// `quire tools`: `list` and `show` describe the catalog, the same for
/// every data directory (so they accept `--data` and need none); `call`
/// runs a tool on the data directory `data`; failed when its result says so.
pub async fn run(command: ToolsCommand, config: &Config, data: &DataDir) -> AnyResult<Outcome> {
    let mut outcome = Outcome::Succeeded;
    match command {
        ToolsCommand::List { json } => {
            let tools = quire_tools::catalog();
            if json {
                let list: Vec<_> = tools
                    .iter()
                    .map(|t| {
                        serde_json::json!({
                            "name": t.name, "description": t.description, "category": t.category,
                            "risk": t.risk, "destructive": t.destructive,
                        })
                    })
                    .collect();
                outln!("{}", serde_json::to_string_pretty(&list)?)?;
            } else {
                for t in &tools {
                    let flag = if t.destructive { "destructive" } else { "" };
                    outln!(
                        "{:<20} {:<9} {:<9} {:<12} {}",
                        t.name,
                        t.category.as_str(),
                        format!("{:?}", t.risk).to_lowercase(),
                        flag,
                        t.description
                    )?;
                }
            }
        }
        ToolsCommand::Show { name } => {
            let tools = quire_tools::catalog();
            let tool = tools
                .iter()
                .find(|t| t.name == name)
                .ok_or_else(|| format!("no tool named \"{name}\" (see quire tools list)"))?;
            let info = serde_json::json!({
                "name": tool.name, "description": tool.description, "guidance": tool.guidance,
                "category": tool.category, "entity": tool.entity, "risk": tool.risk,
                "destructive": tool.destructive, "idempotent": tool.idempotent, "readOnly": tool.read_only,
                "tags": tool.tags, "inputSchema": quire_tools::full_schema(tool),
            });
            outln!("{}", serde_json::to_string_pretty(&info)?)?;
        }
        ToolsCommand::Call { name, args, caller } => {
            let args: serde_json::Value =
                serde_json::from_str(&args).map_err(|e| format!("--args is not valid JSON: {e}"))?;
            let store = data.open_existing(Existing::Database).await?;
            let ctx = cli_context(&store, config, caller).await?;
            let registry = quire_tools::Registry::new(services(&store, &data.path, config)?);
            let result = registry.call(&ctx, &name, args).await;
            if result["success"] == false {
                outcome = Outcome::Failed;
            }
            outln!("{}", serde_json::to_string_pretty(&result)?)?;
            store.close().await;
        }
    }
    Ok(outcome)
}
