//! The types tools' arguments are made of, beside the argument structs
//! the catalog generates: kinds, modes and the documents a release names.
//! The catalog and the tool modules both use them, so they live apart from
//! both (no module circle).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

// The kinds of record the database archives (agents are disabled instead;
// vault notes are archived in the vault). Plain comments: doc comments would
// turn the schema's enum into a oneOf of described constants.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ArchivedKind {
    Page,
    Section,
    SectionTemplate,
    Collection,
    Entry,
    Image,
    Navigation,
    NavItem,
    Context,
    Workspace,
}

// A group of people, as an agent's allowed groups name them.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum GroupArg {
    Viewer,
    Author,
    Editor,
    Admin,
}

impl From<GroupArg> for quire_core::access::Group {
    fn from(g: GroupArg) -> Self {
        use quire_core::access::Group;
        match g {
            GroupArg::Viewer => Group::Viewer,
            GroupArg::Author => Group::Author,
            GroupArg::Editor => Group::Editor,
            GroupArg::Admin => Group::Admin,
        }
    }
}

// How an agent's destructive calls are approved.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PolicyArg {
    User,
    Conversational,
}

impl From<PolicyArg> for quire_core::model::AgentPolicy {
    fn from(p: PolicyArg) -> Self {
        match p {
            PolicyArg::User => Self::User,
            PolicyArg::Conversational => Self::Conversational,
        }
    }
}

// Where an agent's writes go.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum WriteModeArg {
    Draft,
    Direct,
    Release,
}

impl From<WriteModeArg> for quire_core::model::WriteMode {
    fn from(m: WriteModeArg) -> Self {
        match m {
            WriteModeArg::Draft => Self::Draft,
            WriteModeArg::Direct => Self::Direct,
            WriteModeArg::Release => Self::Release,
        }
    }
}

/// Content of a post.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PostContent {
    /// The post in markdown.
    pub body: String,
    /// Cover image URL (/uploads/...).
    pub cover: Option<String>,
}

// What a publishing tool works on. Plain comments: doc comments would turn
// the schema's enum into a oneOf of described constants.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum DocumentKind {
    Page,
    Post,
    Entry,
    Navigation,
}

// What publishing the release does to a document. Plain comments: doc
// comments would turn the schema's enum into a oneOf of described constants.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ItemAction {
    Publish,
    Unpublish,
    Archive,
}

// Where a release stands (see ReleaseState).
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum StateArg {
    Open,
    Scheduled,
    Published,
    Reverted,
    Discarded,
}

/// A document to put into a release.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReleaseDocumentArg {
    /// Its kind.
    pub entity: DocumentKind,
    /// Its id, a page's slug or a navigation's key.
    pub id: String,
    /// Default publish: a copy of its draft as it is now.
    pub action: Option<ItemAction>,
    /// Keep the release's copy (settles a conflict) rather than copying the draft anew.
    pub keep: Option<bool>,
    /// Another locale: its translation instead.
    pub locale: Option<String>,
}

/// A document to take out of a release.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RemovedDocumentArg {
    /// Its kind.
    pub entity: DocumentKind,
    /// Its id.
    pub id: String,
    /// Another locale: its translation instead.
    pub locale: Option<String>,
}

/// The schema of `body`: an object or a string (every branch typed; other
/// JSON values are sent as JSON too).
#[derive(JsonSchema)]
#[allow(dead_code)]
#[serde(untagged)]
pub enum BodySchema {
    Object(BTreeMap<String, Value>),
    Text(String),
}

/// Which stock photo service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PhotoProvider {
    // Pexels.
    Pexels,
    // Unsplash.
    Unsplash,
}

/// Which services browseImages asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BrowseProvider {
    // Pexels only.
    Pexels,
    // Unsplash only.
    Unsplash,
    // Every configured service.
    All,
}

/// Photo orientation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Orientation {
    // Wider than tall.
    Landscape,
    // Taller than wide.
    Portrait,
    // About as wide as tall.
    Square,
}

/// Quick results or a researched answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    // Titles, URLs and snippets.
    Quick,
    // Several queries, the best pages read, an answer with numbered citations.
    Deep,
}

/// What kind of results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Topic {
    // The whole web.
    General,
    // News articles.
    News,
}

/// Page text format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PageFormat {
    // Markdown with headings, lists and links (default).
    #[default]
    Markdown,
    // Plain text.
    Text,
}
