//! What callers send to create and update records.
//!
//! Creates carry every required field; patches carry only what changes
//! (`content` and `meta` merge as JSON merge patches, and a nullable field set
//! to `null` is cleared). Unknown keys are refused, so a typo never passes
//! silently. `apply` functions are pure: the store validates and persists.

use crate::fields::FieldDef;
use crate::merge::merge_patch;
use crate::model::*;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// Deserializes a field that distinguishes "absent" (`None`) from "set to
/// null" (`Some(None)`).
pub fn double_option<'de, T, D>(de: D) -> Result<Option<Option<T>>, D::Error>
where
    T: Deserialize<'de>,
    D: Deserializer<'de>,
{
    Option::<T>::deserialize(de).map(Some)
}

/// Sets each listed field of `$record` that the patch gives (a nullable
/// field given as `null` is cleared): `set_given!(self => page: name, slug)`.
macro_rules! set_given {
    ($patch:ident => $record:ident: $($field:ident),+ $(,)?) => {
        $(if let Some(v) = &$patch.$field {
            $record.$field = v.clone();
        })+
    };
}

/// The SEO metadata of a page as the OpenAPI document shows it: other keys
/// are free, these two are checked.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct PageMeta {
    /// Page title for search engines; null removes it.
    #[schema(value_type = Option<crate::text::OptionalLine<120>>)]
    title: Option<String>,
    /// Summary for search engines; null removes it.
    #[schema(max_length = 320)]
    description: Option<String>,
}

/// A tool selector of an agent (`getPage`, `category:internal`,
/// `tag:page`), as the OpenAPI document shows it: not blank, and a
/// `category:` or `tag:` prefix needs a name after it.
pub struct ToolSelector;

/// [`ToolSelector`]'s pattern; the end of input is `(?![\s\S])` because `$`
/// also matches before a final newline in Python.
pub const TOOL_SELECTOR_PATTERN: &str = "^(?!(?:category|tag):(?![\\s\\S]))[\\s\\S]*[^\\t\\n\\u000b\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";

impl utoipa::PartialSchema for ToolSelector {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::Type::String)
            .pattern(Some(TOOL_SELECTOR_PATTERN))
            .into()
    }
}

impl utoipa::ToSchema for ToolSelector {}

/// A new page.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewPage {
    /// Display name.
    #[schema(value_type = crate::text::Line<200>)]
    pub name: String,
    /// URL slug (lowercase words joined by hyphens).
    #[schema(min_length = 1, max_length = 100, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$")]
    pub slug: String,
    /// Parent page id; omit for a root page.
    pub parent_id: Option<String>,
    /// Protect the page from deletion and re-slugging by the agent.
    pub is_protected: Option<bool>,
    /// SEO metadata object (title, description, image, ...).
    #[schema(value_type = Option<PageMeta>)]
    pub meta: Option<Value>,
    /// Allow search engines to index the page (default true).
    pub indexing: Option<bool>,
    /// Position among siblings (default: last).
    pub sort_order: Option<i64>,
    /// draft (default), published or unpublished.
    pub status: Option<PublishStatus>,
}

/// Changes to a page.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PagePatch {
    /// New name.
    #[schema(value_type = Option<crate::text::Line<200>>)]
    pub name: Option<String>,
    /// New slug.
    #[schema(min_length = 1, max_length = 100, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$")]
    pub slug: Option<String>,
    /// New parent; `null` moves the page to the root.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub parent_id: Option<Option<String>>,
    /// Protection flag.
    pub is_protected: Option<bool>,
    /// Merge patch for meta (a key set to null is removed).
    #[schema(value_type = Option<PageMeta>)]
    pub meta: Option<Value>,
    /// Indexing flag.
    pub indexing: Option<bool>,
    /// Position among siblings.
    pub sort_order: Option<i64>,
    /// Publication state.
    pub status: Option<PublishStatus>,
}

impl PagePatch {
    /// Applies the patch to `page`.
    pub fn apply(&self, page: &mut Page) {
        set_given!(self => page: name, slug, parent_id, is_protected, indexing, sort_order, status);
        if let Some(v) = &self.meta {
            merge_patch(&mut page.meta, v);
        }
    }
}

/// A new section on a page (the page comes from the URL or the tool call).
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewSection {
    /// Key of the section template (`hero`).
    pub template_key: String,
    /// Content matching the template's fields.
    #[schema(value_type = Option<Object>)]
    pub content: Option<Value>,
    /// Position on the page (default: last).
    pub sort_order: Option<i64>,
    /// draft (default), published or unpublished.
    pub status: Option<PublishStatus>,
    /// Hide the section (default false).
    pub hidden: Option<bool>,
}

/// Where a record goes among its siblings (pages under one parent, the
/// sections of a page, a menu's items under one parent): at a place counted
/// from 0 once it is taken out of the list, or right before or after a
/// sibling named by id. `{"position": 0}`, `{"before": "…"}`, `{"after": "…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum Place {
    /// The place, counted from 0 (the first); the last is the number of
    /// its siblings.
    Position(u32),
    /// Right before this sibling.
    Before(String),
    /// Right after this sibling.
    After(String),
}

/// Changes to a section.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SectionPatch {
    /// Merge patch for content (a key set to null is removed).
    #[schema(value_type = Option<Object>)]
    pub content: Option<Value>,
    /// Position on the page.
    pub sort_order: Option<i64>,
    /// Publication state.
    pub status: Option<PublishStatus>,
    /// Hidden flag.
    pub hidden: Option<bool>,
}

impl SectionPatch {
    /// Applies the patch to `section`.
    pub fn apply(&self, section: &mut PageSection) {
        set_given!(self => section: sort_order, status, hidden);
        if let Some(v) = &self.content {
            merge_patch(&mut section.content, v);
        }
    }
}

/// A new section template.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewTemplate {
    /// Stable key (a slug).
    #[schema(min_length = 1, max_length = 100, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$")]
    pub key: String,
    /// Display name.
    #[schema(value_type = crate::text::Line<120>)]
    pub name: String,
    /// What it is for.
    #[schema(max_length = 500)]
    pub description: Option<String>,
    /// Field definitions.
    #[schema(min_items = 1)]
    pub fields: Vec<FieldDef>,
}

/// Changes to a section template. Existing sections are not re-validated
/// until they are next written.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TemplatePatch {
    /// New name.
    #[schema(value_type = Option<crate::text::Line<120>>)]
    pub name: Option<String>,
    /// New description.
    #[schema(max_length = 500)]
    pub description: Option<String>,
    /// New field definitions (replace the old ones).
    #[schema(min_items = 1)]
    pub fields: Option<Vec<FieldDef>>,
}

impl TemplatePatch {
    /// Applies the patch.
    pub fn apply(&self, t: &mut SectionTemplate) {
        set_given!(self => t: name, description, fields);
    }
}

/// A new collection.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewCollection {
    /// URL-safe key.
    #[schema(min_length = 1, max_length = 100, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$")]
    pub slug: String,
    /// Display name.
    #[schema(value_type = crate::text::Line<120>)]
    pub name: String,
    /// posts or entries.
    pub kind: CollectionKind,
    /// Field definitions (posts default to body + cover).
    pub fields: Option<Vec<FieldDef>>,
}

/// Changes to a collection.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CollectionPatch {
    /// New name.
    #[schema(value_type = Option<crate::text::Line<120>>)]
    pub name: Option<String>,
    /// New field definitions.
    pub fields: Option<Vec<FieldDef>>,
}

impl CollectionPatch {
    /// Applies the patch.
    pub fn apply(&self, c: &mut Collection) {
        set_given!(self => c: name, fields);
    }
}

/// A new entry (or post).
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewEntry {
    /// URL slug, unique in the collection.
    #[schema(min_length = 1, max_length = 100, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$")]
    pub slug: String,
    /// Title.
    #[schema(value_type = crate::text::Line<300>)]
    pub title: String,
    /// Content matching the collection's fields.
    #[schema(value_type = Option<Object>)]
    pub content: Option<Value>,
    /// draft (default), published or archived.
    pub status: Option<EntryStatus>,
    /// Author's name.
    #[schema(value_type = Option<crate::text::OptionalLine<120>>)]
    pub author: Option<String>,
    /// Category.
    #[schema(value_type = Option<crate::text::OptionalLine<80>>)]
    pub category: Option<String>,
    /// Tags.
    #[schema(max_items = 30, value_type = Option<Vec<crate::text::Line<60>>>)]
    pub tags: Option<Vec<String>>,
    /// Short summary.
    #[schema(value_type = Option<crate::text::Text<1000>>)]
    pub excerpt: Option<String>,
    /// Featured image URL (`/uploads/...`).
    #[schema(pattern = "^/uploads/(?:\\.?[^%\\\\\\u0000.])*\\.?$")]
    pub featured_image: Option<String>,
}

/// Changes to an entry.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EntryPatch {
    /// New slug.
    #[schema(min_length = 1, max_length = 100, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$")]
    pub slug: Option<String>,
    /// New title.
    #[schema(value_type = Option<crate::text::Line<300>>)]
    pub title: Option<String>,
    /// Merge patch for content.
    #[schema(value_type = Option<Object>)]
    pub content: Option<Value>,
    /// New status.
    pub status: Option<EntryStatus>,
    /// Author; null clears it.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<crate::text::OptionalLine<120>>)]
    pub author: Option<Option<String>>,
    /// Category; null clears it.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<crate::text::OptionalLine<80>>)]
    pub category: Option<Option<String>>,
    /// Tags (replace the old ones).
    #[schema(max_items = 30, value_type = Option<Vec<crate::text::Line<60>>>)]
    pub tags: Option<Vec<String>>,
    /// Excerpt; null clears it.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<crate::text::Text<1000>>)]
    pub excerpt: Option<Option<String>>,
    /// Featured image; null clears it.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    #[schema(pattern = "^/uploads/(?:\\.?[^%\\\\\\u0000.])*\\.?$")]
    pub featured_image: Option<Option<String>>,
}

impl EntryPatch {
    /// Applies the patch (publishedAt is managed by the store).
    pub fn apply(&self, e: &mut Entry) {
        set_given!(self => e: slug, title, status, author, category, tags, excerpt, featured_image);
        if let Some(v) = &self.content {
            merge_patch(&mut e.content, v);
        }
    }
}

/// A new image record for a file already under `/uploads`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewImage {
    /// Relative URL of the file (`/uploads/...`).
    #[schema(pattern = "^/uploads/(?:\\.?[^%\\\\\\u0000.])*\\.?$")]
    pub url: String,
    /// File name.
    #[schema(value_type = crate::text::Line<255>)]
    pub filename: String,
    /// MIME type (default: guessed from the file name).
    #[schema(value_type = Option<crate::text::Mime<100>>)]
    pub mime: Option<String>,
    /// Width in pixels.
    #[schema(minimum = 0)]
    pub width: Option<i64>,
    /// Height in pixels.
    #[schema(minimum = 0)]
    pub height: Option<i64>,
    /// Size in bytes.
    #[schema(minimum = 0)]
    pub bytes: Option<i64>,
    /// SHA-256 of the file.
    pub content_hash: Option<String>,
    /// Alternative text.
    #[schema(value_type = Option<crate::text::OptionalLine<300>>)]
    pub alt: Option<String>,
    /// Description.
    #[schema(value_type = Option<crate::text::Text<2000>>)]
    pub description: Option<String>,
    /// Tags.
    #[schema(value_type = Option<Vec<crate::text::Line<60>>>)]
    pub tags: Option<Vec<String>>,
    /// Categories.
    #[schema(value_type = Option<Vec<crate::text::Line<80>>>)]
    pub categories: Option<Vec<String>>,
    /// Source (default upload).
    pub source: Option<ImageSource>,
    /// Attribution for external images.
    #[schema(value_type = Option<Object>)]
    pub attribution: Option<Value>,
}

/// Changes to an image's metadata.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImagePatch {
    /// Alternative text; null clears it.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<crate::text::OptionalLine<300>>)]
    pub alt: Option<Option<String>>,
    /// Description; null clears it.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<crate::text::Text<2000>>)]
    pub description: Option<Option<String>>,
    /// Tags (replace the old ones).
    #[schema(value_type = Option<Vec<crate::text::Line<60>>>)]
    pub tags: Option<Vec<String>>,
    /// Categories (replace the old ones).
    #[schema(value_type = Option<Vec<crate::text::Line<80>>>)]
    pub categories: Option<Vec<String>>,
}

impl ImagePatch {
    /// Applies the patch.
    pub fn apply(&self, i: &mut Image) {
        set_given!(self => i: categories);
        if let Some(v) = &self.alt {
            i.alt = v.clone();
            i.generated.retain(|f| f != "alt");
        }
        if let Some(v) = &self.description {
            i.description = v.clone();
            i.generated.retain(|f| f != "description");
        }
        if let Some(v) = &self.tags {
            i.tags = v.clone();
            i.generated.retain(|f| f != "tags");
        }
    }
}

/// A new navigation menu.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewNavigation {
    /// Stable key (`header`).
    #[schema(min_length = 1, max_length = 100, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$")]
    pub key: String,
    /// Display name.
    #[schema(value_type = crate::text::Line<120>)]
    pub name: String,
    /// Most top-level items.
    #[schema(minimum = 1, maximum = 100)]
    pub max_items: Option<i64>,
}

/// Changes to a navigation.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NavigationPatch {
    /// New name.
    #[schema(value_type = Option<crate::text::Line<120>>)]
    pub name: Option<String>,
    /// Most top-level items; null removes the limit.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<i64>)]
    #[schema(minimum = 1, maximum = 100)]
    pub max_items: Option<Option<i64>>,
}

impl NavigationPatch {
    /// Applies the patch.
    pub fn apply(&self, n: &mut Navigation) {
        set_given!(self => n: name, max_items);
    }
}

/// A new navigation item (the navigation comes from the URL or the tool call).
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewNavItem {
    /// Text shown.
    #[schema(value_type = crate::text::Line<80>)]
    pub label: String,
    /// page, entry, media, url or placeholder.
    pub target_type: NavTargetType,
    /// Id of the page, entry or image (for those target types).
    pub target_id: Option<String>,
    /// URL (for targetType url).
    pub url: Option<String>,
    /// Parent item for a nested menu.
    pub parent_id: Option<String>,
    /// Position among siblings (default: last).
    pub sort_order: Option<i64>,
    /// Visible (default true).
    pub visible: Option<bool>,
}

/// Changes to a navigation item.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NavItemPatch {
    /// New label.
    #[schema(value_type = Option<crate::text::Line<80>>)]
    pub label: Option<String>,
    /// New target type.
    pub target_type: Option<NavTargetType>,
    /// New target id; null clears it.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub target_id: Option<Option<String>>,
    /// New URL; null clears it.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub url: Option<Option<String>>,
    /// New parent; null moves it to the top level.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub parent_id: Option<Option<String>>,
    /// Position among siblings.
    pub sort_order: Option<i64>,
    /// Visible flag.
    pub visible: Option<bool>,
}

impl NavItemPatch {
    /// Applies the patch.
    pub fn apply(&self, n: &mut NavItem) {
        set_given!(self => n: label, target_type, target_id, url, parent_id, sort_order, visible);
    }
}

/// A new agent.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewAgent {
    /// Unique key within the site (lowercase words joined by hyphens).
    #[schema(min_length = 1, max_length = 100, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$")]
    pub alias: String,
    /// Display name.
    #[schema(value_type = crate::text::Line<120>)]
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
    /// Model profile (default `default`).
    #[schema(value_type = Option<crate::text::Line<80>>)]
    pub profile: Option<String>,
    /// Its own instructions.
    #[schema(value_type = Option<crate::text::Text<20000>>)]
    pub system_prompt: Option<String>,
    /// Tools it may use: names, `category:<c>` or `tag:<t>`.
    #[schema(value_type = Option<Vec<ToolSelector>>)]
    pub tools: Option<Vec<String>>,
    /// Tools always active.
    #[schema(value_type = Option<Vec<ToolSelector>>)]
    pub pinned: Option<Vec<String>>,
    /// Groups whose users may chat with it (empty: every group).
    #[schema(value_type = Option<Vec<crate::access::Group>>)]
    pub allowed_groups: Option<Vec<crate::group::Group>>,
    /// user (default) or conversational.
    pub approval_policy: Option<AgentPolicy>,
    /// draft (default): its writes change drafts; direct: each is published as it is made.
    pub write_mode: Option<WriteMode>,
    /// Default true.
    pub enabled: Option<bool>,
    /// Keys of the contexts its prompt carries in every turn.
    #[schema(value_type = Option<Vec<crate::text::Line<100>>>)]
    pub contexts: Option<Vec<String>>,
}

/// Changes to an agent.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentPatch {
    /// New display name.
    #[schema(value_type = Option<crate::text::Line<120>>)]
    pub name: Option<String>,
    /// New description.
    pub description: Option<String>,
    /// New model profile.
    #[schema(value_type = Option<crate::text::Line<80>>)]
    pub profile: Option<String>,
    /// New instructions.
    #[schema(value_type = Option<crate::text::Text<20000>>)]
    pub system_prompt: Option<String>,
    /// New tool selection.
    #[schema(value_type = Option<Vec<ToolSelector>>)]
    pub tools: Option<Vec<String>>,
    /// New pinned tools.
    #[schema(value_type = Option<Vec<ToolSelector>>)]
    pub pinned: Option<Vec<String>>,
    /// New allowed groups.
    #[schema(value_type = Option<Vec<crate::access::Group>>)]
    pub allowed_groups: Option<Vec<crate::group::Group>>,
    /// New policy.
    pub approval_policy: Option<AgentPolicy>,
    /// New write mode.
    pub write_mode: Option<WriteMode>,
    /// Enable or disable (disabling is the agent's archive).
    pub enabled: Option<bool>,
    /// New contexts its prompt carries in every turn, by key.
    #[schema(value_type = Option<Vec<crate::text::Line<100>>>)]
    pub contexts: Option<Vec<String>>,
}

impl NewAgent {
    /// The agent it makes, with id `id`, created at `now`: what is left
    /// out takes its default.
    pub fn into_agent(self, id: String, now: chrono::DateTime<chrono::Utc>) -> Agent {
        Agent {
            id,
            alias: self.alias,
            name: self.name,
            description: self.description.unwrap_or_default(),
            profile: self.profile.unwrap_or_else(|| "default".into()),
            system_prompt: self.system_prompt.unwrap_or_default(),
            tools: self.tools.unwrap_or_default(),
            pinned: self.pinned.unwrap_or_default(),
            allowed_groups: self.allowed_groups.unwrap_or_default(),
            approval_policy: self.approval_policy.unwrap_or(AgentPolicy::User),
            write_mode: self.write_mode.unwrap_or(WriteMode::Draft),
            enabled: self.enabled.unwrap_or(true),
            contexts: self.contexts.unwrap_or_default(),
            version: 1,
            created_at: now,
            updated_at: now,
        }
    }
}

impl AgentPatch {
    /// Applies the patch to a copy of `agent`.
    pub fn apply(&self, agent: &Agent) -> Agent {
        let mut a = agent.clone();
        set_given!(self => a:
            name, description, profile, system_prompt, tools, pinned, allowed_groups, approval_policy, write_mode, enabled,
            contexts);
        a
    }
}

/// A new context.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewContext {
    /// Unique key within the site (lowercase words joined by hyphens).
    pub key: String,
    /// Display name.
    pub name: String,
    /// When to use it.
    pub description: Option<String>,
    /// The text.
    pub body: String,
}

/// Changes to a context.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextPatch {
    /// New name.
    pub name: Option<String>,
    /// New description.
    pub description: Option<String>,
    /// New text.
    pub body: Option<String>,
}

impl ContextPatch {
    /// Applies the patch to `context`.
    pub fn apply_to(&self, context: &mut crate::model::Context) {
        set_given!(self => context: name, description, body);
    }
}

/// What a workspace is saved with: a new one, or the new values of one
/// (what is left out stays).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkspaceInput {
    /// Its name.
    pub name: String,
    /// What the work is for.
    pub goal: Option<String>,
    /// Where it stands.
    pub summary: Option<String>,
    /// The records involved.
    pub records: Option<Vec<crate::model::WorkspaceRecord>>,
    /// The notes involved, by path.
    pub notes: Option<Vec<String>>,
}

impl WorkspaceInput {
    /// Applies the given values to `workspace`.
    pub fn apply_to(&self, workspace: &mut crate::model::Workspace) {
        set_given!(self => workspace: goal, summary, records, notes);
    }
}
