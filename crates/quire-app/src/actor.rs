//! Who is acting: built once, at the edge, from whatever credentials
//! arrived (an API token, a back-office session, the CLI's local admin or
//! its `--token`, an MCP session).

use quire_agent::Person;
use quire_core::access::Group;
use quire_core::model::{ChangeContext, Publishing, Surface};
use quire_store::Scope;
use quire_tools::{ApprovalPolicy, CallContext};

/// A person or program acting through one surface, in one site and
/// environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// `token:<id>`, `user:<id>` or `local:admin`: what the change log
    /// records and what owns sessions and requests.
    pub id: String,
    /// Their group.
    pub group: Group,
    /// The site and environment everything they do is confined to.
    pub scope: Scope,
    /// Where they came through.
    pub surface: Surface,
    /// How their own destructive calls are approved.
    pub policy: ApprovalPolicy,
    /// The environments of their site they may use; `None`: every one.
    pub environments: Option<Vec<String>>,
    /// The client's own session their changes are grouped under in the
    /// change log (REST's `X-Quire-Session`), if they named one.
    pub session: Option<String>,
}

impl Actor {
    /// The actor of a tool call's context (every environment of its site:
    /// a call context carries no narrower grant).
    pub fn of_call(ctx: &CallContext) -> Self {
        Self {
            id: ctx.actor.clone(),
            group: ctx.group,
            scope: ctx.scope.clone(),
            surface: ctx.surface,
            policy: ctx.policy,
            environments: None,
            session: ctx.session_id.clone(),
        }
    }

    /// The local admin of the machine that holds the data (the CLI without
    /// a token), in `scope`.
    pub fn local_admin(scope: Scope) -> Self {
        Self {
            id: "local:admin".into(),
            group: Group::Admin,
            scope,
            surface: Surface::Cli,
            policy: ApprovalPolicy::User,
            environments: None,
            session: None,
        }
    }

    /// The context their tool calls run in (no agent session, no model).
    pub fn call_context(&self) -> CallContext {
        CallContext {
            session_id: self.session.clone(),
            policy: self.policy,
            ..CallContext::new(self.id.clone(), self.group, self.scope.clone(), self.surface)
        }
    }

    /// What the change log records of their writes.
    pub fn change_context(&self) -> ChangeContext {
        ChangeContext {
            actor: self.id.clone(),
            surface: self.surface,
            session_id: self.session.clone(),
            turn_id: None,
            publishing: Publishing::ByStatus,
        }
    }

    /// Who they are, as the access rules see them.
    pub fn principal(&self) -> quire_core::access::Principal<'_> {
        quire_core::access::Principal { actor: &self.id, group: self.group, surface: self.surface }
    }

    /// The signed-in person's user id, when the actor is one (`user:<id>`).
    pub fn user_id(&self) -> Option<&str> {
        self.id.strip_prefix("user:")
    }

    /// The person chatting, as the agent runtime knows them.
    pub fn person(&self) -> Person {
        Person { actor: self.id.clone(), group: self.group, scope: self.scope.clone() }
    }
}
