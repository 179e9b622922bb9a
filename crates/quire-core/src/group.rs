//! The four access groups, ordered by power.

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

impl std::fmt::Display for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
