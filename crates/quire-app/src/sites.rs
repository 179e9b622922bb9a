//! The instance's sites, for its administrator (the local admin of the
//! machine, or a token made for the instance's administrator): list,
//! create (empty, with the starter templates and agents, or with the demo
//! content), rename, archive and restore. A site's own administrators
//! manage their site and never see the others.

use crate::{Actor, AppError, AppResult, Permission, authorize};
use quire_core::model::Site;
use quire_store::seed::{ensure_agents, ensure_templates, seed_site_into};
use quire_store::{Scope, Store};
use quire_tools::Services;

/// What a new site starts with.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Start {
    /// The starter templates and agents, and no content.
    #[default]
    Empty,
    /// The demo site's pages, posts, menus and images besides.
    Demo,
    /// A copy of another site (slug or id): its locales, and everything of
    /// its first environment (content with its published copies,
    /// templates, collections, images, agents) in each environment of the
    /// new one. Its tokens, people and webhooks stay its own.
    Copy(String),
}

/// A site to make.
#[derive(Debug, Clone)]
pub struct NewSite {
    /// Its slug (`shop`), unique.
    pub slug: String,
    /// Its name.
    pub name: String,
    /// Its environments, the first the default; empty: production and staging.
    pub environments: Vec<String>,
    /// What it starts with.
    pub start: Start,
}

/// Whether the actor is the instance's administrator: the local admin, a
/// token made for the instance's administrator, or in the back-office the
/// first person made on the instance (the admin `quire serve` makes on a
/// fresh database, as it makes the first token the instance's), while
/// they are enabled.
pub(crate) async fn instance_admin(store: &Store, actor: &Actor) -> AppResult<bool> {
    Ok(match actor.id.split_once(':') {
        Some(("token", token)) => store.is_instance_admin(token).await?,
        Some(("user", user)) => {
            let first = store.users().await?.into_iter().next();
            first.is_some_and(|p| p.id == user && p.disabled_at.is_none())
        }
        _ => actor.id == "local:admin",
    })
}

/// Refuses anyone but the instance's administrator.
async fn manage(services: &Services, actor: &Actor) -> AppResult<()> {
    let instance = instance_admin(&services.store, actor).await?;
    authorize(actor, Permission::ManageSites { instance })
}

/// Whether the actor is the instance's administrator, who may manage
/// sites (a screen offers the Sites screen to them alone).
pub async fn manages(services: &Services, actor: &Actor) -> bool {
    // Only an admin can be; others are not asked about the people.
    actor.group == quire_core::access::Group::Admin && manage(services, actor).await.is_ok()
}

/// Every site, the archived ones too, oldest first.
pub async fn list(services: &Services, actor: &Actor) -> AppResult<Vec<Site>> {
    manage(services, actor).await?;
    Ok(services.store.all_sites().await?)
}

/// Makes a site (see [`Start`]); answers it.
pub async fn create(services: &Services, actor: &Actor, new: NewSite) -> AppResult<Site> {
    manage(services, actor).await?;
    let environments: Vec<&str> = match new.environments.is_empty() {
        true => vec!["production", "staging"],
        false => new.environments.iter().map(String::as_str).collect(),
    };
    let store = &services.store;
    match new.start {
        Start::Empty => {
            let site = store.create_site(&new.slug, &new.name, &environments).await?;
            for env in &site.environments {
                let scope = Scope::new(&site.id, env);
                ensure_templates(store, &scope).await?;
                ensure_agents(store, &scope).await?;
            }
            Ok(site)
        }
        Start::Copy(from) => {
            if from.is_empty() {
                return Err(AppError::invalid("from", "name the site to copy (start: copy)"));
            }
            let source = match store.site(&from).await {
                Err(quire_store::StoreError::NotFound { .. }) => {
                    return Err(AppError::invalid("from", format!("from: there is no site \"{from}\" to copy")));
                }
                found => found?,
            };
            let env = source.environments.first().cloned().unwrap_or_else(|| "production".into());
            let (first, others) = environments.split_first().expect("at least one environment");
            for env in others {
                quire_core::slug::check_slug("environments", env).map_err(quire_store::StoreError::from)?;
            }
            let site = store.create_site(&new.slug, &new.name, &[first]).await?;
            let ctx = actor.change_context();
            store.copy_site_content(&ctx, &Scope::new(&source.id, &env), &Scope::new(&site.id, *first)).await?;
            for env in others {
                store.create_environment(&ctx, &site.id, env, env, Some(first)).await?;
            }
            Ok(store.site(&site.id).await?)
        }
        // The first environment is seeded and the others made as its
        // copies, so they compare and promote (decision 0051).
        Start::Demo => {
            let (first, others) = environments.split_first().expect("at least one environment");
            for env in others {
                quire_core::slug::check_slug("environments", env).map_err(quire_store::StoreError::from)?;
            }
            let site = store.create_site(&new.slug, &new.name, &[first]).await?;
            seed_site_into(store, &site, &services.storage).await?;
            for env in others {
                store.create_environment(&actor.change_context(), &site.id, env, env, Some(first)).await?;
            }
            Ok(store.site(&site.id).await?)
        }
    }
}

/// Renames a site.
pub async fn rename(services: &Services, actor: &Actor, site: &str, name: &str) -> AppResult<Site> {
    manage(services, actor).await?;
    Ok(services.store.rename_site(site, name).await?)
}

/// Archives a site: its tokens stop and nothing of it is delivered;
/// everything it holds is kept. The site the caller acts in stays.
pub async fn archive(services: &Services, actor: &Actor, site: &str) -> AppResult<Site> {
    manage(services, actor).await?;
    let found = services.store.site(site).await?;
    if found.id == actor.scope.site_id {
        return Err(AppError::conflict(format!(
            "site {} is the one this credential acts in; archive it from another site's",
            found.slug
        )));
    }
    Ok(services.store.archive_site(site).await?)
}

/// Brings an archived site back, its tokens and content with it.
pub async fn restore(services: &Services, actor: &Actor, site: &str) -> AppResult<Site> {
    manage(services, actor).await?;
    Ok(services.store.restore_site(site).await?)
}
