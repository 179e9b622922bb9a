//! One module per resource. Each exposes `router()` and its handlers, which
//! carry their OpenAPI description.

pub mod agents;
pub mod agui;
pub mod archive;
pub mod changes;
pub mod collections;
pub mod delivery;
pub mod environments;
pub mod images;
pub mod jobs;
pub mod locales;
pub mod moving;
pub mod navigation;
pub mod oauth;
pub mod openai;
pub mod pages;
pub mod preferences;
pub mod publishing;
pub mod releases;
pub mod schedules;
pub mod sections;
pub mod site;
pub mod sites;
pub mod system;
pub mod templates;
pub mod tokens;
pub mod tools;
pub mod uploads;
pub mod users;
pub mod webhooks;

use crate::AppState;
use crate::error::ApiError;
use axum::Router;
use quire_store::Listing;
use serde::{Deserialize, Serialize};

/// Every route of the API.
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(system::router())
        .merge(preferences::router())
        .merge(pages::router())
        .merge(sections::router())
        .merge(templates::router())
        .merge(collections::router())
        .merge(images::router())
        .merge(jobs::router())
        .merge(navigation::router())
        .merge(publishing::router())
        .merge(moving::router())
        .merge(releases::router())
        .merge(schedules::router())
        .merge(site::router())
        .merge(sites::router())
        .merge(environments::router())
        .merge(archive::router())
        .merge(changes::router())
        .merge(delivery::router())
        .merge(tools::router())
        .merge(agents::router())
        .merge(agui::router())
        .merge(openai::router())
        .merge(tokens::router())
        .merge(users::router())
        .merge(oauth::router())
        .merge(webhooks::router())
        .merge(locales::router())
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

/// Declares the query of a list: its filters, each an `Option` under its
/// doc comment, then `limit` and `cursor` as every list takes them (the
/// fields of [`Paging`]).
macro_rules! list_query {
    ($(#[doc = $doc:tt])* $name:ident { $($(#[$attr:meta])* $field:ident: Option<$type:ident>),* $(,)? }) => {
        $(#[doc = $doc])*
        #[derive(Debug, ::serde::Deserialize, ::utoipa::IntoParams)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        #[into_params(parameter_in = Query)]
        pub struct $name {
            $($(#[$attr])* pub $field: Option<$type>,)*
            /// Items per page, 1 to 100 (default 20).
            #[param(minimum = 1, maximum = 100)]
            pub limit: Option<u32>,
            /// The `nextCursor` of the previous page.
            pub cursor: Option<String>,
        }
    };
}
pub(crate) use list_query;

/// Writes a module's handlers of records, each from one line under its
/// doc comment, with its OpenAPI description, and the module's `router()`
/// mounting them. `call` is the [`Records`](crate::auth::Records)
/// operation the handler runs, which decides who may. A header names the
/// tag, the path of one record and its parameter; the lines under it:
///
/// ```text
/// tag = "sections", item = "/api/v1/sections/{id}" ("id": "Section id");
/// // one page of records, read with `Paging` or a `list_query!`, made into
/// // the call's arguments before the limit and cursor; with a path
/// // parameter, of the record it names (404 when there is none)
/// list: get "/api/v1/pages/{id}/sections" ("id": "Page id") "listSections" (q: Paging)
///     => sections() -> [PageSection] "One page of the page's sections in order";
/// // 201 with the new record; the error statuses the description lists
/// create: post "/api/v1/pages/{id}/sections" ("id": "Page id") "createSection"
///     => create_section(NewSection) -> PageSection "The created section" [404, 409, 422];
/// // the record the header's path names: read, changed, archived
/// read: get "getSection" => section -> PageSection "The section";
/// update: patch "updateSection" => update_section(SectionPatch) -> PageSection "The changed section";
/// archive: delete "archiveSection" => Section "The archive holding the section";
/// // a handler written out in the module
/// mount restore: post "/api/v1/archive/{id}/restore";
/// ```
///
/// A header may name the tag alone (`tag = "changes";`) when no line reads
/// one record, and a module may hold several. Strings pass as token trees
/// and types as identifiers: utoipa reads a string literal or a type that
/// a `literal`, `expr` or `ty` fragment would hand it wrapped in an
/// invisible group.
macro_rules! record_handlers {
    (@each $header:tt [$(($path:tt $method:ident $name:ident))*]) => {
        /// Routes of this module.
        pub fn router() -> ::axum::Router<$crate::AppState> {
            ::axum::Router::new()$(.route($path, ::axum::routing::$method($name)))*
        }
    };
    (@each $header:tt [$($routes:tt)*]
        tag = $tag:tt, item = $item:tt ($param:tt: $about:tt); $($rest:tt)*
    ) => {
        $crate::routes::record_handlers!(@each [$tag $item $param $about] [$($routes)*] $($rest)*);
    };
    (@each $header:tt [$($routes:tt)*] tag = $tag:tt; $($rest:tt)*) => {
        $crate::routes::record_handlers!(@each [$tag "" "" ""] [$($routes)*] $($rest)*);
    };
    (@each $header:tt [$($routes:tt)*] mount $name:ident: $method:ident $path:tt; $($rest:tt)*) => {
        $crate::routes::record_handlers!(@each $header [$($routes)* ($path $method $name)] $($rest)*);
    };
    (@each [$tag:tt $item:tt $param:tt $about:tt] [$($routes:tt)*]
        $(#[doc = $doc:tt])* $name:ident: get $path:tt $op:tt ($q:ident: $query:ident)
            => $call:ident($($arg:expr),*) -> [$record:ident] $answer:tt; $($rest:tt)*
    ) => {
        $(#[doc = $doc])*
        #[utoipa::path(get, path = $path, operation_id = $op, tag = $tag, params($query), security(("bearer" = [])),
            responses((status = 200, description = $answer, body = $crate::routes::ListResponse<$record>)))]
        pub async fn $name(
            records: $crate::auth::Records,
            $crate::extract::ApiQuery(mut $q): $crate::extract::ApiQuery<$query>,
        ) -> $crate::error::ApiResult<::axum::Json<$crate::routes::ListResponse<$record>>> {
            let paging = $crate::routes::Paging { limit: $q.limit, cursor: $q.cursor.take() };
            Ok(::axum::Json(records.$call($($arg,)* paging.limit()?, paging.cursor()).await?.into()))
        }
        $crate::routes::record_handlers!(@each [$tag $item $param $about] [$($routes)* ($path get $name)] $($rest)*);
    };
    (@each [$tag:tt $item:tt $param:tt $about:tt] [$($routes:tt)*]
        $(#[doc = $doc:tt])* $name:ident: get $path:tt ($of:tt: $of_about:tt) $op:tt ($q:ident: $query:ident)
            => $call:ident($($arg:expr),*) -> [$record:ident] $answer:tt; $($rest:tt)*
    ) => {
        $(#[doc = $doc])*
        #[utoipa::path(get, path = $path, operation_id = $op, tag = $tag, params(($of = String, Path, description = $of_about), $query),
            security(("bearer" = [])), responses((status = 200, description = $answer, body = $crate::routes::ListResponse<$record>), (status = 404, body = $crate::error::ErrorBody)))]
        pub async fn $name(
            records: $crate::auth::Records,
            $crate::extract::ApiPath(id): $crate::extract::ApiPath<String>,
            $crate::extract::ApiQuery(mut $q): $crate::extract::ApiQuery<$query>,
        ) -> $crate::error::ApiResult<::axum::Json<$crate::routes::ListResponse<$record>>> {
            let paging = $crate::routes::Paging { limit: $q.limit, cursor: $q.cursor.take() };
            Ok(::axum::Json(records.$call(&id, $($arg,)* paging.limit()?, paging.cursor()).await?.into()))
        }
        $crate::routes::record_handlers!(@each [$tag $item $param $about] [$($routes)* ($path get $name)] $($rest)*);
    };
    (@each [$tag:tt $item:tt $param:tt $about:tt] [$($routes:tt)*]
        $(#[doc = $doc:tt])* $name:ident: post $path:tt $op:tt
            => $call:ident($input:ident) -> $record:ident $answer:tt [$($status:tt),*]; $($rest:tt)*
    ) => {
        $(#[doc = $doc])*
        #[utoipa::path(post, path = $path, operation_id = $op, tag = $tag, request_body = $input, security(("bearer" = [])),
            responses((status = 201, description = $answer, body = $record) $(, (status = $status, body = $crate::error::ErrorBody))*))]
        pub async fn $name(
            records: $crate::auth::Records,
            $crate::extract::ApiJson(input): $crate::extract::ApiJson<$input>,
        ) -> $crate::error::ApiResult<(::axum::http::StatusCode, ::axum::Json<$record>)> {
            Ok((::axum::http::StatusCode::CREATED, ::axum::Json(records.$call(input).await?)))
        }
        $crate::routes::record_handlers!(@each [$tag $item $param $about] [$($routes)* ($path post $name)] $($rest)*);
    };
    (@each [$tag:tt $item:tt $param:tt $about:tt] [$($routes:tt)*]
        $(#[doc = $doc:tt])* $name:ident: post $path:tt ($of:tt: $of_about:tt) $op:tt
            => $call:ident($input:ident) -> $record:ident $answer:tt [$($status:tt),*]; $($rest:tt)*
    ) => {
        $(#[doc = $doc])*
        #[utoipa::path(post, path = $path, operation_id = $op, tag = $tag, params(($of = String, Path, description = $of_about)),
            request_body = $input, security(("bearer" = [])),
            responses((status = 201, description = $answer, body = $record) $(, (status = $status, body = $crate::error::ErrorBody))*))]
        pub async fn $name(
            records: $crate::auth::Records,
            $crate::extract::ApiPath(id): $crate::extract::ApiPath<String>,
            $crate::extract::ApiJson(input): $crate::extract::ApiJson<$input>,
        ) -> $crate::error::ApiResult<(::axum::http::StatusCode, ::axum::Json<$record>)> {
            Ok((::axum::http::StatusCode::CREATED, ::axum::Json(records.$call(&id, input).await?)))
        }
        $crate::routes::record_handlers!(@each [$tag $item $param $about] [$($routes)* ($path post $name)] $($rest)*);
    };
    (@each [$tag:tt $item:tt $param:tt $about:tt] [$($routes:tt)*]
        $(#[doc = $doc:tt])* $name:ident: get $op:tt => $call:ident -> $record:ident $answer:tt; $($rest:tt)*
    ) => {
        $(#[doc = $doc])*
        #[utoipa::path(get, path = $item, operation_id = $op, tag = $tag, params(($param = String, Path, description = $about)),
            security(("bearer" = [])), responses((status = 200, description = $answer, body = $record), (status = 404, body = $crate::error::ErrorBody)))]
        pub async fn $name(
            records: $crate::auth::Records,
            $crate::extract::ApiPath(id): $crate::extract::ApiPath<String>,
        ) -> $crate::error::ApiResult<::axum::Json<$record>> {
            Ok(::axum::Json(records.$call(&id).await?))
        }
        $crate::routes::record_handlers!(@each [$tag $item $param $about] [$($routes)* ($item get $name)] $($rest)*);
    };
    (@each [$tag:tt $item:tt $param:tt $about:tt] [$($routes:tt)*]
        $(#[doc = $doc:tt])* $name:ident: patch $op:tt => $call:ident($patch:ident) -> $record:ident $answer:tt; $($rest:tt)*
    ) => {
        $(#[doc = $doc])*
        #[utoipa::path(patch, path = $item, operation_id = $op, tag = $tag, params(($param = String, Path, description = $about)),
            request_body = $patch, security(("bearer" = [])),
            responses((status = 200, description = $answer, body = $record), (status = 404, body = $crate::error::ErrorBody), (status = 409, body = $crate::error::ErrorBody), (status = 422, body = $crate::error::ErrorBody)))]
        pub async fn $name(
            records: $crate::auth::Records,
            $crate::extract::ApiPath(id): $crate::extract::ApiPath<String>,
            $crate::extract::ApiJson(patch): $crate::extract::ApiJson<$patch>,
        ) -> $crate::error::ApiResult<::axum::Json<$record>> {
            Ok(::axum::Json(records.$call(&id, patch).await?))
        }
        $crate::routes::record_handlers!(@each [$tag $item $param $about] [$($routes)* ($item patch $name)] $($rest)*);
    };
    (@each [$tag:tt $item:tt $param:tt $about:tt] [$($routes:tt)*]
        $(#[doc = $doc:tt])* $name:ident: delete $op:tt => $kind:ident $answer:tt; $($rest:tt)*
    ) => {
        $(#[doc = $doc])*
        #[utoipa::path(delete, path = $item, operation_id = $op, tag = $tag, params(($param = String, Path, description = $about)),
            security(("bearer" = [])), responses((status = 200, description = $answer, body = ::quire_core::model::Archive), (status = 404, body = $crate::error::ErrorBody), (status = 409, body = $crate::error::ErrorBody)))]
        pub async fn $name(
            records: $crate::auth::Records,
            $crate::extract::ApiPath(id): $crate::extract::ApiPath<String>,
        ) -> $crate::error::ApiResult<::axum::Json<::quire_core::model::Archive>> {
            Ok(::axum::Json(records.archive_named(::quire_core::model::EntityKind::$kind, &id).await?))
        }
        $crate::routes::record_handlers!(@each [$tag $item $param $about] [$($routes)* ($item delete $name)] $($rest)*);
    };
    (@each $header:tt $routes:tt $($rows:tt)*) => {
        compile_error!(concat!("record_handlers! cannot read: ", stringify!($($rows)*)));
    };
    ($($rows:tt)*) => {
        $crate::routes::record_handlers!(@each [] [] $($rows)*);
    };
}
pub(crate) use record_handlers;
