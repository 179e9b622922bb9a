//! Section tools: getSectionTemplate, getSection, createSection,
//! updateSection, deleteSection.

use crate::archive::{archive_execute, archive_preview};
use crate::args::parse;
use crate::pages::section_json;
use crate::registry::schema;
use crate::scope::select_one;
use crate::subject::Subject;
use crate::tool::*;
use quire_core::fields::{FieldDef, FieldKind};
use quire_core::input::{NewSection, SectionPatch};
use quire_core::model::{EntityKind, PublishStatus, SectionTemplate};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// Arguments of getSectionTemplate.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetTemplateArgs {
    /// Template id.
    pub id: Option<String>,
    /// Template key, e.g. "hero".
    pub key: Option<String>,
    /// List all templates.
    pub all: Option<bool>,
}

/// Arguments of getSection.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetSectionArgs {
    /// Section id (pageSectionId).
    pub page_section_id: Option<String>,
    /// List the sections of this page id, in order.
    pub page_id: Option<String>,
    /// Include each section's content.
    pub include_content: Option<bool>,
}

/// Arguments of createSection.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateSectionArgs {
    /// Page id to add the section to.
    pub page_id: String,
    /// Template key, e.g. "hero" (see getSectionTemplate).
    pub template_key: String,
    /// Content matching the template's fields.
    pub content: Option<Value>,
    /// Position on the page (default: last).
    pub sort_order: Option<i64>,
    /// draft (default), published or unpublished.
    pub status: Option<PublishStatus>,
    /// Hide the section.
    pub hidden: Option<bool>,
}

/// Arguments of updateSection.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateSectionArgs {
    /// Section id (pageSectionId from createSection or getSection).
    pub page_section_id: String,
    /// Content changes, merged; null removes a key.
    pub content: Option<Value>,
    /// Image id to attach; requires imageField.
    pub image_id: Option<String>,
    /// Image field of the template to set, e.g. "backgroundImage".
    pub image_field: Option<String>,
    /// draft, published or unpublished.
    pub status: Option<PublishStatus>,
    /// Hidden flag.
    pub hidden: Option<bool>,
    /// Position on the page.
    pub sort_order: Option<i64>,
}

/// Arguments of deleteSection.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteSectionArgs {
    /// Section ids to archive (always an array).
    pub ids: Vec<String>,
}

fn template_json(t: &SectionTemplate) -> Value {
    json!({ "id": t.id, "key": t.key, "name": t.name, "description": t.description, "fields": t.fields })
}

async fn get_template(call: &Call<'_>, a: GetTemplateArgs) -> ToolResult {
    let sel = select_one(&[("id", a.id.is_some()), ("key", a.key.is_some()), ("all", a.all == Some(true))])?;
    let store = call.store();
    let templates = match sel.0 {
        "all" => store.templates(call.scope(), 100, None).await?.items,
        _ => vec![store.template(call.scope(), a.id.as_deref().or(a.key.as_deref()).unwrap_or_default()).await?],
    };
    Ok(items_result(templates.iter().map(template_json).collect(), None))
}

async fn get_section(call: &Call<'_>, a: GetSectionArgs) -> ToolResult {
    let sel = select_one(&[("pageSectionId", a.page_section_id.is_some()), ("pageId", a.page_id.is_some())])?;
    let store = call.store();
    let content = a.include_content == Some(true);
    let sections = match sel.0 {
        "pageSectionId" => vec![store.section(call.scope(), a.page_section_id.as_deref().unwrap_or_default()).await?],
        _ => store.sections(call.scope(), a.page_id.as_deref().unwrap_or_default(), 100, None).await?.items,
    };
    Ok(items_result(sections.iter().map(|s| section_json(s, content)).collect(), None))
}

async fn create_section(call: &Call<'_>, a: CreateSectionArgs) -> ToolResult {
    let store = call.store();
    store.page(call.scope(), &a.page_id).await?;
    let input = NewSection {
        template_key: a.template_key,
        content: a.content,
        sort_order: a.sort_order,
        status: a.status,
        hidden: a.hidden,
    };
    let s = store.create_section(&call.ctx.change_context(), call.scope(), &a.page_id, input).await?;
    let msg = format!("Created {} section {} at position {} ({}).", s.template_key, s.id, s.sort_order, s.status);
    Ok(item_result(section_json(&s, true), msg))
}

/// Finds the field definition at a dotted path (`cta`, `tiers.0.cta`).
fn field_at<'a>(fields: &'a [FieldDef], path: &str) -> Option<&'a FieldDef> {
    let mut parts = path.split('.');
    let first = parts.next()?;
    let mut current = fields.iter().find(|f| f.name == first)?;
    while let Some(part) = parts.next() {
        current = match current.kind {
            FieldKind::Object => current.fields.iter().find(|f| f.name == part)?,
            FieldKind::List if part.parse::<usize>().is_ok() => {
                let item = current.item.as_deref()?;
                match parts.next() {
                    None => item,
                    Some(next) => item.fields.iter().find(|f| f.name == next)?,
                }
            }
            _ => return None,
        };
    }
    Some(current)
}

/// A merge patch that sets `value` at a dotted path of objects.
fn patch_at(path: &str, value: Value) -> Result<Value, ToolError> {
    if path.split('.').any(|p| p.parse::<usize>().is_ok()) {
        return Err(ToolError::invalid(
            format!("imageField: \"{path}\" points into a list"),
            "Update the list item through content with the image URL instead.",
        ));
    }
    Ok(path.rsplit('.').fold(value, |acc, key| json!({ key: acc })))
}

async fn update_section(call: &Call<'_>, a: UpdateSectionArgs) -> ToolResult {
    let store = call.store();
    let mut content = a.content.clone();
    match (&a.image_id, &a.image_field) {
        (Some(image_id), Some(field)) => {
            let section = store.section(call.scope(), &a.page_section_id).await?;
            let template = store.template(call.scope(), &section.template_key).await?;
            let Some(def) = field_at(&template.fields, field) else {
                let names: Vec<&str> = template.fields.iter().map(|f| f.name.as_str()).collect();
                return Err(ToolError::invalid(
                    format!(
                        "imageField: \"{field}\" is not a field of {} (fields: {})",
                        template.key,
                        names.join(", ")
                    ),
                    "Use getSectionTemplate to see the fields.",
                ));
            };
            if def.kind != FieldKind::Image {
                let images: Vec<&str> =
                    template.fields.iter().filter(|f| f.kind == FieldKind::Image).map(|f| f.name.as_str()).collect();
                let images = if images.is_empty() { "none".to_string() } else { images.join(", ") };
                return Err(ToolError::invalid(
                    format!(
                        "imageField: \"{field}\" is not an image field (it holds {}; image fields of {}: {images})",
                        def.kind.noun(),
                        template.key
                    ),
                    "Choose an image field of the template.",
                ));
            }
            let image = store.image(call.scope(), image_id).await?;
            let mut value = json!({ "imageId": image.id, "url": image.url });
            if let Some(alt) = &image.alt {
                value["alt"] = Value::String(alt.clone());
            }
            let patch = patch_at(field, value)?;
            let mut merged = content.take().unwrap_or_else(|| json!({}));
            quire_core::merge::merge_patch(&mut merged, &patch);
            content = Some(merged);
        }
        (Some(_), None) => {
            return Err(ToolError::invalid(
                "imageField: required with imageId",
                "Name the image field, e.g. backgroundImage.",
            ));
        }
        (None, Some(_)) => {
            return Err(ToolError::invalid("imageId: required with imageField", "Pass the image id from getImage."));
        }
        (None, None) => {}
    }
    let patch = SectionPatch { content, sort_order: a.sort_order, status: a.status, hidden: a.hidden };
    let s = store.update_section(&call.ctx.change_context(), call.scope(), &a.page_section_id, patch).await?;
    Ok(item_result(
        section_json(&s, true),
        format!("Updated {} section {} (version {}).", s.template_key, s.id, s.version),
    ))
}

/// The section tools.
pub fn tools() -> Vec<Tool> {
    vec![
        Tool {
            name: "getSectionTemplate",
            description: "Get section templates by id, key or all: true, with their fields and rules. Returns { items }.",
            guidance: "Read the template's fields before writing section content; required fields must be set.",
            tags: &["section", "template", "fields", "block", "layout", "schema"],
            phrases: &[
                "what section types exist",
                "which blocks can I use",
                "fields of the hero",
                "available templates",
                "section layouts",
            ],
            input_schema: schema::<GetTemplateArgs>,
            execute: |call, v| Box::pin(async move { get_template(call, parse(v)?).await }),
            ..Tool::base(Category::Internal, Subject::Record(EntityKind::SectionTemplate), Effect::ReadOnly)
        },
        Tool {
            name: "getSection",
            description: "Get sections by pageSectionId or all sections of a pageId, in page order; content only with includeContent. Returns { items }.",
            guidance: "Sections are identified by pageSectionId, not by template key.",
            tags: &["section", "sections", "block", "read", "list", "content"],
            phrases: &[
                "sections of the home page",
                "show the blocks on a page",
                "read a section",
                "what is on the page",
            ],
            input_schema: schema::<GetSectionArgs>,
            execute: |call, v| Box::pin(async move { get_section(call, parse(v)?).await }),
            ..Tool::base(Category::Internal, Subject::Record(EntityKind::Section), Effect::ReadOnly)
        },
        Tool {
            name: "createSection",
            description: "Create a section on a page from a templateKey and content validated against the template. Returns the section with its pageSectionId.",
            guidance: "Returns `pageSectionId` — use it for updates, NOT the template id.",
            tags: &["section", "create", "add", "block", "hero", "pricing", "faq", "gallery", "cta"],
            phrases: &[
                "add a hero",
                "add a pricing section",
                "insert a block",
                "put a gallery on the page",
                "add testimonials to the page",
                "add faq",
            ],
            input_schema: schema::<CreateSectionArgs>,
            execute: |call, v| Box::pin(async move { create_section(call, parse(v)?).await }),
            ..Tool::base(Category::Internal, Subject::Record(EntityKind::Section), Effect::Write)
        },
        Tool {
            name: "updateSection",
            description: "Update a section by pageSectionId; imageId + imageField attach an image. Returns the section.",
            guidance: "Content keys are the fields of the section's template.",
            tags: &["section", "update", "edit", "block", "image", "reorder", "hide", "publish"],
            phrases: &[
                "change the heading",
                "edit section text",
                "replace the hero image",
                "hide a section",
                "reorder sections",
                "set the background picture",
                "publish the section",
            ],
            input_schema: schema::<UpdateSectionArgs>,
            execute: |call, v| Box::pin(async move { update_section(call, parse(v)?).await }),
            ..Tool::base(Category::Internal, Subject::Record(EntityKind::Section), Effect::IdempotentWrite)
        },
        Tool {
            name: "deleteSection",
            description: "Delete sections by ids, archiving them; the first call only previews. Nothing changes until a person approves.",
            guidance: "Archives; consider hidden: true or status unpublished instead.",
            tags: &["section", "delete", "remove", "block", "archive"],
            phrases: &["remove a section", "delete the block", "take the faq off the page"],
            input_schema: schema::<DeleteSectionArgs>,
            execute: |call, v| {
                Box::pin(async move {
                    archive_execute(call, EntityKind::Section, &parse::<DeleteSectionArgs>(v)?.ids, "section").await
                })
            },
            preview: Some(|call, v| {
                Box::pin(async move {
                    archive_preview(call, EntityKind::Section, &parse::<DeleteSectionArgs>(v)?.ids, "section").await
                })
            }),
            ..Tool::base(Category::Internal, Subject::Record(EntityKind::Section), Effect::Destructive)
        },
    ]
}
