//! The [`Record`] trait and each kind's [`Entity`]: what the generic
//! machinery — create, update with optimistic versions, archive with its
//! cascade, restore with conflict detection, revisions and undo — needs to
//! know about a kind of record, said once per kind in `records.rs`.
//!
//! Everything here is generic over the description: the statements that
//! read a live record, insert one, write the columns that changed, check
//! references and unique keys, and walk a tree of parents are built from
//! it, and [`with_record!`] is the one place an [`EntityKind`] becomes a
//! type.

use crate::db::{self, Conn, QueryBuilder, Row};
use crate::log::{logged, snapshot};
use crate::{Result, Scope, StoreError};
use chrono::{DateTime, Utc};
use quire_core::model::{ChangeAction, ChangeContext, EntityKind, WireEnum};
use quire_core::rules::ValueRules;
use quire_core::{FieldError, ValidationErrors};
use serde::Serialize;
use serde::de::DeserializeOwned;

mod published;
pub use published::Version;
pub(crate) use published::{
    Document, Published, after_write, archived, copies_alike, document, lock_document, part_of, publish_document,
    put_back, republish_records, restored, root_of, same_content, unpublish_document,
};

/// A kind of record, as stored.
#[derive(Debug)]
pub(crate) struct Entity {
    /// The kind, as the change log and the archive name it.
    pub kind: EntityKind,
    /// Its table; every row also holds `site_id` and `env`.
    pub table: &'static str,
    /// How messages name one (`page`, `nav item`).
    pub noun: &'static str,
    /// Whether deleting archives it (an `archive_id` column); agents are
    /// disabled instead and have none.
    pub archived: bool,
    /// Whether it has a place among its siblings (`sort_order`).
    pub positioned: bool,
    /// The key no two live records share, if any.
    pub unique: Option<Unique>,
    /// The records it refers to, which must be live.
    pub parents: &'static [Parent],
    /// The records archived along with it, in the order they are listed.
    pub children: &'static [Child],
    /// Whether a row stays small whatever its authors write (no body of
    /// theirs, as a post's or a section's content is): one such record is
    /// read on the caller's thread ([`crate::db::Db::read_short`]).
    pub small: bool,
    /// Where the published copies of its records are, if the public site
    /// shows them (see [`published`]).
    pub published: Option<Published>,
    /// A JSON column a create leaves to the change log, which holds it
    /// whole in the create's snapshot (under the same name): the row keeps
    /// it empty and names the change in `<column>_from`, and its published
    /// copy copies both. A later write of the column keeps it in the row
    /// again. Reads take it from wherever it is ([`select_all`]).
    pub kept_in_log: Option<&'static str>,
}

impl Entity {
    /// A kind stored as most are: archived when deleted, with no place among
    /// siblings, no unique key, no references and no children, in small
    /// rows, and not on the public site. Each kind in `records.rs` names
    /// only what differs, with struct update syntax.
    pub(crate) const fn new(kind: EntityKind, table: &'static str, noun: &'static str) -> Entity {
        Entity {
            kind,
            table,
            noun,
            archived: true,
            positioned: false,
            unique: None,
            parents: &[],
            children: &[],
            small: true,
            published: None,
            kept_in_log: None,
        }
    }
}

/// The SQL of the column `column` of a row of `table` (a table or its
/// alias) holding records of a kind whose [`Entity::kept_in_log`] it is:
/// the row's own value, or while that is empty the change's snapshot's.
pub(crate) fn from_log(conn: &Conn, table: &str, column: &str) -> String {
    let logged = if conn.is_postgres() {
        format!("(lc.after::json -> '{column}')::text")
    } else {
        format!("json_extract(lc.after, '$.{column}')")
    };
    format!(
        "CASE WHEN {table}.{column} <> '' THEN {table}.{column} \
         ELSE (SELECT {logged} FROM changes lc WHERE lc.id = {table}.{column}_from) END"
    )
}

/// The columns `SELECT` reads of the rows of `table` (or its alias) holding
/// records of `e`: every column (`*`), with the column the change log may
/// keep (see [`Entity::kept_in_log`]) read first under its own name, from
/// wherever it is.
pub(crate) fn select_all(e: &Entity, conn: &Conn, table: &str) -> String {
    match e.kept_in_log {
        Some(column) => format!("{} AS {column}, {table}.*", from_log(conn, table, column)),
        None => "*".to_string(),
    }
}

/// A column whose value no two live records share.
#[derive(Debug)]
pub(crate) struct Unique {
    /// The column (`slug`); messages name it as the field.
    pub column: &'static str,
    /// Unique among the records with the same value here (an entry's slug
    /// within its collection), or else within the whole scope.
    pub within: Option<&'static str>,
}

/// A reference to a record that must be live.
#[derive(Debug)]
pub(crate) struct Parent {
    /// The column holding its id; null means none.
    pub column: &'static str,
    /// The field errors name (`pageId`).
    pub field: &'static str,
    /// What it refers to. A reference to the same kind makes a tree, which
    /// must not loop.
    pub kind: EntityKind,
    /// How a restore's conflict names it (`parent page`).
    pub role: &'static str,
}

/// Records that are archived along with their parent.
#[derive(Debug)]
pub(crate) struct Child {
    /// Their kind.
    pub kind: EntityKind,
    /// Their column holding the parent's id.
    pub column: &'static str,
    /// Only those at the top level (`parent_id IS NULL`): the rest are
    /// taken along by their own parent.
    pub top_level: bool,
}

/// A record's columns and their values, `id` first; the scope's `site_id`
/// and `env` are not among them.
pub(crate) type Columns = Vec<(&'static str, db::Value)>;

static NULL: db::Value = db::Value::Null;

/// The value of `column` among `columns`.
fn value_of<'a>(columns: &'a Columns, column: &str) -> &'a db::Value {
    columns.iter().find(|(name, _)| *name == column).map_or(&NULL, |(_, v)| v)
}

fn text_of(value: &db::Value) -> Option<&str> {
    match value {
        db::Value::Text(s) => Some(s),
        _ => None,
    }
}

/// `AND archive_id IS NULL` where records of `entity` are archived.
fn live(entity: &Entity) -> &'static str {
    if entity.archived { " AND archive_id IS NULL" } else { "" }
}

/// A record the store can create, update, archive and revert.
pub(crate) trait Record:
    ValueRules + Serialize + DeserializeOwned + Clone + PartialEq + Send + Sync + Unpin + 'static
{
    /// How it is stored.
    const ENTITY: Entity;
    /// Which kind it is.
    const KIND: EntityKind = Self::ENTITY.kind;
    /// Its table.
    const TABLE: &'static str = Self::ENTITY.table;

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
    /// Its columns' names, in the order of [`Record::columns`].
    const COLUMNS: &'static [&'static str];
    /// Decodes a row of its table.
    fn from_row(row: &Row) -> Result<Self>;
    /// Its columns and their values (see [`Columns`]).
    fn columns(&self) -> Columns;
    /// The rules of its kind that need the database beyond references and
    /// unique keys (content against a template, a navigation's room): the
    /// field errors found are answered, a conflict is the error. `before` is
    /// the stored record on an update; what it already had was checked when
    /// it was written.
    fn check_more(&self, _conn: &Conn, _scope: &Scope, _before: Option<&Self>) -> Result<Vec<FieldError>> {
        Ok(Vec::new())
    }
    /// What else must hold before it comes back from the archive.
    fn check_restore(&self, _conn: &Conn, _scope: &Scope) -> Result<()> {
        Ok(())
    }
    /// What must hold before it is archived (nothing live depends on it).
    fn check_archive(&self, _conn: &Conn, _scope: &Scope) -> Result<()> {
        Ok(())
    }
}

/// Declares a record's columns once: `from_row` and `columns` both follow
/// the list, which every record's `id` starts and its `version`,
/// `created_at` and `updated_at` end. A column is a field of the same name,
/// stored as itself, as JSON text (`json`, `json_opt` for an optional
/// value) or as its wire name (`wire`, an enum).
macro_rules! columns {
    ($ty:ident { $($field:ident $(: $codec:ident)?),+ $(,)? }) => {
        columns!(@all $ty { id, $($field $(: $codec)?,)+ version, created_at, updated_at, });
    };
    (@all $ty:ident { $($field:ident $(: $codec:ident)?,)+ }) => {
        const COLUMNS: &'static [&'static str] = &[$(stringify!($field)),+];
        fn from_row(row: &$crate::db::Row) -> $crate::Result<Self> {
            Ok($ty { $($field: columns!(@get row, $field $(, $codec)?),)+ })
        }
        fn columns(&self) -> $crate::record::Columns {
            vec![$((stringify!($field), columns!(@put self, $field $(, $codec)?)),)+]
        }
    };
    (@get $row:ident, $field:ident) => { $row.try_get(stringify!($field))? };
    (@get $row:ident, $field:ident, json) => { $crate::record::json_col($row, stringify!($field))? };
    (@get $row:ident, $field:ident, json_opt) => { $crate::record::json_opt($row, stringify!($field))? };
    (@get $row:ident, $field:ident, wire) => { $crate::record::wire_col($row, stringify!($field))? };
    (@put $s:ident, $field:ident) => { (&$s.$field).into() };
    (@put $s:ident, $field:ident, json) => { $crate::record::to_json(&$s.$field).into() };
    (@put $s:ident, $field:ident, json_opt) => { $s.$field.as_ref().map($crate::record::to_json).into() };
    (@put $s:ident, $field:ident, wire) => { quire_core::model::WireEnum::wire($s.$field).into() };
}
pub(crate) use columns;

/// Runs `$body` with `$T` naming the record type of `$kind`, or `$other`
/// for a kind the database does not hold (vault notes).
macro_rules! with_record {
    ($kind:expr, |$T:ident| $body:expr, else $other:expr) => {
        $crate::record::with_record!(@kinds $kind, $T, $body, $other;
            Page = Page, Section = PageSection, SectionTemplate = SectionTemplate, Collection = Collection,
            Entry = Entry, Image = Image, Navigation = Navigation, NavItem = NavItem, Agent = Agent,
            Translation = Translation, Context = Context, Workspace = Workspace)
    };
    (@kinds $kind:expr, $T:ident, $body:expr, $other:expr; $($k:ident = $t:ident),+) => {
        match $kind {
            $(quire_core::model::EntityKind::$k => {
                type $T = quire_core::model::$t;
                $body
            })+
            quire_core::model::EntityKind::Note => $other,
        }
    };
}
pub(crate) use with_record;

/// How records of `kind` are stored; none for vault notes.
pub(crate) fn entity_of(kind: EntityKind) -> Option<&'static Entity> {
    with_record!(kind, |T| Some(&T::ENTITY), else None)
}

/// The table holding records of `kind`.
pub(crate) fn table_of(kind: EntityKind) -> Result<&'static str> {
    entity_of(kind)
        .map(|e| e.table)
        .ok_or_else(|| StoreError::Corrupt(format!("{kind} records are not held in the database")))
}

/// Every live record of kind `T` in the scope, by id.
pub(crate) fn live_records<T: Record>(conn: &Conn, scope: &Scope) -> Result<Vec<T>> {
    let e = &T::ENTITY;
    let sql = format!(
        "SELECT {} FROM {} WHERE site_id = ?1 AND env = ?2{} ORDER BY id",
        select_all(e, conn, e.table),
        e.table,
        live(e)
    );
    db::query(sql).bind_scope(scope).fetch_all(conn)?.iter().map(T::from_row).collect()
}

/// Loads a live record of kind `T` by id.
pub(crate) fn load_live<T: Record>(conn: &Conn, scope: &Scope, id: &str) -> Result<Option<T>> {
    let e = &T::ENTITY;
    let sql = format!(
        "SELECT {} FROM {} WHERE id = ?1 AND site_id = ?2 AND env = ?3{}",
        select_all(e, conn, e.table),
        e.table,
        live(e)
    );
    let row = db::query(sql).bind(id).bind_scope(scope).fetch_optional(conn)?;
    row.as_ref().map(T::from_row).transpose()
}

/// Loads a live record of kind `T` by id to change it, inside a write: on
/// PostgreSQL its row stays locked until the transaction ends, so a write
/// of the same record through another process waits, then reads what this
/// one wrote and applies its change on top (on SQLite the writer holds the
/// database's write lock already).
pub(crate) fn load_to_change<T: Record>(conn: &Conn, scope: &Scope, id: &str) -> Result<Option<T>> {
    if !conn.is_postgres() {
        return load_live(conn, scope, id);
    }
    let e = &T::ENTITY;
    // A record of a tree may move: the trees' locks come before the row's
    // (see `lock_trees`).
    if e.parents.iter().any(|p| p.kind == e.kind) {
        lock_trees(conn, scope)?;
    }
    // Not FOR UPDATE: that would also hold off the foreign-key checks of
    // writes that only refer to this record.
    let sql = format!(
        "SELECT {} FROM {} WHERE id = ?1 AND site_id = ?2 AND env = ?3{} FOR NO KEY UPDATE",
        select_all(e, conn, e.table),
        e.table,
        live(e)
    );
    let row = db::query(sql).bind(id).bind_scope(scope).fetch_optional(conn)?;
    row.as_ref().map(T::from_row).transpose()
}

/// Whether records of `kind` are in a tree, or hold one (a navigation's
/// items): what [`lock_trees`] guards.
pub(crate) fn in_a_tree(kind: EntityKind) -> bool {
    let tree = |e: &Entity| e.parents.iter().any(|p| p.kind == e.kind);
    entity_of(kind).is_some_and(|e| tree(e) || e.children.iter().any(|c| entity_of(c.kind).is_some_and(tree)))
}

/// On PostgreSQL, holds the locks of the scope's trees (pages, nav items:
/// every entity whose records have a parent of their own kind) until the
/// transaction ends: replicas change records of a tree one at a time, so
/// two moves that each pass [`check_tree`]'s walk cannot make a loop
/// together, an archive's cascade sees every child moved in, and the top
/// level of a navigation is counted against `maxItems` alone. Taken before
/// any row is locked (a move's foreign key also locks the new parent's
/// row), all of them in one order, so waits never go in a circle.
pub(crate) fn lock_trees(conn: &Conn, scope: &Scope) -> Result<()> {
    if !conn.is_postgres() {
        return Ok(());
    }
    let trees =
        EntityKind::ALL.iter().filter_map(|k| entity_of(*k)).filter(|e| e.parents.iter().any(|p| p.kind == e.kind));
    for e in trees {
        db::query("SELECT pg_advisory_xact_lock(hashtextextended(?1, 0))")
            .bind(format!("tree:{}:{}:{}", e.table, scope.site_id, scope.env))
            .execute(conn)?;
    }
    Ok(())
}

/// [`load_to_change`], or not-found.
pub(crate) fn require_to_change<T: Record>(conn: &Conn, scope: &Scope, id: &str) -> Result<T> {
    load_to_change::<T>(conn, scope, id)?.ok_or_else(|| StoreError::not_found(T::ENTITY.noun, id))
}

/// Loads a live record or fails with not-found.
pub(crate) fn require_live<T: Record>(conn: &Conn, scope: &Scope, id: &str) -> Result<T> {
    load_live::<T>(conn, scope, id)?.ok_or_else(|| StoreError::not_found(T::ENTITY.noun, id))
}

/// The live record whose unique key (scope-wide) is `key`.
pub(crate) fn by_key<T: Record>(conn: &Conn, scope: &Scope, key: &str) -> Result<Option<T>> {
    let e = &T::ENTITY;
    let Some(Unique { column, within: None }) = &e.unique else { return Ok(None) };
    let sql = format!(
        "SELECT {} FROM {} WHERE site_id = ?1 AND env = ?2 AND {column} = ?3{}",
        select_all(e, conn, e.table),
        e.table,
        live(e)
    );
    let row = db::query(sql).bind_scope(scope).bind(key).fetch_optional(conn)?;
    row.as_ref().map(T::from_row).transpose()
}

/// The live record with id `id_or_key`, else with that unique key.
pub(crate) fn find<T: Record>(conn: &Conn, scope: &Scope, id_or_key: &str) -> Result<T> {
    if let Some(found) = load_live::<T>(conn, scope, id_or_key)? {
        return Ok(found);
    }
    by_key::<T>(conn, scope, id_or_key)?.ok_or_else(|| StoreError::not_found(T::ENTITY.noun, id_or_key))
}

/// Whether `id` is a live record of `kind` in the scope.
pub(crate) fn is_live(conn: &Conn, scope: &Scope, kind: EntityKind, id: &str) -> Result<bool> {
    let e = entity_of(kind).ok_or_else(|| StoreError::Corrupt(format!("{kind} is not a database record")))?;
    let sql = format!("SELECT 1 FROM {} WHERE id = ?1 AND site_id = ?2 AND env = ?3{}", e.table, live(e));
    Ok(db::query_scalar::<i64>(sql).bind(id).bind_scope(scope).fetch_optional(conn)?.is_some())
}

/// Whether another live record than `id` holds the unique key of
/// `columns` (see [`Entity::unique`]), in its working copy or in its
/// published one: a key given up in a draft stays taken until that draft
/// is published.
fn key_taken(conn: &Conn, scope: &Scope, e: &Entity, unique: &Unique, columns: &Columns, id: &str) -> Result<bool> {
    for table in std::iter::once(e.table).chain(e.published.as_ref().map(|p| p.table)) {
        let mut q = QueryBuilder::new(format!("SELECT 1 FROM {table} WHERE site_id = "));
        q.push_bind(&scope.site_id).push(" AND env = ").push_bind(&scope.env);
        q.push(format_args!(" AND {} = ", unique.column)).push_bind(value_of(columns, unique.column));
        if let Some(within) = unique.within {
            q.push(format_args!(" AND {within} = ")).push_bind(value_of(columns, within));
        }
        q.push(" AND id <> ").push_bind(id).push(live(e)).push(" LIMIT 1");
        if q.build_query_scalar::<i64>().fetch_optional(conn)?.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The message of a unique key already held: `slug "about" is already used
/// by another page`, `... now used ...` on a restore.
fn key_message(e: &Entity, unique: &Unique, columns: &Columns, now: bool) -> String {
    let value = text_of(value_of(columns, unique.column)).unwrap_or_default();
    let (column, noun) = (unique.column, e.noun);
    let among = match unique.within.and_then(|w| e.parents.iter().find(|p| p.column == w)) {
        Some(parent) => format!(" of the same {}", entity_of(parent.kind).map_or("parent", |p| p.noun)),
        None => String::new(),
    };
    if now {
        format!("{column} \"{value}\" is now used by another {noun}{among}; rename that {noun} first")
    } else {
        format!("{column} \"{value}\" is already used by another {noun}{among}")
    }
}

/// Walks up a tree of `e` from `parent`: a record that would become its
/// own ancestor, or an ancestor that is not live, is refused.
fn check_tree(conn: &Conn, scope: &Scope, e: &Entity, p: &Parent, id: &str, parent: &str) -> Result<()> {
    if parent == id {
        return Err(StoreError::invalid(p.field, format!("a {} cannot be its own parent", e.noun)));
    }
    // Held already by an update (taken again, it is the same lock); the
    // walk below sees what committed before it.
    lock_trees(conn, scope)?;
    let sql = format!("SELECT {} FROM {} WHERE id = ?1 AND site_id = ?2 AND env = ?3{}", p.column, e.table, live(e));
    let mut cursor = Some(parent.to_string());
    let mut depth = 0;
    while let Some(at) = cursor {
        let up: Option<Option<String>> =
            db::query_scalar(sql.clone()).bind(&at).bind_scope(scope).fetch_optional(conn)?;
        let Some(up) = up else {
            return Err(StoreError::invalid(p.field, format!("{} {at} does not exist", e.noun)));
        };
        if up.as_deref() == Some(id) || depth > 64 {
            return Err(StoreError::invalid(p.field, format!("moving the {} there would make a cycle", e.noun)));
        }
        cursor = up;
        depth += 1;
    }
    Ok(())
}

/// Checks every rule a record must meet before it is written: its own
/// values (quire-core's [`ValueRules`]), its references (each must be live,
/// a tree must not loop), what only its kind knows
/// ([`Record::check_more`]) and its unique key among live records. On an
/// update, `before` is the stored record and its columns: references and
/// keys it already had were checked when they were written and are not
/// queried again. Changes nothing.
pub(crate) fn check<T: Record>(
    conn: &Conn,
    scope: &Scope,
    record: &T,
    columns: &Columns,
    before: Option<(&T, &Columns)>,
) -> Result<()> {
    let e = &T::ENTITY;
    let changed = |column: &str| before.is_none_or(|(_, old)| value_of(old, column) != value_of(columns, column));
    // Field errors are reported together: the record's own, then those
    // against its template or collection; a missing reference comes first.
    let mut errors = record.value_errors();
    for p in e.parents.iter().filter(|p| changed(p.column)) {
        let Some(parent) = text_of(value_of(columns, p.column)) else { continue };
        if p.kind == e.kind {
            check_tree(conn, scope, e, p, record.id(), parent)?;
        } else if !is_live(conn, scope, p.kind, parent)? {
            let noun = entity_of(p.kind).map_or("record", |p| p.noun);
            return Err(StoreError::invalid(p.field, format!("{noun} {parent} does not exist")));
        }
    }
    errors.extend(record.check_more(conn, scope, before.map(|(b, _)| b))?);
    ValidationErrors::check(errors)?;
    if let Some(unique) = &e.unique
        && (changed(unique.column) || unique.within.is_some_and(changed))
        && key_taken(conn, scope, e, unique, columns, record.id())?
    {
        return Err(StoreError::conflict(Some(unique.column), key_message(e, unique, columns, false)));
    }
    Ok(())
}

/// Why `record`, archived by `archive_id`, cannot come back now, if it
/// cannot: its unique key is held by a live record, a record it refers to
/// is archived (other than by the same archive) or gone, or a rule of its
/// kind ([`Record::check_restore`]).
pub(crate) fn check_restore<T: Record>(conn: &Conn, scope: &Scope, record: &T, archive_id: &str) -> Result<()> {
    let e = &T::ENTITY;
    let columns = record.columns();
    if let Some(unique) = &e.unique
        && key_taken(conn, scope, e, unique, &columns, record.id())?
    {
        return Err(StoreError::conflict(Some(unique.column), key_message(e, unique, &columns, true)));
    }
    for p in e.parents {
        let Some(parent) = text_of(value_of(&columns, p.column)) else { continue };
        let table = table_of(p.kind)?;
        let state: Option<Option<String>> =
            db::query_scalar(format!("SELECT archive_id FROM {table} WHERE id = ?1 AND site_id = ?2 AND env = ?3"))
                .bind(parent)
                .bind_scope(scope)
                .fetch_optional(conn)?;
        match state {
            Some(None) => {}
            Some(Some(a)) if a == archive_id => {}
            Some(Some(other)) => {
                return Err(StoreError::conflict(
                    None,
                    format!("its {} {parent} is archived (archive {other}); restore that first", p.role),
                ));
            }
            None => return Err(StoreError::conflict(None, format!("its {} {parent} no longer exists", p.role))),
        }
    }
    record.check_restore(conn, scope)
}

/// Inserts a record's columns into the scope.
pub(crate) fn insert(conn: &Conn, scope: &Scope, table: &str, columns: &Columns) -> Result<()> {
    let mut sql = QueryBuilder::new(format!("INSERT INTO {table} (site_id, env"));
    for (name, _) in columns {
        sql.push(", ").push(name);
    }
    sql.push(") VALUES (").push_bind(scope.site_id.as_str()).push(", ").push_bind(scope.env.as_str());
    for (_, value) in columns {
        sql.push(", ").push_bind(value);
    }
    sql.push(")").build().execute(conn)?;
    Ok(())
}

/// Writes the columns of `new` whose values differ from `old`'s (the
/// stored record it was made from), if the stored version is still
/// `old`'s (optimistic locking); false when another write got there first.
/// Columns left alone are not written, so neither are the index entries
/// made of them.
fn update(conn: &Conn, scope: &Scope, table: &str, id: &str, old: &Columns, new: &Columns) -> Result<bool> {
    let mut sql = QueryBuilder::new(format!("UPDATE {table} SET "));
    let mut first = true;
    for (name, value) in new {
        if value == value_of(old, name) {
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
    let version = match value_of(old, "version") {
        db::Value::Null => return Err(StoreError::Corrupt(format!("{table} has no version column"))),
        v => v.clone(),
    };
    sql.push(" WHERE id = ").push_bind(id).push(" AND site_id = ").push_bind(&scope.site_id);
    sql.push(" AND env = ").push_bind(&scope.env).push(" AND version = ").push_bind(version);
    Ok(sql.build().execute(conn)?.rows_affected() == 1)
}

/// Checks and inserts `record`, logging a `create` change.
pub(crate) fn create<T: Record>(conn: &Conn, ctx: &ChangeContext, scope: &Scope, record: &T) -> Result<()> {
    let columns = record.columns();
    check(conn, scope, record, &columns, None)?;
    let key = taken::<T>(&columns);
    let mut stored = columns.clone();
    if let Some(kept) = T::ENTITY.kept_in_log {
        // The create's snapshot holds it whole: the row names the change.
        stored
            .iter_mut()
            .filter(|(name, _)| *name == kept)
            .for_each(|(_, value)| *value = db::Value::Text(String::new()));
    }
    insert(conn, scope, T::TABLE, &stored).map_err(key)?;
    let change = logged(conn, scope, ctx, T::KIND, record.id(), ChangeAction::Create, None, Some(snapshot(record)))?;
    if let Some(column) = T::ENTITY.kept_in_log {
        db::query(format!("UPDATE {} SET {column}_from = ?1 WHERE id = ?2 AND site_id = ?3 AND env = ?4", T::TABLE))
            .bind(change)
            .bind(record.id())
            .bind_scope(scope)
            .execute(conn)?;
    }
    after_write(conn, ctx, scope, &T::ENTITY, None, &columns)
}

/// Turns the database's refusal of a unique key into the conflict
/// [`check`] reports: another process (a second replica) may take the key
/// between the check and the write.
fn taken<T: Record>(columns: &Columns) -> impl FnOnce(StoreError) -> StoreError + '_ {
    move |e| match &T::ENTITY.unique {
        Some(unique) if e.is_unique_violation() => {
            StoreError::conflict(Some(unique.column), key_message(&T::ENTITY, unique, columns, false))
        }
        _ => e,
    }
}

/// Writes `after` as the next version of `before` and logs it as
/// `action`; answers the change's id.
pub(crate) fn write_version<T: Record>(
    conn: &Conn,
    scope: &Scope,
    ctx: &ChangeContext,
    before: &T,
    after: &mut T,
    action: ChangeAction,
) -> Result<i64> {
    after.bump();
    let (old, new) = (before.columns(), after.columns());
    check(conn, scope, after, &new, Some((before, &old)))?;
    let key = taken::<T>(&new);
    if !update(conn, scope, T::TABLE, after.id(), &old, &new).map_err(key)? {
        return Err(StoreError::conflict(
            None,
            format!("{} {} changed meanwhile; try again", T::ENTITY.noun, after.id()),
        ));
    }
    let change = logged(conn, scope, ctx, T::KIND, after.id(), action, Some(snapshot(before)), Some(snapshot(after)))?;
    after_write(conn, ctx, scope, &T::ENTITY, Some(&old), &new)?;
    Ok(change)
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
        ("parent_id IS NOT DISTINCT FROM ?3", vec![self.parent_id.clone()])
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
        (
            "navigation_id = ?3 AND parent_id IS NOT DISTINCT FROM ?4",
            vec![Some(self.navigation_id.clone()), self.parent_id.clone()],
        )
    }
    fn set_position(&mut self, n: i64) {
        self.sort_order = n;
    }
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

/// What `read` makes of `row`; not found, naming the `noun` `id`, when
/// there is no row.
pub(crate) fn found<T>(
    row: Option<Row>,
    read: impl FnOnce(&Row) -> Result<T>,
    noun: &'static str,
    id: &str,
) -> Result<T> {
    row.as_ref().map(read).transpose()?.ok_or_else(|| StoreError::not_found(noun, id))
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

/// Reads a column holding an enum's wire name.
pub(crate) fn wire_col<T: WireEnum>(row: &Row, col: &str) -> Result<T> {
    enum_col(row, col, T::from_wire)
}

/// An enum's wire name `text` read from column `col`.
pub(crate) fn wire_text<T: WireEnum>(col: &str, text: &str) -> Result<T> {
    T::from_wire(col, text).map_err(|e| crate::StoreError::Corrupt(e.to_string()))
}

/// JSON text of a value, for binding.
pub(crate) fn to_json<T: Serialize>(value: &T) -> String {
    // Invariant: our model types serialize infallibly (no non-string map keys).
    serde_json::to_string(value).expect("model types serialize to JSON")
}
