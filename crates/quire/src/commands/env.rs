//! `quire env list | create | rename | lock | unlock | archive | restore |
//! compare | promote | undo`: a site's environments, through the same use
//! cases as REST (`quire_app::environments`), as the local admin or the
//! holder of `--token`.

use super::AnyResult;
use crate::cli::{CallerArgs, EnvCommand};
use crate::config::Config;
use crate::services::{DataDir, Existing, cli_actor, services};
use quire_app::environments;
use quire_store::{Environment, PromotionRequest, Resolution};

/// Runs one `quire env` command.
pub async fn run(command: EnvCommand, caller: CallerArgs, config: &Config, data: &DataDir) -> AnyResult {
    let store = data.open_existing(Existing::Database).await?;
    let services = services(&store, &data.path, config)?;
    let actor = cli_actor(&store, config, caller).await?;
    let shown: Option<Environment> = match command {
        EnvCommand::List { json } => {
            let all = environments::list(&services, &actor).await?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&all)?)?;
            } else {
                outln!("{:<20} {:<28} {:<14} {:<10} {}", "KEY", "NAME", "COPIED FROM", "LOCKED", "STATE")?;
                for e in &all {
                    let state =
                        e.archived_at.map_or("live".to_string(), |at| format!("archived {}", at.format("%Y-%m-%d")));
                    let from = e.copied_from.as_deref().unwrap_or("-");
                    let locked = if e.locked { "locked" } else { "-" };
                    outln!("{:<20} {:<28} {:<14} {:<10} {}", e.key, e.name, from, locked, state)?;
                }
            }
            None
        }
        EnvCommand::Create { key, name, from } => {
            let (made, promotion) =
                environments::create(&services, &actor, &key, name.as_deref(), from.as_deref()).await?;
            if let Some(p) = promotion {
                outln!("copied {} records from {} (promotion {})", p.items.len(), p.source, p.id)?;
            }
            Some(made)
        }
        EnvCommand::Rename { key, name } => {
            Some(environments::update(&services, &actor, &key, Some(&name), None).await?)
        }
        EnvCommand::Lock { key } => Some(environments::update(&services, &actor, &key, None, Some(true)).await?),
        EnvCommand::Unlock { key } => Some(environments::update(&services, &actor, &key, None, Some(false)).await?),
        EnvCommand::Archive { key } => Some(environments::archive(&services, &actor, &key, true).await?),
        EnvCommand::Restore { key } => Some(environments::archive(&services, &actor, &key, false).await?),
        EnvCommand::Compare { from, to, json } => {
            let found = environments::compare(&services, &actor, Some(&from), &to).await?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&found)?)?;
            } else {
                outln!("{:<16} {:<32} {:<8} {:<10} {}", "KIND", "NAME", "CHANGE", "CHANGED IN", "LINEAGE")?;
                for d in &found {
                    let change = serde_json::to_value(d.change)?;
                    let side = serde_json::to_value(d.changed_in)?;
                    let side = if d.conflict {
                        format!("{} !", side.as_str().unwrap_or_default())
                    } else {
                        side.as_str().unwrap_or_default().to_string()
                    };
                    outln!(
                        "{:<16} {:<32} {:<8} {:<10} {}",
                        d.entity.as_str(),
                        d.label,
                        change.as_str().unwrap_or_default(),
                        side,
                        d.lineage
                    )?;
                }
                outln!("{} difference(s) from {from} to {to}", found.len())?;
            }
            None
        }
        EnvCommand::Promote { from, to, items, source, target } => {
            let mut request = PromotionRequest { items: (!items.is_empty()).then_some(items), ..Default::default() };
            request.resolutions.extend(source.into_iter().map(|n| (n, Resolution::Source)));
            request.resolutions.extend(target.into_iter().map(|n| (n, Resolution::Target)));
            let promotion = environments::promote(&services, &actor, &from, &to, request).await?;
            outln!("promoted {} records from {from} to {to} (promotion {})", promotion.items.len(), promotion.id)?;
            None
        }
        EnvCommand::Undo { id } => {
            let undone = environments::undo_promotion(&services, &actor, &id).await?;
            outln!(
                "undid promotion {} ({} records from {} to {})",
                undone.id,
                undone.items.len(),
                undone.source,
                undone.target
            )?;
            None
        }
    };
    if let Some(e) = shown {
        let state = if e.archived_at.is_some() { "archived" } else { "live" };
        let locked = if e.locked { ", locked" } else { "" };
        outln!("{} ({}): {state}{locked}", e.key, e.name)?;
    }
    store.close().await;
    Ok(())
}
