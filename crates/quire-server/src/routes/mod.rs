//! One module per resource. Each exposes `router()` and its handlers, which
//! carry their OpenAPI description.

pub mod agents;
pub mod archive;
pub mod changes;
pub mod collections;
pub mod delivery;
pub mod images;
pub mod jobs;
pub mod navigation;
pub mod pages;
pub mod sections;
pub mod system;
pub mod templates;
pub mod tokens;
pub mod tools;
pub mod uploads;

use crate::AppState;
use crate::error::ApiError;
use axum::Router;
use quire_store::Listing;
use serde::{Deserialize, Serialize};

/// Every route of the API.
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(system::router())
        .merge(pages::router())
        .merge(sections::router())
        .merge(templates::router())
        .merge(collections::router())
        .merge(images::router())
        .merge(jobs::router())
        .merge(navigation::router())
        .merge(archive::router())
        .merge(changes::router())
        .merge(delivery::router())
        .merge(tools::router())
        .merge(agents::router())
        .merge(tokens::router())
}

/// Default page size of lists.
pub const DEFAULT_LIMIT: u32 = 20;
/// Largest page size of lists.
pub const MAX_LIMIT: u32 = 100;

/// Pagination parameters shared by every list.
#[derive(Debug, Clone, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct Paging {
    /// Items per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
    /// The `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

impl Paging {
    /// The checked limit.
    pub fn limit(&self) -> Result<u32, ApiError> {
        match self.limit {
            None => Ok(DEFAULT_LIMIT),
            Some(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
            Some(n) => Err(ApiError::bad_field("limit", format!("{n} is not between 1 and {MAX_LIMIT}"))),
        }
    }
    /// The cursor.
    pub fn cursor(&self) -> Option<&str> {
        self.cursor.as_deref().filter(|c| !c.is_empty())
    }
}

/// One page of a list.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListResponse<T> {
    /// The items.
    pub items: Vec<T>,
    /// How many items this page holds.
    pub count: usize,
    /// Pass as `cursor` to get the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

impl<T> From<Listing<T>> for ListResponse<T> {
    fn from(l: Listing<T>) -> Self {
        Self { count: l.items.len(), items: l.items, next_cursor: l.next_cursor }
    }
}
