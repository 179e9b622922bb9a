//! What a person reads instead of ids: who made a change (a person by name,
//! a token by its name) and which record it was (a page's name, an entry's
//! title, a section as its template on its page), for the screens that list
//! changes, archives and approvals. Each is read for a whole screen at
//! once: one read per kind of record on it, not one per row.

use crate::content::Content;
use crate::{AppResult, Permission, authorize};
use quire_core::model::EntityKind;
use quire_store::SearchFilter;
use std::collections::{BTreeSet, HashMap};

/// How a person knows a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordName {
    /// Its name, title or path; for a section, its template's name and its page's.
    pub label: String,
    /// Whether it is live (not archived, not gone): a screen links only to those.
    pub live: bool,
    /// For a translation: its document's kind and id, and its locale.
    pub translates: Option<(EntityKind, String, String)>,
}

/// A record a screen names: its kind and id.
pub type RecordRef = (EntityKind, String);

/// Most records of one kind named per call (the rest keep their ids).
const MOST: usize = 200;

/// Most images or menu items read in one go to name those asked about.
const LISTED: u32 = 500;

impl Content {
    /// The names of `records`, as the actor may read them: live records by
    /// their own name, archived ones by the name their archive recorded
    /// (`live` false). A record found nowhere is left out.
    pub async fn record_names(&self, records: &[RecordRef]) -> AppResult<HashMap<RecordRef, RecordName>> {
        authorize(self.actor(), Permission::Read)?;
        let store = self.store();
        let scope = &self.actor().scope;
        let mut wanted: HashMap<EntityKind, BTreeSet<String>> = HashMap::new();
        for (kind, id) in records {
            let ids = wanted.entry(*kind).or_default();
            if ids.len() < MOST {
                ids.insert(id.clone());
            }
        }
        // A translation is named by its document (asked for with the
        // rest) and its locale.
        let translations = match wanted.get(&EntityKind::Translation) {
            Some(w) => store.translated_documents(scope, &w.iter().cloned().collect::<Vec<_>>()).await?,
            None => Vec::new(),
        };
        for (_, kind, id, _) in &translations {
            let ids = wanted.entry(*kind).or_default();
            if ids.len() < MOST {
                ids.insert(id.clone());
            }
        }
        let ids_of = |kind| wanted.get(&kind).map(|s| s.iter().cloned().collect::<Vec<_>>()).unwrap_or_default();
        let mut out = HashMap::new();
        let mut live = |kind, id: String, label: String| {
            out.insert((kind, id), RecordName { label, live: true, translates: None });
        };

        // Sections are named by their template and page, read below with
        // the pages and templates asked for.
        let mut sections = Vec::new();
        for id in ids_of(EntityKind::Section) {
            if let Ok(s) = store.section(scope, &id).await {
                sections.push(s);
            }
        }
        let mut page_ids = ids_of(EntityKind::Page);
        page_ids.extend(sections.iter().map(|s| s.page_id.clone()));
        page_ids.sort();
        page_ids.dedup();
        let mut page_names = HashMap::new();
        if !page_ids.is_empty() {
            for p in store.ranked_pages(scope, &page_ids).await? {
                page_names.insert(p.id.clone(), p.name.clone());
            }
        }
        let templates = if sections.is_empty() && !wanted.contains_key(&EntityKind::SectionTemplate) {
            Vec::new()
        } else {
            store.templates(scope, 500, None).await?.items
        };
        for s in sections {
            let template = templates.iter().find(|t| t.key == s.template_key).map_or(&s.template_key, |t| &t.name);
            let label = match page_names.get(&s.page_id) {
                Some(page) => format!("{template} on {page}"),
                None => template.clone(),
            };
            live(EntityKind::Section, s.id, label);
        }
        for id in ids_of(EntityKind::Page) {
            if let Some(name) = page_names.get(&id) {
                live(EntityKind::Page, id, name.clone());
            }
        }
        for t in
            templates.iter().filter(|t| wanted.get(&EntityKind::SectionTemplate).is_some_and(|w| w.contains(&t.id)))
        {
            live(EntityKind::SectionTemplate, t.id.clone(), t.name.clone());
        }
        let entry_ids = ids_of(EntityKind::Entry);
        if !entry_ids.is_empty() {
            for e in store.ranked_entries(scope, &entry_ids, &SearchFilter::default()).await? {
                live(EntityKind::Entry, e.id, e.title);
            }
        }
        // Images and menu items: the newest of the site in one read each,
        // then any older one asked about by itself.
        if let Some(w) = wanted.get(&EntityKind::Image) {
            let listed = store.image_suggestions(scope, LISTED).await?;
            let mut named: HashMap<String, String> =
                listed.into_iter().filter(|i| w.contains(&i.id)).map(|i| (i.id, i.label)).collect();
            let older: Vec<&String> = w.iter().filter(|id| !named.contains_key(*id)).collect();
            for id in older {
                if let Ok(i) = store.image(scope, id).await {
                    named.insert(i.id, i.alt.filter(|a| !a.trim().is_empty()).unwrap_or(i.filename));
                }
            }
            for (id, label) in named {
                live(EntityKind::Image, id, label);
            }
        }
        if let Some(w) = wanted.get(&EntityKind::NavItem) {
            // Every item's label holds the empty string: all items, in one read.
            let listed = store.search_nav_items(scope, None, "", LISTED).await?;
            let mut named: HashMap<String, String> =
                listed.into_iter().filter(|i| w.contains(&i.id)).map(|i| (i.id, i.label)).collect();
            let older: Vec<&String> = w.iter().filter(|id| !named.contains_key(*id)).collect();
            for id in older {
                if let Ok(i) = store.nav_item(scope, id).await {
                    named.insert(i.id, i.label);
                }
            }
            for (id, label) in named {
                live(EntityKind::NavItem, id, label);
            }
        }
        if let Some(w) = wanted.get(&EntityKind::Navigation) {
            for n in store.navigations(scope, 500, None).await?.items.into_iter().filter(|n| w.contains(&n.id)) {
                live(EntityKind::Navigation, n.id, n.name);
            }
        }
        if let Some(w) = wanted.get(&EntityKind::Collection) {
            for c in store.collections(scope, 500, None).await?.items.into_iter().filter(|c| w.contains(&c.id)) {
                live(EntityKind::Collection, c.id, c.name);
            }
        }
        if let Some(w) = wanted.get(&EntityKind::Agent) {
            for a in store.agents(scope).await?.into_iter().filter(|a| w.contains(&a.id)) {
                live(EntityKind::Agent, a.id, a.name);
            }
        }
        if let Some(w) = wanted.get(&EntityKind::Context) {
            for c in store.contexts(scope).await?.into_iter().filter(|c| w.contains(&c.id)) {
                live(EntityKind::Context, c.id, c.name);
            }
        }
        if let Some(w) = wanted.get(&EntityKind::Workspace) {
            for id in w {
                if let Ok(ws) = store.workspace(scope, id).await {
                    live(EntityKind::Workspace, ws.id, ws.name);
                }
            }
        }
        // A note's id is its path in the vault: that is its name.
        for path in ids_of(EntityKind::Note) {
            live(EntityKind::Note, path.clone(), path);
        }

        for (id, kind, record, locale) in translations {
            if let Some(document) = out.get(&(kind, record.clone())) {
                let label = format!("{} ({locale})", document.label);
                let name = RecordName { label, live: true, translates: Some((kind, record, locale)) };
                out.insert((EntityKind::Translation, id), name);
            }
        }

        // What is not live was archived (or is gone): its archive names it.
        let missing = records.iter().any(|r| !out.contains_key(r));
        if missing {
            for archive in store.archives(scope, None, 200, None).await?.items {
                for item in archive.items {
                    out.entry((item.entity, item.id)).or_insert(RecordName {
                        label: item.label,
                        live: false,
                        translates: None,
                    });
                }
            }
        }
        Ok(out)
    }

    /// What the change log's actors are called: a person (`user:<id>`) by
    /// their name, an API token of the site (`token:<id>`) by its name, the
    /// CLI's local administrator and the system in words. An actor not
    /// found (a revoked token, a person since removed) is left out.
    pub async fn actor_names(&self, actors: &[String]) -> AppResult<HashMap<String, String>> {
        authorize(self.actor(), Permission::Read)?;
        let store = self.store();
        let mut out = HashMap::new();
        let mut tokens = None;
        let mut asked: Vec<&String> = actors.iter().collect();
        asked.sort();
        asked.dedup();
        for actor in asked.into_iter().take(MOST) {
            let name = if let Some(id) = actor.strip_prefix("user:") {
                match store.user(id).await {
                    Ok(u) if !u.display_name.trim().is_empty() => Some(u.display_name),
                    Ok(u) => Some(u.email),
                    Err(_) => None,
                }
            } else if let Some(id) = actor.strip_prefix("token:") {
                if tokens.is_none() {
                    tokens = Some(store.tokens(&self.actor().scope.site_id).await?);
                }
                tokens.iter().flatten().find(|t| t.id == id).map(|t| format!("API token “{}”", t.name))
            } else {
                match actor.as_str() {
                    "local:admin" => Some("the local administrator (CLI)".to_string()),
                    "system" => Some("Quire".to_string()),
                    _ => None,
                }
            };
            if let Some(name) = name {
                out.insert(actor.clone(), name);
            }
        }
        Ok(out)
    }
}
