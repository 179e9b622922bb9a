//! Who may do what: one [`Permission`] per operation a use case performs,
//! with the data the decision needs, and one [`authorize`] that decides.

use crate::{Actor, AppError, AppResult};
use quire_core::access::{Action, Group, allows};
use quire_core::model::{Agent, AgentSession, EntityKind, Surface};
use quire_tools::Tool;

/// An operation of a use case, with what deciding it needs.
#[derive(Debug, Clone, Copy)]
pub enum Permission<'a> {
    /// Approve or reject a destructive call someone asked for: a person
    /// (not the agent, not an MCP client) whose group may use the tool and,
    /// when an agent's turn asked, that agent.
    AnswerApproval {
        /// The tool of the call.
        tool: &'a Tool,
        /// The agent whose turn asked for it, if one did.
        agent: Option<&'a Agent>,
    },
    /// Undo a turn of an agent session: its owner (or an admin), in a group
    /// that writes content — the turn's changes were made with their rights.
    UndoTurn {
        /// The session.
        session: &'a AgentSession,
    },
    /// Put a record back as it was after a change: the right to change
    /// that kind of record and to restore it from the archive (a revision
    /// can bring back what was archived).
    RestoreRevision(EntityKind),
    /// Bring an archived record back with what went along.
    RestoreArchive(EntityKind),
}

/// Whether `actor` may do `permission`: Ok, or the refusal that says why.
/// The one place the use cases ask.
pub fn authorize(actor: &Actor, permission: Permission<'_>) -> AppResult<()> {
    let group = actor.group;
    let refuse = |what: String| Err(AppError::forbidden(format!("group {} may not {what}", group.as_str())));
    match permission {
        Permission::AnswerApproval { tool, agent } => {
            if matches!(actor.surface, Surface::Agent | Surface::Mcp) {
                return Err(AppError::forbidden("approvals cannot come through the agent or MCP"));
            }
            if !quire_tools::permits(group, tool) {
                return refuse(format!("use {}, so it may not answer a request for it", tool.name));
            }
            if let Some(agent) = agent
                && !quire_agent::allowed_for(agent, group)
            {
                return refuse(format!("use agent \"{}\", so it may not answer its requests", agent.alias));
            }
            Ok(())
        }
        Permission::UndoTurn { session } => {
            if session.actor != actor.id && group != Group::Admin {
                // Someone else's session is not theirs to see.
                return Err(AppError::not_found(format!("session {} not found", session.id)));
            }
            if !allows(group, Action::Write(EntityKind::Page)) {
                return refuse("undo a turn (it changes content)".into());
            }
            Ok(())
        }
        Permission::RestoreRevision(kind) => {
            if allows(group, Action::Write(kind)) && allows(group, Action::Delete(kind)) {
                Ok(())
            } else {
                refuse(format!("restore revisions of {kind} records"))
            }
        }
        Permission::RestoreArchive(kind) => {
            if allows(group, Action::Delete(kind)) {
                Ok(())
            } else {
                refuse(format!("archive or restore {kind} records"))
            }
        }
    }
}
