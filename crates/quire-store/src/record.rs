//! The [`Record`] trait: what the generic create / update / archive / revert
//! machinery needs to know about each kind of content record.

use crate::db::{self, Conn, QueryBuilder, Row};
use crate::{Result, Scope, StoreError};
use chrono::{DateTime, Utc};
use quire_core::model::EntityKind;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A content record the store can create, update, archive and revert.
pub(crate) trait Record:
    Serialize + DeserializeOwned + Clone + PartialEq + Send + Sync + Unpin + 'static
{
    /// Which kind it is.
    const KIND: EntityKind;
    /// Its table.
    const TABLE: &'static str;
    /// `SELECT * FROM <table> WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL`.
    const SELECT_LIVE: &'static str;

    /// Its id.
    fn id(&self) -> &str;
    /// A readable name: slug, key, title or label.
    fn label(&self) -> String;
    /// Version and last-change time, bumped on every write.
    fn stamp(&mut self) -> (&mut i64, &mut DateTime<Utc>);
    /// Moves to the next version, stamped now.
    fn bump(&mut self) {
        let (version, updated_at) = self.stamp();
        *version += 1;
        *updated_at = Utc::now();
    }
    /// Takes the version and last-change time of `other` (a snapshot being
    /// compared with, or written over, the current record).
    fn stamp_as(&mut self, other: &mut Self) {
        let (version, updated_at) = other.stamp();
        let (version, updated_at) = (*version, *updated_at);
        let (v, u) = self.stamp();
        *v = version;
        *u = updated_at;
    }
    /// Decodes a row of its table.
    fn from_row(row: &Row) -> Result<Self>;
    /// Its columns and their values, `id` first; the scope's `site_id` and
    /// `env` are not among them.
    fn columns(&self) -> Vec<(&'static str, db::Value)>;
    /// Inserts it into the scope.
    fn insert(&self, conn: &Conn, scope: &Scope) -> Result<()> {
        let columns = self.columns();
        let mut sql = QueryBuilder::new(format!("INSERT INTO {} (site_id, env", Self::TABLE));
        for (name, _) in &columns {
            sql.push(", ").push(name);
        }
        sql.push(") VALUES (").push_bind(scope.site_id.as_str()).push(", ").push_bind(scope.env.as_str());
        for (_, value) in columns {
            sql.push(", ").push_bind(value);
        }
        sql.push(")").build().execute(conn)?;
        Ok(())
    }
    /// Writes the columns whose values differ from `before`'s (the stored
    /// record it was made from), if the stored version is still `before`'s
    /// (optimistic locking); false when another write got there first.
    /// Columns left alone are not written, so neither are the index
    /// entries made of them.
    fn write(&self, conn: &Conn, before: &Self) -> Result<bool> {
        let (old, new) = (before.columns(), self.columns());
        let version = old.iter().find(|(name, _)| *name == "version").map(|(_, v)| v.clone());
        let mut sql = QueryBuilder::new(format!("UPDATE {} SET ", Self::TABLE));
        let mut first = true;
        for ((name, value), (_, was)) in new.into_iter().zip(old) {
            if value == was {
                continue;
            }
            if !first {
                sql.push(", ");
            }
            first = false;
            sql.push(name).push(" = ").push_bind(value);
        }
        if first {
            return Ok(true);
        }
        let version = version.ok_or_else(|| StoreError::Corrupt(format!("{} has no version column", Self::TABLE)))?;
        sql.push(" WHERE id = ").push_bind(self.id()).push(" AND version = ").push_bind(version);
        Ok(sql.build().execute(conn)?.rows_affected() == 1)
    }
    /// Checks every rule that needs the database (references, uniqueness,
    /// content against templates); changes nothing. `before` is the stored
    /// version on an update: references and unique keys it already had were
    /// checked when they were written and are not queried again.
    fn check(&self, conn: &Conn, scope: &Scope, before: Option<&Self>) -> Result<()>;
}

/// A record with a position among siblings (`sort_order`).
pub(crate) trait Positioned {
    /// The SQL condition that picks its siblings (binds from `?3` on) and
    /// the values bound to it.
    fn siblings(&self) -> (&'static str, Vec<Option<String>>);
    /// Sets its position.
    fn set_position(&mut self, n: i64);
}

impl Positioned for quire_core::model::Page {
    fn siblings(&self) -> (&'static str, Vec<Option<String>>) {
        ("parent_id IS ?3", vec![self.parent_id.clone()])
    }
    fn set_position(&mut self, n: i64) {
        self.sort_order = n;
    }
}

impl Positioned for quire_core::model::PageSection {
    fn siblings(&self) -> (&'static str, Vec<Option<String>>) {
        ("page_id = ?3", vec![Some(self.page_id.clone())])
    }
    fn set_position(&mut self, n: i64) {
        self.sort_order = n;
    }
}

impl Positioned for quire_core::model::NavItem {
    fn siblings(&self) -> (&'static str, Vec<Option<String>>) {
        ("navigation_id = ?3 AND parent_id IS ?4", vec![Some(self.navigation_id.clone()), self.parent_id.clone()])
    }
    fn set_position(&mut self, n: i64) {
        self.sort_order = n;
    }
}

/// The table holding records of `kind`.
pub(crate) fn table_of(kind: quire_core::model::EntityKind) -> &'static str {
    use quire_core::model::*;
    match kind {
        EntityKind::Page => Page::TABLE,
        EntityKind::Section => PageSection::TABLE,
        EntityKind::SectionTemplate => SectionTemplate::TABLE,
        EntityKind::Collection => Collection::TABLE,
        EntityKind::Entry => Entry::TABLE,
        EntityKind::Image => Image::TABLE,
        EntityKind::Navigation => Navigation::TABLE,
        EntityKind::NavItem => NavItem::TABLE,
        EntityKind::Agent => "agents",
        // Notes live in the vault on disk; no database table holds them.
        EntityKind::Note => "vault_notes_are_files",
    }
}

/// Loads a live record of kind `T` by id.
pub(crate) fn load_live<T: Record>(conn: &Conn, scope: &Scope, id: &str) -> Result<Option<T>> {
    let row = db::query(T::SELECT_LIVE).bind(id).bind(&scope.site_id).bind(&scope.env).fetch_optional(conn)?;
    row.as_ref().map(T::from_row).transpose()
}

/// Loads a live record or fails with not-found.
pub(crate) fn require_live<T: Record>(conn: &Conn, scope: &Scope, id: &str) -> Result<T> {
    load_live::<T>(conn, scope, id)?.ok_or_else(|| crate::StoreError::not_found(T::KIND.as_str(), id))
}

/// Reads a JSON text column.
pub(crate) fn json_col<T: DeserializeOwned>(row: &Row, col: &str) -> Result<T> {
    let text: String = row.try_get(col)?;
    Ok(serde_json::from_str(&text)?)
}

/// Reads a nullable JSON text column.
pub(crate) fn json_opt<T: DeserializeOwned>(row: &Row, col: &str) -> Result<Option<T>> {
    let text: Option<String> = row.try_get(col)?;
    Ok(text.map(|t| serde_json::from_str(&t)).transpose()?)
}

/// Reads a string enum column.
pub(crate) fn enum_col<T>(
    row: &Row,
    col: &str,
    parse: fn(&str, &str) -> Result<T, quire_core::FieldError>,
) -> Result<T> {
    let text: String = row.try_get(col)?;
    parse(col, &text).map_err(|e| crate::StoreError::Corrupt(e.to_string()))
}

/// JSON text of a value, for binding.
pub(crate) fn to_json<T: Serialize>(value: &T) -> String {
    // Invariant: our model types serialize infallibly (no non-string map keys).
    serde_json::to_string(value).expect("model types serialize to JSON")
}
