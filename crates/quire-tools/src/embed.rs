//! Semantic search: an [`Embedder`] turns text into vectors; the first is
//! an OpenAI-compatible `/embeddings` client (OpenAI, Ollama, vLLM, LM
//! Studio). Records are embedded in the background ([`embed_pending`], run
//! by the media worker) and searched by exact cosine similarity over the
//! stored vectors, fused with the full-text ranking by reciprocal rank.

use crate::error::ToolError;
use crate::openai::Endpoint;
use quire_core::model::Image;
use quire_store::{Scope, Searched, Store, StoreError};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// A boxed future of vectors.
pub type EmbedFuture<'a> = Pin<Box<dyn Future<Output = Result<Vec<Vec<f32>>, String>> + Send + 'a>>;

/// Turns texts into vectors, one per text, in order.
pub trait Embedder: Send + Sync + std::fmt::Debug {
    /// The model's name (vectors of different models are kept apart).
    fn model(&self) -> &str;
    /// Embeds `texts`.
    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a>;
}

/// An OpenAI-compatible `POST {base_url}/embeddings` client.
#[derive(Debug)]
pub struct OpenAiEmbedder {
    endpoint: Endpoint,
}

impl OpenAiEmbedder {
    /// A client of `base_url` (`https://api.openai.com/v1`,
    /// `http://localhost:11434/v1`) for `model`.
    pub fn new(base_url: &str, api_key: Option<String>, model: impl Into<String>) -> Result<Self, String> {
        let timeout = Duration::from_secs(60);
        let endpoint =
            Endpoint::new(base_url, "/embeddings", api_key, model, timeout, "embeddings", "embeddings server")?;
        Ok(OpenAiEmbedder { endpoint })
    }
}

impl Embedder for OpenAiEmbedder {
    fn model(&self) -> &str {
        &self.endpoint.model
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        Box::pin(async move {
            let body = self.endpoint.post(&json!({ "model": self.endpoint.model, "input": texts })).await?;
            let mut rows: Vec<(usize, Vec<f32>)> = body["data"]
                .as_array()
                .ok_or("embeddings answer has no data array")?
                .iter()
                .enumerate()
                .map(|(i, row)| {
                    let index = row["index"].as_u64().map_or(i, |n| n as usize);
                    let vector = row["embedding"]
                        .as_array()
                        .map(|v| v.iter().filter_map(Value::as_f64).map(|x| x as f32).collect())
                        .unwrap_or_default();
                    (index, vector)
                })
                .collect();
            rows.sort_by_key(|(i, _)| *i);
            if rows.len() != texts.len() || rows.iter().any(|(_, v)| v.is_empty()) {
                return Err(format!("embeddings answer holds {} vectors for {} texts", rows.len(), texts.len()));
            }
            Ok(rows.into_iter().map(|(_, v)| v).collect())
        })
    }
}

/// A shared embedder.
pub type SharedEmbedder = Arc<dyn Embedder>;

/// The text an image is embedded from: its file name as words, alt text,
/// description, tags and categories.
pub fn image_text(i: &Image) -> String {
    let stem = i.filename.rsplit_once('.').map_or(i.filename.as_str(), |(s, _)| s);
    let name: String = stem.chars().map(|c| if c.is_alphanumeric() { c } else { ' ' }).collect();
    let mut parts = vec![name.trim().to_string()];
    parts.extend(i.alt.iter().cloned());
    parts.extend(i.description.iter().cloned());
    if !i.tags.is_empty() {
        parts.push(format!("tags: {}", i.tags.join(", ")));
    }
    if !i.categories.is_empty() {
        parts.push(format!("categories: {}", i.categories.join(", ")));
    }
    parts.retain(|p| !p.is_empty());
    parts.join(". ")
}

fn hash(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// `v` scaled to unit length (cosine similarity becomes a dot product).
pub fn normalise(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// A record's text waiting to be embedded: `(scope, entity, id, text,
/// hash of the text its vector was made of, the version read)`.
type Pending = (Scope, &'static str, String, String, Option<String>, i64);

/// Embeds up to `batch` records of each searched kind (images, pages with
/// their sections, entries) whose text changed since they were last
/// embedded (or never were); answers how many were embedded.
pub async fn embed_pending(store: &Store, embedder: &dyn Embedder, batch: u32) -> Result<usize, String> {
    let model = embedder.model();
    let mut stale: Vec<Pending> = store
        .images_to_embed(model, batch)
        .await
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|(scope, image, known)| (scope, "image", image.id.clone(), image_text(&image), known, image.version))
        .collect();
    for kind in Searched::ALL {
        let docs = store.documents_to_embed(kind, model, batch).await.map_err(|e| e.to_string())?;
        stale.extend(docs.into_iter().map(|d| (d.scope, kind.entity(), d.id, d.text, d.known_hash, d.version)));
    }
    let mut todo = Vec::new();
    for (scope, entity, id, text, known, version) in stale {
        let h = hash(&text);
        if known.as_deref() == Some(h.as_str()) {
            // Changed elsewhere, not in its text: only note it is current.
            store.touch_embedding(&scope, entity, &id, model, version).await.map_err(|e| e.to_string())?;
        } else {
            todo.push((scope, entity, id, text, h, version));
        }
    }
    // One request per batch of texts, as many as a kind's batch.
    for chunk in todo.chunks(batch.max(1) as usize) {
        let inputs: Vec<String> = chunk.iter().map(|t| t.3.clone()).collect();
        let vectors = embedder.embed(&inputs).await?;
        for ((scope, entity, id, _, h, version), v) in chunk.iter().zip(vectors) {
            store
                .put_embedding(scope, entity, id, model, h, *version, &normalise(v))
                .await
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(todo.len())
}

/// How much of a note is embedded, in characters: the first part of a long
/// note (embedding models take a few thousand tokens at most).
pub const NOTE_TEXT_CHARS: usize = 4000;

/// The text a note is embedded from: its path as words, then its text
/// (the first [`NOTE_TEXT_CHARS`] characters).
pub fn note_text(path: &str, content: &str) -> String {
    let stem = path.rsplit_once('.').map_or(path, |(s, _)| s);
    let name: String = stem.chars().map(|c| if c.is_alphanumeric() { c } else { ' ' }).collect();
    let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
    let body: String = content.chars().take(NOTE_TEXT_CHARS).collect();
    format!("{name}. {}", body.trim())
}

/// Brings the vectors of every site's notes up to date with the vaults on
/// disk: embeds up to `batch` notes whose text changed since (or that were
/// never embedded), notes the unchanged ones whose file was touched, and
/// forgets the vectors of notes no longer there; answers how many were
/// embedded. Only vaults that exist are walked (none is created), and
/// only the notes whose modification time or size changed are read.
pub async fn embed_notes(
    store: &Store,
    vaults: &crate::vaults::Vaults,
    embedder: &dyn Embedder,
    batch: u32,
) -> Result<usize, String> {
    let model = embedder.model();
    let mut embedded = 0;
    for site in store.sites().await.map_err(|e| e.to_string())? {
        if embedded >= batch as usize {
            break;
        }
        if !vaults.folder(&site.slug).is_dir() {
            continue;
        }
        let scope = Scope::new(site.id.clone(), "");
        let vault = vaults.of(store, &scope).await.map_err(|e| e.message)?;
        let known = store.note_vector_stamps(&site.id, model).await.map_err(|e| e.to_string())?;
        let room = batch as usize - embedded;
        // (path, stamp, text) of the changed notes, and the paths gone.
        let (changed, gone) = tokio::task::spawn_blocking(move || {
            let notes = vault.note_stamps().map_err(|e| e.to_string())?;
            let mut changed = Vec::new();
            for note in &notes {
                if changed.len() >= room {
                    break;
                }
                if known.get(&note.path).is_some_and(|k| k.stamp == note.stamp) {
                    continue;
                }
                // A note that cannot be read (not UTF-8, too large) is left out.
                if let Ok(Some(content)) = vault.read_all(&note.path) {
                    let text = note_text(&note.path, &content);
                    let seen = quire_store::NoteVectorStamp { stamp: note.stamp.clone(), text_hash: hash(&text) };
                    changed.push((note.path.clone(), seen, text, known.get(&note.path).cloned()));
                }
            }
            let present: std::collections::HashSet<&str> = notes.iter().map(|n| n.path.as_str()).collect();
            let gone: Vec<String> = known.keys().filter(|p| !present.contains(p.as_str())).cloned().collect();
            Ok::<_, String>((changed, gone))
        })
        .await
        .map_err(|e| e.to_string())??;
        store.forget_note_vectors(&site.id, model, &gone).await.map_err(|e| e.to_string())?;
        let mut todo = Vec::new();
        for (path, seen, text, before) in changed {
            if before.is_some_and(|b| b.text_hash == seen.text_hash) {
                store.touch_note_vector(&site.id, &path, model, &seen.stamp).await.map_err(|e| e.to_string())?;
            } else {
                todo.push((path, seen, text));
            }
        }
        for chunk in todo.chunks(batch.max(1) as usize) {
            let inputs: Vec<String> = chunk.iter().map(|t| t.2.clone()).collect();
            let vectors = embedder.embed(&inputs).await?;
            for ((path, seen, _), v) in chunk.iter().zip(vectors) {
                store.put_note_vector(&site.id, path, model, seen, &normalise(v)).await.map_err(|e| e.to_string())?;
            }
        }
        embedded += todo.len();
    }
    Ok(embedded)
}

/// Least cosine similarity for a vector match to count.
pub const MIN_SIMILARITY: f32 = 0.3;

/// The unit vector of a query.
pub async fn query_vector(embedder: &dyn Embedder, query: &str) -> Result<Vec<f32>, String> {
    let q = embedder.embed(&[query.to_string()]).await?;
    Ok(normalise(q.into_iter().next().ok_or("no vector for the query")?))
}

/// Image ids of `scope` by similarity to `query`, best first, at most
/// `limit`, none below [`MIN_SIMILARITY`]; over the scope's vectors held
/// in memory by the store.
pub async fn similar_images(
    store: &Store,
    embedder: &dyn Embedder,
    scope: &Scope,
    query: &str,
    limit: usize,
) -> Result<Vec<String>, String> {
    let q = query_vector(embedder, query).await?;
    let found = store
        .similar(scope, "image", embedder.model(), &q, limit, MIN_SIMILARITY)
        .await
        .map_err(|e: StoreError| e.to_string())?;
    Ok(found.into_iter().map(|(id, _)| id).collect())
}

/// [`similar_images`] as it was before vectors were kept in memory: every
/// vector of the scope read from the database for each query. Kept as the
/// benchmark's baseline.
pub async fn similar_images_scan(store: &Store, q: &[f32], scope: &Scope, model: &str, limit: usize) -> Vec<String> {
    let vectors = store.embeddings(scope, "image", model).await.unwrap_or_default();
    let mut scored: Vec<(f32, String)> = vectors
        .into_iter()
        .filter(|(_, v)| v.len() == q.len())
        .map(|(id, v)| (v.iter().zip(q).map(|(a, b)| a * b).sum::<f32>(), id))
        .filter(|(s, _)| *s >= MIN_SIMILARITY)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.truncate(limit);
    scored.into_iter().map(|(_, id)| id).collect()
}

/// The longest query a search takes, in characters.
pub const MAX_QUERY_CHARS: usize = 1000;

/// A search query checked: not blank, not longer than
/// [`MAX_QUERY_CHARS`], with a letter or digit to look for.
pub fn checked_query(query: Option<&str>) -> Result<&str, ToolError> {
    let q = query.unwrap_or_default().trim();
    let hint = "Describe what you are looking for in a few words, e.g. \"sunset over the mountains\".";
    if q.is_empty() {
        return Err(ToolError::invalid("query: is empty", hint));
    }
    let n = q.chars().count();
    if n > MAX_QUERY_CHARS {
        return Err(ToolError::invalid(format!("query: is {n} characters long; the limit is {MAX_QUERY_CHARS}"), hint));
    }
    if !q.chars().any(char::is_alphanumeric) {
        return Err(ToolError::invalid("query: has no letters or digits to search for", hint));
    }
    Ok(q)
}

/// How many candidates each ranking contributes before fusion.
pub const POOL: usize = 50;

/// Ids of `entity` records of `scope` for `query`, best first, and which
/// ranking answered: `hybrid` (the full-text ranking `fulltext` fused by
/// reciprocal rank with vector similarity) when an embedding model is
/// configured and answers, else `fulltext` alone. `fulltext` runs while
/// the query is embedded. At most `pool` ids; the caller reads the records
/// (which may narrow them further) and keeps as many as it lists.
pub async fn rank<F>(
    store: &Store,
    embedder: Option<&dyn Embedder>,
    scope: &Scope,
    entity: &str,
    query: &str,
    pool: usize,
    fulltext: F,
) -> Result<(Vec<String>, &'static str), ToolError>
where
    F: Future<Output = Result<Vec<String>, StoreError>>,
{
    let Some(embedder) = embedder else {
        return Ok((fulltext.await?, "fulltext"));
    };
    let similar = async {
        let q = query_vector(embedder, query).await?;
        store.similar(scope, entity, embedder.model(), &q, pool, MIN_SIMILARITY).await.map_err(|e| e.to_string())
    };
    let (fulltext, similar) = tokio::join!(fulltext, similar);
    let fulltext = fulltext?;
    match similar {
        Ok(found) => {
            let similar: Vec<String> = found.into_iter().map(|(id, _)| id).collect();
            Ok((fuse(&[fulltext, similar], pool), "hybrid"))
        }
        Err(e) => {
            tracing::warn!(error = %e, entity, "semantic search unavailable; full text alone answers");
            Ok((fulltext, "fulltext"))
        }
    }
}

/// Reciprocal rank fusion of ranked id lists (k = 60): an id's score is
/// the sum of 1 / (k + rank) over the lists it is in.
pub fn fuse(lists: &[Vec<String>], limit: usize) -> Vec<String> {
    let mut scores: Vec<(String, f64)> = Vec::new();
    for list in lists {
        for (rank, id) in list.iter().enumerate() {
            let add = 1.0 / (60.0 + rank as f64 + 1.0);
            match scores.iter_mut().find(|(i, _)| i == id) {
                Some((_, s)) => *s += add,
                None => scores.push((id.clone(), add)),
            }
        }
    }
    // Stable: ties keep the order of first appearance (full text first).
    scores.sort_by(|a, b| b.1.total_cmp(&a.1));
    scores.into_iter().take(limit).map(|(id, _)| id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_rewards_agreement() {
        let a = vec!["x".to_string(), "y".into(), "z".into()];
        let b = vec!["z".to_string(), "w".into()];
        assert_eq!(fuse(&[a, b], 3), ["z", "x", "y"]);
    }

    #[test]
    fn vectors_are_normalised() {
        let v = normalise(vec![3.0, 4.0]);
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
        assert_eq!(normalise(vec![0.0, 0.0]), [0.0, 0.0]);
    }
}
