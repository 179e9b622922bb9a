//! What a person's start screen gathers besides approvals and recent
//! changes: the documents edited lately whose drafts are not on the site
//! (never published, or changed since), and the images without alt text.
//! Each is read in a few reads for the whole list, not one per row.

use crate::content::Content;
use crate::{AppResult, Permission, authorize};
use quire_core::model::{EntityKind, Image, ImageStatus};
use quire_store::{ChangeFilter, SearchFilter};
use serde_json::Value;
use std::collections::HashMap;

/// Changes read to find the documents edited lately.
const RECENT_CHANGES: u32 = 200;

/// Images read to find those without alt text.
const IMAGES_READ: u32 = 200;

/// A document whose draft the public site does not show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unpublished {
    /// A page or an entry.
    pub entity: EntityKind,
    /// Its id.
    pub id: String,
    /// Its name or title.
    pub label: String,
    /// Whether an earlier version is on the site (its draft changed since).
    pub published: bool,
}

impl Content {
    /// Up to `limit` pages and entries changed lately, newest change first,
    /// whose draft is not what the public site shows.
    pub async fn unpublished_drafts(&self, limit: usize) -> AppResult<Vec<Unpublished>> {
        authorize(self.actor(), Permission::Read)?;
        let (store, scope) = (self.store(), &self.actor().scope);
        let changes = store.changes(scope, &ChangeFilter::default(), RECENT_CHANGES, None).await?.items;
        // The documents of those changes, newest first: a section's is its page.
        let mut documents: Vec<(EntityKind, String)> = Vec::new();
        for c in &changes {
            let document = match c.entity {
                EntityKind::Page | EntityKind::Entry => Some((c.entity, c.entity_id.clone())),
                EntityKind::Section => c
                    .after
                    .as_ref()
                    .or(c.before.as_ref())
                    .and_then(|v| v.get("pageId"))
                    .and_then(Value::as_str)
                    .map(|p| (EntityKind::Page, p.to_string())),
                _ => None,
            };
            if let Some(d) = document.filter(|d| !documents.contains(d)) {
                documents.push(d);
            }
        }
        let ids_of =
            |kind| documents.iter().filter(|(k, _)| *k == kind).map(|(_, id)| id.clone()).collect::<Vec<String>>();
        // Only live ones can be previewed; they are named by their name or title.
        let mut names: HashMap<String, String> = HashMap::new();
        let mut pages = Vec::new();
        for p in store.ranked_pages(scope, &ids_of(EntityKind::Page)).await? {
            names.insert(p.id.clone(), p.name);
            pages.push(p.id);
        }
        let mut entries = Vec::new();
        for e in store.ranked_entries(scope, &ids_of(EntityKind::Entry), &SearchFilter::default()).await? {
            names.insert(e.id.clone(), e.title);
            entries.push(e.id);
        }
        let mut found = Vec::new();
        for (kind, ids) in [(EntityKind::Page, pages), (EntityKind::Entry, entries)] {
            if ids.is_empty() {
                continue;
            }
            let (previews, _) = store.publishing_preview(scope, kind, &ids).await?;
            found.extend(previews.into_iter().filter(|p| !p.publication.published || p.publication.changed).map(|p| {
                let label = names.get(&p.id).cloned().unwrap_or(p.label);
                Unpublished { entity: kind, id: p.id, label, published: p.publication.published }
            }));
        }
        // Back in the order of their latest change.
        found.sort_by_key(|u| documents.iter().position(|(k, id)| *k == u.entity && *id == u.id));
        found.truncate(limit);
        Ok(found)
    }

    /// Up to `limit` of the newest ready images without alt text.
    pub async fn images_without_alt(&self, limit: usize) -> AppResult<Vec<Image>> {
        authorize(self.actor(), Permission::Read)?;
        let images =
            self.store().images(&self.actor().scope, Some(ImageStatus::Completed), IMAGES_READ, None).await?.items;
        Ok(images.into_iter().filter(|i| i.alt.as_deref().is_none_or(|a| a.trim().is_empty())).take(limit).collect())
    }
}
