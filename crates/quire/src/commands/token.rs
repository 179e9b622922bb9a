//! `quire token create | list | revoke`: API tokens.

use super::AnyResult;
use crate::cli::TokenCommand;
use crate::config::Config;
use crate::services::{DataDir, Existing};
use quire_core::access::Group;
use quire_store::NewToken;

/// Creates, lists or revokes API tokens.
pub async fn run(command: TokenCommand, config: &Config, data: &DataDir) -> AnyResult {
    match command {
        TokenCommand::Create { group, site, envs, name, expires_in_days, policy } => {
            let group = Group::parse(&group)?;
            // Checked before the database is opened: bad input changes nothing.
            let expires_at =
                expires_in_days.map(|d| quire_store::expiry_in_days("--expires-in-days", d)).transpose()?;
            let store = data.open_existing(Existing::Database).await?;
            let site = site.unwrap_or(config.default_site.clone());
            let (_, secret) = store
                .create_token(NewToken {
                    name,
                    group,
                    site,
                    environments: (!envs.is_empty()).then_some(envs),
                    expires_at,
                    secret: None,
                    approval_policy: Some(policy),
                    user_id: None,
                })
                .await?;
            outln!("{secret}")?;
            store.close().await;
        }
        TokenCommand::List { site, json } => {
            let store = data.open_existing(Existing::Database).await?;
            let tokens = store.tokens(&site.unwrap_or(config.default_site.clone())).await?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&tokens)?)?;
            } else {
                let when = |t: Option<chrono::DateTime<chrono::Utc>>, none: &str| {
                    t.map(|t| t.format("%Y-%m-%d %H:%M").to_string()).unwrap_or_else(|| none.to_string())
                };
                outln!(
                    "{:<36}  {:<16} {:<8} {:<7} {:<20} {:<16} {:<16} {}",
                    "ID",
                    "NAME",
                    "PREFIX",
                    "GROUP",
                    "ENVIRONMENTS",
                    "EXPIRES",
                    "CREATED",
                    "LAST USED"
                )?;
                for t in &tokens {
                    let envs = t.environments.as_ref().map(|e| e.join(",")).unwrap_or_else(|| "all".into());
                    outln!(
                        "{:<36}  {:<16} {:<8} {:<7} {:<20} {:<16} {:<16} {}",
                        t.id,
                        t.name,
                        t.prefix,
                        t.group.as_str(),
                        envs,
                        when(t.expires_at, "never"),
                        when(Some(t.created_at), ""),
                        when(t.last_used_at, "never")
                    )?;
                }
            }
            store.close().await;
        }
        TokenCommand::Revoke { id, site } => {
            let store = data.open_existing(Existing::Database).await?;
            let token = store.revoke_token(&site.unwrap_or(config.default_site.clone()), &id).await?;
            outln!("revoked token {} ({}, {})", token.id, token.name, token.group.as_str())?;
            store.close().await;
        }
    }
    Ok(())
}
