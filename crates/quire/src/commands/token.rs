//! `quire token create | list | revoke`: API tokens.

use super::AnyResult;
use crate::cli::TokenCommand;
use crate::config::Config;
use crate::services::{DataDir, Existing};
use quire_core::access::Group;
use quire_core::model::ApprovalPolicy;
use quire_store::Store;

/// Creates, lists or revokes API tokens.
pub async fn run(command: TokenCommand, config: &Config, data: &DataDir) -> AnyResult {
    match command {
        TokenCommand::Create { group, site, envs, name, expires_in_days, policy } => {
            let group = Group::parse(&group)?;
            let policy = ApprovalPolicy::parse("--policy", &policy).map_err(|e| e.to_string())?;
            // Checked before the database is opened: bad input changes nothing.
            let expires_at =
                expires_in_days.map(|d| quire_store::expiry_in_days("--expires-in-days", d)).transpose()?;
            let store = data.open_existing(Existing::Database).await?;
            let actor = local_admin(&store, config, site).await?;
            let request = quire_app::tokens::TokenRequest {
                name,
                group,
                environments: (!envs.is_empty()).then_some(envs),
                expires_at,
                expires_in_days: None,
                approval_policy: Some(policy),
            };
            let (_, secret) = quire_app::tokens::create_token(&store, &actor, request).await?;
            outln!("{secret}")?;
            store.close().await;
        }
        TokenCommand::List { site, json } => {
            let store = data.open_existing(Existing::Database).await?;
            let tokens = quire_app::tokens::list(&store, &local_admin(&store, config, site).await?).await?;
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
            let actor = local_admin(&store, config, site).await?;
            let token = quire_app::tokens::revoke_token(&store, &actor, &id).await?;
            outln!("revoked token {} ({}, {})", token.id, token.name, token.group.as_str())?;
            store.close().await;
        }
    }
    Ok(())
}

/// The local admin of `site` (default: the configured one): tokens are
/// made at the machine before anyone holds one.
async fn local_admin(store: &Store, config: &Config, site: Option<String>) -> AnyResult<quire_app::Actor> {
    let site = site.unwrap_or(config.default_site.clone());
    Ok(quire_app::Actor::local_admin(store.scope_of(&site, "production").await?))
}
