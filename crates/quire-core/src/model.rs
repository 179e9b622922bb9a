//! The content model: what a site is made of.
//!
//! Every record here belongs to one site and one environment; the store keeps
//! that scope beside the record, so these types never carry it and no caller
//! can choose it through a field.

use crate::FieldError;
use crate::fields::FieldDef;
use crate::group::Group;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An enum stored and sent as one of a fixed set of names.
pub trait WireEnum: Sized + Copy {
    /// Its name.
    fn wire(self) -> &'static str;
    /// The value named `value`; the error names `field` and the accepted names.
    fn from_wire(field: &str, value: &str) -> Result<Self, FieldError>;
}

/// Declares a string enum with its wire names, parsing with an error that
/// lists the accepted values (`status: "live" is not one of draft, published`).
///
/// The wire names are taken as `tt`, not `literal`: a `literal` fragment
/// reaches derive macros wrapped in an invisible group, which utoipa does
/// not read, so the OpenAPI document would show the variant names instead.
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $wire:tt),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema, schemars::JsonSchema)]
        pub enum $name { $($(#[$vmeta])* #[serde(rename = $wire)] $variant),+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The wire and database name.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $wire),+ }
            }
            /// Parses a wire name; the error names `field` and the accepted values.
            pub fn parse(field: &str, value: &str) -> Result<Self, FieldError> {
                match value {
                    $($wire => Ok($name::$variant),)+
                    other => Err(FieldError::new(field, format!(
                        "\"{other}\" is not one of {}",
                        [$($wire),+].join(", ")
                    ))),
                }
            }
        }

        impl WireEnum for $name {
            fn wire(self) -> &'static str {
                self.as_str()
            }
            fn from_wire(field: &str, value: &str) -> Result<Self, FieldError> {
                Self::parse(field, value)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

string_enum!(
    /// Publication state of pages and sections.
    PublishStatus { Draft = "draft", Published = "published", Unpublished = "unpublished" }
);
string_enum!(
    /// State of an entry (posts included).
    EntryStatus { Draft = "draft", Published = "published", Archived = "archived" }
);
string_enum!(
    /// Whether a collection holds posts or other entries.
    CollectionKind { Posts = "posts", Entries = "entries" }
);
string_enum!(
    /// What a navigation item points at.
    NavTargetType { Page = "page", Entry = "entry", Media = "media", Url = "url", Placeholder = "placeholder" }
);
string_enum!(
    /// Processing state of an image.
    ImageStatus { Processing = "processing", Completed = "completed", Failed = "failed" }
);
string_enum!(
    /// Where an image came from.
    ImageSource { Upload = "upload", Pexels = "pexels", Unsplash = "unsplash", Url = "url" }
);
string_enum!(
    /// The kinds of record the change log and the archive talk about.
    EntityKind {
        Page = "page",
        Section = "section",
        SectionTemplate = "sectionTemplate",
        Collection = "collection",
        Entry = "entry",
        Image = "image",
        Navigation = "navigation",
        NavItem = "navItem",
        Agent = "agent",
        Note = "note",
        Translation = "translation",
        Context = "context",
        Workspace = "workspace",
    }
);
string_enum!(
    /// Through which surface a change was made.
    Surface { Rest = "rest", Web = "web", Cli = "cli", Mcp = "mcp", Agent = "agent", System = "system" }
);

string_enum!(
    /// How a caller's destructive calls get their go-ahead: an agent's, and
    /// a token's (its `approvalPolicy`).
    AgentPolicy {
        /// A person approves each one (REST, CLI or the back-office).
        User = "user",
        /// The person answers in the conversation: for an agent, a plain
        /// yes to the preview in their next message or the Approve button,
        /// after which the model repeats the call with `confirmed: true`;
        /// for a program holding a conversational token, its second call
        /// with `confirmed: true` in the same session. Never for tools that
        /// send data out.
        Conversational = "conversational",
    }
);

string_enum!(
    /// Where an agent's writes go: its admin's choice.
    WriteMode {
        /// Each write is published as it is made, as its status says.
        Direct = "direct",
        /// Writes change drafts; publishing is a call of its own, which a
        /// person approves unless the agent's policy lets it ask in the
        /// conversation.
        Draft = "draft",
        /// Each turn's changes to pages, posts, entries and menus go into a
        /// release of their own: neither the drafts nor the public site
        /// move until a person publishes it.
        Release = "release",
    }
);

impl WriteMode {
    /// How the writes of an agent in this mode reach the public site.
    pub fn publishing(self) -> Publishing {
        match self {
            WriteMode::Direct => Publishing::Direct,
            WriteMode::Draft | WriteMode::Release => Publishing::Separately,
        }
    }
}

string_enum!(
    /// Where a release stands.
    ReleaseState {
        /// Being put together: documents are added and removed.
        Open = "open",
        /// Due to publish at its `publishAt`; unschedule it to change it.
        Scheduled = "scheduled",
        /// Published, all of it in one transaction.
        Published = "published",
        /// Published, then set back as one unit.
        Reverted = "reverted",
        /// Given up without publishing; kept, with its documents.
        Discarded = "discarded",
    }
);

string_enum!(
    /// What publishing a release does to one of its documents.
    ReleaseAction {
        /// Makes the release's copy of the document public.
        Publish = "publish",
        /// Takes the document off the public site, keeping its draft.
        Unpublish = "unpublish",
        /// Archives the document.
        Archive = "archive",
    }
);

/// The approval policy of any caller, token or agent: one set of values, so
/// one type under the name the tool registry uses.
pub type ApprovalPolicy = AgentPolicy;

string_enum!(
    /// When a person wants to be asked before a tool runs for them (their
    /// approval preferences). The server's floor stands whatever they choose:
    /// a destructive call, and one that sends data out, always asks.
    ApprovalMode {
        /// Every call waits for the person's approval, reads and writes too.
        Always = "always",
        /// Only what the floor asks for: destructive calls (the default).
        Destructive = "destructive",
        /// No need to ask for reads and reversible writes; destructive calls
        /// still ask (the floor), so this acts as `destructive` does, and
        /// overrides an `always` of a wider category.
        Never = "never",
    }
);

/// A person's approval preferences on one site: a mode per tool and per
/// category (what tools work on, `page`, or where they reach, `internal`,
/// `external`), and a default. A call's mode is its tool's, else the first
/// of its categories that has one, else the default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovalPreferences {
    /// The mode of what no entry names.
    pub default: ApprovalMode,
    /// Modes by category, by wire name.
    #[serde(default)]
    pub categories: std::collections::BTreeMap<String, ApprovalMode>,
    /// Modes by tool name.
    #[serde(default)]
    pub tools: std::collections::BTreeMap<String, ApprovalMode>,
}

impl Default for ApprovalPreferences {
    fn default() -> Self {
        Self { default: ApprovalMode::Destructive, categories: Default::default(), tools: Default::default() }
    }
}

impl ApprovalPreferences {
    /// The mode for tool `tool` whose categories are `categories`, the
    /// narrowest first: the tool's own entry, else the first category's
    /// that has one, else the default.
    pub fn mode(&self, tool: &str, categories: &[&str]) -> ApprovalMode {
        self.tools
            .get(tool)
            .or_else(|| categories.iter().find_map(|c| self.categories.get(*c)))
            .copied()
            .unwrap_or(self.default)
    }
}

string_enum!(
    /// What a change-log record did to its record.
    ChangeAction {
        /// The record was made (a snapshot of it after).
        Create = "create",
        /// Some fields changed.
        Update = "update",
        /// The record was archived (deleted).
        Archive = "archive",
        /// An archived record came back.
        Restore = "restore",
        /// The record was set back to an earlier revision.
        Revert = "revert",
        /// An agent's turn was undone.
        Undo = "undo",
        /// A vault note was written whole.
        Write = "write",
        /// A vault folder was made.
        CreateFolder = "createFolder",
        /// A vault note or folder moved.
        Move = "move",
        /// A vault note was copied.
        Copy = "copy",
        /// A document's published copy was replaced by its working copy
        /// (before and after hold the published documents whole).
        Publish = "publish",
        /// A document was taken off the public site (before holds the
        /// published document it had).
        Unpublish = "unpublish",
    }
);

string_enum!(
    /// What a background job does.
    JobKind {
        /// Decode an uploaded image, strip its metadata, make its variants.
        ProcessImage = "image.process",
        /// Have a vision model write a processed image's alt text.
        DescribeImage = "image.describe",
        /// Publish a release at its time.
        PublishRelease = "publish.release",
        /// Publish a document (or take it off the site) at a time.
        PublishDocument = "publish.document",
    }
);

impl JobKind {
    /// What the media worker runs.
    pub const MEDIA: &'static [JobKind] = &[JobKind::ProcessImage, JobKind::DescribeImage];
    /// What the scheduler runs: schedules.
    pub const SCHEDULES: &'static [JobKind] = &[JobKind::PublishRelease, JobKind::PublishDocument];
}

string_enum!(
    /// Where a background job stands.
    JobStatus {
        /// Waiting to run (or to run again after a failed attempt).
        Queued = "queued",
        /// An attempt holds it.
        Running = "running",
        /// Finished.
        Done = "done",
        /// Gave up.
        Failed = "failed",
        /// Called off before it ran (a schedule).
        Cancelled = "cancelled",
    }
);

string_enum!(
    /// State of a confirmation.
    ConfirmationStatus {
        /// Waiting for a person.
        Pending = "pending",
        /// Approved; the call may run once.
        Approved = "approved",
        /// Rejected; the call will not run.
        Rejected = "rejected",
        /// Executed.
        Used = "used",
    }
);

string_enum!(
    /// Where a chat session stands.
    SessionStatus {
        /// Waiting for the next message.
        Idle = "idle",
        /// A turn is running.
        Running = "running",
        /// A turn waits for approvals.
        Paused = "paused",
        /// The last turn ended with an error; the next message starts afresh.
        Failed = "failed",
    }
);

/// A chat session with an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentSession {
    /// Identifier.
    pub id: String,
    /// The agent.
    pub agent_id: String,
    /// Who chats (`token:<id>`, `local:admin`).
    pub actor: String,
    /// Their group when the session started.
    pub group: Group,
    /// A title (the first message, shortened).
    pub title: String,
    /// Where it stands.
    pub status: SessionStatus,
    /// Turns so far.
    pub turns: i64,
    /// Steps taken in the current turn.
    pub steps: i64,
    /// Tools activated by searchTools.
    pub active_tools: Vec<String>,
    /// Working memory: entities seen, latest first per kind.
    #[schema(value_type = Object)]
    pub memory: Value,
    /// Tool calls waiting for a person's approval.
    #[schema(value_type = Vec<Object>)]
    pub pending: Value,
    /// What the user's UI shows (optional).
    #[schema(value_type = Option<Object>)]
    pub context: Option<Value>,
    /// The contexts the person chose for the current turn, by key (the
    /// agent's own come on top).
    pub contexts: Vec<String>,
    /// Input tokens used, all turns.
    pub input_tokens: i64,
    /// Output tokens used, all turns.
    pub output_tokens: i64,
    /// When it started.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// An agent: a configured assistant with its own prompt, tools and policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Agent {
    /// Identifier.
    pub id: String,
    /// Unique key within the site (`editor`).
    pub alias: String,
    /// Display name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Name of the model profile it runs on (`default`).
    pub profile: String,
    /// Its own instructions, added after the base prompt.
    pub system_prompt: String,
    /// Tools it may use: names (`getPage`), `category:internal` or `tag:page`.
    pub tools: Vec<String>,
    /// Tools always active, without discovery.
    pub pinned: Vec<String>,
    /// Groups whose users may chat with it (empty: every group).
    pub allowed_groups: Vec<Group>,
    /// How its destructive calls are approved.
    pub approval_policy: AgentPolicy,
    /// Where its writes go: drafts (the default) or straight to the site.
    pub write_mode: WriteMode,
    /// Disabled agents cannot be chatted with; disabling is their archive.
    pub enabled: bool,
    /// Keys of the contexts (brand voice, style guide) its prompt carries
    /// in every turn.
    pub contexts: Vec<String>,
    /// Increases with every change.
    pub version: i64,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// A named text an agent reads while it works: a brand voice, a style
/// guide, who the site is for. Attached to agents, or chosen for a turn;
/// only then is it in the prompt, as material of the site's, not
/// instructions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    /// Identifier.
    pub id: String,
    /// Unique key within the site (`brand-voice`).
    pub key: String,
    /// Display name.
    pub name: String,
    /// When to use it, in one line.
    pub description: String,
    /// The text itself (markdown).
    pub body: String,
    /// Increases with every change.
    pub version: i64,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// A record a workspace names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkspaceRecord {
    /// Its kind (`page`, `entry`, `image`).
    pub kind: EntityKind,
    /// Its id.
    pub id: String,
}

/// What a session was working on, saved so a later session picks it up:
/// its goal, the records and notes involved, and a summary of where it
/// stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Workspace {
    /// Identifier.
    pub id: String,
    /// Its name, unique within the site (`spring campaign`).
    pub name: String,
    /// What the work is for.
    pub goal: String,
    /// Where it stands: what is done, what is next.
    pub summary: String,
    /// The records involved.
    pub records: Vec<WorkspaceRecord>,
    /// The vault notes involved, by path.
    pub notes: Vec<String>,
    /// The session that saved it last, if one did.
    pub session_id: Option<String>,
    /// Who saved it last.
    pub saved_by: String,
    /// Increases with every change.
    pub version: i64,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// A site: the unit of tenancy, holding environments.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Site {
    /// Identifier.
    pub id: String,
    /// URL-safe key (`demo`).
    pub slug: String,
    /// Display name.
    pub name: String,
    /// Environments of the site (`production`, `staging`).
    pub environments: Vec<String>,
    /// Where the site's own front end shows a draft, with placeholders
    /// (`{slug}`, `{collection}`, `{kind}`, `{id}`, `{token}`); none: the
    /// delivery API shows it.
    pub preview_url: Option<String>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it was archived, if it is (its tokens stop and nothing of it
    /// is delivered; everything it holds is kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<DateTime<Utc>>,
}

/// One of a site's languages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SiteLocale {
    /// Its BCP 47 tag (`en`, `de`, `pt-BR`).
    pub tag: String,
    /// The locale whose values fill what this one lacks; none: the
    /// default's (the default locale itself has none).
    pub fallback: Option<String>,
    /// Whether it is the site's default: the records' own values are in it.
    pub is_default: bool,
}

/// A document's values in one locale other than its site's default: its
/// localised fields, drafted and published on its own ([decision 0050]).
/// For a page, `name`, `slug`, `meta` and `sections` (each section's
/// localised content by section id); for an entry, `title`, `slug`,
/// `excerpt` and `content` (its localised fields); for a navigation,
/// `items` (each item's `label` by item id).
///
/// [decision 0050]: ../../../docs/decisions/0050-locales.md
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Translation {
    /// Identifier.
    pub id: String,
    /// The kind of the translated document: page, entry or navigation.
    pub record_kind: EntityKind,
    /// The translated document.
    pub record_id: String,
    /// Its locale (a BCP 47 tag of the site's).
    pub locale: String,
    /// Its slug in this locale (pages and entries), unique among the
    /// locale's pages, or the locale's entries of a collection.
    pub slug: Option<String>,
    /// Where its slug is unique (`page:de`, `entry:<collection>:de`).
    pub slug_scope: String,
    /// The localised values (see the type's text).
    #[schema(value_type = Object)]
    pub fields: Value,
    /// A digest of the default locale's values it was translated from:
    /// when they change, the translation is stale.
    pub source_hash: String,
    /// draft, published or unpublished; delivery shows published ones.
    pub status: PublishStatus,
    /// Increases with every change.
    pub version: i64,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// A page of the site tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Page {
    /// Identifier.
    pub id: String,
    /// Display name.
    pub name: String,
    /// URL slug, unique among the live pages of a site and environment.
    pub slug: String,
    /// Parent page; `null` for a root page.
    pub parent_id: Option<String>,
    /// Protected pages cannot be deleted or re-slugged by the agent.
    pub is_protected: bool,
    /// SEO metadata: title, description, image, ...
    #[schema(value_type = Object)]
    pub meta: Value,
    /// Whether search engines may index the page.
    pub indexing: bool,
    /// Position among its siblings.
    pub sort_order: i64,
    /// Publication state; delivery serves published pages only.
    pub status: PublishStatus,
    /// Increases with every change; used to detect concurrent edits.
    pub version: i64,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// A section template: the shape of a kind of page section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SectionTemplate {
    /// Identifier.
    pub id: String,
    /// Stable key used by sections (`hero`).
    pub key: String,
    /// Display name.
    pub name: String,
    /// What the section is for.
    pub description: String,
    /// Field definitions content is validated against.
    pub fields: Vec<FieldDef>,
    /// Increases with every change.
    pub version: i64,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// A section placed on a page, with content that fits its template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PageSection {
    /// Identifier (the `pageSectionId` of the tools).
    pub id: String,
    /// The page it sits on.
    pub page_id: String,
    /// Key of its template.
    pub template_key: String,
    /// Content, validated against the template on every write.
    #[schema(value_type = Object)]
    pub content: Value,
    /// Position on the page.
    pub sort_order: i64,
    /// Publication state.
    pub status: PublishStatus,
    /// Hidden sections are not delivered even when published.
    pub hidden: bool,
    /// Increases with every change.
    pub version: i64,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// A collection of entries (posts are entries of a `posts` collection).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Collection {
    /// Identifier.
    pub id: String,
    /// URL-safe key (`blog`).
    pub slug: String,
    /// Display name.
    pub name: String,
    /// posts or entries.
    pub kind: CollectionKind,
    /// Field definitions entry content is validated against.
    pub fields: Vec<FieldDef>,
    /// Increases with every change.
    pub version: i64,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// An entry of a collection; a post when the collection's kind is posts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Identifier.
    pub id: String,
    /// The collection it belongs to.
    pub collection_id: String,
    /// URL slug, unique within its collection.
    pub slug: String,
    /// Title.
    pub title: String,
    /// Content, validated against the collection's fields.
    #[schema(value_type = Object)]
    pub content: Value,
    /// draft, published or archived.
    pub status: EntryStatus,
    /// Author's name.
    pub author: Option<String>,
    /// Category.
    pub category: Option<String>,
    /// Tags.
    pub tags: Vec<String>,
    /// Short summary.
    pub excerpt: Option<String>,
    /// Featured image URL (`/uploads/...`).
    pub featured_image: Option<String>,
    /// When it was (first) published.
    pub published_at: Option<DateTime<Utc>>,
    /// Increases with every change.
    pub version: i64,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// An image of the media library (metadata; the file lives under `/uploads`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Image {
    /// Identifier.
    pub id: String,
    /// Relative URL (`/uploads/<site>/...`) of the stored original; final
    /// once status is completed.
    pub url: String,
    /// Original file name.
    pub filename: String,
    /// MIME type.
    pub mime: String,
    /// Width in pixels.
    pub width: Option<i64>,
    /// Height in pixels.
    pub height: Option<i64>,
    /// Size in bytes.
    pub bytes: Option<i64>,
    /// SHA-256 of the file as uploaded, for deduplication.
    pub content_hash: Option<String>,
    /// Alternative text.
    pub alt: Option<String>,
    /// Longer description.
    pub description: Option<String>,
    /// Tags.
    pub tags: Vec<String>,
    /// Categories.
    pub categories: Vec<String>,
    /// processing, completed or failed.
    pub status: ImageStatus,
    /// upload, pexels, unsplash or url.
    pub source: ImageSource,
    /// Photographer and source URL for external images.
    #[schema(value_type = Option<Object>)]
    pub attribution: Option<Value>,
    /// Variants by name (thumbnail, medium, large), each `{ width, height,
    /// webp, url }`: a WebP URL and one in the original's format.
    #[schema(value_type = Object)]
    pub variants: Value,
    /// Average colour (`#rrggbb`) to show while the image loads.
    pub color: Option<String>,
    /// Why processing failed (status failed).
    pub error: Option<String>,
    /// Which of alt, description and tags a vision model wrote (a person's
    /// edit of one takes it off this list).
    #[serde(default)]
    pub generated: Vec<String>,
    /// Increases with every change.
    pub version: i64,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// A file received and typed from its bytes, waiting to become an image
/// (`createImage` with its id or url). Never served itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Upload {
    /// Identifier (the `uploadId` of createImage).
    pub id: String,
    /// Its URL (`/uploads/<site>/incoming/<id>`), which createImage also takes.
    pub url: String,
    /// The file name it came with.
    pub filename: String,
    /// Type found in its bytes.
    pub mime: String,
    /// Size in bytes.
    pub bytes: i64,
    /// SHA-256 of its bytes.
    pub sha256: String,
    /// Width its header declares.
    pub width: i64,
    /// Height its header declares.
    pub height: i64,
    /// When it arrived.
    pub created_at: DateTime<Utc>,
}

/// A navigation menu (`header`, `footer`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Navigation {
    /// Identifier.
    pub id: String,
    /// Stable key (`header`).
    pub key: String,
    /// Display name.
    pub name: String,
    /// Most top-level items it may hold.
    pub max_items: Option<i64>,
    /// Increases with every change.
    pub version: i64,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// An item of a navigation menu, pointing at a page, entry, image or URL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NavItem {
    /// Identifier.
    pub id: String,
    /// The navigation it belongs to.
    pub navigation_id: String,
    /// Parent item for nested menus.
    pub parent_id: Option<String>,
    /// Text shown.
    pub label: String,
    /// What it points at.
    pub target_type: NavTargetType,
    /// Id of the page, entry or image it points at.
    pub target_id: Option<String>,
    /// URL, for targetType url.
    pub url: Option<String>,
    /// Position among its siblings.
    pub sort_order: i64,
    /// Invisible items are not delivered.
    pub visible: bool,
    /// Increases with every change.
    pub version: i64,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// One record an archive holds (the root or something that cascaded with it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArchivedItem {
    /// Kind of record.
    pub entity: EntityKind,
    /// Its id.
    pub id: String,
    /// A readable name (title, slug, label).
    pub label: String,
}

/// What a delete archived: the root record and everything that went with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Archive {
    /// Identifier (used to restore).
    pub id: String,
    /// Kind of the root record.
    pub entity: EntityKind,
    /// Id of the root record.
    pub entity_id: String,
    /// Readable name of the root record.
    pub label: String,
    /// Every record archived, root first.
    pub items: Vec<ArchivedItem>,
    /// Who archived it.
    pub archived_by: String,
    /// When.
    pub archived_at: DateTime<Utc>,
    /// When it was restored, if it was.
    pub restored_at: Option<DateTime<Utc>>,
    /// Who restored it.
    pub restored_by: Option<String>,
}

/// One record of the change log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// Identifier; increases with time.
    pub id: i64,
    /// Who made it (`token:<id>`, `user:<id>`, `system`).
    pub actor: String,
    /// Through which surface.
    pub surface: Surface,
    /// The agent session, when an agent made it.
    pub session_id: Option<String>,
    /// The agent turn, when an agent made it.
    pub turn_id: Option<String>,
    /// Kind of record changed.
    pub entity: EntityKind,
    /// Its id.
    pub entity_id: String,
    /// create, update, archive, restore, revert, undo; for notes also
    /// write, createFolder, move and copy.
    #[schema(value_type = String)]
    pub action: ChangeAction,
    /// The record before (`null` for a create).
    #[schema(value_type = Option<Object>)]
    pub before: Option<Value>,
    /// The record after.
    #[schema(value_type = Option<Object>)]
    pub after: Option<Value>,
    /// When.
    pub at: DateTime<Utc>,
}

/// Who is making a change, through what: recorded with every mutation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeContext {
    /// `token:<id>`, `user:<id>` or `system`.
    pub actor: String,
    /// The surface the change came through.
    pub surface: Surface,
    /// Agent session, if any.
    pub session_id: Option<String>,
    /// Agent turn, if any.
    pub turn_id: Option<String>,
    /// How its writes reach the public site.
    pub publishing: Publishing,
}

impl ChangeContext {
    /// The system itself (seeding, migrations): its writes are published
    /// as their status says.
    pub fn system() -> Self {
        Self {
            actor: "system".into(),
            surface: Surface::System,
            session_id: None,
            turn_id: None,
            publishing: Publishing::Direct,
        }
    }
}

/// How a caller's writes reach the public site: a page (with its
/// sections), an entry and a navigation (with its items) each have a
/// published copy, which delivery reads, beside the working copy every
/// write changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Publishing {
    /// Every write publishes the documents it changes, as their status
    /// says: the system's seeding, an agent an admin lets publish directly.
    Direct,
    /// Writes change working copies; a write that sets a page's or an
    /// entry's status to published publishes it, one that sets a published
    /// record's status to anything else takes it off the site. People, over
    /// REST, the back-office and the CLI.
    ByStatus,
    /// Writes change working copies only, and a write that would publish
    /// or unpublish by its status is refused: publishing is a call of its
    /// own, which waits for a person where the caller's policy says so.
    /// Tools.
    Separately,
    /// Writes change working copies only, and a change of status touches
    /// nothing public either: the undo of a turn, which puts back what
    /// the turn published itself.
    Never,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_mode_is_the_tools_else_its_narrowest_categorys_else_the_default() {
        let mut prefs = ApprovalPreferences::default();
        assert_eq!(prefs.mode("updatePage", &["page", "internal"]), ApprovalMode::Destructive);
        prefs.default = ApprovalMode::Never;
        prefs.categories.insert("internal".into(), ApprovalMode::Always);
        assert_eq!(prefs.mode("updatePage", &["page", "internal"]), ApprovalMode::Always);
        assert_eq!(prefs.mode("searchWeb", &["webResult", "external"]), ApprovalMode::Never);
        prefs.categories.insert("page".into(), ApprovalMode::Destructive);
        assert_eq!(prefs.mode("updatePage", &["page", "internal"]), ApprovalMode::Destructive);
        assert_eq!(prefs.mode("getSection", &["section", "internal"]), ApprovalMode::Always);
        prefs.tools.insert("updatePage".into(), ApprovalMode::Always);
        assert_eq!(prefs.mode("updatePage", &["page", "internal"]), ApprovalMode::Always);
        assert_eq!(prefs.mode("getPage", &["page", "internal"]), ApprovalMode::Destructive);
    }

    #[test]
    fn openapi_enums_use_the_wire_names() {
        use utoipa::PartialSchema;
        let schema = serde_json::to_value(EntityKind::schema()).unwrap();
        let names: Vec<&str> = EntityKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(schema["enum"], serde_json::json!(names));
    }

    #[test]
    fn enum_errors_list_accepted_values() {
        let err = PublishStatus::parse("status", "live").unwrap_err();
        assert_eq!(err.to_string(), "status: \"live\" is not one of draft, published, unpublished");
        assert_eq!(NavTargetType::parse("targetType", "url").unwrap(), NavTargetType::Url);
    }
}
