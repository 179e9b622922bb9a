//! A site's environments (decision 0051): list them; for the site's
//! administrators, make one (empty, or as a copy of another), rename,
//! lock and archive it; compare two and promote what differs from one
//! into the other, and undo a promotion. Every environment named must be
//! one the caller's credential may use.

use crate::{Actor, AppError, AppResult, Permission, authorize};
use quire_store::Scope;
use quire_store::seed::{ensure_agents, ensure_templates};
pub use quire_store::{
    ChangedIn, EnvChange, EnvDifference, Environment, PromotedItem, Promotion, PromotionRequest, Resolution,
};
use quire_tools::Services;

/// Refuses an environment the actor's credential may not use.
fn reach(actor: &Actor, env: &str) -> AppResult<()> {
    match &actor.environments {
        Some(allowed) if !allowed.iter().any(|e| e == env) => {
            Err(AppError::forbidden(format!("this credential may not use environment \"{env}\"")))
        }
        _ => Ok(()),
    }
}

/// The site's environments the actor may use, archived ones too.
pub async fn list(services: &Services, actor: &Actor) -> AppResult<Vec<Environment>> {
    authorize(actor, Permission::Read)?;
    let all = services.store.environments(&actor.scope.site_id).await?;
    Ok(all.into_iter().filter(|e| reach(actor, &e.key).is_ok()).collect())
}

/// One environment of the site.
pub async fn get(services: &Services, actor: &Actor, key: &str) -> AppResult<Environment> {
    authorize(actor, Permission::Read)?;
    reach(actor, key)?;
    Ok(services.store.environment(&actor.scope.site_id, key).await?)
}

/// Makes environment `key`: a copy of `from` (content, published copies,
/// templates, collections, images and agents; the notes vault is the
/// site's and shared), or empty with the starter templates and agents.
pub async fn create(
    services: &Services,
    actor: &Actor,
    key: &str,
    name: Option<&str>,
    from: Option<&str>,
) -> AppResult<(Environment, Option<Promotion>)> {
    authorize(actor, Permission::Administer)?;
    if let Some(from) = from {
        reach(actor, from)?;
    }
    let store = &services.store;
    let made =
        store.create_environment(&actor.change_context(), &actor.scope.site_id, key, name.unwrap_or(key), from).await?;
    if from.is_none() {
        let scope = Scope::new(&actor.scope.site_id, key);
        ensure_templates(store, &scope).await?;
        ensure_agents(store, &scope).await?;
    }
    Ok(made)
}

/// Renames an environment (its key stays), locks or unlocks it.
pub async fn update(
    services: &Services,
    actor: &Actor,
    key: &str,
    name: Option<&str>,
    locked: Option<bool>,
) -> AppResult<Environment> {
    authorize(actor, Permission::Administer)?;
    reach(actor, key)?;
    Ok(services.store.update_environment(&actor.scope.site_id, key, name, locked).await?)
}

/// Archives an environment (its tokens stop; what it holds is kept), or
/// brings it back. Not the one the caller acts in.
pub async fn archive(services: &Services, actor: &Actor, key: &str, archived: bool) -> AppResult<Environment> {
    authorize(actor, Permission::Administer)?;
    reach(actor, key)?;
    if archived && key == actor.scope.env {
        return Err(AppError::conflict(format!(
            "environment {key} is the one this credential acts in; archive it from another"
        )));
    }
    Ok(services.store.archive_environment(&actor.scope.site_id, key, archived).await?)
}

/// What differs between `from` and `to`, record by record and field by field.
pub async fn compare(
    services: &Services,
    actor: &Actor,
    from: Option<&str>,
    to: &str,
) -> AppResult<Vec<EnvDifference>> {
    authorize(actor, Permission::Read)?;
    let from = from.ok_or_else(|| AppError::invalid("from", "name the environment to compare with (?from=staging)"))?;
    reach(actor, from)?;
    reach(actor, to)?;
    Ok(services.store.compare_environments(&actor.scope.site_id, from, to).await?)
}

/// Promotes what `request` names from `from` into `to` as one change set.
pub async fn promote(
    services: &Services,
    actor: &Actor,
    from: &str,
    to: &str,
    request: PromotionRequest,
) -> AppResult<Promotion> {
    authorize(actor, Permission::Administer)?;
    reach(actor, from)?;
    reach(actor, to)?;
    Ok(services.store.promote(&actor.change_context(), &actor.scope.site_id, from, to, request).await?)
}

/// The promotions into `to`, newest first.
pub async fn promotions(services: &Services, actor: &Actor, to: &str) -> AppResult<Vec<Promotion>> {
    authorize(actor, Permission::Read)?;
    reach(actor, to)?;
    Ok(services.store.promotions(&actor.scope.site_id, to).await?)
}

/// Undoes promotion `id`: its target goes back to what it held before.
pub async fn undo_promotion(services: &Services, actor: &Actor, id: &str) -> AppResult<Promotion> {
    authorize(actor, Permission::Administer)?;
    let promotion = services.store.promotion(&actor.scope.site_id, id).await?;
    reach(actor, &promotion.target)?;
    Ok(services.store.undo_promotion(&actor.change_context(), &actor.scope.site_id, id).await?)
}
