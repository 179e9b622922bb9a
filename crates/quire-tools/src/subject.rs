//! What a tool works on: a kind of record the store keeps, or one of the
//! things around it (posts, vault folders, archives, the conversation, the
//! tools themselves, what external tools bring back).

use quire_core::model::EntityKind;
use serde::{Serialize, Serializer};

/// What a tool works on. Its wire name (`page`, `post`, `folder`, …) is
/// what listings show and what an agent's `entity:` selector names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subject {
    /// A kind of record the store keeps: page, section, section template,
    /// entry, image, navigation item, note.
    Record(EntityKind),
    /// An entry of a posts collection (the store keeps it as an entry).
    Post,
    /// A folder of a notes vault.
    Folder,
    /// An archive: what one delete took away, restored as a whole.
    Archive,
    /// A document the public site shows — a page with its sections, a post
    /// or an entry, a navigation with its items — published whole.
    Document,
    /// A release: documents published together.
    Release,
    /// The conversation with the person (acknowledgeRequest, finalAnswer).
    Conversation,
    /// The tools themselves (searchTools).
    Tool,
    /// A result of a web search.
    WebResult,
    /// A web page fetched and reduced to its text.
    WebPage,
    /// A photo of a stock provider, before it is imported.
    StockPhoto,
    /// An outside server's answer to an HTTP request.
    HttpResponse,
}

impl Subject {
    /// The wire name (`page`, `navItem`, `httpResponse`).
    pub fn as_str(self) -> &'static str {
        match self {
            Subject::Record(kind) => kind.as_str(),
            Subject::Post => "post",
            Subject::Folder => "folder",
            Subject::Archive => "archive",
            Subject::Document => "document",
            Subject::Release => "release",
            Subject::Conversation => "conversation",
            Subject::Tool => "tool",
            Subject::WebResult => "webResult",
            Subject::WebPage => "webPage",
            Subject::StockPhoto => "stockPhoto",
            Subject::HttpResponse => "httpResponse",
        }
    }

    /// The kind of record the store keeps for it, if it is one: a post is
    /// kept as an entry; a document, and a release of documents, is decided
    /// as a page is (who may change or archive one kind may do so to each).
    pub fn record(self) -> Option<EntityKind> {
        match self {
            Subject::Record(kind) => Some(kind),
            Subject::Post => Some(EntityKind::Entry),
            Subject::Document | Subject::Release => Some(EntityKind::Page),
            _ => None,
        }
    }
}

impl Serialize for Subject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for Subject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
