//! A site's environments (decision 0051): made empty or as a copy of
//! another, renamed, locked, archived; two of them compared record by
//! record and field by field; what differs promoted from one into the
//! other as one logged change set, which can be undone.
//!
//! Ids are the database's, unique across environments, so the same record
//! has another id in each: its *lineage* (`record_lineage`) is the id it
//! was first made with, and a copy or a promotion making it elsewhere
//! keeps the lineage. A record is compared as its document (a page with
//! its sections, a navigation with its items, an entry, a translation) or
//! alone (a template, a collection, an image), working and published
//! copies together, every id in it read as its lineage.
//!
//! Conflicts need a base: `environment_bases` keeps, per pair of
//! environments, what a record held when both last agreed (after a copy
//! or a promotion). A side whose record moved from the base changed there;
//! a record changed in the target (alone or in both) is a conflict until
//! the request says which side wins.
//!
//! A promotion writes through the same functions every write takes
//! (`write_document`, the published copies' `republish_in` and
//! `unpublish_document`, `archive_in`), logged in the target under the
//! session `promotion:<id>`, turn 1: undoing it is undoing that turn.

use crate::archive::archive_in;
use crate::changes::undo_turn_in;
use crate::db::{self, Conn};
use crate::publishing::{republish_in, write_back, write_document};
use crate::record::{
    Record, Version, create, document, live_records, same_content, table_of, unpublish_document, with_record,
};
use crate::{Result, Scope, Store, StoreError};
use chrono::{DateTime, Utc};
use quire_core::diff::{Difference, differences};
use quire_core::model::{Agent, ChangeContext, Context, EntityKind, Publishing};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};

/// One environment of a site.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Environment {
    /// Its key (`staging`): what tokens, headers and URLs name.
    pub key: String,
    /// Its display name (the key, unless renamed).
    pub name: String,
    /// Whether content reaches it only by promotion.
    pub locked: bool,
    /// The environment it was made as a copy of, if any.
    pub copied_from: Option<String>,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When it was archived, if it is (its tokens stop; what it holds is kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<DateTime<Utc>>,
}

/// Which side changed a record since the two environments last agreed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum ChangedIn {
    /// The source only: promoting it is safe.
    Source,
    /// The target only: promoting would overwrite the target's change.
    Target,
    /// Both (or the two never agreed): promoting would overwrite the target's change.
    Both,
}

/// What promoting a record would do to the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum EnvChange {
    /// The target has no live copy of it: it is made (or restored).
    Added,
    /// The source has none: the target's is archived.
    Removed,
    /// Both have it, with different content.
    Changed,
}

/// Which side a conflict is settled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum Resolution {
    /// The source's record is promoted over the target's change.
    Source,
    /// The target keeps its record; nothing is promoted for it.
    Target,
}

/// One record that differs between two environments.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EnvDifference {
    /// Its kind (a document's root, or a template, collection, image).
    pub entity: EntityKind,
    /// The id it was first made with: the same in both environments.
    pub lineage: String,
    /// Its readable name (the source's, else the target's).
    pub label: String,
    /// Its id in the source, where it is live there.
    pub source_id: Option<String>,
    /// Its id in the target, where it is live there.
    pub target_id: Option<String>,
    /// What promoting it does to the target.
    pub change: EnvChange,
    /// Which side changed it since the two last agreed.
    pub changed_in: ChangedIn,
    /// Whether promoting it needs a resolution (it changed in the target).
    pub conflict: bool,
    /// Whether the source's public site shows it.
    pub published_in_source: bool,
    /// Whether the target's public site shows it.
    pub published_in_target: bool,
    /// The target's working copy against the source's, record by record
    /// and field by field, ids read as lineages (what promoting writes).
    pub differences: Vec<Difference>,
    /// Whether the published copies differ too.
    pub published_differs: bool,
}

/// What a promotion did to one record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PromotedItem {
    /// Its kind.
    pub entity: EntityKind,
    /// Its lineage.
    pub lineage: String,
    /// Its id in the target.
    pub target_id: String,
    /// Its readable name.
    pub label: String,
    /// What was done.
    pub change: EnvChange,
}

/// One promotion from an environment into another.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Promotion {
    /// Its id; its changes are logged under the session `promotion:<id>`.
    pub id: String,
    /// The environment promoted from.
    pub source: String,
    /// The environment promoted into.
    pub target: String,
    /// Who promoted.
    pub actor: String,
    /// What it did, record by record.
    pub items: Vec<PromotedItem>,
    /// When.
    pub created_at: DateTime<Utc>,
    /// When it was undone, if it was.
    pub undone_at: Option<DateTime<Utc>>,
    /// Who undid it.
    pub undone_by: Option<String>,
}

/// What to promote.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromotionRequest {
    /// The records to promote, by lineage or by their id in either
    /// environment; none: everything that differs.
    #[serde(default)]
    pub items: Option<Vec<String>>,
    /// How each conflict is settled, by the same names.
    #[serde(default)]
    pub resolutions: BTreeMap<String, Resolution>,
}

/// The kinds compared and promoted, in the order a promotion writes them
/// (what others refer to first).
const UNITS: [EntityKind; 7] = [
    EntityKind::SectionTemplate,
    EntityKind::Collection,
    EntityKind::Image,
    EntityKind::Page,
    EntityKind::Entry,
    EntityKind::Navigation,
    EntityKind::Translation,
];

/// Every kind whose ids are read as lineages: the units and the documents' parts.
const KINDS: [EntityKind; 9] = [
    EntityKind::SectionTemplate,
    EntityKind::Collection,
    EntityKind::Image,
    EntityKind::Page,
    EntityKind::Section,
    EntityKind::Entry,
    EntityKind::Navigation,
    EntityKind::NavItem,
    EntityKind::Translation,
];

/// A record (with its parts) as one environment holds it.
struct Unit {
    id: String,
    label: String,
    /// `{record, parts}` of the working copy.
    working: Value,
    /// The same of the published copy, if it has one.
    published: Option<Value>,
}

/// One environment as a comparison reads it.
struct Side {
    scope: Scope,
    /// Every record id in it (archived too) and its lineage.
    lineage: HashMap<String, (String, EntityKind)>,
    /// Every lineage in it and its record id.
    ids: HashMap<String, String>,
    /// The ids of its live records.
    live: HashSet<String>,
    /// Its live units by kind and lineage.
    units: HashMap<(EntityKind, String), Unit>,
}

impl Side {
    fn read(conn: &Conn, scope: &Scope) -> Result<Side> {
        let (mut lineage, mut live) = (HashMap::new(), HashSet::new());
        for kind in KINDS {
            let sql = format!(
                "SELECT id, CASE WHEN archive_id IS NULL THEN 1 ELSE 0 END FROM {} WHERE site_id = ?1 AND env = ?2",
                table_of(kind)?
            );
            for (id, alive) in db::query_as::<(String, i64)>(sql).bind_scope(scope).fetch_all(conn)? {
                if alive == 1 {
                    live.insert(id.clone());
                }
                lineage.insert(id.clone(), (id, kind));
            }
        }
        let rows: Vec<(String, String)> =
            db::query_as("SELECT record_id, lineage FROM record_lineage WHERE site_id = ?1 AND env = ?2")
                .bind_scope(scope)
                .fetch_all(conn)?;
        for (id, of) in rows {
            if let Some(entry) = lineage.get_mut(&id) {
                entry.0 = of;
            }
        }
        let ids = lineage.iter().map(|(id, (l, _))| (l.clone(), id.clone())).collect();
        let mut side = Side { scope: scope.clone(), lineage, ids, live, units: HashMap::new() };
        for kind in UNITS {
            with_record!(kind, |T| side.load::<T>(conn)?, else {});
        }
        Ok(side)
    }

    fn load<T: Record>(&mut self, conn: &Conn) -> Result<()> {
        for record in live_records::<T>(conn, &self.scope)? {
            let id = record.id().to_string();
            let (working, published) = match document(conn, &self.scope, T::KIND, &id, Version::Working)? {
                Some(doc) => (doc, document(conn, &self.scope, T::KIND, &id, Version::Published)?),
                None => (json!({ "record": serde_json::to_value(&record)?, "parts": [] }), None),
            };
            let lineage = self.lineage_of(&id);
            self.units.insert((T::KIND, lineage), Unit { id, label: record.label(), working, published });
        }
        Ok(())
    }

    fn lineage_of(&self, id: &str) -> String {
        self.lineage.get(id).map_or_else(|| id.to_string(), |(l, _)| l.clone())
    }

    /// `doc` with its ids read as lineages and what moves with every write
    /// (versions, times) left out, parts in lineage order.
    fn normal(&self, doc: &Value) -> Value {
        let mut doc = map_ids(doc, &|s| self.lineage.get(s).map(|(l, _)| l.clone()));
        let bare = |record: &mut Value| {
            if let Some(o) = record.as_object_mut() {
                for key in ["version", "updatedAt", "createdAt"] {
                    o.remove(key);
                }
            }
        };
        bare(&mut doc["record"]);
        if let Some(parts) = doc["parts"].as_array_mut() {
            parts.iter_mut().for_each(bare);
            parts.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
        }
        doc
    }

    /// A digest of a unit's working and published copies, ids as lineages.
    fn digest(&self, unit: &Unit) -> String {
        let both = json!({ "working": self.normal(&unit.working), "published": unit.published.as_ref().map(|p| self.normal(p)) });
        hex::encode(Sha256::digest(both.to_string().as_bytes()))
    }
}

/// `value` with every string (and object key) that `f` maps replaced, and
/// each `:`-separated segment of the others (a translation's slug scope
/// names its collection).
fn map_ids(value: &Value, f: &impl Fn(&str) -> Option<String>) -> Value {
    let text = |s: &str| -> String {
        if let Some(mapped) = f(s) {
            return mapped;
        }
        if s.contains(':') {
            return s.split(':').map(|p| f(p).unwrap_or_else(|| p.to_string())).collect::<Vec<_>>().join(":");
        }
        s.to_string()
    };
    match value {
        Value::String(s) => Value::String(text(s)),
        Value::Array(items) => Value::Array(items.iter().map(|v| map_ids(v, f)).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (text(k), map_ids(v, f))).collect::<Map<_, _>>()),
        other => other.clone(),
    }
}

/// The pair's key in `environment_bases`: the two names in order.
fn pair<'a>(a: &'a str, b: &'a str) -> (&'a str, &'a str) {
    if a <= b { (a, b) } else { (b, a) }
}

/// The bases the two environments agreed on, by kind and lineage.
fn bases(conn: &Conn, site_id: &str, a: &str, b: &str) -> Result<HashMap<(EntityKind, String), String>> {
    let (a, b) = pair(a, b);
    let rows: Vec<(String, String, String)> = db::query_as(
        "SELECT entity, lineage, digest FROM environment_bases WHERE site_id = ?1 AND env_a = ?2 AND env_b = ?3",
    )
    .bind(site_id)
    .bind(a)
    .bind(b)
    .fetch_all(conn)?;
    rows.into_iter()
        .map(|(entity, lineage, digest)| {
            Ok(((crate::record::wire_text::<EntityKind>("entity", &entity)?, lineage), digest))
        })
        .collect()
}

fn set_base(
    conn: &Conn,
    site_id: &str,
    envs: (&str, &str),
    key: &(EntityKind, String),
    digest: Option<&str>,
) -> Result<()> {
    let (a, b) = pair(envs.0, envs.1);
    db::query("DELETE FROM environment_bases WHERE site_id = ?1 AND env_a = ?2 AND env_b = ?3 AND entity = ?4 AND lineage = ?5")
        .bind(site_id)
        .bind(a)
        .bind(b)
        .bind(key.0.as_str())
        .bind(&key.1)
        .execute(conn)?;
    if let Some(digest) = digest {
        db::query(
            "INSERT INTO environment_bases (site_id, env_a, env_b, entity, lineage, digest) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .bind(site_id)
        .bind(a)
        .bind(b)
        .bind(key.0.as_str())
        .bind(&key.1)
        .bind(digest)
        .execute(conn)?;
    }
    Ok(())
}

/// A comparison as a promotion uses it.
struct Compared {
    source: Side,
    target: Side,
    differences: Vec<EnvDifference>,
}

/// Compares `source` with `target` (see the module's documentation).
fn compare_in(conn: &Conn, source: &Scope, target: &Scope) -> Result<Compared> {
    let source = Side::read(conn, source)?;
    let target = Side::read(conn, target)?;
    let bases = bases(conn, &source.scope.site_id, &source.scope.env, &target.scope.env)?;
    let mut keys: Vec<&(EntityKind, String)> = source.units.keys().chain(target.units.keys()).collect();
    keys.sort_by_key(|(kind, lineage)| (UNITS.iter().position(|k| k == kind), lineage.clone()));
    keys.dedup();
    let mut out = Vec::new();
    for key in keys {
        let (s, t) = (source.units.get(key), target.units.get(key));
        let (ds, dt) = (s.map(|u| source.digest(u)), t.map(|u| target.digest(u)));
        if ds == dt {
            continue;
        }
        let base = bases.get(key);
        let changed_in = match (base.map(String::as_str) != ds.as_deref(), base.map(String::as_str) != dt.as_deref()) {
            (true, false) => ChangedIn::Source,
            (false, true) => ChangedIn::Target,
            _ => ChangedIn::Both,
        };
        let change = match (s, t) {
            (Some(_), None) => EnvChange::Added,
            (None, Some(_)) => EnvChange::Removed,
            _ => EnvChange::Changed,
        };
        let working = |side: &Side, u: Option<&Unit>| u.map(|u| side.normal(&u.working));
        let published = |side: &Side, u: Option<&Unit>| u.and_then(|u| u.published.as_ref()).map(|p| side.normal(p));
        out.push(EnvDifference {
            entity: key.0,
            lineage: key.1.clone(),
            label: s.or(t).map(|u| u.label.clone()).unwrap_or_default(),
            source_id: s.map(|u| u.id.clone()),
            target_id: t.map(|u| u.id.clone()),
            change,
            changed_in,
            conflict: changed_in != ChangedIn::Source,
            published_in_source: s.is_some_and(|u| u.published.is_some()),
            published_in_target: t.is_some_and(|u| u.published.is_some()),
            differences: differences(working(&target, t).as_ref(), working(&source, s).as_ref()),
            published_differs: published(&source, s) != published(&target, t),
        });
    }
    Ok(Compared { source, target, differences: out })
}

/// Whether `name` names `d`: its lineage or its id on either side.
fn names(d: &EnvDifference, name: &str) -> bool {
    d.lineage == name || d.source_id.as_deref() == Some(name) || d.target_id.as_deref() == Some(name)
}

/// Ids of the target for lineages, made as a promotion needs them.
struct Ids<'a> {
    target: &'a Side,
    made: RefCell<Vec<(String, String, EntityKind)>>,
}

impl Ids<'_> {
    /// The target's id of `lineage` (a record of `kind`): its own, or a new one.
    fn of(&self, lineage: &str, kind: EntityKind) -> String {
        if let Some(id) = self.target.ids.get(lineage) {
            return id.clone();
        }
        let mut made = self.made.borrow_mut();
        if let Some((id, _, _)) = made.iter().find(|(_, l, _)| l == lineage) {
            return id.clone();
        }
        let id = crate::log::new_id();
        made.push((id.clone(), lineage.to_string(), kind));
        id
    }

    /// A document of the source as the target writes it: every source id
    /// in it as the target's. A reference the source keeps to a record it
    /// has archived (a menu item's page) and the target never had is
    /// written as the lineage: it refers to nothing there either.
    fn translate(&self, source: &Side, doc: &Value) -> Value {
        map_ids(doc, &|s| {
            let (l, kind) = source.lineage.get(s)?;
            match self.target.ids.get(l) {
                Some(id) => Some(id.clone()),
                None if source.live.contains(s) => Some(self.of(l, *kind)),
                None => Some(l.clone()),
            }
        })
    }
}

/// The parts of `doc` with each part after the part it hangs under (a
/// menu item under another), so each is written after what it refers to.
fn parents_first(doc: &mut Value) {
    let Some(parts) = doc["parts"].as_array_mut() else { return };
    let mut left: Vec<Value> = std::mem::take(parts);
    let mut placed: HashSet<String> = HashSet::new();
    let ids: HashSet<String> = left.iter().filter_map(|p| p["id"].as_str().map(str::to_string)).collect();
    while !left.is_empty() {
        let (ready, rest): (Vec<Value>, Vec<Value>) = left.into_iter().partition(|p| match p["parentId"].as_str() {
            Some(up) => placed.contains(up) || !ids.contains(up),
            None => true,
        });
        if ready.is_empty() {
            parts.extend(rest);
            break;
        }
        placed.extend(ready.iter().filter_map(|p| p["id"].as_str().map(str::to_string)));
        parts.extend(ready);
        left = rest;
    }
}

/// How deep a page of `side` sits in its tree (a root is 0).
fn depth(side: &Side, page: &Unit) -> usize {
    let mut depth = 0;
    let mut up = page.working["record"]["parentId"].as_str().map(str::to_string);
    while let Some(id) = up.take() {
        depth += 1;
        if depth > 64 {
            break;
        }
        up = side
            .units
            .get(&(EntityKind::Page, side.lineage_of(&id)))
            .and_then(|u| u.working["record"]["parentId"].as_str().map(str::to_string));
    }
    depth
}

/// The bases a promotion changes, as they were before it.
#[derive(Debug, Serialize, Deserialize)]
struct Prior {
    entity: EntityKind,
    lineage: String,
    digest: Option<String>,
}

/// Promotes `request` from `source` into `target` (see the module's
/// documentation); `id` is the promotion's. Runs inside the writer's transaction.
fn promote_in(
    conn: &Conn,
    ctx: &ChangeContext,
    source: &Scope,
    target: &Scope,
    request: &PromotionRequest,
    id: &str,
) -> Result<Promotion> {
    let compared = compare_in(conn, source, target)?;
    for name in request.items.iter().flatten().chain(request.resolutions.keys()) {
        if !compared.differences.iter().any(|d| names(d, name)) {
            return Err(StoreError::invalid(
                "items",
                format!("{name} does not differ between {} and {}", source.env, target.env),
            ));
        }
    }
    let resolution = |d: &EnvDifference| request.resolutions.iter().find(|(n, _)| names(d, n)).map(|(_, r)| *r);
    let chosen: Vec<&EnvDifference> = compared
        .differences
        .iter()
        .filter(|d| request.items.as_ref().is_none_or(|items| items.iter().any(|n| names(d, n))))
        .collect();
    let unresolved: Vec<String> = chosen
        .iter()
        .filter(|d| d.conflict && resolution(d).is_none())
        .map(|d| {
            let side = if d.changed_in == ChangedIn::Target { "in the target only" } else { "in both" };
            format!("{} {} ({}) changed {side}", d.entity, d.label, d.lineage)
        })
        .collect();
    if !unresolved.is_empty() {
        return Err(StoreError::conflict(
            None,
            format!(
                "nothing was promoted: {} conflict{} to resolve (resolutions: source or target): {}",
                unresolved.len(),
                if unresolved.len() == 1 { "" } else { "s" },
                unresolved.join("; ")
            ),
        ));
    }
    let apply: Vec<&EnvDifference> =
        chosen.into_iter().filter(|d| !d.conflict || resolution(d) == Some(Resolution::Source)).collect();
    let Compared { source: from, target: to, .. } = &compared;
    let ctx = &ChangeContext {
        session_id: Some(format!("promotion:{id}")),
        turn_id: Some("1".into()),
        publishing: Publishing::Never,
        ..ctx.clone()
    };
    let scope = &to.scope;
    let ids = Ids { target: to, made: RefCell::new(Vec::new()) };
    let mut items = Vec::new();
    // What leaves first, so that its keys are free for what comes.
    for d in apply.iter().filter(|d| d.change == EnvChange::Removed) {
        let Some(tid) = &d.target_id else { continue };
        let table = table_of(d.entity)?;
        let live: Option<String> = db::query_scalar(format!(
            "SELECT id FROM {table} WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL"
        ))
        .bind(tid)
        .bind_scope(scope)
        .fetch_optional(conn)?;
        if live.is_some() {
            archive_in(conn, ctx, scope, d.entity, std::slice::from_ref(tid), None)?;
        }
        items.push(PromotedItem {
            entity: d.entity,
            lineage: d.lineage.clone(),
            target_id: tid.clone(),
            label: d.label.clone(),
            change: d.change,
        });
    }
    // Then what is made or changed, each kind after what it refers to,
    // pages from the roots down.
    let mut writes: Vec<(&EnvDifference, &Unit)> = apply
        .iter()
        .filter(|d| d.change != EnvChange::Removed)
        .filter_map(|d| from.units.get(&(d.entity, d.lineage.clone())).map(|u| (*d, u)))
        .collect();
    writes.sort_by_key(|(d, u)| {
        let order = UNITS.iter().position(|k| *k == d.entity);
        (order, if d.entity == EntityKind::Page { depth(from, u) } else { 0 })
    });
    for (d, unit) in writes {
        let tid = ids.of(&d.lineage, d.entity);
        let mut working = ids.translate(from, &unit.working);
        parents_first(&mut working);
        if crate::record::root_of(d.entity).is_some() {
            write_document(conn, ctx, scope, d.entity, &tid, &working)?;
            let published = unit.published.as_ref().map(|p| ids.translate(from, p));
            let now = document(conn, scope, d.entity, &tid, Version::Published)?;
            match (published, now) {
                (Some(copy), now) if now.as_ref().is_none_or(|n| !same_content(n, &copy)) => {
                    republish_in(conn, ctx, scope, d.entity, &tid, &copy)?;
                }
                (None, Some(_)) => {
                    unpublish_document(conn, ctx, scope, d.entity, &tid)?;
                }
                _ => {}
            }
        } else {
            with_record!(d.entity, |T| write_back::<T>(conn, ctx, scope, &working["record"])?, else {});
        }
        if d.entity == EntityKind::Image {
            db::query(
                "INSERT INTO image_files (path, image_id, mime) SELECT path, ?1, mime FROM image_files WHERE image_id = ?2
                 ON CONFLICT DO NOTHING",
            )
            .bind(&tid)
            .bind(&unit.id)
            .execute(conn)?;
        }
        items.push(PromotedItem {
            entity: d.entity,
            lineage: d.lineage.clone(),
            target_id: tid,
            label: d.label.clone(),
            change: d.change,
        });
    }
    for (record, lineage, kind) in ids.made.into_inner() {
        db::query("INSERT INTO record_lineage (site_id, env, entity, record_id, lineage) VALUES (?1, ?2, ?3, ?4, ?5)")
            .bind_scope(scope)
            .bind(kind.as_str())
            .bind(&record)
            .bind(&lineage)
            .execute(conn)?;
    }
    // The two now agree on what was promoted (environments of one site;
    // a site copied from another keeps no base with it).
    let mut prior = Vec::new();
    if source.site_id == target.site_id {
        let before = bases(conn, &source.site_id, &source.env, &target.env)?;
        for d in &apply {
            let key = (d.entity, d.lineage.clone());
            let digest = from.units.get(&key).map(|u| from.digest(u));
            prior.push(Prior { entity: d.entity, lineage: d.lineage.clone(), digest: before.get(&key).cloned() });
            set_base(conn, &source.site_id, (&source.env, &target.env), &key, digest.as_deref())?;
        }
    }
    let now = Utc::now();
    db::query(
        "INSERT INTO promotions (id, site_id, source_env, target_env, actor, items, bases, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )
    .bind(id)
    .bind(&target.site_id)
    .bind(&source.env)
    .bind(&target.env)
    .bind(&ctx.actor)
    .bind(serde_json::to_string(&items)?)
    .bind(serde_json::to_string(&prior)?)
    .bind(now)
    .execute(conn)?;
    Ok(Promotion {
        id: id.to_string(),
        source: source.env.clone(),
        target: target.env.clone(),
        actor: ctx.actor.clone(),
        items,
        created_at: now,
        undone_at: None,
        undone_by: None,
    })
}

/// Copies everything of `source` into the empty `target` (of the same
/// site, or another's): its units as one promotion, and its contexts and
/// agents (workspaces, a session's, stay).
fn copy_in(conn: &Conn, ctx: &ChangeContext, source: &Scope, target: &Scope) -> Result<Promotion> {
    let id = crate::log::new_id();
    let promotion = conn.as_promotion(|c| promote_in(c, ctx, source, target, &PromotionRequest::default(), &id))?;
    // Contexts first: the agents name theirs.
    for context in live_records::<Context>(conn, source)? {
        let copy = Context { id: crate::log::new_id(), ..context };
        create(conn, ctx, target, &copy)?;
    }
    for agent in live_records::<Agent>(conn, source)? {
        let copy = Agent { id: crate::log::new_id(), ..agent };
        create(conn, ctx, target, &copy)?;
    }
    Ok(promotion)
}

fn promotion_of(row: &db::Row) -> Result<Promotion> {
    let items: String = row.try_get("items")?;
    Ok(Promotion {
        id: row.try_get("id")?,
        source: row.try_get("source_env")?,
        target: row.try_get("target_env")?,
        actor: row.try_get("actor")?,
        items: serde_json::from_str(&items)?,
        created_at: row.try_get("created_at")?,
        undone_at: row.try_get("undone_at")?,
        undone_by: row.try_get("undone_by")?,
    })
}

fn environment_of(row: &db::Row) -> Result<Environment> {
    let key: String = row.try_get("key")?;
    let name: String = row.try_get("name")?;
    Ok(Environment {
        name: if name.is_empty() { key.clone() } else { name },
        key,
        locked: row.try_get::<i64, _>("locked")? == 1,
        copied_from: row.try_get("copied_from")?,
        created_at: row.try_get("created_at")?,
        archived_at: row.try_get("archived_at")?,
    })
}

fn environment_in(conn: &Conn, site_id: &str, key: &str) -> Result<Environment> {
    db::query("SELECT * FROM environments WHERE site_id = ?1 AND key = ?2")
        .bind(site_id)
        .bind(key)
        .fetch_optional(conn)?
        .as_ref()
        .map(environment_of)
        .transpose()?
        .ok_or_else(|| StoreError::not_found("environment", key))
}

/// Refuses an environment that is archived.
fn live_environment(conn: &Conn, site_id: &str, key: &str) -> Result<Environment> {
    let env = environment_in(conn, site_id, key)?;
    if env.archived_at.is_some() {
        return Err(StoreError::conflict(None, format!("environment {key} is archived; restore it first")));
    }
    Ok(env)
}

impl Store {
    /// The site's environments, archived ones too, oldest first.
    pub async fn environments(&self, site_id: &str) -> Result<Vec<Environment>> {
        let rows = db::query("SELECT * FROM environments WHERE site_id = ?1 ORDER BY created_at, key")
            .bind(site_id)
            .read_all(&self.db)
            .await?;
        rows.iter().map(environment_of).collect()
    }

    /// One environment of the site, archived or not.
    pub async fn environment(&self, site_id: &str, key: &str) -> Result<Environment> {
        let (site_id, key) = (site_id.to_string(), key.to_string());
        self.db.read(move |c| environment_in(c, &site_id, &key)).await
    }

    /// Makes an environment `key` of the site: empty, or a copy of `from`
    /// (its templates, collections, images, pages, posts and entries,
    /// menus and translations, working and published, promoted as one
    /// promotion, and its agents). One transaction.
    pub async fn create_environment(
        &self,
        ctx: &ChangeContext,
        site_id: &str,
        key: &str,
        name: &str,
        from: Option<&str>,
    ) -> Result<(Environment, Option<Promotion>)> {
        quire_core::slug::check_slug("key", key)?;
        quire_core::text::check_line("name", name, 120)?;
        let (ctx, site_id, key, name, from) =
            (ctx.clone(), site_id.to_string(), key.to_string(), name.to_string(), from.map(str::to_string));
        self.db
            .write(move |c| {
                if let Some(from) = &from {
                    live_environment(c, &site_id, from)?;
                }
                let taken: Option<i64> = db::query_scalar("SELECT 1 FROM environments WHERE site_id = ?1 AND key = ?2")
                    .bind(&site_id)
                    .bind(&key)
                    .fetch_optional(c)?;
                if taken.is_some() {
                    return Err(StoreError::conflict(Some("key"), format!("environment \"{key}\" already exists")));
                }
                db::query(
                    "INSERT INTO environments (site_id, key, name, created_at, copied_from) VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .bind(&site_id)
                .bind(&key)
                .bind(&name)
                .bind(Utc::now())
                .bind(&from)
                .execute(c)?;
                let Some(from) = from else { return Ok((environment_in(c, &site_id, &key)?, None)) };
                let promotion = copy_in(c, &ctx, &Scope::new(&site_id, &from), &Scope::new(&site_id, &key))?;
                Ok((environment_in(c, &site_id, &key)?, Some(promotion)))
            })
            .await
    }

    /// Fills environment `target` of a new site with a copy of `source`,
    /// another site's environment: the source site's locales, then its
    /// content, published copies, templates, collections, images and
    /// agents, in one transaction. The target must hold no content yet.
    pub async fn copy_site_content(&self, ctx: &ChangeContext, source: &Scope, target: &Scope) -> Result<Promotion> {
        let (ctx, source, target) = (ctx.clone(), source.clone(), target.clone());
        self.db
            .write(move |c| {
                live_environment(c, &source.site_id, &source.env)?;
                live_environment(c, &target.site_id, &target.env)?;
                db::query("DELETE FROM site_locales WHERE site_id = ?1").bind(&target.site_id).execute(c)?;
                db::query(
                    "INSERT INTO site_locales (site_id, tag, fallback, is_default, position, created_at, archived_at)
                     SELECT ?2, tag, fallback, is_default, position, created_at, archived_at FROM site_locales WHERE site_id = ?1",
                )
                .bind(&source.site_id)
                .bind(&target.site_id)
                .execute(c)?;
                copy_in(c, &ctx, &source, &target)
            })
            .await
    }

    /// Changes an environment's display name, lock, or both.
    pub async fn update_environment(
        &self,
        site_id: &str,
        key: &str,
        name: Option<&str>,
        locked: Option<bool>,
    ) -> Result<Environment> {
        if let Some(name) = name {
            quire_core::text::check_line("name", name, 120)?;
        }
        let (site_id, key, name) = (site_id.to_string(), key.to_string(), name.map(str::to_string));
        self.db
            .write(move |c| {
                environment_in(c, &site_id, &key)?;
                if let Some(name) = &name {
                    db::query("UPDATE environments SET name = ?3 WHERE site_id = ?1 AND key = ?2")
                        .bind(&site_id)
                        .bind(&key)
                        .bind(name)
                        .execute(c)?;
                }
                if let Some(locked) = locked {
                    db::query("UPDATE environments SET locked = ?3 WHERE site_id = ?1 AND key = ?2")
                        .bind(&site_id)
                        .bind(&key)
                        .bind(i64::from(locked))
                        .execute(c)?;
                }
                environment_in(c, &site_id, &key)
            })
            .await
    }

    /// Archives an environment (its tokens stop; everything it holds is
    /// kept), or brings it back. The site keeps at least one live.
    pub async fn archive_environment(&self, site_id: &str, key: &str, archived: bool) -> Result<Environment> {
        let (site_id, key) = (site_id.to_string(), key.to_string());
        self.db
            .write(move |c| {
                let env = environment_in(c, &site_id, &key)?;
                if archived && env.archived_at.is_none() {
                    let live: i64 = db::query_scalar(
                        "SELECT COUNT(*) FROM environments WHERE site_id = ?1 AND archived_at IS NULL",
                    )
                    .bind(&site_id)
                    .fetch_one(c)?;
                    if live <= 1 {
                        return Err(StoreError::conflict(
                            None,
                            format!("environment {key} is the site's last; a site keeps one"),
                        ));
                    }
                }
                let at = archived.then(Utc::now);
                db::query("UPDATE environments SET archived_at = ?3 WHERE site_id = ?1 AND key = ?2")
                    .bind(&site_id)
                    .bind(&key)
                    .bind(at)
                    .execute(c)?;
                environment_in(c, &site_id, &key)
            })
            .await
    }

    /// What differs between two environments of a site, record by record
    /// (see [`EnvDifference`]).
    pub async fn compare_environments(&self, site_id: &str, source: &str, target: &str) -> Result<Vec<EnvDifference>> {
        if source == target {
            return Err(StoreError::invalid("from", "an environment is compared with another"));
        }
        let (source, target) = (Scope::new(site_id, source), Scope::new(site_id, target));
        self.db
            .read(move |c| {
                c.transaction(false, |c| {
                    live_environment(c, &source.site_id, &source.env)?;
                    live_environment(c, &target.site_id, &target.env)?;
                    Ok(compare_in(c, &source, &target)?.differences)
                })
            })
            .await
    }

    /// Promotes what `request` names (everything that differs, by
    /// default) from `source` into `target` in one transaction; a conflict
    /// left unresolved refuses it whole, naming each.
    pub async fn promote(
        &self,
        ctx: &ChangeContext,
        site_id: &str,
        source: &str,
        target: &str,
        request: PromotionRequest,
    ) -> Result<Promotion> {
        if source == target {
            return Err(StoreError::invalid("from", "an environment is promoted into another"));
        }
        let (ctx, source, target) = (ctx.clone(), Scope::new(site_id, source), Scope::new(site_id, target));
        self.db
            .write(move |c| {
                live_environment(c, &source.site_id, &source.env)?;
                live_environment(c, &target.site_id, &target.env)?;
                c.as_promotion(|c| promote_in(c, &ctx, &source, &target, &request, &crate::log::new_id()))
            })
            .await
    }

    /// The promotions into `target`, newest first.
    pub async fn promotions(&self, site_id: &str, target: &str) -> Result<Vec<Promotion>> {
        let rows = db::query(
            "SELECT * FROM promotions WHERE site_id = ?1 AND target_env = ?2 ORDER BY created_at DESC, id DESC LIMIT 200",
        )
        .bind(site_id)
        .bind(target)
        .read_all(&self.db)
        .await?;
        rows.iter().map(promotion_of).collect()
    }

    /// One promotion of the site.
    pub async fn promotion(&self, site_id: &str, id: &str) -> Result<Promotion> {
        db::query("SELECT * FROM promotions WHERE id = ?1 AND site_id = ?2")
            .bind(id)
            .bind(site_id)
            .read_optional(&self.db)
            .await?
            .as_ref()
            .map(promotion_of)
            .transpose()?
            .ok_or_else(|| StoreError::not_found("promotion", id))
    }

    /// Undoes a promotion: every change it logged in its target is
    /// reverted in one transaction (a record changed since is a conflict
    /// and nothing is undone), and the two environments' bases go back.
    pub async fn undo_promotion(&self, ctx: &ChangeContext, site_id: &str, id: &str) -> Result<Promotion> {
        let (ctx, site_id, id) = (ctx.clone(), site_id.to_string(), id.to_string());
        self.db
            .write(move |c| {
                let row = db::query("SELECT * FROM promotions WHERE id = ?1 AND site_id = ?2")
                    .bind(&id)
                    .bind(&site_id)
                    .fetch_optional(c)?
                    .ok_or_else(|| StoreError::not_found("promotion", &id))?;
                let promotion = promotion_of(&row)?;
                if promotion.undone_at.is_some() {
                    return Err(StoreError::conflict(None, format!("promotion {id} was undone already")));
                }
                let scope = Scope::new(&site_id, &promotion.target);
                live_environment(c, &site_id, &promotion.target)?;
                let session = format!("promotion:{id}");
                c.as_promotion(|c| undo_turn_in(c, &ctx, &scope, &session, "1"))?;
                let prior: Vec<Prior> = serde_json::from_str(&row.try_get::<String, _>("bases")?)?;
                for p in prior {
                    let envs = (promotion.source.as_str(), promotion.target.as_str());
                    set_base(c, &site_id, envs, &(p.entity, p.lineage), p.digest.as_deref())?;
                }
                let now = Utc::now();
                db::query("UPDATE promotions SET undone_at = ?2, undone_by = ?3 WHERE id = ?1")
                    .bind(&id)
                    .bind(now)
                    .bind(&ctx.actor)
                    .execute(c)?;
                Ok(Promotion { undone_at: Some(now), undone_by: Some(ctx.actor.clone()), ..promotion })
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_mapped_as_whole_strings_keys_and_segments() {
        let map = |s: &str| (s == "a1").then(|| "L1".to_string());
        let doc = json!({ "id": "a1", "text": "a1 is here", "scope": "entry:a1:de", "by": { "a1": 2 }, "n": 3 });
        assert_eq!(
            map_ids(&doc, &map),
            json!({ "id": "L1", "text": "a1 is here", "scope": "entry:L1:de", "by": { "L1": 2 }, "n": 3 })
        );
    }

    #[test]
    fn parts_come_after_the_part_they_hang_under() {
        let mut doc = json!({ "parts": [
            { "id": "c", "parentId": "b" }, { "id": "b", "parentId": "a" }, { "id": "a", "parentId": null }, { "id": "d", "parentId": "x" }
        ]});
        parents_first(&mut doc);
        let order: Vec<&str> = doc["parts"].as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap()).collect();
        assert_eq!(order, ["a", "d", "b", "c"]);
    }

    #[test]
    fn a_pair_of_environments_has_one_key() {
        assert_eq!(pair("staging", "production"), pair("production", "staging"));
    }
}
