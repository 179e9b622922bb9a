//! Vectors of a scope in memory for semantic search. Each set (scope,
//! entity, model) is read from the `embeddings` table the first time it is
//! searched, then kept current by this process's writes; a `vector_sets`
//! counter, raised by every write of any process, tells with one lookup per
//! search whether the set in memory is still the database's (if not, it is
//! read again). A search scores every vector of the set (exact cosine as a
//! dot product of unit vectors, contiguous `f32`s) and drops records that
//! are archived.
//!
//! On PostgreSQL with the pgvector extension installed, the vectors of
//! records are also kept in a `vector` column of `embeddings` and searched
//! there instead (cosine distance, `<=>`), so every replica searches the
//! same vectors without holding them; so are the notes' (`note_vectors`).
//! Without the extension PostgreSQL searches as SQLite does.

use crate::db::{self, Conn};
use crate::{Result, Scope, Store, StoreError};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    site_id: String,
    env: String,
    entity: String,
    model: String,
}

impl Key {
    fn new(scope: &Scope, entity: &str, model: &str) -> Self {
        Key { site_id: scope.site_id.clone(), env: scope.env.clone(), entity: entity.into(), model: model.into() }
    }
}

/// One set's vectors: `ids[i]` owns `data[i * dims .. (i + 1) * dims]`.
#[derive(Debug, Default)]
struct Set {
    generation: i64,
    dims: usize,
    ids: Vec<String>,
    slot: HashMap<String, usize>,
    data: Vec<f32>,
}

impl Set {
    fn put(&mut self, id: &str, v: &[f32]) {
        if self.ids.is_empty() && self.dims == 0 {
            self.dims = v.len();
        }
        if v.len() != self.dims {
            // A vector of another size cannot be compared with the others.
            return;
        }
        match self.slot.get(id) {
            Some(&i) => self.data[i * self.dims..(i + 1) * self.dims].copy_from_slice(v),
            None => {
                self.slot.insert(id.to_string(), self.ids.len());
                self.ids.push(id.to_string());
                self.data.extend_from_slice(v);
            }
        }
    }

    /// `(score, slot)` of every vector scoring at least `min`, unordered.
    fn scores(&self, q: &[f32], min: f32) -> Vec<(f32, usize)> {
        if q.len() != self.dims || self.dims == 0 {
            return Vec::new();
        }
        self.data
            .chunks_exact(self.dims)
            .map(|v| dot(v, q))
            .enumerate()
            .filter(|(_, s)| *s >= min)
            .map(|(i, s)| (s, i))
            .collect()
    }
}

/// Dot product in eight lanes, which the compiler turns into SIMD.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// The sets this process has read, by scope, entity and model.
#[derive(Debug, Default, Clone)]
pub(crate) struct Vectors {
    sets: Arc<Mutex<HashMap<Key, Arc<RwLock<Set>>>>>,
}

impl Vectors {
    fn get(&self, key: &Key) -> Option<Arc<RwLock<Set>>> {
        self.sets.lock().unwrap_or_else(|e| e.into_inner()).get(key).cloned()
    }

    /// After a write that raised the set's counter to `generation`: the set
    /// in memory takes the vector when it was current just before;
    /// otherwise it is dropped, to be read again.
    fn wrote(&self, key: &Key, generation: i64, id: &str, v: &[f32]) {
        let Some(set) = self.get(key) else { return };
        let mut set = set.write().unwrap_or_else(|e| e.into_inner());
        if set.generation == generation - 1 {
            set.put(id, v);
            set.generation = generation;
        } else if set.generation < generation {
            drop(set);
            self.sets.lock().unwrap_or_else(|e| e.into_inner()).remove(key);
        }
    }
}

/// The live-record table of an entity whose vectors are searched.
pub(crate) fn table(entity: &str) -> Result<&'static str> {
    Ok(match entity {
        "image" => "images",
        "page" => "pages",
        "section" => "page_sections",
        "entry" => "entries",
        other => return Err(StoreError::Corrupt(format!("no vectors are kept for {other}"))),
    })
}

fn blob_to_vec(blob: &[u8]) -> Vec<f32> {
    blob.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// Raises the counter of a set inside the transaction that wrote one of its
/// vectors; answers the new value.
pub(crate) fn raise(conn: &Conn, scope: &Scope, entity: &str, model: &str) -> Result<i64> {
    db::query_scalar(
        "INSERT INTO vector_sets (site_id, env, entity, model, generation) VALUES (?1, ?2, ?3, ?4, 1)
         ON CONFLICT (site_id, env, entity, model) DO UPDATE SET generation = vector_sets.generation + 1
         RETURNING generation",
    )
    .bind_scope(scope)
    .bind(entity)
    .bind(model)
    .fetch_one(conn)
}

/// The counter of the set of `key` in the database (0 before its first write).
fn stored_generation(conn: &Conn, key: &Key) -> Result<i64> {
    db::query_scalar(
        "SELECT coalesce((SELECT generation FROM vector_sets
         WHERE site_id = ?1 AND env = ?2 AND entity = ?3 AND model = ?4), 0)",
    )
    .bind(&key.site_id)
    .bind(&key.env)
    .bind(&key.entity)
    .bind(&key.model)
    .fetch_one(conn)
}

impl Vectors {
    /// The set of `key`, current with the database: the one in memory when
    /// its counter is the database's, else read anew. Runs inside a read
    /// closure: the locks it takes are held for no query.
    fn current(&self, conn: &Conn, key: &Key) -> Result<Arc<RwLock<Set>>> {
        let current = stored_generation(conn, key)?;
        if let Some(set) = self.get(key)
            && set.read().unwrap_or_else(|e| e.into_inner()).generation == current
        {
            return Ok(set);
        }
        // The counter and the vectors from one snapshot of the database.
        let (generation, rows) = conn.transaction(false, |c| {
            let generation = stored_generation(c, key)?;
            let rows: Vec<(String, Vec<u8>)> = if key.entity == NOTE {
                db::query_as("SELECT path, vector FROM note_vectors WHERE site_id = ?1 AND model = ?2 ORDER BY path")
                    .bind(&key.site_id)
                    .bind(&key.model)
                    .fetch_all(c)?
            } else {
                db::query_as(
                    "SELECT entity_id, vector FROM embeddings
                     WHERE site_id = ?1 AND env = ?2 AND entity = ?3 AND model = ?4 ORDER BY entity_id",
                )
                .bind(&key.site_id)
                .bind(&key.env)
                .bind(&key.entity)
                .bind(&key.model)
                .fetch_all(c)?
            };
            Ok((generation, rows))
        })?;
        let mut set = Set { generation, ..Set::default() };
        for (id, blob) in rows {
            set.put(&id, &blob_to_vec(&blob));
        }
        let set = Arc::new(RwLock::new(set));
        let mut sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
        match sets.get(key) {
            // Another search read a newer one meanwhile.
            Some(kept) if kept.read().unwrap_or_else(|e| e.into_inner()).generation >= generation => {
                Ok(Arc::clone(kept))
            }
            _ => {
                sets.insert(key.clone(), Arc::clone(&set));
                Ok(set)
            }
        }
    }
}

impl Store {
    /// Notes a vector this process wrote (after its transaction committed).
    pub(crate) fn vector_written(
        &self,
        scope: &Scope,
        entity: &str,
        model: &str,
        generation: i64,
        id: &str,
        v: &[f32],
    ) {
        self.vectors.wrote(&Key::new(scope, entity, model), generation, id, v);
    }

    /// Live `entity` records of `scope` whose `model` vectors are most
    /// similar to the unit vector `q`: at most `limit`, each scoring at
    /// least `min`, best first, with their scores.
    pub async fn similar(
        &self,
        scope: &Scope,
        entity: &str,
        model: &str,
        q: &[f32],
        limit: usize,
        min: f32,
    ) -> Result<Vec<(String, f32)>> {
        let table = table(entity)?;
        let key = Key::new(scope, entity, model);
        if self.pgvector {
            return self.similar_in_database(table, &key, q, limit, min).await;
        }
        let (vectors, scope, q) = (self.vectors.clone(), scope.clone(), q.to_vec());
        // The set's check, the scoring and the checks of liveness in one
        // read: the scoring runs off the async threads too.
        self.db
            .read(move |c| {
                let set = vectors.current(c, &key)?;
                let mut scored = set.read().unwrap_or_else(|e| e.into_inner()).scores(&q, min);
                // Archived records keep their vectors: the best candidates are
                // checked in batches, each picked from what is left, until enough
                // live ones are found (one batch, unless many are archived).
                let batch = limit + limit / 2 + 4;
                let mut found = Vec::with_capacity(limit);
                let mut rest = &mut scored[..];
                while found.len() < limit && !rest.is_empty() {
                    let take = batch.min(rest.len());
                    if take < rest.len() {
                        rest.select_nth_unstable_by(take - 1, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                    }
                    let (head, tail) = rest.split_at_mut(take);
                    head.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                    let ids: Vec<(String, f32)> = {
                        let set = set.read().unwrap_or_else(|e| e.into_inner());
                        head.iter().map(|&(s, i)| (set.ids[i].clone(), s)).collect()
                    };
                    let marks = vec!["?"; ids.len()].join(", ");
                    let sql = format!(
                        "SELECT id FROM {table} WHERE id IN ({marks}) AND site_id = ? AND env = ? AND archive_id IS NULL"
                    );
                    // `table` is one of four constants; every value is bound.
                    let mut query = db::query_scalar::<String>(sql);
                    for (id, _) in &ids {
                        query = query.bind(id);
                    }
                    let live: std::collections::HashSet<String> =
                        query.bind_scope(&scope).fetch_all(c)?.into_iter().collect();
                    let room = limit - found.len();
                    found.extend(ids.into_iter().filter(|(id, _)| live.contains(id)).take(room));
                    rest = tail;
                }
                Ok(found)
            })
            .await
    }
}

/// Readies pgvector search on a PostgreSQL database where the extension is
/// installed (by an administrator, or here if this role may create it):
/// the `embedding` column, filled for vectors stored before. Whether
/// similarity search runs in the database.
pub(crate) fn pgvector(conn: &Conn) -> Result<bool> {
    if !conn.is_postgres() {
        return Ok(false);
    }
    let installed = |c: &Conn| -> Result<bool> {
        db::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')").fetch_one(c)
    };
    if !installed(conn)? {
        let available: bool =
            db::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')")
                .fetch_one(conn)?;
        if !available {
            return Ok(false);
        }
        if let Err(e) = conn.batch("CREATE EXTENSION IF NOT EXISTS vector")
            && !installed(conn)?
        {
            tracing::warn!(error = %e, "pgvector is available but cannot be created here; vectors are searched in memory");
            return Ok(false);
        }
    }
    // Replicas starting at once add the column once (the migrations' lock).
    conn.batch("SELECT pg_advisory_lock(7726921)")?;
    let readied = conn.transaction(true, |c| {
        c.batch(
            "ALTER TABLE embeddings ADD COLUMN IF NOT EXISTS embedding vector;
             ALTER TABLE note_vectors ADD COLUMN IF NOT EXISTS embedding vector",
        )?;
        fill_embeddings(c)
    });
    conn.batch("SELECT pg_advisory_unlock(7726921)")?;
    readied.map(|()| true)
}

/// Gives the stored vectors that have no pgvector copy one (those stored
/// before the extension was, or brought in by an import), where the
/// database keeps such copies.
pub(crate) fn fill_embeddings(conn: &Conn) -> Result<()> {
    fill_copies(conn, "embeddings", &["entity_id", "model", "site_id", "env"])?;
    fill_copies(conn, "note_vectors", &["site_id", "model", "path"])
}

/// Gives the rows of `table` whose `vector` has no pgvector copy theirs,
/// where the table has the column: a few hundred at a time, so a large
/// site's vectors are never all in memory at once. `keys` name a row.
fn fill_copies(conn: &Conn, table: &str, keys: &[&str]) -> Result<()> {
    let kept: bool = db::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM information_schema.columns
         WHERE table_schema = current_schema() AND table_name = ?1 AND column_name = 'embedding')",
    )
    .bind(table)
    .fetch_one(conn)?;
    if !kept {
        return Ok(());
    }
    // `table` and `keys` are constants of this file; every value is bound.
    let select = format!("SELECT {}, vector FROM {table} WHERE embedding IS NULL LIMIT 256", keys.join(", "));
    let row_is: Vec<String> = keys.iter().enumerate().map(|(i, k)| format!("{k} = ?{}", i + 2)).collect();
    let update = format!("UPDATE {table} SET embedding = CAST(?1 AS TEXT)::vector WHERE {}", row_is.join(" AND "));
    loop {
        let rows = db::query(select.clone()).fetch_all(conn)?;
        if rows.is_empty() {
            return Ok(());
        }
        for row in rows {
            let blob: Vec<u8> = row.try_get("vector")?;
            let mut copy = db::query(update.clone()).bind(vector_text(&blob_to_vec(&blob)));
            for key in &row.values()[..keys.len()] {
                copy = copy.bind(key.clone());
            }
            copy.execute(conn)?;
        }
    }
}

/// A vector as pgvector reads it from text: `[0.6,0.8]`.
pub(crate) fn vector_text(v: &[f32]) -> String {
    let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", parts.join(","))
}

impl Store {
    /// [`Store::similar`] by pgvector: the nearest vectors by cosine
    /// distance, of live records only, scored as cosine similarity.
    async fn similar_in_database(
        &self,
        table: &'static str,
        key: &Key,
        q: &[f32],
        limit: usize,
        min: f32,
    ) -> Result<Vec<(String, f32)>> {
        // `table` is one of four constants; every value is bound.
        let sql = format!(
            "SELECT e.entity_id, 1 - (e.embedding <=> CAST(?1 AS TEXT)::vector) AS score
             FROM embeddings e JOIN {table} r ON r.id = e.entity_id AND r.site_id = e.site_id AND r.env = e.env
             WHERE e.site_id = ?2 AND e.env = ?3 AND e.entity = ?4 AND e.model = ?5 AND e.dims = ?6
               AND e.embedding IS NOT NULL AND r.archive_id IS NULL
             ORDER BY e.embedding <=> CAST(?1 AS TEXT)::vector, e.entity_id LIMIT ?7"
        );
        let query = db::query_as::<(String, f64)>(sql)
            .bind(vector_text(q))
            .bind(&key.site_id)
            .bind(&key.env)
            .bind(&key.entity)
            .bind(&key.model)
            .bind(q.len() as i64)
            .bind(limit as i64);
        let found = self.db.read(move |c| query.fetch_all(c)).await?;
        Ok(found.into_iter().map(|(id, score)| (id, score as f32)).filter(|(_, score)| *score >= min).collect())
    }

    /// Where similarity search of records runs: `pgvector` (in
    /// PostgreSQL) or `memory`.
    pub fn vector_search(&self) -> &'static str {
        if self.pgvector { "pgvector" } else { "memory" }
    }
}

/// The entity name of notes among the vector sets; their set is the site's
/// (empty env), their ids are vault paths.
const NOTE: &str = "note";

/// What the store knows of a note's vector: the stamp of the note it was
/// made from (see `quire_vault::NoteStamp`) and the hash of its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteVectorStamp {
    /// The note's stamp when it was last read.
    pub stamp: String,
    /// Hash of the text the vector was made of.
    pub text_hash: String,
}

impl Store {
    /// The notes of a site's vault that have a `model` vector, by path.
    pub async fn note_vector_stamps(&self, site_id: &str, model: &str) -> Result<HashMap<String, NoteVectorStamp>> {
        let q = db::query_as::<(String, String, String)>(
            "SELECT path, stamp, text_hash FROM note_vectors WHERE site_id = ?1 AND model = ?2",
        )
        .bind(site_id)
        .bind(model);
        let rows = self.db.read(move |c| q.fetch_all(c)).await?;
        Ok(rows.into_iter().map(|(path, stamp, text_hash)| (path, NoteVectorStamp { stamp, text_hash })).collect())
    }

    /// Stores the (unit-length) vector of a site's note for `model`, made
    /// of its text read at `stamp`.
    pub async fn put_note_vector(
        &self,
        site_id: &str,
        path: &str,
        model: &str,
        seen: &NoteVectorStamp,
        vector: &[f32],
    ) -> Result<()> {
        let blob: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
        let scope = Scope::new(site_id, "");
        let upsert = db::query(
            "INSERT INTO note_vectors (site_id, model, path, stamp, text_hash, dims, vector, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT (site_id, model, path) DO UPDATE SET stamp = excluded.stamp,
             text_hash = excluded.text_hash, dims = excluded.dims, vector = excluded.vector,
             updated_at = excluded.updated_at",
        )
        .bind(site_id)
        .bind(model)
        .bind(path)
        .bind(&seen.stamp)
        .bind(&seen.text_hash)
        .bind(vector.len() as i64)
        .bind(blob)
        .bind(chrono::Utc::now());
        let copy = self.pgvector.then(|| {
            db::query(
                "UPDATE note_vectors SET embedding = CAST(?1 AS TEXT)::vector
                 WHERE site_id = ?2 AND model = ?3 AND path = ?4",
            )
            .bind(vector_text(vector))
            .bind(site_id)
            .bind(model)
            .bind(path)
        });
        let (written, set_model) = (scope.clone(), model.to_string());
        let generation = self
            .db
            .write(move |c| {
                upsert.execute(c)?;
                if let Some(copy) = copy {
                    copy.execute(c)?;
                }
                raise(c, &written, NOTE, &set_model)
            })
            .await?;
        self.vector_written(&scope, NOTE, model, generation, path, vector);
        Ok(())
    }

    /// Notes that a note's vector is current at `stamp` (the note was
    /// touched or rewritten with the same text).
    pub async fn touch_note_vector(&self, site_id: &str, path: &str, model: &str, stamp: &str) -> Result<()> {
        let q = db::query("UPDATE note_vectors SET stamp = ?4 WHERE site_id = ?1 AND model = ?2 AND path = ?3")
            .bind(site_id)
            .bind(model)
            .bind(path)
            .bind(stamp);
        self.db.write(move |c| q.execute(c).map(drop)).await
    }

    /// Drops the vectors of notes that are no longer in the vault (moved,
    /// archived, deleted outside Quire).
    pub async fn forget_note_vectors(&self, site_id: &str, model: &str, paths: &[String]) -> Result<()> {
        if paths.is_empty() {
            return Ok(());
        }
        let scope = Scope::new(site_id, "");
        let (written, model_owned, paths) = (scope.clone(), model.to_string(), paths.to_vec());
        self.db
            .write(move |c| {
                for path in &paths {
                    db::query("DELETE FROM note_vectors WHERE site_id = ?1 AND model = ?2 AND path = ?3")
                        .bind(&written.site_id)
                        .bind(&model_owned)
                        .bind(path)
                        .execute(c)?;
                }
                raise(c, &written, NOTE, &model_owned).map(drop)
            })
            .await?;
        // Read again at the next search.
        self.vectors.sets.lock().unwrap_or_else(|e| e.into_inner()).remove(&Key::new(&scope, NOTE, model));
        Ok(())
    }

    /// Notes of a site's vault whose `model` vectors score at least `min`
    /// against the unit vector `q`, best first, with their scores: at most
    /// `limit` among the paths `among` (the caller's notes in view).
    pub async fn similar_notes(
        &self,
        site_id: &str,
        model: &str,
        q: &[f32],
        limit: usize,
        min: f32,
        among: &std::collections::HashSet<String>,
    ) -> Result<Vec<(String, f32)>> {
        if self.pgvector {
            let paths: Vec<&String> = among.iter().collect();
            let query = db::query_as::<(String, f64)>(
                "SELECT path, 1 - (embedding <=> CAST(?1 AS TEXT)::vector) AS score FROM note_vectors
                 WHERE site_id = ?2 AND model = ?3 AND dims = ?4 AND embedding IS NOT NULL
                   AND path IN (SELECT value FROM json_each(?5))
                 ORDER BY embedding <=> CAST(?1 AS TEXT)::vector, path LIMIT ?6",
            )
            .bind(vector_text(q))
            .bind(site_id)
            .bind(model)
            .bind(q.len() as i64)
            .bind(serde_json::to_string(&paths).map_err(|e| StoreError::Corrupt(e.to_string()))?)
            .bind(limit as i64);
            let found = self.db.read(move |c| query.fetch_all(c)).await?;
            return Ok(found.into_iter().map(|(p, score)| (p, score as f32)).filter(|(_, s)| *s >= min).collect());
        }
        let key = Key::new(&Scope::new(site_id, ""), NOTE, model);
        let vectors = self.vectors.clone();
        let set = self.db.read(move |c| vectors.current(c, &key)).await?;
        let set = set.read().unwrap_or_else(|e| e.into_inner());
        let mut scored: Vec<(f32, usize)> =
            set.scores(q, min).into_iter().filter(|&(_, i)| among.contains(&set.ids[i])).collect();
        scored.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        Ok(scored.into_iter().take(limit).map(|(s, i)| (set.ids[i].clone(), s)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dot_product_matches_the_plain_sum() {
        let a: Vec<f32> = (0..389).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..389).map(|i| (i as f32 * 0.11).cos()).collect();
        let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - plain).abs() < 1e-3);
    }

    #[test]
    fn a_set_replaces_a_vector_in_place_and_ignores_other_sizes() {
        let mut set = Set::default();
        set.put("a", &[1.0, 0.0]);
        set.put("b", &[0.0, 1.0]);
        set.put("a", &[0.6, 0.8]);
        set.put("c", &[1.0, 0.0, 0.0]);
        assert_eq!(set.ids, ["a", "b"]);
        let mut ranked = set.scores(&[0.0, 1.0], 0.5);
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        assert_eq!(ranked, vec![(1.0, 1), (0.8, 0)]);
        assert!(set.scores(&[1.0], 0.0).is_empty());
    }
}
