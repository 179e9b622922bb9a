//! A person's own approval preferences on their site: when a tool that runs
//! for them (through an agent they chat with, their own REST or MCP token)
//! waits for their approval, above the server's floor — destructive calls
//! and outgoing sends always ask, whatever is set here.
//!
//! They belong to a person: a signed-in person reads and sets their own,
//! and so does a token they made; a token made by no one (the local admin's,
//! the CLI's) and the local admin have none, and a call of theirs asks only
//! what the floor asks.

use crate::{Actor, AppError, AppResult, Permission, authorize};
use quire_core::model::{ApprovalMode, ApprovalPreferences};
use quire_store::{Store, StoredPreferences};
use quire_tools::{Category, Registry};
use std::collections::BTreeMap;

/// What approval preferences may name: the tools that can ask (every tool
/// but the conversation's own), and the categories, narrowest first.
#[derive(Debug, Clone)]
pub struct Choices {
    /// Tool names, in the catalog's order.
    pub tools: Vec<&'static str>,
    /// Categories: what tools work on (`page`, …), then where they reach
    /// (`internal`, `external`).
    pub categories: Vec<&'static str>,
    /// The tools a preference changes anything for (neither the
    /// conversation's nor destructive): (name, what it works on, whether it
    /// only reads).
    pub above_floor: Vec<(&'static str, &'static str, bool)>,
    /// The categories holding one of those.
    pub offered: Vec<&'static str>,
    /// The tools that always ask, whatever is chosen (the floor).
    pub floor: Vec<&'static str>,
}

/// The tools and categories of `registry` preferences may name.
pub fn choices(registry: &Registry) -> Choices {
    let tools = registry.tools();
    let above: Vec<_> = tools.iter().filter(|t| t.category != Category::Default && !t.destructive).collect();
    let categories = quire_tools::preference_categories(tools);
    Choices {
        tools: tools.iter().filter(|t| t.category != Category::Default).map(|t| t.name).collect(),
        offered: categories
            .iter()
            .copied()
            .filter(|c| above.iter().any(|t| t.entity.as_str() == *c || t.category.as_str() == *c))
            .collect(),
        categories,
        above_floor: above.iter().map(|t| (t.name, t.entity.as_str(), t.read_only)).collect(),
        floor: tools.iter().filter(|t| t.destructive).map(|t| t.name).collect(),
    }
}

/// Preferences as a form or a request gives them (modes by their wire
/// names), checked: each mode one of `always`, `destructive`, `never`;
/// each key a tool or category that can ask. A refusal names the field
/// (`default`, `categories.page`, `tools.updatePage`).
pub fn parse(
    registry: &Registry,
    default: Option<&str>,
    categories: &BTreeMap<String, String>,
    tools: &BTreeMap<String, String>,
) -> AppResult<ApprovalPreferences> {
    let choices = choices(registry);
    let mode = |field: &str, value: &str| {
        ApprovalMode::parse(field, value).map_err(|e| AppError::invalid(field.to_string(), e.to_string()))
    };
    let default = match default {
        Some(value) => mode("default", value)?,
        None => ApprovalMode::Destructive,
    };
    let mut out = ApprovalPreferences { default, ..ApprovalPreferences::default() };
    for (key, value) in categories {
        let field = format!("categories.{key}");
        if !choices.categories.contains(&key.as_str()) {
            return Err(AppError::invalid(
                field.clone(),
                format!(
                    "{field}: \"{key}\" is not a category of tools that can ask; one of {}",
                    choices.categories.join(", ")
                ),
            ));
        }
        out.categories.insert(key.clone(), mode(&field, value)?);
    }
    for (key, value) in tools {
        let field = format!("tools.{key}");
        if !choices.tools.contains(&key.as_str()) {
            let why = match registry.get(key) {
                Some(_) => "never asks: it only talks with the person or finds tools",
                None => "is not a tool",
            };
            return Err(AppError::invalid(field.clone(), format!("{field}: \"{key}\" {why}")));
        }
        out.tools.insert(key.clone(), mode(&field, value)?);
    }
    Ok(out)
}

/// The person `actor` acts for, or the refusal of a caller with none.
/// Whoever may read the site chooses when they are asked.
async fn person(store: &Store, actor: &Actor) -> AppResult<String> {
    authorize(actor, Permission::Read)?;
    store.person_of(&actor.id).await?.ok_or_else(|| {
        AppError::not_found(format!(
            "{} acts for no person: approval preferences are a person's, read and set by them or with a token they made",
            actor.id
        ))
    })
}

/// The caller's own approval preferences on their site (the defaults when
/// never set).
pub async fn read(store: &Store, actor: &Actor) -> AppResult<StoredPreferences> {
    let user = person(store, actor).await?;
    Ok(store.approval_preferences(&user, &actor.scope.site_id).await?)
}

/// Sets the caller's own approval preferences on their site, recording who
/// set them (the person, or the token they used) and when. Nobody sets
/// another person's.
pub async fn set(store: &Store, actor: &Actor, preferences: &ApprovalPreferences) -> AppResult<StoredPreferences> {
    let user = person(store, actor).await?;
    Ok(store.set_approval_preferences(&user, &actor.scope.site_id, preferences, &actor.id).await?)
}
