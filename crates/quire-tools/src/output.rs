//! What each tool answers, as JSON Schema (MCP's `outputSchema`).
//!
//! Nothing here is written per tool. A tool's answer follows from its
//! metadata: read-only tools answer a list of their entity, other tools the
//! record they wrote, destructive tools a preview or, once approved, the
//! archives they made or restored; every tool may fail with the one error
//! shape. Each entity's record is described once, with its enums taken from
//! the Rust types the tools serialise. Only the vault and the default tools,
//! whose answers differ from one another, are told apart by name.
//!
//! The schemas use a small, portable subset of JSON Schema (`type` with one
//! type each, `properties`, `required`, `items`, `anyOf`, `enum`, `const`,
//! `format`, `description`); [`violations`] checks a value against exactly
//! that subset, so tests can hold every real answer to its declared shape.

use crate::subject::Subject;
use crate::tool::{ErrorCode, Tool};
use quire_core::model::{
    AgentPolicy, EntityKind, EntryStatus, ImageSource, ImageStatus, NavTargetType, PublishStatus, ReleaseAction,
    ReleaseState, WriteMode,
};
use schemars::JsonSchema;
use serde_json::{Map, Value, json};

/// The output schema of `tool`: `{ "type": "object", "anyOf": [...] }`, one
/// branch per way it can answer, the error branch last.
pub fn output_schema(tool: &Tool) -> Value {
    let mut branches = success_branches(tool);
    // Any tool but the conversation's own may wait for the person it runs
    // for, when their approval preferences ask (destructive ones have
    // their own preview).
    if !tool.destructive && tool.category != crate::Category::Default {
        branches.push(awaiting(archived_item(), "The record the call names, if it names one."));
    }
    branches.push(error());
    json!({ "type": "object", "anyOf": branches })
}

/// Whether `tool`'s answers have a shape of their own here, rather than the
/// open object a tool of an unknown entity gets (tests require it of every
/// tool of the catalog).
pub fn is_specific(tool: &Tool) -> bool {
    !matches!(answer(tool), Answer::Unknown)
}

/// How a tool answers when it succeeds.
enum Answer {
    /// `{ success, count, items, nextCursor? }` of a record schema.
    List(Value),
    /// A list that a `query` may rank: also `ranking`, which says how.
    Ranked(Value),
    /// `{ success, item, message }`, plus `changeId` for vault writes.
    Item { item: Value, change_id: bool },
    /// A preview awaiting approval, or the archives it made or restored.
    Destructive,
    /// A shape of its own (complete success branch).
    Own(Value),
    /// Several shapes of its own (complete success branches).
    Branches(Vec<Value>),
    /// A tool of an entity described nowhere here.
    Unknown,
}

fn answer(tool: &Tool) -> Answer {
    if let Some(branches) = external(tool.name) {
        return Answer::Branches(branches);
    }
    match (tool.entity, tool.name) {
        (_, "proposeFormValues") => Answer::Own(success(
            &[
                ("values", described(object(&[], &[]), "The values proposed, by field name.")),
                ("reason", nullable(string())),
                ("message", string()),
            ],
            &["values", "message"],
        )),
        (Subject::Tool, _) => Answer::Own(success(
            &[("count", integer()), ("tools", array(object(&[("name", string()), ("description", string())], &[])))],
            &["count", "tools"],
        )),
        (Subject::Conversation, _) => Answer::Own(success(&[("message", string())], &["message"])),
        (_, "searchNotes") => Answer::Ranked(search_hit()),
        (entity, "getImage" | "getPage" | "getPost" | "getEntry") => match record(entity) {
            Some(record) => Answer::Ranked(record),
            None => Answer::Unknown,
        },
        (_, "readNote") => Answer::Own(success(
            &[
                (
                    "item",
                    object(
                        &[
                            ("path", string()),
                            ("startLine", integer()),
                            ("endLine", integer()),
                            ("totalLines", integer()),
                        ],
                        &["path", "startLine", "endLine", "totalLines"],
                    ),
                ),
                ("content", described(string(), "The lines, each as `number: text`.")),
            ],
            &["item", "content"],
        )),
        (_, "openNote") => Answer::Own(success(
            &[("item", object(&[("path", string())], &["path"])), ("opened", boolean()), ("message", string())],
            &["item", "opened", "message"],
        )),
        (_, "listFolder") => Answer::List(vault_item()),
        (_, "publishContent" | "unpublishContent" | "discardDraft") => {
            Answer::Branches(vec![publishing_preview(), list_with_message(published())])
        }
        (_, "getRelease") => Answer::Branches(vec![
            success(&[("release", release()), ("items", array(item_review()))], &["release", "items"]),
            success(&[("count", integer()), ("items", array(release()))], &["count", "items"]),
        ]),
        (_, "createRelease" | "updateRelease" | "discardRelease") => {
            Answer::Own(success(&[("release", release()), ("message", string())], &["release"]))
        }
        (_, "createAgent" | "updateAgent" | "archiveAgent") => Answer::Branches(vec![
            agent_preview(),
            success(&[("item", agent()), ("message", string())], &["item", "message"]),
        ]),
        (_, "loadWorkspace") => Answer::Item { item: workspace(), change_id: false },
        (_, "publishRelease" | "revertRelease") => Answer::Branches(vec![
            release_preview(),
            success(&[("release", release()), ("message", string())], &["release", "message"]),
        ]),
        (Subject::Record(EntityKind::Note) | Subject::Folder, _) => {
            Answer::Item { item: vault_change(), change_id: true }
        }
        (entity, _) => match record(entity) {
            None => Answer::Unknown,
            Some(_) if tool.destructive => Answer::Destructive,
            Some(record) if tool.read_only => Answer::List(record),
            Some(record) => Answer::Item { item: record, change_id: false },
        },
    }
}

fn success_branches(tool: &Tool) -> Vec<Value> {
    match answer(tool) {
        Answer::List(record) => vec![list(record)],
        Answer::Ranked(record) => vec![ranked(record)],
        Answer::Item { item, change_id } => {
            let mut props = vec![("item", item), ("message", string())];
            if change_id {
                props.push(("changeId", described(integer(), "The change-log record of this vault change.")));
            }
            let required: Vec<&str> = props.iter().map(|(k, _)| *k).collect();
            vec![success(&props, &required)]
        }
        Answer::Destructive => vec![preview(), list_with_message(archive())],
        Answer::Own(branch) => vec![branch],
        Answer::Branches(branches) => branches,
        Answer::Unknown => vec![success(&[], &[])],
    }
}

/// The answers of the external tools (`crate::external`).
fn external(name: &str) -> Option<Vec<Value>> {
    let opt_string = || nullable(string());
    let opt_integer = || nullable(integer());
    let http_answer = || {
        success(
            &[
                ("status", described(integer(), "The HTTP status the server answered.")),
                ("url", described(string(), "The URL that answered (after redirects).")),
                ("contentType", opt_string()),
                ("json", described(any_json(), "The body, when it is JSON.")),
                ("text", described(string(), "The body as text, when it is not JSON.")),
                ("truncated", described(boolean(), "Whether the text was cut at the limit.")),
            ],
            &["status", "url", "contentType"],
        )
    };
    Some(match name {
        "browseImages" => vec![success(
            &[
                ("count", integer()),
                (
                    "items",
                    array(object(
                        &[
                            ("provider", json!({ "type": "string", "enum": ["pexels", "unsplash"] })),
                            ("photoId", opt_string()),
                            ("previewUrl", opt_string()),
                            ("width", opt_integer()),
                            ("height", opt_integer()),
                            ("alt", opt_string()),
                            ("photographer", opt_string()),
                            ("photographerUrl", opt_string()),
                            ("photoUrl", opt_string()),
                            ("license", string()),
                        ],
                        &["provider", "photoId", "previewUrl", "photographer", "license"],
                    )),
                ),
                (
                    "failures",
                    described(
                        array(object(&[("provider", string()), ("error", string())], &["provider", "error"])),
                        "Services that failed while others answered.",
                    ),
                ),
            ],
            &["count", "items"],
        )],
        "importImage" => vec![success(
            &[
                ("item", record(Subject::Record(EntityKind::Image)).unwrap_or_default()),
                ("message", string()),
                ("imageId", described(string(), "The local image id.")),
                ("url", described(string(), "The image's relative /uploads/ URL.")),
            ],
            &["item", "message", "imageId", "url"],
        )],
        "searchWeb" => vec![
            success(
                &[
                    ("mode", json!({ "type": "string", "const": "quick" })),
                    ("count", integer()),
                    (
                        "items",
                        array(object(
                            &[("title", string()), ("url", string()), ("snippet", string()), ("provider", string())],
                            &["title", "url", "snippet", "provider"],
                        )),
                    ),
                ],
                &["mode", "count", "items"],
            ),
            success(
                &[
                    ("mode", json!({ "type": "string", "const": "deep" })),
                    ("answer", described(string(), "Markdown citing sources by number, e.g. [1].")),
                    (
                        "sources",
                        array(object(
                            &[("number", integer()), ("title", string()), ("url", string()), ("read", boolean())],
                            &["number", "title", "url", "read"],
                        )),
                    ),
                    ("queries", array(string())),
                ],
                &["mode", "answer", "sources", "queries"],
            ),
        ],
        "fetchContent" => vec![success(
            &[
                ("count", integer()),
                (
                    "items",
                    array(object(
                        &[
                            ("url", string()),
                            ("finalUrl", string()),
                            ("title", opt_string()),
                            ("byline", opt_string()),
                            ("content", string()),
                            ("length", described(integer(), "Characters before the cut.")),
                            ("truncated", boolean()),
                            ("error", described(string(), "Why this page could not be read.")),
                        ],
                        &["url"],
                    )),
                ),
            ],
            &["count", "items"],
        )],
        "httpGet" => vec![http_answer()],
        "httpPost" => vec![
            success(
                &[
                    ("requiresConfirmation", json!({ "type": "boolean", "const": true })),
                    (
                        "confirmationId",
                        described(string(), "Approved by a person, then passed back with the same arguments."),
                    ),
                    ("message", string()),
                    (
                        "items",
                        described(
                            array(object(
                                &[
                                    ("method", string()),
                                    ("url", string()),
                                    ("headers", object(&[], &[])),
                                    ("body", string()),
                                ],
                                &["method", "url", "headers", "body"],
                            )),
                            "Exactly the request that would be sent.",
                        ),
                    ),
                    ("expiresAt", timestamp()),
                ],
                &["requiresConfirmation", "confirmationId", "message", "items", "expiresAt"],
            ),
            http_answer(),
        ],
        _ => return None,
    })
}

/// The record a tool of `entity` lists or writes, as its tool module renders it.
fn record(entity: Subject) -> Option<Value> {
    let record = match entity {
        Subject::Record(EntityKind::Page) => page(),
        Subject::Record(EntityKind::Section) => section(),
        Subject::Record(EntityKind::SectionTemplate) => object(
            &[
                ("id", string()),
                ("key", string()),
                ("name", string()),
                ("description", string()),
                (
                    "fields",
                    array(object(
                        &[("name", string()), ("kind", string()), ("required", boolean()), ("description", string())],
                        &["name", "kind"],
                    )),
                ),
            ],
            &["id", "key", "name", "description", "fields"],
        ),
        Subject::Record(EntityKind::Image) => object(
            &[
                ("id", string()),
                ("url", described(string(), "Relative /uploads/... URL; use it exactly.")),
                ("filename", string()),
                ("alt", nullable(string())),
                ("description", nullable(string())),
                ("width", nullable(integer())),
                ("height", nullable(integer())),
                ("tags", array(string())),
                ("status", enumeration::<ImageStatus>()),
                ("source", enumeration::<ImageSource>()),
                ("attribution", described(any_json(), "Photographer and source of an external image, or null.")),
                ("error", described(nullable(string()), "Why processing failed (status failed), else null.")),
            ],
            &[
                "id",
                "url",
                "filename",
                "alt",
                "description",
                "width",
                "height",
                "tags",
                "status",
                "source",
                "attribution",
                "error",
            ],
        ),
        Subject::Post | Subject::Record(EntityKind::Entry) => entry(),
        Subject::Record(EntityKind::NavItem) => object(
            &[
                ("id", string()),
                ("navigationId", string()),
                ("parentId", nullable(string())),
                ("label", string()),
                ("targetType", enumeration::<NavTargetType>()),
                ("targetId", nullable(string())),
                ("url", nullable(string())),
                ("sortOrder", integer()),
                ("visible", boolean()),
                ("version", integer()),
            ],
            &[
                "id",
                "navigationId",
                "parentId",
                "label",
                "targetType",
                "targetId",
                "url",
                "sortOrder",
                "visible",
                "version",
            ],
        ),
        Subject::Archive => archive(),
        Subject::Record(EntityKind::Agent) => agent(),
        Subject::Record(EntityKind::Context) => object(
            &[
                ("id", string()),
                ("key", string()),
                ("name", string()),
                ("description", string()),
                ("body", described(string(), "The text (read by id; a list leaves it out).")),
                ("version", integer()),
            ],
            &["id", "key", "name", "description", "version"],
        ),
        Subject::Record(EntityKind::Workspace) => workspace(),
        _ => return None,
    };
    Some(match entity {
        Subject::Record(EntityKind::Page | EntityKind::Entry) | Subject::Post => localizable(record, true),
        Subject::Record(EntityKind::Section | EntityKind::NavItem) => localizable(record, false),
        _ => record,
    })
}

/// `record` (a page, section, entry or menu item) with what a read or a
/// write in a locale adds, and, for a document (`document`), what a read
/// by id or slug says of its locales.
fn localizable(mut record: Value, document: bool) -> Value {
    let mut props = vec![
        ("locale", described(string(), "The locale read or written in (with a locale other than the site's default).")),
        (
            "localeOf",
            described(
                object(&[], &[]),
                "With a locale: the locale each localised value came from (that locale, a fallback, or the default), by field; content fields as content.<name>.",
            ),
        ),
        (
            "translation",
            described(
                object(
                    &[
                        ("id", string()),
                        ("locale", string()),
                        ("status", enumeration::<PublishStatus>()),
                        ("version", integer()),
                    ],
                    &["id", "locale", "status", "version"],
                ),
                "After a write in a locale: the translation written (its document's, for a section or a menu item).",
            ),
        ),
    ];
    if document {
        let tags = |d: &str| described(array(string()), d);
        props.push((
            "locales",
            described(
                object(
                    &[
                        ("default", described(string(), "The site's default locale: the record's own values.")),
                        ("translated", tags("The locales it has a translation in.")),
                        ("published", tags("Those whose translation is on the public site.")),
                        ("missing", tags("The site's other locales it has no translation in.")),
                        ("stale", tags("Those whose translation predates the default's values now.")),
                    ],
                    &["default", "translated", "published", "missing", "stale"],
                ),
                "Read by id or slug on a site of several locales: its translations.",
            ),
        ));
    }
    if let Some(properties) = record["properties"].as_object_mut() {
        properties.extend(props.into_iter().map(|(k, v)| (k.to_string(), v)));
    }
    record
}

fn page() -> Value {
    object(
        &[
            ("id", string()),
            ("name", string()),
            ("slug", string()),
            ("parentId", nullable(string())),
            ("status", enumeration::<PublishStatus>()),
            ("isProtected", boolean()),
            ("sortOrder", integer()),
            ("version", integer()),
            ("updatedAt", timestamp()),
            ("meta", described(any_json(), "SEO metadata (with includeContent, and on writes).")),
            ("indexing", described(boolean(), "Search engines may index it (with includeContent, and on writes).")),
            ("sections", described(array(section()), "The page's sections with their content (with includeContent).")),
            ("publication", publication_of("page")),
            (
                "children",
                described(
                    array(object(&[("id", string()), ("name", string()), ("slug", string())], &["id", "name", "slug"])),
                    "Direct children (with includeChildren).",
                ),
            ),
        ],
        &["id", "name", "slug", "parentId", "status", "isProtected", "sortOrder", "version", "updatedAt"],
    )
}

fn section() -> Value {
    object(
        &[
            ("pageSectionId", string()),
            ("pageId", string()),
            ("templateKey", string()),
            ("sortOrder", integer()),
            ("status", enumeration::<PublishStatus>()),
            ("hidden", boolean()),
            ("version", integer()),
            (
                "content",
                described(object(&[], &[]), "The fields of its template (with includeContent, and on writes)."),
            ),
            ("heading", described(any_json(), "The content's heading, when content is left out.")),
        ],
        &["pageSectionId", "pageId", "templateKey", "sortOrder", "status", "hidden", "version"],
    )
}

fn entry() -> Value {
    object(
        &[
            ("id", string()),
            ("collectionId", string()),
            ("slug", string()),
            ("title", string()),
            ("status", enumeration::<EntryStatus>()),
            ("author", nullable(string())),
            ("category", nullable(string())),
            ("tags", array(string())),
            ("excerpt", nullable(string())),
            ("featuredImage", nullable(string())),
            ("publishedAt", nullable(timestamp())),
            ("publication", publication_of("entry")),
            ("version", integer()),
            (
                "content",
                described(object(&[], &[]), "The fields of its collection (with includeContent, and on writes)."),
            ),
        ],
        &[
            "id",
            "collectionId",
            "slug",
            "title",
            "status",
            "author",
            "category",
            "tags",
            "excerpt",
            "featuredImage",
            "publishedAt",
            "version",
        ],
    )
}

/// One record an archive holds, or a preview lists.
fn archived_item() -> Value {
    object(
        &[("entity", enumeration::<EntityKind>()), ("id", string()), ("label", string())],
        &["entity", "id", "label"],
    )
}

fn archive() -> Value {
    object(
        &[
            ("id", described(string(), "Archive id, for restoreArchive.")),
            ("entity", enumeration::<EntityKind>()),
            ("entityId", string()),
            ("label", string()),
            ("items", described(array(archived_item()), "The root record and everything archived with it.")),
            ("archivedBy", string()),
            ("archivedAt", timestamp()),
            ("restoredAt", nullable(timestamp())),
            ("restoredBy", nullable(string())),
        ],
        &["id", "entity", "entityId", "label", "items", "archivedBy", "archivedAt", "restoredAt", "restoredBy"],
    )
}

fn vault_item() -> Value {
    object(
        &[
            ("path", string()),
            ("kind", json!({ "type": "string", "enum": ["file", "folder"] })),
            ("size", nullable(integer())),
            ("modified", nullable(timestamp())),
        ],
        &["path", "kind", "size", "modified"],
    )
}

fn search_hit() -> Value {
    object(
        &[("path", string()), ("line", integer()), ("snippet", string()), ("score", json!({ "type": "number" }))],
        &["path", "line", "snippet", "score"],
    )
}

/// The note or folder a vault write touched.
fn vault_change() -> Value {
    object(
        &[
            ("path", string()),
            ("kind", json!({ "type": "string", "const": "folder" })),
            ("from", described(string(), "Where a moved or copied note came from.")),
            ("archivedTo", described(string(), "Where an archived item now is; moveItem brings it back.")),
            ("totalLines", integer()),
        ],
        &["path"],
    )
}

/// `{ success: true, ...props }`.
fn success(props: &[(&str, Value)], required: &[&str]) -> Value {
    let mut all = vec![("success", json!({ "type": "boolean", "const": true }))];
    all.extend(props.iter().cloned());
    let mut req = vec!["success"];
    req.extend_from_slice(required);
    object(&all, &req)
}

fn list(record: Value) -> Value {
    success(
        &[
            ("count", described(integer(), "How many items this answer holds.")),
            ("items", array(record)),
            ("nextCursor", described(string(), "Pass as cursor for the next page; absent on the last one.")),
        ],
        &["count", "items"],
    )
}

/// [`list`] with the `ranking` a query answers with.
fn ranked(record: Value) -> Value {
    let mut branch = list(record);
    branch["properties"]["ranking"] = described(
        json!({ "type": "string", "enum": ["hybrid", "fulltext"] }),
        "With a query: hybrid (meaning and words) or fulltext (words alone).",
    );
    branch
}

fn list_with_message(record: Value) -> Value {
    success(&[("count", integer()), ("items", array(record)), ("message", string())], &["count", "items", "message"])
}

/// A destructive call's first answer: nothing has changed yet.
fn agent() -> Value {
    object(
        &[
            ("id", string()),
            ("alias", string()),
            ("name", string()),
            ("description", string()),
            ("systemPrompt", string()),
            ("tools", array(string())),
            ("pinned", array(string())),
            ("allowedGroups", array(string())),
            ("approvalPolicy", enumeration::<AgentPolicy>()),
            ("writeMode", enumeration::<WriteMode>()),
            ("enabled", boolean()),
            ("contexts", described(array(string()), "Keys of the contexts its prompt carries.")),
            ("version", integer()),
        ],
        &["id", "alias", "name", "tools", "approvalPolicy", "writeMode", "enabled", "contexts", "version"],
    )
}

fn workspace() -> Value {
    let record = object(
        &[
            ("kind", enumeration::<EntityKind>()),
            ("id", string()),
            ("label", described(string(), "Its name now (loadWorkspace).")),
            ("live", described(boolean(), "Whether it is still there (loadWorkspace).")),
        ],
        &["kind", "id"],
    );
    object(
        &[
            ("id", string()),
            ("name", string()),
            ("goal", string()),
            ("summary", string()),
            ("records", array(record)),
            ("notes", array(string())),
            ("sessionId", nullable(string())),
            ("savedBy", string()),
            ("version", integer()),
            ("updatedAt", timestamp()),
        ],
        &["id", "name", "goal", "summary", "records", "notes", "savedBy", "version"],
    )
}

/// A change to an agent awaiting approval: what it is and would become.
fn agent_preview() -> Value {
    let item = object(
        &[
            ("entity", json!({ "type": "string", "const": "agent" })),
            ("id", described(string(), "The agent changed (none for a new one).")),
            ("label", string()),
            ("before", agent()),
            ("after", agent()),
        ],
        &["entity", "label", "after"],
    );
    success(
        &[
            ("requiresConfirmation", json!({ "type": "boolean", "const": true })),
            ("confirmationId", described(string(), "Approved by a person, then passed back with the same arguments.")),
            ("message", string()),
            ("items", described(array(item), "The agent as it is and as it would be.")),
            ("expiresAt", timestamp()),
        ],
        &["requiresConfirmation", "confirmationId", "message", "items", "expiresAt"],
    )
}

fn preview() -> Value {
    success(
        &[
            ("requiresConfirmation", json!({ "type": "boolean", "const": true })),
            ("confirmationId", described(string(), "Approved by a person, then passed back with the same arguments.")),
            ("message", string()),
            ("items", described(array(archived_item()), "Exactly what would be archived or restored.")),
            ("expiresAt", timestamp()),
        ],
        &["requiresConfirmation", "confirmationId", "message", "items", "expiresAt"],
    )
}

/// One record that differs between two versions of a document.
fn difference() -> Value {
    let field =
        object(&[("field", string()), ("before", any_json()), ("after", any_json())], &["field", "before", "after"]);
    object(
        &[
            ("id", string()),
            ("part", described(boolean(), "A section or a menu item, rather than the document itself.")),
            ("change", json!({ "type": "string", "enum": ["added", "removed", "changed"] })),
            ("fields", array(field)),
        ],
        &["id", "part", "change", "fields"],
    )
}

/// A call's first answer when a person must approve it: nothing has
/// changed yet; `items` says what would.
fn awaiting(items: Value, about: &str) -> Value {
    success(
        &[
            ("requiresConfirmation", json!({ "type": "boolean", "const": true })),
            ("confirmationId", described(string(), "Approved by a person, then passed back with the same arguments.")),
            ("message", string()),
            ("items", described(array(items), about)),
            ("expiresAt", timestamp()),
        ],
        &["requiresConfirmation", "confirmationId", "message", "items", "expiresAt"],
    )
}

/// A publishing call's first answer: what would change, record by record.
fn publishing_preview() -> Value {
    let document = object(
        &[
            ("entity", enumeration::<EntityKind>()),
            ("id", string()),
            ("label", string()),
            ("publication", publication()),
            ("differences", described(array(difference()), "What is published against the draft.")),
        ],
        &["entity", "id", "label", "publication", "differences"],
    );
    awaiting(document, "Each document and what publishing it would change.")
}

/// A release's publish or revert, first answer: each document reviewed.
fn release_preview() -> Value {
    awaiting(item_review(), "Each document of the release, its differences and conflict.")
}

/// A release, as its tools answer it.
fn release() -> Value {
    let opt_time = || nullable(timestamp());
    let opt_string = || nullable(string());
    let item = object(
        &[
            ("entity", enumeration::<EntityKind>()),
            ("id", string()),
            ("action", enumeration::<ReleaseAction>()),
            ("label", string()),
            ("addedBy", string()),
            ("addedAt", timestamp()),
            ("revision", integer()),
        ],
        &["entity", "id", "action", "label", "addedBy", "addedAt", "revision"],
    );
    object(
        &[
            ("id", string()),
            ("name", string()),
            ("description", string()),
            ("state", enumeration::<ReleaseState>()),
            ("publishAt", opt_time()),
            ("createdBy", string()),
            ("createdAt", timestamp()),
            ("updatedAt", timestamp()),
            ("publishedAt", opt_time()),
            ("publishedBy", opt_string()),
            ("revertedAt", opt_time()),
            ("revertedBy", opt_string()),
            ("version", integer()),
            ("items", described(array(item), "Its documents, in the order they were added.")),
        ],
        &["id", "name", "description", "state", "createdBy", "createdAt", "updatedAt", "version", "items"],
    )
}

/// A document of a release, reviewed.
fn item_review() -> Value {
    object(
        &[
            ("entity", enumeration::<EntityKind>()),
            ("id", string()),
            ("label", string()),
            ("action", enumeration::<ReleaseAction>()),
            ("differences", described(array(difference()), "What is public against what the release would leave.")),
            ("conflict", described(nullable(string()), "Why the release cannot publish (or revert) as it stands.")),
        ],
        &["entity", "id", "label", "action", "differences", "conflict"],
    )
}

/// Where a record read by id or slug stands with the public site.
fn publication_of(noun: &str) -> Value {
    described(
        publication(),
        &format!("Whether the {noun} is on the public site and its draft differs (read by id or slug)."),
    )
}

/// Where a document stands with the public site.
fn publication() -> Value {
    object(
        &[
            ("published", described(boolean(), "Whether the public site shows it.")),
            ("changed", described(boolean(), "Whether its draft differs from what is published.")),
        ],
        &["published", "changed"],
    )
}

/// A document a publishing call acted on, and where it stands now.
fn published() -> Value {
    object(&[("id", string()), ("publication", publication())], &["id", "publication"])
}

/// `{ success: false, error, errorCode, hint }`.
fn error() -> Value {
    object(
        &[
            ("success", json!({ "type": "boolean", "const": false })),
            ("error", described(string(), "What went wrong, naming the parameter.")),
            ("errorCode", enumeration::<ErrorCode>()),
            ("hint", described(string(), "What to do about it.")),
        ],
        &["success", "error", "errorCode", "hint"],
    )
}

fn object(props: &[(&str, Value)], required: &[&str]) -> Value {
    let properties: Map<String, Value> = props.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    let mut schema = json!({ "type": "object", "properties": properties });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

fn array(items: Value) -> Value {
    json!({ "type": "array", "items": items })
}

fn string() -> Value {
    json!({ "type": "string" })
}

fn integer() -> Value {
    json!({ "type": "integer" })
}

fn boolean() -> Value {
    json!({ "type": "boolean" })
}

fn timestamp() -> Value {
    json!({ "type": "string", "format": "date-time" })
}

/// `value` or null, as single-type branches (portable where type arrays are not).
fn nullable(value: Value) -> Value {
    json!({ "anyOf": [value, { "type": "null" }] })
}

/// Any JSON value, spelled so that every branch has a type.
fn any_json() -> Value {
    let types = ["object", "array", "string", "number", "boolean", "null"];
    json!({ "anyOf": types.iter().map(|t| json!({ "type": t })).collect::<Vec<_>>() })
}

fn described(mut schema: Value, description: &str) -> Value {
    schema["description"] = Value::String(description.to_string());
    schema
}

/// `{ type: string, enum }` of a Rust enum, from the same derive that
/// serialises it, so the wire values cannot drift from the schema.
fn enumeration<T: JsonSchema>() -> Value {
    let schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    let schema = serde_json::to_value(&schema).unwrap_or_default();
    // schemars writes `enum`, or `oneOf` of `const`s when variants are documented.
    let mut values = Vec::new();
    if let Some(Value::Array(listed)) = schema.get("enum") {
        values.extend(listed.iter().cloned());
    }
    for branch in schema.get("oneOf").and_then(Value::as_array).into_iter().flatten() {
        if let Some(value) = branch.get("const") {
            values.push(value.clone());
        }
        if let Some(Value::Array(listed)) = branch.get("enum") {
            values.extend(listed.iter().cloned());
        }
    }
    if values.is_empty() { string() } else { json!({ "type": "string", "enum": values }) }
}

/// Why `value` does not match `schema`, one line per problem (empty when it
/// does). Covers the subset of JSON Schema these output schemas use; any
/// other keyword is reported, so a schema cannot silently go unchecked.
pub fn violations(schema: &Value, value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    check(schema, value, "$", &mut out);
    out
}

fn type_matches(name: &str, value: &Value) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        _ => false,
    }
}

fn check(schema: &Value, value: &Value, at: &str, out: &mut Vec<String>) {
    let Value::Object(schema) = schema else {
        out.push(format!("{at}: schema is not an object"));
        return;
    };
    for (key, rule) in schema {
        match key.as_str() {
            "description" | "format" | "properties" => {}
            "type" => match rule.as_str() {
                Some(t) if type_matches(t, value) => {}
                Some(t) => out.push(format!("{at}: expected {t}, got {value}")),
                None => out.push(format!("{at}: `type` must be one type name")),
            },
            "const" if rule != value => out.push(format!("{at}: expected {rule}, got {value}")),
            "const" => {}
            "enum" => {
                if !rule.as_array().is_some_and(|values| values.contains(value)) {
                    out.push(format!("{at}: {value} is not one of {rule}"));
                }
            }
            "required" => {
                for name in rule.as_array().into_iter().flatten().filter_map(Value::as_str) {
                    if value.is_object() && value.get(name).is_none() {
                        out.push(format!("{at}.{name}: required"));
                    }
                }
            }
            "items" => {
                for (i, item) in value.as_array().into_iter().flatten().enumerate() {
                    check(rule, item, &format!("{at}[{i}]"), out);
                }
            }
            "anyOf" => {
                let branches = rule.as_array().cloned().unwrap_or_default();
                let failures: Vec<(bool, Vec<String>)> =
                    branches.iter().map(|b| (discriminated(b, value), violations_at(b, value, at))).collect();
                if !failures.iter().any(|(_, f)| f.is_empty()) {
                    // Report the branch the value meant to be (its `const`
                    // properties match), else the one that came closest.
                    let closest = failures
                        .into_iter()
                        .min_by_key(|(meant, f)| (!meant, f.len()))
                        .map(|(_, f)| f)
                        .unwrap_or_default();
                    out.push(format!("{at}: matches none of anyOf; closest: {}", closest.join("; ")));
                }
            }
            other => out.push(format!("{at}: keyword `{other}` is not checked here")),
        }
    }
    if let (Some(Value::Object(props)), Value::Object(fields)) = (schema.get("properties"), value) {
        for (name, sub) in props {
            if let Some(field) = fields.get(name) {
                check(sub, field, &format!("{at}.{name}"), out);
            }
        }
    }
}

/// Whether every `const` property of an object schema holds in `value`
/// (`success: true`, `requiresConfirmation: true`): the branch it meant.
fn discriminated(schema: &Value, value: &Value) -> bool {
    let Some(Value::Object(props)) = schema.get("properties") else { return false };
    props.iter().all(|(name, sub)| sub.get("const").is_none_or(|c| value.get(name) == Some(c)))
}

fn violations_at(schema: &Value, value: &Value, at: &str) -> Vec<String> {
    let mut out = Vec::new();
    check(schema, value, at, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> Tool {
        crate::catalog().into_iter().find(|t| t.name == name).unwrap()
    }

    #[test]
    fn every_tool_has_a_shape_of_its_own() {
        for tool in crate::catalog() {
            assert!(is_specific(&tool), "{} has no output shape", tool.name);
            let schema = output_schema(&tool);
            assert_eq!(schema["type"], "object", "{}", tool.name);
            let branches = schema["anyOf"].as_array().unwrap();
            // searchWeb answers quick results or a deep answer; getRelease
            // one release reviewed or a list.
            // Any other tool but the conversation's may wait for approval.
            let waits = usize::from(!tool.destructive && tool.category != crate::Category::Default);
            let expected = if tool.destructive || ["searchWeb", "getRelease"].contains(&tool.name) { 3 } else { 2 };
            let expected = expected + waits;
            assert_eq!(branches.len(), expected, "{}", tool.name);
        }
    }

    #[test]
    fn shapes_follow_the_metadata() {
        let get_page = output_schema(&tool("getPage"));
        let list = &get_page["anyOf"][0];
        assert_eq!(list["required"], json!(["success", "count", "items"]));
        assert_eq!(
            list["properties"]["items"]["items"]["properties"]["status"]["enum"],
            json!(["draft", "published", "unpublished"])
        );
        let create = output_schema(&tool("createPost"));
        assert_eq!(create["anyOf"][0]["required"], json!(["success", "item", "message"]));
        assert!(create["anyOf"][0]["properties"]["item"]["properties"]["collectionId"].is_object());
        let delete = output_schema(&tool("deleteSection"));
        assert_eq!(delete["anyOf"][0]["properties"]["requiresConfirmation"]["const"], true);
        assert_eq!(delete["anyOf"][2]["properties"]["success"]["const"], false);
        let write = output_schema(&tool("writeNote"));
        assert!(write["anyOf"][0]["required"].as_array().unwrap().contains(&json!("changeId")));
    }

    #[test]
    fn enums_come_from_the_rust_types() {
        assert_eq!(enumeration::<PublishStatus>()["enum"], json!(["draft", "published", "unpublished"]));
        let codes = enumeration::<ErrorCode>();
        assert_eq!(codes["enum"].as_array().map(Vec::len), Some(11), "{codes}");
        assert!(codes["enum"].as_array().unwrap().contains(&json!("APPROVAL_REQUIRED")), "{codes}");
        assert_eq!(enumeration::<EntityKind>()["enum"][0], "page");
    }

    #[test]
    fn the_checker_reports_what_is_wrong() {
        let schema = output_schema(&tool("getNavItem"));
        let ok = json!({"success": true, "count": 0, "items": []});
        assert!(violations(&schema, &ok).is_empty(), "{:?}", violations(&schema, &ok));
        let err = json!({"success": false, "error": "x", "errorCode": "NOT_FOUND", "hint": "h"});
        assert!(violations(&schema, &err).is_empty());
        let bad_code = json!({"success": false, "error": "x", "errorCode": "OOPS", "hint": "h"});
        let found = violations(&schema, &bad_code).join("\n");
        assert!(found.contains("\"OOPS\" is not one of"), "{found}");
        let bad_item = json!({"success": true, "count": 1, "items": [{"id": 1}]});
        let found = violations(&schema, &bad_item).join("\n");
        assert!(found.contains("$.items[0].id: expected string"), "{found}");
        assert!(found.contains("$.items[0].label: required"), "{found}");
        let unknown = json!({"type": "object", "patternProperties": {}});
        assert!(violations(&unknown, &json!({}))[0].contains("`patternProperties` is not checked"));
    }
}
