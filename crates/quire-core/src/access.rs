//! Access groups and what each may do.
//!
//! Four fixed groups, ordered by power. The rules live here, in one place, so
//! that every surface (REST, tools, MCP, agent) asks the same question.

use crate::model::EntityKind;
use serde::{Deserialize, Serialize};

/// A user's or token's group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Group {
    /// Reads everything, changes nothing.
    Viewer,
    /// Writes content; no deletes, no navigation changes.
    Author,
    /// Everything on content, deletes and restores included.
    Editor,
    /// Everything, including tokens, users and templates.
    Admin,
}

impl Group {
    /// Every group, weakest first.
    pub const ALL: [Group; 4] = [Group::Viewer, Group::Author, Group::Editor, Group::Admin];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Group::Viewer => "viewer",
            Group::Author => "author",
            Group::Editor => "editor",
            Group::Admin => "admin",
        }
    }

    /// Parses a wire name, listing the accepted ones on error.
    pub fn parse(value: &str) -> Result<Self, String> {
        Group::ALL
            .into_iter()
            .find(|g| g.as_str() == value)
            .ok_or_else(|| format!("group \"{value}\" is not one of viewer, author, editor, admin"))
    }
}

/// What a caller wants to do to a kind of record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Read non-public content.
    Read,
    /// Create or update.
    Write(EntityKind),
    /// Archive (delete) or restore from the archive, or restore a revision.
    Delete(EntityKind),
    /// Manage tokens, users and sites.
    Administer,
}

/// Whether `group` may perform `action`. Section templates and collections
/// shape everyone's content, so only editors and admins change them.
pub fn allows(group: Group, action: Action) -> bool {
    match action {
        Action::Read => true,
        // An agent's settings decide what runs without a person (its
        // approval policy, tools, prompt): only admins change them, by any
        // route, reverts of old revisions included.
        Action::Write(EntityKind::Agent) | Action::Delete(EntityKind::Agent) => group == Group::Admin,
        Action::Write(EntityKind::Navigation | EntityKind::NavItem) => group >= Group::Editor,
        Action::Write(EntityKind::SectionTemplate | EntityKind::Collection) => group >= Group::Editor,
        Action::Write(_) => group >= Group::Author,
        Action::Delete(_) => group >= Group::Editor,
        Action::Administer => group == Group::Admin,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix() {
        use EntityKind::*;
        assert!(allows(Group::Viewer, Action::Read));
        assert!(!allows(Group::Viewer, Action::Write(Page)));
        assert!(allows(Group::Author, Action::Write(Page)));
        assert!(!allows(Group::Author, Action::Write(NavItem)));
        assert!(!allows(Group::Author, Action::Delete(Page)));
        assert!(allows(Group::Editor, Action::Delete(Page)));
        assert!(!allows(Group::Editor, Action::Administer));
        assert!(allows(Group::Admin, Action::Administer));
        assert!(!allows(Group::Editor, Action::Write(Agent)));
        assert!(!allows(Group::Editor, Action::Delete(Agent)));
        assert!(allows(Group::Admin, Action::Write(Agent)));
    }
}
