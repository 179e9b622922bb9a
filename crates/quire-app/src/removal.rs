//! Archiving as a person does it from a screen: first what an archive would
//! take along (a page's sections and child pages), to be confirmed, then
//! the archive itself through [`Content::archive`] — the same function and
//! the same `authorize` as REST's `DELETE`; and, for a record no longer
//! live, the archive that holds it, so its screen can say so.

use crate::content::Content;
use crate::{AppResult, Permission, authorize};
use quire_core::model::{Archive, ArchivedItem, EntityKind};

/// Most archives read, newest first, to find the one holding a record.
const SEARCHED_ARCHIVES: u32 = 500;

/// Archives read per listing while searching.
const PER_READ: u32 = 100;

impl Content {
    /// What archiving each of `ids` (records of `kind`) would take along,
    /// root first, without changing anything: one list per root (an id
    /// already taken along by an earlier one has none). Refused as the
    /// archive itself would be: for an actor who may not archive `kind`, or
    /// for a record others still depend on.
    pub async fn archive_preview(&self, kind: EntityKind, ids: &[String]) -> AppResult<Vec<Vec<ArchivedItem>>> {
        authorize(self.actor(), Permission::Delete(kind))?;
        Ok(self.store().archive_preview(&self.actor().scope, kind, ids).await?)
    }

    /// The newest archive that holds record `id` of `kind` and has not been
    /// restored (the record may be its root or something it took along);
    /// none when the record is live or was never archived (among the
    /// newest archives).
    pub async fn archive_holding(&self, kind: EntityKind, id: &str) -> AppResult<Option<Archive>> {
        authorize(self.actor(), Permission::Read)?;
        let scope = &self.actor().scope;
        let mut cursor: Option<String> = None;
        let mut read = 0;
        while read < SEARCHED_ARCHIVES {
            let listing = self.store().archives(scope, None, PER_READ, cursor.as_deref()).await?;
            read += PER_READ;
            let found = listing
                .items
                .into_iter()
                .find(|a| a.restored_at.is_none() && a.items.iter().any(|i| i.entity == kind && i.id == id));
            if found.is_some() {
                return Ok(found);
            }
            match listing.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        Ok(None)
    }
}

/// What an archive of `items` (root first, as [`Content::archive_preview`]
/// answers) takes along besides its root, counted by kind in the order they
/// first appear: `[(Section, 2), (Page, 1)]`.
pub fn taken_along(items: &[ArchivedItem]) -> Vec<(EntityKind, usize)> {
    let mut out: Vec<(EntityKind, usize)> = Vec::new();
    for item in items.iter().skip(1) {
        match out.iter_mut().find(|(k, _)| *k == item.entity) {
            Some((_, n)) => *n += 1,
            None => out.push((item.entity, 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(entity: EntityKind, id: &str) -> ArchivedItem {
        ArchivedItem { entity, id: id.into(), label: id.into() }
    }

    #[test]
    fn what_goes_along_is_counted_by_kind_without_the_root() {
        let items = [
            item(EntityKind::Page, "p"),
            item(EntityKind::Section, "s1"),
            item(EntityKind::Page, "child"),
            item(EntityKind::Section, "s2"),
        ];
        assert_eq!(taken_along(&items), [(EntityKind::Section, 2), (EntityKind::Page, 1)]);
        assert!(taken_along(&items[..1]).is_empty());
    }
}
