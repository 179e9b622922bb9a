//! Who may do what: one [`Permission`] per kind of operation, with the data
//! deciding it needs, and one [`authorize`] that decides.
//!
//! Every surface (REST, the back-office, the CLI, MCP, the agent) and every
//! layer (the use cases, the tool registry, the agent runtime) asks here;
//! no other function in the project answers "may they?". Each decision is
//! logged as a `tracing` event with target [`DECISIONS`], so an operator can
//! watch them and a test can see that an operation was decided here.

pub use crate::group::Group;
use crate::model::{Agent, EntityKind, Surface};

/// The `tracing` target of every decision (`RUST_LOG=quire::authorize=debug`).
pub const DECISIONS: &str = "quire::authorize";

/// Who asks: the acting person or program and where they came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Principal<'a> {
    /// `token:<id>`, `user:<id>`, `local:admin`: what owns sessions and
    /// requests.
    pub actor: &'a str,
    /// Their group.
    pub group: Group,
    /// The surface they came through.
    pub surface: Surface,
}

/// How far a tool reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Always offered (finding tools, answering): decides nothing.
    Always,
    /// This site's content.
    Site,
    /// The internet.
    Internet,
}

/// A tool as the access rules see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolAccess<'a> {
    /// Its name, for the refusal.
    pub name: &'a str,
    /// How far it reaches.
    pub reach: Reach,
    /// It changes nothing.
    pub read_only: bool,
    /// It archives or overwrites what exists.
    pub destructive: bool,
    /// The kind of record it writes, when it writes one of the kinds the
    /// store knows (`None`: content in general).
    pub record: Option<EntityKind>,
}

/// An operation someone wants to do, with what deciding it needs.
#[derive(Debug, Clone, Copy)]
pub enum Permission<'a> {
    /// Read the site's content that is not public.
    Read,
    /// Create or change a kind of record.
    Write(EntityKind),
    /// Archive a kind of record.
    Delete(EntityKind),
    /// Publish a kind of document (page, entry, navigation), or take it off
    /// the public site: whoever may change it, as writing a status of
    /// published always could.
    Publish(EntityKind),
    /// Manage the site: its tokens, users and agents' settings, every
    /// person's sessions.
    Administer,
    /// Use a tool (call it, see it listed).
    UseTool(ToolAccess<'a>),
    /// Chat with an agent: a group it allows (enabled or not is the
    /// agent's state, not a right).
    UseAgent(&'a Agent),
    /// See an agent: admins see every one, others the enabled agents their
    /// group may use.
    SeeAgent(&'a Agent),
    /// Approve or reject a destructive call someone asked for: a person
    /// (not the agent, not an MCP client) whose group may use the tool and,
    /// when an agent's turn asked, that agent.
    AnswerApproval {
        /// The tool of the call.
        tool: ToolAccess<'a>,
        /// The agent whose turn asked for it, if one did.
        agent: Option<&'a Agent>,
    },
    /// See a chat session: its owner, or an admin (others are told it does
    /// not exist).
    SeeSession {
        /// Who owns it.
        owner: &'a str,
        /// Its id, for the refusal.
        session: &'a str,
    },
    /// Undo a turn of a chat session: its owner (or an admin), in a group
    /// that writes content — the turn's changes were made with their rights.
    UndoTurn {
        /// Who owns the session.
        owner: &'a str,
        /// Its id, for the refusal.
        session: &'a str,
    },
    /// Let an application act for the person (an OAuth grant) as `group`:
    /// a person signed in to the back-office, never above their own group.
    GrantAccess(Group),
    /// Put a record back as it was after a change: the right to change
    /// that kind of record and to restore it from the archive (a revision
    /// can bring back what was archived).
    RestoreRevision(EntityKind),
    /// Bring an archived record back with what went along.
    RestoreArchive(EntityKind),
    /// List, create, rename, archive and restore the instance's sites: its
    /// administrator (`instance`: the caller is the local admin or holds a
    /// token made for the instance's administrator), never a site's.
    ManageSites {
        /// Whether the caller is the instance's administrator.
        instance: bool,
    },
    /// Change a person's group or account (enabled or not), which reach
    /// every site they work on: a site's administrators, for people who
    /// work on their site alone; the instance's administrator, for anyone.
    ChangePerson {
        /// Whether the person works on other sites too.
        elsewhere: bool,
        /// Whether the caller is the instance's administrator.
        instance: bool,
    },
}

impl std::fmt::Display for Permission<'_> {
    /// A short name for logs: `write page`, `use tool deletePage`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Permission::Read => write!(f, "read"),
            Permission::Write(kind) => write!(f, "write {kind}"),
            Permission::Delete(kind) => write!(f, "delete {kind}"),
            Permission::Publish(kind) => write!(f, "publish {kind}"),
            Permission::Administer => write!(f, "administer"),
            Permission::UseTool(tool) => write!(f, "use tool {}", tool.name),
            Permission::UseAgent(agent) => write!(f, "use agent {}", agent.alias),
            Permission::SeeAgent(agent) => write!(f, "see agent {}", agent.alias),
            Permission::AnswerApproval { tool, .. } => write!(f, "answer approval of {}", tool.name),
            Permission::SeeSession { session, .. } => write!(f, "see session {session}"),
            Permission::UndoTurn { session, .. } => write!(f, "undo a turn of {session}"),
            Permission::GrantAccess(group) => write!(f, "grant access as {}", group.as_str()),
            Permission::RestoreRevision(kind) => write!(f, "restore revision of {kind}"),
            Permission::RestoreArchive(kind) => write!(f, "restore archived {kind}"),
            Permission::ManageSites { .. } => write!(f, "manage sites"),
            Permission::ChangePerson { .. } => write!(f, "change a person"),
        }
    }
}

/// Why a permission was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// They are not to learn the thing exists (someone else's
    /// session, an agent they cannot see): answer "not found".
    pub hidden: bool,
    /// What they may not do, in a sentence (`group author may not use
    /// deletePage`).
    pub message: String,
}

/// Whether `principal` may do `permission`: Ok, or the refusal that says why.
/// The one place the project decides.
pub fn authorize(principal: &Principal<'_>, permission: Permission<'_>) -> Result<(), Refusal> {
    let decided = decide(principal, permission);
    tracing::debug!(
        target: DECISIONS,
        actor = principal.actor,
        group = principal.group.as_str(),
        surface = principal.surface.as_str(),
        permission = %permission,
        allowed = decided.is_ok(),
        refused = decided.as_ref().err().map_or("", |r| r.message.as_str()),
        "authorize"
    );
    decided
}

fn decide(principal: &Principal<'_>, permission: Permission<'_>) -> Result<(), Refusal> {
    let group = principal.group;
    let refuse =
        |what: String| Err(Refusal { hidden: false, message: format!("group {} may not {what}", group.as_str()) });
    let hide = |what: String| Err(Refusal { hidden: true, message: what });
    match permission {
        Permission::Read => Ok(()),
        Permission::Write(kind) if writes(group, kind) => Ok(()),
        Permission::Write(kind) => refuse(format!("create or change {kind} records")),
        Permission::Delete(kind) if deletes(group, kind) => Ok(()),
        Permission::Delete(kind) => refuse(format!("archive or restore {kind} records")),
        Permission::Publish(kind) if writes(group, kind) => Ok(()),
        Permission::Publish(kind) => refuse(format!("publish or unpublish {kind} records")),
        Permission::Administer if group == Group::Admin => Ok(()),
        Permission::Administer => refuse("administer the site".into()),
        Permission::UseTool(tool) if uses(group, tool) => Ok(()),
        Permission::UseTool(tool) => refuse(format!("use {}", tool.name)),
        Permission::UseAgent(agent) if chats(group, agent) => Ok(()),
        Permission::UseAgent(agent) => refuse(format!(
            "use agent \"{}\" (allowed: {})",
            agent.alias,
            agent.allowed_groups.iter().map(|g| g.as_str()).collect::<Vec<_>>().join(", ")
        )),
        Permission::SeeAgent(agent) if group == Group::Admin || (agent.enabled && chats(group, agent)) => Ok(()),
        Permission::SeeAgent(agent) => hide(format!("agent {} not found", agent.alias)),
        Permission::AnswerApproval { .. } if matches!(principal.surface, Surface::Agent | Surface::Mcp) => {
            Err(Refusal { hidden: false, message: "approvals cannot come through the agent or MCP".into() })
        }
        Permission::AnswerApproval { tool, .. } if !uses(group, tool) => {
            refuse(format!("use {}, so it may not answer a request for it", tool.name))
        }
        Permission::AnswerApproval { agent: Some(agent), .. } if !chats(group, agent) => {
            refuse(format!("use agent \"{}\", so it may not answer its requests", agent.alias))
        }
        Permission::AnswerApproval { .. } => Ok(()),
        Permission::SeeSession { owner, session } | Permission::UndoTurn { owner, session }
            if owner != principal.actor && group != Group::Admin =>
        {
            hide(format!("session {session} not found"))
        }
        Permission::SeeSession { .. } => Ok(()),
        // Undoing changes content: the right to write it.
        Permission::UndoTurn { .. } if writes(group, EntityKind::Page) => Ok(()),
        Permission::UndoTurn { .. } => refuse("undo a turn (it changes content)".into()),
        Permission::GrantAccess(_) if principal.surface != Surface::Web || !principal.actor.starts_with("user:") => {
            Err(Refusal { hidden: false, message: "access is granted by a person signed in to the back-office".into() })
        }
        Permission::GrantAccess(asked) if asked <= group => Ok(()),
        Permission::GrantAccess(asked) => refuse(format!("grant access as {}, above its own", asked.as_str())),
        Permission::ManageSites { instance: true } if group == Group::Admin => Ok(()),
        Permission::ManageSites { .. } => Err(Refusal {
            hidden: false,
            message: "only the instance's administrator may manage sites (a site's administrators manage their own)"
                .into(),
        }),
        Permission::ChangePerson { elsewhere: false, .. } | Permission::ChangePerson { instance: true, .. }
            if group == Group::Admin =>
        {
            Ok(())
        }
        Permission::ChangePerson { elsewhere: true, .. } if group == Group::Admin => Err(Refusal {
            hidden: false,
            message: "only the instance's administrator may change the group or account of someone who works on \
                      other sites too"
                .into(),
        }),
        Permission::ChangePerson { .. } => refuse("manage people".into()),
        Permission::RestoreRevision(kind) if writes(group, kind) && deletes(group, kind) => Ok(()),
        Permission::RestoreRevision(kind) => refuse(format!("restore revisions of {kind} records")),
        Permission::RestoreArchive(kind) if deletes(group, kind) => Ok(()),
        Permission::RestoreArchive(kind) => refuse(format!("archive or restore {kind} records")),
    }
}

/// Whether `group` may create or change `kind` records. Section templates,
/// collections, navigation and the contexts agents write by shape
/// everyone's content, so only editors and admins change them; an agent's settings decide what runs without a
/// person, so only admins change those, by any route.
fn writes(group: Group, kind: EntityKind) -> bool {
    match kind {
        EntityKind::Agent => group == Group::Admin,
        EntityKind::Navigation
        | EntityKind::NavItem
        | EntityKind::SectionTemplate
        | EntityKind::Collection
        | EntityKind::Context => group >= Group::Editor,
        _ => group >= Group::Author,
    }
}

/// Whether `group` may archive (and restore) `kind` records.
fn deletes(group: Group, kind: EntityKind) -> bool {
    match kind {
        EntityKind::Agent => group == Group::Admin,
        _ => group >= Group::Editor,
    }
}

/// Whether `group` may use `tool`: reading the site is everyone's; a tool
/// that changes content needs the right to change (or archive) what it
/// writes; reaching the internet is for editors (nothing destructive) and
/// admins.
fn uses(group: Group, tool: ToolAccess<'_>) -> bool {
    let kind = tool.record.unwrap_or(EntityKind::Page);
    match tool.reach {
        Reach::Always => true,
        Reach::Site if tool.read_only => true,
        Reach::Site if tool.destructive => deletes(group, kind),
        Reach::Site => writes(group, kind),
        Reach::Internet => group == Group::Admin || (group == Group::Editor && !tool.destructive),
    }
}

/// Whether `group` is among those an agent allows (none listed: every one).
fn chats(group: Group, agent: &Agent) -> bool {
    agent.allowed_groups.is_empty() || agent.allowed_groups.contains(&group)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who(group: Group) -> Principal<'static> {
        Principal { actor: "user:someone", group, surface: Surface::Rest }
    }

    fn allowed(group: Group, permission: Permission<'_>) -> bool {
        authorize(&who(group), permission).is_ok()
    }

    fn tool(reach: Reach, read_only: bool, destructive: bool, record: Option<EntityKind>) -> ToolAccess<'static> {
        ToolAccess { name: "someTool", reach, read_only, destructive, record }
    }

    fn agent(groups: &[Group], enabled: bool) -> Agent {
        Agent {
            id: "a".into(),
            alias: "editor".into(),
            name: "Editor".into(),
            description: String::new(),
            profile: "default".into(),
            system_prompt: String::new(),
            tools: Vec::new(),
            pinned: Vec::new(),
            allowed_groups: groups.to_vec(),
            approval_policy: crate::model::AgentPolicy::User,
            write_mode: crate::model::WriteMode::Draft,
            enabled,
            contexts: Vec::new(),
            version: 1,
            created_at: Default::default(),
            updated_at: Default::default(),
        }
    }

    #[test]
    fn records() {
        use EntityKind::*;
        assert!(allowed(Group::Viewer, Permission::Read));
        assert!(!allowed(Group::Viewer, Permission::Write(Page)));
        assert!(allowed(Group::Author, Permission::Write(Page)));
        assert!(!allowed(Group::Author, Permission::Write(NavItem)));
        assert!(!allowed(Group::Author, Permission::Delete(Page)));
        assert!(allowed(Group::Editor, Permission::Delete(Page)));
        assert!(!allowed(Group::Editor, Permission::Administer));
        assert!(allowed(Group::Admin, Permission::Administer));
        assert!(!allowed(Group::Editor, Permission::Write(Agent)));
        assert!(!allowed(Group::Editor, Permission::Delete(Agent)));
        assert!(allowed(Group::Admin, Permission::Write(Agent)));
        let refused = authorize(&who(Group::Author), Permission::Delete(Page)).unwrap_err();
        assert_eq!(refused.message, "group author may not archive or restore page records");
    }

    #[test]
    fn tools() {
        let read = tool(Reach::Site, true, false, None);
        let write_page = tool(Reach::Site, false, false, Some(EntityKind::Page));
        let write_menu = tool(Reach::Site, false, false, Some(EntityKind::NavItem));
        let delete = tool(Reach::Site, false, true, Some(EntityKind::Page));
        let fetch = tool(Reach::Internet, true, false, None);
        let post = tool(Reach::Internet, false, true, None);
        let always = tool(Reach::Always, false, false, None);
        let table = [
            // viewer, author, editor, admin
            (read, [true, true, true, true]),
            (write_page, [false, true, true, true]),
            (write_menu, [false, false, true, true]),
            (delete, [false, false, true, true]),
            (fetch, [false, false, true, true]),
            (post, [false, false, false, true]),
            (always, [true, true, true, true]),
        ];
        for (tool, expected) in table {
            for (group, expected) in Group::ALL.into_iter().zip(expected) {
                assert_eq!(allowed(group, Permission::UseTool(tool)), expected, "{group:?} {tool:?}");
            }
        }
    }

    #[test]
    fn agents() {
        let editors = agent(&[Group::Editor], true);
        assert!(allowed(Group::Editor, Permission::UseAgent(&editors)));
        let refused = authorize(&who(Group::Author), Permission::UseAgent(&editors)).unwrap_err();
        assert_eq!(refused.message, "group author may not use agent \"editor\" (allowed: editor)");
        assert!(allowed(Group::Viewer, Permission::UseAgent(&agent(&[], true))));
        // admins see every agent; others only those they may use, enabled
        let off = agent(&[], false);
        assert!(allowed(Group::Admin, Permission::SeeAgent(&off)));
        assert!(authorize(&who(Group::Editor), Permission::SeeAgent(&off)).unwrap_err().hidden);
        assert!(authorize(&who(Group::Author), Permission::SeeAgent(&editors)).unwrap_err().hidden);
    }

    #[test]
    fn approvals() {
        let delete = tool(Reach::Site, false, true, Some(EntityKind::Page));
        let post = tool(Reach::Internet, false, true, None);
        let answer = |group, surface, tool, agent| {
            authorize(&Principal { actor: "user:x", group, surface }, Permission::AnswerApproval { tool, agent })
        };
        assert!(answer(Group::Editor, Surface::Web, delete, None).is_ok());
        assert!(answer(Group::Author, Surface::Rest, delete, None).is_err());
        assert!(answer(Group::Editor, Surface::Rest, post, None).is_err());
        assert!(answer(Group::Admin, Surface::Cli, post, None).is_ok());
        // never through the agent or an MCP client
        assert!(answer(Group::Admin, Surface::Agent, delete, None).is_err());
        assert!(answer(Group::Admin, Surface::Mcp, delete, None).is_err());
        // and only by a group that may use the agent that asked
        let editors = agent(&[Group::Editor], true);
        let refused = answer(Group::Admin, Surface::Rest, delete, Some(&editors)).unwrap_err();
        assert!(refused.message.contains("may not use agent \"editor\""));
        assert!(answer(Group::Editor, Surface::Rest, delete, Some(&editors)).is_ok());
    }

    #[test]
    fn sessions() {
        let own = Permission::UndoTurn { owner: "user:someone", session: "s" };
        let theirs = Permission::UndoTurn { owner: "user:other", session: "s" };
        assert!(allowed(Group::Author, own));
        assert!(authorize(&who(Group::Author), theirs).unwrap_err().hidden);
        assert!(allowed(Group::Admin, theirs));
        assert!(!allowed(Group::Viewer, own));
        assert!(allowed(Group::Viewer, Permission::SeeSession { owner: "user:someone", session: "s" }));
        assert!(!allowed(Group::Editor, Permission::SeeSession { owner: "user:other", session: "s" }));
    }

    #[test]
    fn restoring() {
        for kind in [EntityKind::Page, EntityKind::Note] {
            assert!(!allowed(Group::Author, Permission::RestoreRevision(kind)));
            assert!(!allowed(Group::Author, Permission::RestoreArchive(kind)));
            assert!(allowed(Group::Editor, Permission::RestoreRevision(kind)));
            assert!(allowed(Group::Editor, Permission::RestoreArchive(kind)));
        }
        let refused = authorize(&who(Group::Editor), Permission::RestoreRevision(EntityKind::Agent)).unwrap_err();
        assert_eq!(refused.message, "group editor may not restore revisions of agent records");
    }
}
