//! Section tools: getSectionTemplate, getSection, createSection,
//! updateSection, deleteSection.

use crate::archive::{archive_execute, archive_preview};
use crate::catalog::{CreateSectionArgs, DeleteSectionArgs, GetSectionArgs, GetTemplateArgs, UpdateSectionArgs};
use crate::locales::{self, InLocale, Overlay};
use crate::pages::{created_untranslated, section_json};
use crate::scope::select_one;
use crate::tool::*;
use quire_core::fields::{FieldDef, FieldKind};
use quire_core::input::{NewSection, SectionPatch};
use quire_core::model::{EntityKind, PageSection, SectionTemplate, Translation};
use serde_json::{Map, Value, json};

fn template_json(t: &SectionTemplate) -> Value {
    json!({ "id": t.id, "key": t.key, "name": t.name, "description": t.description, "fields": t.fields })
}

pub(crate) async fn get_template(call: &Call<'_>, a: GetTemplateArgs) -> ToolResult {
    let sel = select_one(&[("id", a.id.is_some()), ("key", a.key.is_some()), ("all", a.all == Some(true))])?;
    let store = call.store();
    let templates = match sel.0 {
        "all" => store.templates(call.scope(), 100, None).await?.items,
        _ => vec![store.template(call.scope(), a.id.as_deref().or(a.key.as_deref()).unwrap_or_default()).await?],
    };
    Ok(items_result(templates.iter().map(template_json).collect(), None))
}

pub(crate) async fn get_section(call: &Call<'_>, a: GetSectionArgs) -> ToolResult {
    let sel = select_one(&[("pageSectionId", a.page_section_id.is_some()), ("pageId", a.page_id.is_some())])?;
    let in_locale = locales::asked(call, a.locale.as_deref()).await?;
    let store = call.store();
    let content = a.include_content == Some(true);
    let sections = match sel.0 {
        "pageSectionId" => vec![store.section(call.scope(), a.page_section_id.as_deref().unwrap_or_default()).await?],
        _ => store.sections(call.scope(), a.page_id.as_deref().unwrap_or_default(), 100, None).await?.items,
    };
    let mut items: Vec<Value> = sections.iter().map(|s| section_json(s, content)).collect();
    if let Some(l) = &in_locale {
        let mut overlay = Overlay::new(l);
        for item in &mut items {
            overlay.section(call, item).await?;
        }
    }
    Ok(items_result(items, None))
}

pub(crate) async fn create_section(call: &Call<'_>, a: CreateSectionArgs) -> ToolResult {
    let in_locale = locales::asked(call, a.locale.as_deref()).await?;
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
    let Some(l) = in_locale else { return Ok(item_result(section_json(&s, true), msg)) };
    let localized = locales::template_fields(call, &s.template_key).await?;
    let texts: Map<String, Value> = s
        .content
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| localized.contains(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let written = locales::write(call, &l, EntityKind::Page, &s.page_id, |fields| {
        let sections = fields.entry("sections").or_insert_with(|| json!({}));
        if let Some(sections) = sections.as_object_mut() {
            sections.insert(s.id.clone(), Value::Object(texts));
        }
    })
    .await
    .map_err(|e| created_untranslated(e, "section", &s.id, &l))?;
    let msg = format!("{msg} Its page's {} translation holds the same texts, as a draft.", l.tag);
    section_in(call, &l, &s, &written, msg).await
}

/// The answer of a write in locale `l`: `section` as that locale reads
/// it, with the translation of its page written.
async fn section_in(
    call: &Call<'_>,
    l: &InLocale,
    section: &PageSection,
    written: &Translation,
    msg: String,
) -> ToolResult {
    let mut item = section_json(section, true);
    Overlay::new(l).section(call, &mut item).await?;
    item["translation"] = locales::translation_json(written);
    Ok(item_result(item, msg))
}

/// updateSection in a locale other than the default: the localised
/// fields of its content, in its page's translation there.
async fn update_section_in(call: &Call<'_>, l: &InLocale, a: UpdateSectionArgs) -> ToolResult {
    let given = [
        ("imageId", a.image_id.is_some()),
        ("imageField", a.image_field.is_some()),
        ("status", a.status.is_some()),
        ("hidden", a.hidden.is_some()),
        ("sortOrder", a.sort_order.is_some()),
    ];
    locales::only_localized(l, "section", &given, &["content (the template's localised fields)"])?;
    let section = call.store().section(call.scope(), &a.page_section_id).await?;
    let localized = locales::template_fields(call, &section.template_key).await?;
    locales::only_localized_content(l, &format!("template {}", section.template_key), a.content.as_ref(), &localized)?;
    let patch = a.content.unwrap_or_else(|| json!({}));
    let written = locales::write(call, l, EntityKind::Page, &section.page_id, |fields| {
        let sections = fields.entry("sections").or_insert_with(|| json!({}));
        let Some(sections) = sections.as_object_mut() else { return };
        let mut mine = match sections.remove(&section.id) {
            Some(Value::Object(mine)) => mine,
            _ => Map::new(),
        };
        locales::merge_content(&mut mine, &section.content, &patch);
        if !mine.is_empty() {
            sections.insert(section.id.clone(), Value::Object(mine));
        }
    })
    .await?;
    let msg = format!(
        "Wrote the {} translation of {} section {} (its page's translation: {}, version {}).",
        l.tag, section.template_key, section.id, written.status, written.version
    );
    section_in(call, l, &section, &written, msg).await
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

pub(crate) async fn update_section(call: &Call<'_>, a: UpdateSectionArgs) -> ToolResult {
    if let Some(l) = locales::asked(call, a.locale.as_deref()).await? {
        return update_section_in(call, &l, a).await;
    }
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

pub(crate) async fn delete(call: &Call<'_>, a: DeleteSectionArgs) -> ToolResult {
    archive_execute(call, EntityKind::Section, &a.ids, "section").await
}

pub(crate) async fn preview_delete(call: &Call<'_>, a: DeleteSectionArgs) -> Result<Preview, ToolError> {
    archive_preview(call, EntityKind::Section, &a.ids, "section").await
}
