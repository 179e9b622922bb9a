//! `quire site list | create | rename | archive | restore`: the instance's
//! sites, managed by the local admin (the instance's administrator).

use super::AnyResult;
use crate::cli::SiteCommand;
use crate::config::Config;
use crate::services::{DataDir, Existing, services};
use quire_app::sites::{self, NewSite, Start};

/// Lists, creates, renames, archives or restores sites.
pub async fn run(command: SiteCommand, config: &Config, data: &DataDir) -> AnyResult {
    let store = data.open_existing(Existing::Database).await?;
    let services = services(&store, &data.path, config)?;
    let actor = quire_app::Actor::local_admin(store.scope_of(&config.default_site, "production").await?);
    let site = match command {
        SiteCommand::List { json } => {
            let all = sites::list(&services, &actor).await?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&all)?)?;
            } else {
                outln!("{:<20} {:<28} {:<28} {}", "SLUG", "NAME", "ENVIRONMENTS", "STATE")?;
                for s in &all {
                    let state =
                        s.archived_at.map_or("live".to_string(), |at| format!("archived {}", at.format("%Y-%m-%d")));
                    outln!("{:<20} {:<28} {:<28} {}", s.slug, s.name, s.environments.join(","), state)?;
                }
            }
            None
        }
        SiteCommand::Create { slug, name, envs, demo, copy_of } => {
            let start = match (demo, copy_of) {
                (_, Some(from)) => Start::Copy(from),
                (true, None) => Start::Demo,
                (false, None) => Start::Empty,
            };
            Some(sites::create(&services, &actor, NewSite { slug, name, environments: envs, start }).await?)
        }
        SiteCommand::Rename { site, name } => Some(sites::rename(&services, &actor, &site, &name).await?),
        SiteCommand::Archive { site } => Some(sites::archive(&services, &actor, &site).await?),
        SiteCommand::Restore { site } => Some(sites::restore(&services, &actor, &site).await?),
    };
    if let Some(site) = site {
        let state = if site.archived_at.is_some() { "archived" } else { "live" };
        outln!("{} ({}): {}, {}", site.slug, site.name, site.environments.join(", "), state)?;
    }
    store.close().await;
    Ok(())
}
