//! The use cases' door to [`quire_core::access::authorize`]: the same one
//! decision, for an [`Actor`], answered as an [`AppError`].

use crate::{Actor, AppError, AppResult};
pub use quire_core::access::Permission;

/// Whether `actor` may do `permission`: Ok, or the refusal as the use
/// cases answer it (not found when they are not to learn it exists).
pub fn authorize(actor: &Actor, permission: Permission<'_>) -> AppResult<()> {
    quire_core::access::authorize(&actor.principal(), permission).map_err(|refused| {
        if refused.hidden { AppError::not_found(refused.message) } else { AppError::forbidden(refused.message) }
    })
}
