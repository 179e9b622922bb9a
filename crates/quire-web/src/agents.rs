//! Agents (administrators): each agent's instructions, tools, the groups
//! that may use it, its approval policy, and whether it is enabled. Saved
//! through the store's agent rules, as `PATCH /api/v1/agents/{alias}` does.

use crate::Person;
use crate::error::WebError;
use crate::form::Form;
use crate::form::{self, Errors};
use crate::frame::Frame;
use crate::pages::{Head, SavedQuery, render};
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::AppError;
use quire_core::access::{Group, Permission};
use quire_core::input::AgentPatch;
use quire_core::model::{Agent, AgentPolicy, WriteMode};
use quire_server::AppState;

#[derive(Template)]
#[template(path = "agents.html")]
struct AgentsPage {
    head: Head,
    frame: Frame,
    agents: Vec<Agent>,
}

/// `GET /agents`: every agent of the site (administrators' screen).
pub async fn list(person: Person) -> Result<Html<String>, WebError> {
    person.require(Permission::Administer)?;
    let agents = person.content.agents().await?;
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
    /// Keys of the contexts it carries, one per line.
    contexts: String,
    groups: Vec<(&'static str, bool)>,
    policies: &'static [AgentPolicy],
    /// Where its writes may go, each with its name and what it means.
    write_modes: Vec<WriteModeChoice>,
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
            contexts: agent.contexts.join("\n"),
            groups: Group::ALL.iter().map(|g| (g.as_str(), agent.allowed_groups.contains(g))).collect(),
            policies: AgentPolicy::ALL,
            write_modes: WriteModeChoice::all(),
            unknown: quire_agent::prompt::unknown_selectors(&agent, state.registry()),
            agent,
            errors,
            saved,
        }
    }
}

/// A write mode as the agent form offers it.
struct WriteModeChoice {
    mode: WriteMode,
    /// Its name in the form.
    name: &'static str,
    /// What it means for the site, in one line.
    means: &'static str,
}

impl WriteModeChoice {
    /// Every write mode, the default first.
    fn all() -> Vec<WriteModeChoice> {
        let mut all: Vec<(u8, WriteModeChoice)> = WriteMode::ALL
            .iter()
            .map(|&mode| {
                let (rank, name, means) = match mode {
                    WriteMode::Draft => (
                        0,
                        "Drafts",
                        "Its changes go to drafts; they reach the site only when a person approves publishing them.",
                    ),
                    WriteMode::Release => (
                        1,
                        "A release for each turn",
                        "Each turn's changes wait in a release of their own, shown under the turn in the chat: \
                         drafts and the site stay as they are until a person publishes it.",
                    ),
                    WriteMode::Direct => (
                        2,
                        "Straight to the site",
                        "Each change is published as it is made; undoing the turn puts back what was on the site.",
                    ),
                };
                (rank, WriteModeChoice { mode, name, means })
            })
            .collect();
        all.sort_by_key(|(rank, _)| *rank);
        all.into_iter().map(|(_, c)| c).collect()
    }
}

/// `GET /agents/{alias}`: an agent's settings.
pub async fn edit(
    State(state): State<AppState>,
    person: Person,
    Path(alias): Path<String>,
    Query(q): Query<SavedQuery>,
) -> Result<Html<String>, WebError> {
    person.require(Permission::Administer)?;
    let agent = person.content.agent(&alias).await?;
    Ok(Html(AgentPage::new(&state, &person, agent, Errors::new(), q.saved.is_some()).render()?))
}

/// The fields of the agent form that show their own errors.
const FIELDS: [&str; 8] =
    ["name", "description", "profile", "systemPrompt", "tools", "pinned", "contexts", "allowedGroups"];

/// The errors of a refused save, keyed by the form's fields (`tools[2]`
/// names the tools); any other under "", shown at the top.
fn agent_errors(e: &AppError) -> Errors {
    let mut out = Errors::new();
    for (key, message) in form::errors_of(e, "") {
        let base = key.split(['.', '[']).next().unwrap_or_default();
        let target = if FIELDS.contains(&base) { base.to_string() } else { String::new() };
        out.entry(target).or_insert(message);
    }
    out
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
    let get = |k: &str| form::value(&pairs, k).to_string();
    // Checkboxes of the four groups: a name that is none of them was not
    // offered, and is left out.
    let groups = || -> Vec<Group> {
        form::values(&pairs, "allowed_groups").iter().filter_map(|g| Group::parse(g).ok()).collect()
    };
    let result = async {
        person.require(Permission::Administer)?;
        let current = person.content.agent(&alias).await?;
        if let Some(e) = form::stale(&pairs, current.version) {
            return Ok((current, Err(e)));
        }
        let policy = match AgentPolicy::parse("approvalPolicy", &get("approval_policy")) {
            Ok(p) => p,
            Err(e) => return Ok((current, Err(form::invalid(e)))),
        };
        let write_mode = match WriteMode::parse("writeMode", &get("write_mode")) {
            Ok(m) => m,
            Err(e) => return Ok((current, Err(form::invalid(e)))),
        };
        let patch = AgentPatch {
            name: Some(get("name").trim().to_string()),
            description: Some(get("description").trim().to_string()),
            profile: Some(get("profile").trim().to_string()),
            system_prompt: Some(get("system_prompt")),
            tools: Some(lines(&get("tools"))),
            pinned: Some(lines(&get("pinned"))),
            allowed_groups: Some(groups()),
            approval_policy: Some(policy),
            write_mode: Some(write_mode),
            enabled: form::checked(&pairs, "enabled"),
            contexts: Some(lines(&get("contexts"))),
        };
        // The store checks the version again inside its transaction.
        let opened = Some(current.version);
        let saved = person.content.update_agent(&current.id, &patch, opened).await;
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
            typed.contexts = lines(&get("contexts"));
            typed.allowed_groups = groups();
            if let Ok(policy) = AgentPolicy::parse("approvalPolicy", &get("approval_policy")) {
                typed.approval_policy = policy;
            }
            if let Ok(mode) = WriteMode::parse("writeMode", &get("write_mode")) {
                typed.write_mode = mode;
            }
            typed.enabled = form::checked(&pairs, "enabled").unwrap_or(typed.enabled);
            render(StatusCode::UNPROCESSABLE_ENTITY, &AgentPage::new(&state, &person, typed, agent_errors(&e), false))
        }
        Err(e) => e.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexed_errors_name_their_field_and_the_rest_go_to_the_top() {
        let e = form::refusal_of(&[
            ("tools[2]", "unknown selector form"),
            ("approvalPolicy", "not one of user, conversational"),
        ]);
        let errors = agent_errors(&e);
        assert_eq!(errors["tools"], "unknown selector form");
        assert_eq!(errors[""], "not one of user, conversational");
    }
}
