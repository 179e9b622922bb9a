//! `quire approvals`, `undo` and `restore`: a person reviews what agents and
//! tools did, through the application layer's use cases (the same as REST
//! and the back-office).

use super::AnyResult;
use crate::cli::{ApprovalsCommand, CallerArgs};
use crate::config::Config;
use crate::services::{DataDir, Existing, cli_actor, services};

/// Lists, approves or rejects pending destructive calls; an answered call
/// that completes an agent's turn continues it here.
pub async fn approvals(command: ApprovalsCommand, caller: CallerArgs, config: &Config, data: &DataDir) -> AnyResult {
    // Answering may continue an agent's turn here: its model
    // configuration must be sound before anything is answered.
    let profiles = match command {
        ApprovalsCommand::List => quire_agent::Profiles::default(),
        _ => config.model_profiles()?,
    };
    let store = data.open_existing(Existing::Database).await?;
    let actor = cli_actor(&store, config, caller).await?;
    let registry = std::sync::Arc::new(quire_tools::Registry::new(services(&store, &data.path, config)?));
    let runtime = quire_agent::Runtime::new(registry, profiles);
    let (id, verdict) = match command {
        ApprovalsCommand::List => {
            let pending = quire_app::approvals::pending(&runtime, &actor).await?;
            outln!("{}", serde_json::to_string_pretty(&pending)?)?;
            store.close().await;
            return Ok(());
        }
        ApprovalsCommand::Approve { id } => (id, quire_app::approvals::Verdict::Approve),
        ApprovalsCommand::Reject { id, reason } => (id, quire_app::approvals::Verdict::Reject(reason)),
    };
    let answered = quire_app::approvals::answer(&runtime, &actor, &id, verdict).await?;
    outln!("{}", serde_json::to_string_pretty(&answered.confirmation)?)?;
    if let (Some(session), Some(_)) = (&answered.session, &answered.resumed) {
        eprintln!("agent turn of session {session} continues:");
        if let super::chat::Ended::Paused(more) = super::chat::follow(&runtime, session, None).await {
            for a in more {
                outln!("approval pending: {}", a["approvalId"].as_str().unwrap_or_default())?;
            }
        }
    }
    runtime.flush_events().await;
    store.close().await;
    Ok(())
}

/// Undoes turn `turn` of session `session`.
pub async fn undo(session: String, turn: i64, caller: CallerArgs, config: &Config, data: &DataDir) -> AnyResult {
    let store = data.open_existing(Existing::Database).await?;
    let actor = cli_actor(&store, config, caller).await?;
    let registry = std::sync::Arc::new(quire_tools::Registry::new(services(&store, &data.path, config)?));
    let runtime = quire_agent::Runtime::new(registry, quire_agent::Profiles::default());
    let undone = quire_app::undo::undo_turn(&runtime, &actor, &session, turn).await;
    runtime.flush_events().await;
    let undone = undone?;
    outln!("{}", serde_json::to_string_pretty(&undone)?)?;
    store.close().await;
    Ok(())
}

/// Restores a revision (a change id) or an archive (an archive id).
pub async fn restore(id: String, caller: CallerArgs, config: &Config, data: &DataDir) -> AnyResult {
    let store = data.open_existing(Existing::Database).await?;
    let actor = cli_actor(&store, config, caller).await?;
    let registry = quire_tools::Registry::new(services(&store, &data.path, config)?);
    let restored = match id.parse::<i64>() {
        Ok(change) => serde_json::to_value(quire_app::restore::restore_revision(&registry, &actor, change).await?)?,
        Err(_) => serde_json::to_value(quire_app::restore::restore_archive(&registry, &actor, &id).await?)?,
    };
    outln!("{}", serde_json::to_string_pretty(&restored)?)?;
    store.close().await;
    Ok(())
}
