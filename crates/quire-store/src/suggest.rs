//! Light lists of what a picker may offer (a menu item's target, a link):
//! ids with the words a person recognises them by, one query per kind,
//! reading no content.

use crate::db;
use crate::{Result, Scope, Store};

/// A record a picker offers: its id and how a person knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    /// The record's id.
    pub id: String,
    /// Its name (a page's name, an entry's title, an image's alt text or
    /// file name).
    pub label: String,
    /// Where it sits: a page's slug, an entry's collection name, an image's
    /// URL.
    pub place: String,
}

impl Store {
    /// Up to `limit` live pages, in tree order (root pages' order, then ids).
    pub async fn page_suggestions(&self, scope: &Scope, limit: u32) -> Result<Vec<Suggestion>> {
        self.listed(
            "SELECT id, name AS label, slug AS place FROM pages WHERE archive_id IS NULL AND site_id = ?1 AND env = ?2
             ORDER BY sort_order, id LIMIT ?3",
            scope,
            limit,
        )
        .await
    }

    /// Up to `per_collection` newest live entries of each of the first
    /// `collections` live collections (by slug), placed by collection name.
    pub async fn entry_suggestions(
        &self,
        scope: &Scope,
        collections: u32,
        per_collection: u32,
    ) -> Result<Vec<Suggestion>> {
        let scope = scope.clone();
        self.db
            .read(move |c| {
                let listed = db::query(
                    "SELECT id, name FROM collections WHERE archive_id IS NULL AND site_id = ?1 AND env = ?2
                     ORDER BY slug LIMIT ?3",
                )
                .bind_scope(&scope)
                .bind(i64::from(collections))
                .fetch_all(c)?;
                let mut out = Vec::new();
                for col in &listed {
                    let (id, name): (String, String) = (col.try_get("id")?, col.try_get("name")?);
                    let rows = db::query(
                        "SELECT id, title FROM entries
                         WHERE archive_id IS NULL AND site_id = ?1 AND env = ?2 AND collection_id = ?3
                         ORDER BY id DESC LIMIT ?4",
                    )
                    .bind_scope(&scope)
                    .bind(&id)
                    .bind(i64::from(per_collection))
                    .fetch_all(c)?;
                    for r in &rows {
                        out.push(Suggestion { id: r.try_get("id")?, label: r.try_get("title")?, place: name.clone() });
                    }
                }
                Ok(out)
            })
            .await
    }

    /// Up to `limit` newest live images, named by alt text or file name.
    pub async fn image_suggestions(&self, scope: &Scope, limit: u32) -> Result<Vec<Suggestion>> {
        self.listed(
            "SELECT id, coalesce(nullif(alt, ''), filename) AS label, url AS place FROM images
             WHERE archive_id IS NULL AND site_id = ?1 AND env = ?2 ORDER BY id DESC LIMIT ?3",
            scope,
            limit,
        )
        .await
    }

    /// The suggestions `sql` selects (`id`, `label`, `place`), binding the
    /// scope's site and environment and `limit` as `?1`–`?3`.
    async fn listed(&self, sql: &'static str, scope: &Scope, limit: u32) -> Result<Vec<Suggestion>> {
        let scope = scope.clone();
        self.db
            .read(move |c| {
                let rows = db::query(sql).bind_scope(&scope).bind(i64::from(limit)).fetch_all(c)?;
                rows.iter()
                    .map(|r| {
                        Ok(Suggestion { id: r.try_get("id")?, label: r.try_get("label")?, place: r.try_get("place")? })
                    })
                    .collect()
            })
            .await
    }
}
