//! `/api/v1/me/approval-preferences`: the caller's own approval
//! preferences, read and replaced. The rules are
//! `quire_app::preferences`'; the store is handed to it.

use crate::AppState;
use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::ApiJson;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use quire_core::model::{ApprovalMode, ApprovalPreferences};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::openapi::schema::{AdditionalProperties, Schema};
use utoipa::openapi::{ObjectBuilder, Ref, RefOr, Type};

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new().route("/api/v1/me/approval-preferences", get(preferences).put(set_preferences))
}

/// A map from one of `names` to a mode, as JSON Schema.
fn modes_by(names: Vec<&'static str>, about: &str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(about))
        .property_names(Some(ObjectBuilder::new().schema_type(Type::String).enum_values(Some(names))))
        .additional_properties(Some(AdditionalProperties::RefOr(RefOr::Ref(Ref::from_schema_name("ApprovalMode")))))
        .into()
}

fn categories_schema() -> RefOr<Schema> {
    let tools = quire_tools::catalog();
    modes_by(
        quire_tools::preference_categories(&tools),
        "Modes by category: what tools work on (page, post, image, …), or where they reach (internal: this site, external: the internet).",
    )
}

fn tools_schema() -> RefOr<Schema> {
    let tools = quire_tools::catalog();
    let names = tools.iter().filter(|t| t.category != quire_tools::Category::Default).map(|t| t.name).collect();
    modes_by(
        names,
        "Modes by tool name (every tool but searchTools, acknowledgeRequest and finalAnswer, which never ask).",
    )
}

/// A person's approval preferences on their site: when a tool that runs for
/// them (their agent chats, their own tokens over REST and MCP) waits for
/// their approval. A call's mode is its tool's, else its category's (what
/// it works on, then where it reaches), else the default. `always` asks
/// before any call, reads too; `destructive` and `never` ask only what the
/// server's floor asks: destructive calls and outgoing sends ask whatever
/// is set here.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovalPreferencesChange {
    /// The mode of what no entry names (default: destructive).
    #[schema(value_type = Option<ApprovalMode>)]
    pub default: Option<String>,
    /// Modes by category.
    #[serde(default)]
    #[schema(schema_with = categories_schema)]
    pub categories: BTreeMap<String, String>,
    /// Modes by tool.
    #[serde(default)]
    #[schema(schema_with = tools_schema)]
    pub tools: BTreeMap<String, String>,
}

/// The caller's approval preferences, with who last changed them.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalPreferencesView {
    /// The mode of what no entry names.
    pub default: ApprovalMode,
    /// Modes by category.
    #[schema(schema_with = categories_schema)]
    pub categories: BTreeMap<String, ApprovalMode>,
    /// Modes by tool.
    #[schema(schema_with = tools_schema)]
    pub tools: BTreeMap<String, ApprovalMode>,
    /// When they were last changed (absent: never set, the defaults).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<DateTime<Utc>>,
    /// Who last changed them: `user:<id>`, or `token:<id>` for a token of theirs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_by: Option<String>,
}

impl From<quire_store::StoredPreferences> for ApprovalPreferencesView {
    fn from(stored: quire_store::StoredPreferences) -> Self {
        let ApprovalPreferences { default, categories, tools } = stored.preferences;
        Self { default, categories, tools, updated_at: stored.updated_at, updated_by: stored.updated_by }
    }
}

/// The caller's own approval preferences on their site: a signed-in
/// person's, or those of the person who made the token (404 for a token
/// made by no one: no preferences apply to it).
#[utoipa::path(get, path = "/api/v1/me/approval-preferences", operation_id = "getApprovalPreferences", tag = "system",
    security(("bearer" = [])), responses((status = 200, description = "The preferences", body = ApprovalPreferencesView),
        (status = 404, body = ErrorBody)))]
pub async fn preferences(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<ApprovalPreferencesView>> {
    Ok(Json(quire_app::preferences::read(state.store(), &caller.acting()).await?.into()))
}

/// Replaces the caller's own approval preferences on their site. An
/// unknown tool or category, or mode, is refused with a 422 naming it
/// (`tools.updatePage`, `categories.page`).
#[utoipa::path(put, path = "/api/v1/me/approval-preferences", operation_id = "setApprovalPreferences", tag = "system",
    request_body = ApprovalPreferencesChange, security(("bearer" = [])),
    responses((status = 200, description = "The preferences", body = ApprovalPreferencesView),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn set_preferences(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(change): ApiJson<ApprovalPreferencesChange>,
) -> ApiResult<Json<ApprovalPreferencesView>> {
    let actor = caller.acting();
    let default = change.default.as_deref();
    let preferences = quire_app::preferences::parse(state.registry(), default, &change.categories, &change.tools)?;
    Ok(Json(quire_app::preferences::set(state.store(), &actor, &preferences).await?.into()))
}
