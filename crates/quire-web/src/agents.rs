//! Agents (administrators): each agent's instructions, tools, the groups
//! that may use it, its approval policy, and whether it is enabled. Saved
//! through the store's agent rules, as `PATCH /api/v1/agents/{alias}` does.

use crate::Person;
use crate::error::WebError;
use crate::form::{self, Errors};
use crate::frame::Frame;
use crate::pages::{Head, SavedQuery, render, stale};
use askama::Template;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_core::access::{Action, Group};
use quire_core::input::AgentPatch;
use quire_core::model::{Agent, AgentPolicy};
use quire_server::AppState;

#[derive(Template)]
#[template(path = "agents.html")]
struct AgentsPage {
    head: Head,
    frame: Frame,
    agents: Vec<Agent>,
}

/// `GET /agents`: every agent of the site.
pub async fn list(State(state): State<AppState>, person: Person) -> Result<Html<String>, WebError> {
    person.caller.require(Action::Administer)?;
    let agents = state.store().agents(&person.caller.scope).await?;
    Ok(Html(AgentsPage { head: Head::new(), frame: Frame::new(&person, "/agents"), agents }.render()?))
}

#[derive(Template)]
#[template(path = "agent.html")]
struct AgentPage {
    head: Head,
    frame: Frame,
    agent: Agent,
    /// Tool selectors, one per line.
    tools: String,
    pinned: String,
    groups: Vec<(&'static str, bool)>,
    policies: &'static [AgentPolicy],
    /// Selectors that match no tool (ignored when the agent runs).
    unknown: Vec<String>,
    errors: Errors,
    saved: bool,
}

impl AgentPage {
    fn new(state: &AppState, person: &Person, agent: Agent, errors: Errors, saved: bool) -> Self {
        AgentPage {
            head: Head::new(),
            frame: Frame::new(person, "/agents"),
            tools: agent.tools.join("\n"),
            pinned: agent.pinned.join("\n"),
            groups: Group::ALL
                .iter()
                .map(|g| (g.as_str(), agent.allowed_groups.iter().any(|a| a == g.as_str())))
                .collect(),
            policies: AgentPolicy::ALL,
            unknown: quire_agent::prompt::unknown_selectors(&agent, state.registry()),
            agent,
            errors,
            saved,
        }
    }
}

/// `GET /agents/{alias}`: an agent's settings.
pub async fn edit(
    State(state): State<AppState>,
    person: Person,
    Path(alias): Path<String>,
    Query(q): Query<SavedQuery>,
) -> Result<Html<String>, WebError> {
    person.caller.require(Action::Administer)?;
    let agent = state.store().agent(&person.caller.scope, &alias).await?;
    Ok(Html(AgentPage::new(&state, &person, agent, Errors::new(), q.saved.is_some()).render()?))
}

/// Lines of a textarea, trimmed, empty ones dropped.
fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect()
}

/// `POST /agents/{alias}`: saves an agent's settings.
pub async fn update(
    State(state): State<AppState>,
    person: Person,
    Path(alias): Path<String>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    let get = |k: &str| pairs.iter().rev().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap_or_default();
    let all = |k: &str| pairs.iter().filter(|(n, _)| n == k).map(|(_, v)| v.clone()).collect::<Vec<_>>();
    let scope = person.caller.scope.clone();
    let result = async {
        person.caller.require(Action::Administer)?;
        let current = state.store().agent(&scope, &alias).await?;
        if let Some(e) = stale(&pairs, current.version) {
            return Ok((current, Err(e)));
        }
        let policy = match AgentPolicy::parse("approvalPolicy", &get("approval_policy")) {
            Ok(p) => p,
            Err(e) => return Ok((current, Err(e.into()))),
        };
        let patch = AgentPatch {
            name: Some(get("name").trim().to_string()),
            description: Some(get("description").trim().to_string()),
            profile: Some(get("profile").trim().to_string()),
            system_prompt: Some(get("system_prompt")),
            tools: Some(lines(&get("tools"))),
            pinned: Some(lines(&get("pinned"))),
            allowed_groups: Some(all("allowed_groups")),
            approval_policy: Some(policy),
            enabled: crate::pages::checked(&all("enabled")),
        };
        let saved = state.store().update_agent(&person.caller.ctx(), &scope, &current.id, &patch, None).await;
        Ok::<_, WebError>((current, saved))
    }
    .await;
    match result {
        Ok((_, Ok(agent))) => Redirect::to(&format!("/agents/{}?saved=1", agent.alias)).into_response(),
        Ok((mut typed, Err(e))) => {
            typed.name = get("name");
            typed.description = get("description");
            typed.profile = get("profile");
            typed.system_prompt = get("system_prompt");
            typed.tools = lines(&get("tools"));
            typed.pinned = lines(&get("pinned"));
            typed.allowed_groups = all("allowed_groups");
            render(
                StatusCode::UNPROCESSABLE_ENTITY,
                &AgentPage::new(&state, &person, typed, form::errors_of(&e, ""), false),
            )
        }
        Err(e) => e.into_response(),
    }
}
