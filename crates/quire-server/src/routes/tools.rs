//! `/api/v1/tools` and `/api/v1/approvals`: the tool registry over HTTP.
//! Invoking a tool here is the same call the agent and MCP make.

use super::ListResponse;
use crate::AppState;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorBody, tool_status};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use quire_store::Confirmation;
use serde::Deserialize;
use serde_json::Value;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/tools", get(list))
        .route("/api/v1/tools/categories", get(categories))
        .route("/api/v1/tools/{name}", get(read))
        .route("/api/v1/tools/{name}/invoke", post(invoke))
        .route("/api/v1/approvals", get(approvals))
        .route("/api/v1/approvals/{id}/approve", post(approve))
        .route("/api/v1/approvals/{id}/reject", post(reject))
}

/// Filter of the tool list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ToolQuery {
    /// Only tools of this category.
    #[param(inline)]
    pub category: Option<ToolCategory>,
}

/// The categories of tools, as a filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolCategory {
    /// Always active (searchTools, acknowledgeRequest, finalAnswer).
    Default,
    /// Works on this site's content.
    Internal,
    /// Reaches outside the server.
    External,
}

impl ToolCategory {
    fn matches(self, category: quire_tools::Category) -> bool {
        matches!(
            (self, category),
            (ToolCategory::Default, quire_tools::Category::Default)
                | (ToolCategory::Internal, quire_tools::Category::Internal)
                | (ToolCategory::External, quire_tools::Category::External)
        )
    }
}

/// Lists the tools the caller's group may use.
#[utoipa::path(get, path = "/api/v1/tools", operation_id = "listTools", tag = "tools", params(ToolQuery), security(("bearer" = [])),
    responses((status = 200, description = "`{ items: ToolInfo[], count }`: the tools the caller may use", body = Object)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ToolQuery>,
) -> ApiResult<Json<Value>> {
    let registry = state.registry();
    let acting = caller.acting();
    let who = acting.principal();
    let items: Vec<_> = registry
        .permitted(&who)
        .filter(|t| q.category.is_none_or(|c| c.matches(t.category)))
        .map(|t| registry.info(t))
        .collect();
    Ok(Json(serde_json::json!({ "count": items.len(), "items": items })))
}

/// The tool categories with how many tools of each the caller's group may use.
#[utoipa::path(get, path = "/api/v1/tools/categories", operation_id = "listToolCategories", tag = "tools", security(("bearer" = [])),
    responses((status = 200, description = "`{ items: [{ name, description, count }], count }`", body = Object)))]
pub async fn categories(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<Value>> {
    use quire_tools::Category;
    let registry = state.registry();
    let acting = caller.acting();
    let who = acting.principal();
    let items: Vec<Value> = [
        (Category::Default, "Always active: searchTools, acknowledgeRequest, finalAnswer."),
        (Category::Internal, "Work on this site's content, media and notes."),
        (Category::External, "Reach outside the server (web search, stock images, HTTP)."),
    ]
    .into_iter()
    .map(|(category, description)| {
        let count = registry.permitted(&who).filter(|t| t.category == category).count();
        serde_json::json!({ "name": category.as_str(), "description": description, "count": count })
    })
    .collect();
    Ok(Json(serde_json::json!({ "count": items.len(), "items": items })))
}

/// One tool's definition: description, guidance, metadata and input schema.
#[utoipa::path(get, path = "/api/v1/tools/{name}", operation_id = "getTool", tag = "tools", params(("name" = String, Path, description = "Tool name")),
    security(("bearer" = [])), responses((status = 200, description = "The tool's definition (ToolInfo)", body = Object), (status = 404, body = ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(name): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    let registry = state.registry();
    let ctx = caller.acting().call_context();
    let tool = registry.get(&name).filter(|t| quire_tools::permits(&ctx, t)).ok_or_else(|| {
        ApiError::not_found(format!("no tool named \"{name}\" for group {}", caller.group().as_str()))
    })?;
    Ok(Json(serde_json::to_value(registry.info(tool)).unwrap_or_default()))
}

/// A failed invocation: the tool's own result (`{ success: false, error,
/// errorCode, hint }`), or an error of the HTTP edge (`{ error, code }`).
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct InvokeError {
    /// What went wrong, in words.
    error: String,
    /// `false` in a tool's result.
    success: Option<bool>,
    /// The tool's error code (VALIDATION, NOT_FOUND, ...).
    error_code: Option<String>,
    /// What to do about it.
    hint: Option<String>,
    /// The edge's error code.
    code: Option<String>,
}

/// Invokes a tool: the body is its arguments, the answer its JSON
/// (`{ success, ... }`), with an HTTP status that matches its errorCode.
#[utoipa::path(post, path = "/api/v1/tools/{name}/invoke", operation_id = "invokeTool", tag = "tools", params(("name" = String, Path, description = "Tool name")),
    request_body(content = Object, description = "The tool's arguments"), security(("bearer" = [])),
    responses((status = 200, description = "The tool's result: `{ success: true, ... }`", body = Object), (status = 403, description = "The group may not use the tool (the tool's result), or no access at all", body = InvokeError), (status = 404, description = "No such tool, or the tool found no such record", body = InvokeError), (status = 409, body = InvokeError), (status = 422, description = "Invalid arguments (the tool's result names the parameter)", body = InvokeError), (status = 428, body = InvokeError), (status = 429, body = InvokeError), (status = 500, body = InvokeError), (status = 502, body = InvokeError)))]
pub async fn invoke(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(name): ApiPath<String>,
    ApiJson(args): ApiJson<Value>,
) -> (StatusCode, Json<Value>) {
    let ctx = caller.acting().call_context();
    let outcome = match quire_tools::approval_in(args) {
        Ok((args, approval)) => state.registry().run(&ctx, &name, args, approval.as_ref()).await,
        Err(e) => Err(e),
    };
    match outcome {
        Ok(outcome) => (StatusCode::OK, Json(outcome.into_json())),
        Err(e) => (tool_status(e.code), Json(e.to_json())),
    }
}

/// Destructive calls waiting for a person's approval in the caller's scope.
#[utoipa::path(get, path = "/api/v1/approvals", operation_id = "listApprovals", tag = "approvals", security(("bearer" = [])),
    responses((status = 200, description = "The destructive calls waiting for approval", body = ListResponse<Confirmation>)))]
pub async fn approvals(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<Value>> {
    let items = quire_app::approvals::pending(state.runtime(), &caller.acting()).await?;
    Ok(Json(serde_json::json!({ "count": items.len(), "items": items })))
}

/// Approves a pending destructive call; the caller's group must be allowed to use the tool.
#[utoipa::path(post, path = "/api/v1/approvals/{id}/approve", operation_id = "approveCall", tag = "approvals", params(("id" = String, Path, description = "confirmationId")),
    security(("bearer" = [])), responses((status = 200, description = "The approved confirmation", body = Confirmation), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn approve(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Confirmation>> {
    Ok(Json(answer(&state, &caller, &id, Verdict::Approve).await?))
}

pub use quire_app::approvals::Verdict;

/// Answers a pending destructive call as `caller` (REST and the
/// back-office alike) through the use case, which also resumes the agent
/// turn waiting on it.
pub async fn answer(state: &AppState, caller: &Caller, id: &str, verdict: Verdict) -> ApiResult<Confirmation> {
    let answered = quire_app::approvals::answer(state.runtime(), &caller.acting(), id, verdict).await?;
    Ok(answered.confirmation)
}

/// Why a request was rejected.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RejectBody {
    /// The reason, passed on to whoever asked.
    pub reason: Option<String>,
}

/// Rejects a pending destructive call, with a reason in an optional body
/// (an empty body rejects without one, as `approve` needs none).
#[utoipa::path(post, path = "/api/v1/approvals/{id}/reject", operation_id = "rejectCall", tag = "approvals", params(("id" = String, Path, description = "confirmationId")),
    request_body(content = Option<RejectBody>, description = "Optional: { reason }"), security(("bearer" = [])),
    responses((status = 200, description = "The rejected confirmation", body = Confirmation), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn reject(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    body: Option<ApiJson<RejectBody>>,
) -> ApiResult<Json<Confirmation>> {
    let reason = body.and_then(|ApiJson(b)| b.reason);
    Ok(Json(answer(&state, &caller, &id, Verdict::Reject(reason)).await?))
}
