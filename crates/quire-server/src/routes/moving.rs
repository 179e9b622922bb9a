//! `POST /api/v1/pages/{id}/move`, `/api/v1/sections/{id}/move` and
//! `/api/v1/nav-items/{id}/move`: a record moved straight to a place among
//! its siblings (`{"position": n}`, `{"before": id}` or `{"after": id}`),
//! in one transaction, answered with the record as it now is.

use crate::auth::Records;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiPath};
use axum::Json;
use axum::Router;
use quire_core::input::Place;
use quire_core::model::{NavItem, Page, PageSection};
use serde::Deserialize;

/// Where a record goes: one of `position`, `before` and `after`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MoveTo {
    /// The place, counted from 0 (the first); the last is the number of its siblings.
    pub position: Option<u32>,
    /// Right before this sibling (its id).
    pub before: Option<String>,
    /// Right after this sibling (its id).
    pub after: Option<String>,
}

impl MoveTo {
    /// The place it names, or a refusal naming the fields when it names
    /// none or several.
    fn place(self) -> Result<Place, quire_store::StoreError> {
        match (self.position, self.before, self.after) {
            (Some(n), None, None) => Ok(Place::Position(n)),
            (None, Some(id), None) => Ok(Place::Before(id)),
            (None, None, Some(id)) => Ok(Place::After(id)),
            _ => Err(quire_store::StoreError::invalid("position", "give exactly one of position, before and after")),
        }
    }
}

/// Declares each route once: its handler, path, operation, tag, the
/// record it answers and the `Content` calls that move and read it.
macro_rules! move_routes {
    ($($(#[doc = $doc:tt])* $name:ident: $path:tt $op:tt $tag:tt ($about:tt) => $call:ident, $read:ident -> $ty:ty;)*) => {
        $(
            $(#[doc = $doc])*
            #[utoipa::path(post, path = $path, operation_id = $op, tag = $tag,
                params(("id" = String, Path, description = $about)), request_body = MoveTo, security(("bearer" = [])),
                responses((status = 200, description = "Moved: the record as it now is", body = $ty),
                    (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
            pub async fn $name(records: Records, ApiPath(id): ApiPath<String>, ApiJson(to): ApiJson<MoveTo>) -> ApiResult<Json<$ty>> {
                let place = match to.place() {
                    Ok(place) => place,
                    // Who may see the record hears what is wrong with the body.
                    Err(e) => {
                        records.$read(&id).await?;
                        return Err(e.into());
                    }
                };
                records.$call(&id, place).await?;
                Ok(Json(records.$read(&id).await?))
            }
        )*

        /// Routes of this module.
        pub fn router() -> Router<crate::AppState> {
            Router::new()$(.route($path, axum::routing::post($name)))*
        }
    };
}

move_routes! {
    /// Moves a page among the pages under the same parent: to a position
    /// counted from 0, or right before or after a sibling.
    move_page: "/api/v1/pages/{id}/move" "movePage" "pages" ("Page id") => move_page, page -> Page;
    /// Moves a section on its page: to a position counted from 0, or right
    /// before or after another section of the page.
    move_section: "/api/v1/sections/{id}/move" "moveSection" "sections" ("Section id")
        => move_section, section -> PageSection;
    /// Moves a menu item among the items under the same parent: to a
    /// position counted from 0, or right before or after a sibling.
    move_nav_item: "/api/v1/nav-items/{id}/move" "moveNavItem" "navigation" ("Menu item id")
        => move_nav_item, nav_item -> NavItem;
}
