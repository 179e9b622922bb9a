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
    /// Create or revoke API tokens of the actor's site.
    ManageTokens,
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
        Permission::ManageTokens => {
            if allows(group, Action::Administer) {
                Ok(())
            } else {
                refuse("administer the site".into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quire_core::model::{AgentPolicy, SessionStatus};
    use quire_tools::ApprovalPolicy;

    fn actor(group: Group, surface: Surface) -> Actor {
        Actor {
            id: format!("user:{}", group.as_str()),
            group,
            scope: quire_store::Scope { site_id: "s".into(), env: "production".into() },
            surface,
            policy: ApprovalPolicy::User,
            environments: None,
        }
    }

    fn session(owner: &str) -> AgentSession {
        AgentSession {
            id: "sess".into(),
            agent_id: "a".into(),
            actor: owner.into(),
            group: "author".into(),
            title: String::new(),
            status: SessionStatus::Idle,
            turns: 1,
            steps: 0,
            active_tools: Vec::new(),
            memory: serde_json::json!({}),
            pending: serde_json::json!([]),
            context: None,
            input_tokens: 0,
            output_tokens: 0,
            created_at: Default::default(),
            updated_at: Default::default(),
        }
    }

    fn agent(groups: &[&str]) -> Agent {
        Agent {
            id: "a".into(),
            alias: "editor".into(),
            name: "Editor".into(),
            description: String::new(),
            profile: "default".into(),
            system_prompt: String::new(),
            tools: Vec::new(),
            pinned: Vec::new(),
            allowed_groups: groups.iter().map(|g| g.to_string()).collect(),
            approval_policy: AgentPolicy::User,
            enabled: true,
            version: 1,
            created_at: Default::default(),
            updated_at: Default::default(),
        }
    }

    fn failure(r: AppResult<()>) -> Option<crate::Failure> {
        r.err().map(|e| e.failure)
    }

    #[test]
    fn answering_an_approval() {
        let tools = quire_tools::catalog();
        let delete = tools.iter().find(|t| t.name == "deletePage").unwrap();
        let post = tools.iter().find(|t| t.name == "httpPost").unwrap();
        let answer = |a: &Actor, tool, agent| failure(authorize(a, Permission::AnswerApproval { tool, agent }));
        assert_eq!(answer(&actor(Group::Editor, Surface::Web), delete, None), None);
        assert_eq!(answer(&actor(Group::Author, Surface::Rest), delete, None), Some(crate::Failure::Forbidden));
        assert_eq!(answer(&actor(Group::Editor, Surface::Rest), post, None), Some(crate::Failure::Forbidden));
        assert_eq!(answer(&actor(Group::Admin, Surface::Cli), post, None), None);
        // never through the agent or an MCP client
        assert_eq!(answer(&actor(Group::Admin, Surface::Agent), delete, None), Some(crate::Failure::Forbidden));
        assert_eq!(answer(&actor(Group::Admin, Surface::Mcp), delete, None), Some(crate::Failure::Forbidden));
        // and only by a group that may use the agent that asked
        let editors_only = agent(&["editor"]);
        let admin = actor(Group::Admin, Surface::Rest);
        let refused = authorize(&admin, Permission::AnswerApproval { tool: delete, agent: Some(&editors_only) });
        assert!(refused.unwrap_err().message.contains("may not use agent \"editor\""));
        assert_eq!(answer(&actor(Group::Editor, Surface::Rest), delete, Some(&editors_only)), None);
    }

    #[test]
    fn undoing_a_turn_is_the_owners_in_a_group_that_writes() {
        let author = actor(Group::Author, Surface::Web);
        assert_eq!(failure(authorize(&author, Permission::UndoTurn { session: &session(&author.id) })), None);
        let theirs = session("user:someone-else");
        assert_eq!(
            failure(authorize(&author, Permission::UndoTurn { session: &theirs })),
            Some(crate::Failure::NotFound)
        );
        let admin = actor(Group::Admin, Surface::Rest);
        assert_eq!(failure(authorize(&admin, Permission::UndoTurn { session: &theirs })), None);
        let viewer = actor(Group::Viewer, Surface::Web);
        let own = session(&viewer.id);
        assert_eq!(
            failure(authorize(&viewer, Permission::UndoTurn { session: &own })),
            Some(crate::Failure::Forbidden)
        );
    }

    #[test]
    fn restoring() {
        let author = actor(Group::Author, Surface::Rest);
        let editor = actor(Group::Editor, Surface::Rest);
        for kind in [EntityKind::Page, EntityKind::Note] {
            assert!(authorize(&author, Permission::RestoreRevision(kind)).is_err());
            assert!(authorize(&author, Permission::RestoreArchive(kind)).is_err());
            assert!(authorize(&editor, Permission::RestoreRevision(kind)).is_ok());
            assert!(authorize(&editor, Permission::RestoreArchive(kind)).is_ok());
        }
        let refused = authorize(&editor, Permission::RestoreRevision(EntityKind::Agent)).unwrap_err();
        assert_eq!(refused.message, "group editor may not restore revisions of agent records");
    }
}
