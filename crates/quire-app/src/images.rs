//! Find images of the actor's site: by the words of their file name, alt
//! text, description, tags and categories, and by meaning too when an
//! embedding model is configured — ranked as the image tools rank them.

use crate::{Actor, AppResult, Permission, authorize};
use quire_core::model::Image;
use quire_tools::Services;

/// Up to `limit` images of the actor's site matching `query`, best first.
pub async fn search(services: &Services, actor: &Actor, query: &str, limit: u32) -> AppResult<Vec<Image>> {
    authorize(actor, Permission::Read)?;
    let (found, _ranking) = quire_tools::images::search(services, &actor.scope, query, limit).await?;
    Ok(found)
}
