//! Page tools: getPage, createPage, updatePage, deletePage.

use crate::archive::{archive_execute, archive_preview};
use crate::catalog::{CreatePageArgs, DeletePageArgs, GetPageArgs, UpdatePageArgs};
use crate::locales::{self, InLocale, Overlay};
use crate::publishing::with_standing;
use crate::scope::{limit, select_one};
use crate::tool::*;
use quire_core::input::{NewPage, PagePatch};
use quire_core::locale::own_fields;
use quire_core::model::{EntityKind, Page, PageSection, PublishStatus, Surface, Translation};
use quire_store::{PageFilter, SearchFilter, Searched};
use serde_json::{Value, json};

/// Page as listed: light unless content is asked for.
pub fn page_json(p: &Page, include_content: bool) -> Value {
    let mut v = json!({
        "id": p.id, "name": p.name, "slug": p.slug, "parentId": p.parent_id, "status": p.status,
        "isProtected": p.is_protected, "sortOrder": p.sort_order, "version": p.version, "updatedAt": p.updated_at,
    });
    if include_content {
        v["meta"] = p.meta.clone();
        v["indexing"] = Value::Bool(p.indexing);
    }
    v
}

/// Section as listed.
pub fn section_json(s: &PageSection, include_content: bool) -> Value {
    let mut v = json!({
        "pageSectionId": s.id, "pageId": s.page_id, "templateKey": s.template_key, "sortOrder": s.sort_order,
        "status": s.status, "hidden": s.hidden, "version": s.version,
    });
    if include_content {
        v["content"] = s.content.clone();
    } else if let Some(h) = s.content.get("heading") {
        v["heading"] = h.clone();
    }
    v
}

pub(crate) async fn get_page(call: &Call<'_>, args: GetPageArgs) -> ToolResult {
    let sel = select_one(&[
        ("id", args.id.is_some()),
        ("slug", args.slug.is_some()),
        ("query", args.query.is_some()),
        ("parentId", args.parent_id.is_some()),
        ("all", args.all == Some(true)),
    ])?;
    let in_locale = locales::asked(call, args.locale.as_deref()).await?;
    let store = call.store();
    let content = args.include_content == Some(true);
    let mut ranking = None;
    let (pages, next) = match sel.0 {
        "id" => (vec![store.page(call.scope(), args.id.as_deref().unwrap_or_default()).await?], None),
        "slug" => {
            let slug = args.slug.as_deref().unwrap_or_default();
            let translated = match &in_locale {
                Some(l) => locales::by_translated_slug(call, l, EntityKind::Page, None, slug).await?,
                None => None,
            };
            let page = match translated {
                Some(id) => store.page(call.scope(), &id).await?,
                None => store.page_by_slug(call.scope(), slug).await?,
            };
            (vec![page], None)
        }
        "query" => {
            let chain = in_locale.as_ref().map_or(&[][..], |l| &l.chain[..]);
            let (pages, ranked) =
                search(call, args.query.as_deref(), args.status, limit(args.limit, 20, 100)?, chain).await?;
            ranking = Some(ranked);
            (pages, None)
        }
        _ => {
            let filter = PageFilter { parent_id: args.parent_id.clone(), status: args.status, ..Default::default() };
            let l = store.pages(call.scope(), &filter, limit(args.limit, 20, 100)?, args.cursor.as_deref()).await?;
            (l.items, l.next_cursor)
        }
    };
    let mut items = Vec::new();
    let mut overlay = in_locale.as_ref().map(Overlay::new);
    for p in &pages {
        let mut v = page_json(p, content);
        if content {
            let sections = store.sections(call.scope(), &p.id, 100, None).await?;
            v["sections"] = sections.items.iter().map(|s| section_json(s, true)).collect();
        }
        if args.include_children == Some(true) {
            let filter = PageFilter { parent_id: Some(p.id.clone()), ..Default::default() };
            let children = store.pages(call.scope(), &filter, 100, None).await?;
            v["children"] =
                children.items.iter().map(|c| json!({"id": c.id, "name": c.name, "slug": c.slug})).collect();
        }
        if let Some(overlay) = &mut overlay {
            overlay.page(call, &mut v).await?;
            for child in v.get_mut("children").and_then(Value::as_array_mut).into_iter().flatten() {
                overlay.page(call, child).await?;
            }
        }
        items.push(v);
    }
    let mut out = items_result(items, next);
    if let Some(r) = ranking {
        out["ranking"] = json!(r);
    }
    match sel.0 {
        "id" | "slug" => with_standing(call, EntityKind::Page, out).await,
        _ => Ok(out),
    }
}

/// Pages matching `query`, best first (at most `n`, only `status` if
/// given), and which ranking answered (`embed::rank`); in a locale, its
/// `chain`'s translations are searched in their languages first.
async fn search(
    call: &Call<'_>,
    query: Option<&str>,
    status: Option<PublishStatus>,
    n: u32,
    chain: &[String],
) -> Result<(Vec<Page>, &'static str), ToolError> {
    let query = crate::embed::checked_query(query)?;
    let (store, scope) = (call.store(), call.scope());
    // A status narrows after ranking: take more candidates then.
    let pool = if status.is_some() || call.services.embedder.is_some() {
        (n as usize).max(crate::embed::POOL)
    } else {
        n as usize
    };
    let filter = SearchFilter::default();
    let fulltext = store.search_ids_in(scope, Searched::Page, query, &filter, pool as u32, chain);
    let (ids, ranking) =
        crate::embed::rank(store, call.services.embedder.as_deref(), scope, "page", query, pool, fulltext).await?;
    let mut pages = store.ranked_pages(scope, &ids).await?;
    pages.retain(|p| status.is_none_or(|s| p.status == s));
    pages.truncate(n as usize);
    Ok((pages, ranking))
}

pub(crate) async fn create_page(call: &Call<'_>, a: CreatePageArgs) -> ToolResult {
    // Taken apart whole, so an argument added later cannot be left behind.
    let CreatePageArgs { name, slug, parent_id, is_protected, meta, indexing, status, locale } = a;
    let in_locale = locales::asked(call, locale.as_deref()).await?;
    let input = NewPage { name, slug, parent_id, is_protected, meta, indexing, sort_order: None, status };
    let page = call.store().create_page(&call.ctx.change_context(), call.scope(), input).await?;
    let msg = format!("Created page \"{}\" (/{}) as {}.", page.name, page.slug, page.status);
    let Some(l) = in_locale else { return Ok(item_result(page_json(&page, true), msg)) };
    let written = locales::write(call, &l, EntityKind::Page, &page.id, |fields| {
        fields.insert("name".into(), json!(page.name));
        fields.insert("slug".into(), json!(page.slug));
        if page.meta.as_object().is_some_and(|m| !m.is_empty()) {
            fields.insert("meta".into(), page.meta.clone());
        }
    })
    .await
    .map_err(|e| created_untranslated(e, "page", &page.id, &l))?;
    let msg = format!("{msg} Its {} translation holds the same texts, as a draft.", l.tag);
    page_in(call, &l, &page, &written, msg).await
}

/// The error of a create in a locale whose record was created but whose
/// translation was refused: says both.
pub(crate) fn created_untranslated(e: ToolError, noun: &str, id: &str, l: &InLocale) -> ToolError {
    ToolError::new(
        e.code,
        format!("created {noun} {id}, but its {} translation was refused: {}", l.tag, e.message),
        format!("Write the translation with the update tool and locale {}; the {noun} exists.", l.tag),
    )
}

/// The answer of a write in locale `l`: `page` as that locale reads it,
/// with the translation written.
async fn page_in(call: &Call<'_>, l: &InLocale, page: &Page, written: &Translation, msg: String) -> ToolResult {
    let mut item = page_json(page, true);
    Overlay::new(l).page(call, &mut item).await?;
    item["translation"] = locales::translation_json(written);
    Ok(item_result(item, msg))
}

/// Whether the caller is an AI surface, to which protected pages are closed.
fn ai_surface(call: &Call<'_>) -> bool {
    matches!(call.ctx.surface, Surface::Agent | Surface::Mcp)
}

pub(crate) async fn update_page(call: &Call<'_>, a: UpdatePageArgs) -> ToolResult {
    if let Some(l) = locales::asked(call, a.locale.as_deref()).await? {
        return update_page_in(call, &l, a).await;
    }
    let store = call.store();
    if a.is_protected.is_some() && ai_surface(call) {
        let current = store.page(call.scope(), &a.id).await?;
        if a.is_protected != Some(current.is_protected) {
            return Err(ToolError::new(
                ErrorCode::Forbidden,
                "isProtected can only be changed by a person",
                "Ask a person to change the protection in the back-office.",
            ));
        }
    }
    if let Some(slug) = &a.slug {
        let current = store.page(call.scope(), &a.id).await?;
        if current.is_protected && &current.slug != slug && ai_surface(call) {
            return Err(ToolError::new(
                ErrorCode::Forbidden,
                format!("page {} is protected: its slug cannot be changed here", current.slug),
                "Ask a person to change it in the back-office.",
            ));
        }
    }
    let UpdatePageArgs { id, name, slug, parent_id, is_protected, meta, indexing, status, sort_order, locale: _ } = a;
    let patch = PagePatch { name, slug, parent_id, is_protected, meta, indexing, sort_order, status };
    let page = store.update_page(&call.ctx.change_context(), call.scope(), &id, patch).await?;
    Ok(item_result(page_json(&page, true), format!("Updated page \"{}\" (version {}).", page.name, page.version)))
}

/// updatePage in a locale other than the default: the page's translation
/// there (its name, slug and meta).
async fn update_page_in(call: &Call<'_>, l: &InLocale, a: UpdatePageArgs) -> ToolResult {
    let UpdatePageArgs { id, name, slug, parent_id, is_protected, meta, indexing, status, sort_order, locale: _ } = a;
    let given = [
        ("parentId", parent_id.is_some()),
        ("isProtected", is_protected.is_some()),
        ("indexing", indexing.is_some()),
        ("status", status.is_some()),
        ("sortOrder", sort_order.is_some()),
    ];
    locales::only_localized(l, "page", &given, own_fields(EntityKind::Page))?;
    let store = call.store();
    let page = store.page(call.scope(), &id).await?;
    if slug.is_some() && page.is_protected && ai_surface(call) {
        return Err(ToolError::new(
            ErrorCode::Forbidden,
            format!("page {} is protected: its slug cannot be changed here, in any locale", page.slug),
            "Ask a person to change it in the back-office.",
        ));
    }
    let written = locales::write(call, l, EntityKind::Page, &page.id, |fields| {
        if let Some(name) = name {
            fields.insert("name".into(), json!(name));
        }
        if let Some(slug) = slug {
            fields.insert("slug".into(), json!(slug));
        }
        if let Some(patch) = meta {
            let mut merged = fields.get("meta").filter(|m| m.is_object()).cloned().unwrap_or_else(|| page.meta.clone());
            quire_core::merge::merge_patch(&mut merged, &patch);
            fields.insert("meta".into(), merged);
        }
    })
    .await?;
    let msg = format!(
        "Wrote the {} translation of page {} ({}, version {}).",
        l.tag, page.slug, written.status, written.version
    );
    page_in(call, l, &page, &written, msg).await
}

pub(crate) async fn delete(call: &Call<'_>, a: DeletePageArgs) -> ToolResult {
    archive_execute(call, EntityKind::Page, &a.ids, "page").await
}

/// Protection holds for every page the cascade would take along.
pub(crate) async fn preview_delete(call: &Call<'_>, a: DeletePageArgs) -> Result<Preview, ToolError> {
    let preview = archive_preview(call, EntityKind::Page, &a.ids, "page").await?;
    if ai_surface(call) {
        // Protection holds for every page the cascade would take along.
        for item in preview.fingerprint.iter().filter(|(kind, _, _)| *kind == EntityKind::Page) {
            let page = call.store().page(call.scope(), &item.1).await?;
            if page.is_protected {
                return Err(ToolError::new(
                    ErrorCode::Forbidden,
                    format!("page {} is protected and cannot be deleted here", page.slug),
                    "Ask a person to delete it, or to remove its protection.",
                ));
            }
        }
    }
    Ok(preview)
}
