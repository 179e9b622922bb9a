//! Media: staged uploads, images made from them, the files served under
//! `/uploads`, and the durable job queue their processing runs on.
//!
//! A job is `queued` until its `run_after`; claiming it makes it `running`
//! with a lease and counts an attempt. A job whose lease ran out (its process
//! stopped) is claimed again. Finishing or failing names the attempt, so a
//! worker whose job was taken over cannot overwrite the newer attempt's
//! result. Failures retry with exponential backoff up to `max_attempts`.

use crate::db::{self, Conn, Row, read_row};
use crate::log::new_id;
use crate::record::{Record, found, wire_col, wire_text, write_version};
use crate::{Result, Scope, Store, StoreError};
use chrono::{DateTime, Utc};
use quire_core::input::NewImage;
use quire_core::model::{ChangeAction, ChangeContext, Image, ImageSource, ImageStatus, JobKind, JobStatus, Upload};
use serde_json::{Value, json};
use std::time::Duration;

/// Attempts a processing job gets before the image is marked failed.
const MAX_ATTEMPTS: i64 = 3;

/// A file received, to be recorded as an [`Upload`].
#[derive(Debug, Clone)]
pub struct NewUpload {
    /// Its id (also the staged file's name).
    pub id: String,
    /// Where it is staged, relative to the uploads folder.
    pub path: String,
    /// The file name it came with.
    pub filename: String,
    /// Type found in its bytes.
    pub mime: String,
    /// Size in bytes.
    pub bytes: i64,
    /// SHA-256 of its bytes (hex).
    pub sha256: String,
    /// Width its header declares.
    pub width: i64,
    /// Height its header declares.
    pub height: i64,
    /// Who sent it.
    pub created_by: String,
}

/// A unit of background work.
#[derive(Debug, Clone)]
pub struct Job {
    /// Identifier.
    pub id: String,
    /// What to do.
    pub kind: JobKind,
    /// Scope of its subject.
    pub scope: Scope,
    /// The record it works on.
    pub subject_id: String,
    /// Kind-specific arguments.
    pub payload: Value,
    /// Where it stands.
    pub status: JobStatus,
    /// Attempts so far, this one included.
    pub attempts: i64,
    /// Attempts allowed.
    pub max_attempts: i64,
    /// The last failure.
    pub error: Option<String>,
    /// What it is doing while running (`decoding`, `variants`, ...).
    pub stage: Option<String>,
    /// How far it got, 0 to 100.
    pub progress: i64,
    /// When it was queued.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// A job as clients see it: what it works on, where it is, why it failed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobInfo {
    /// Identifier.
    pub id: String,
    /// `image.process` (decode, strip metadata, variants) or
    /// `image.describe` (alt text by a vision model).
    #[schema(value_type = String)]
    pub kind: JobKind,
    /// The record it works on (the image's id).
    pub subject_id: String,
    /// `queued` (waiting, or waiting to retry after a failed attempt),
    /// `running`, `done` or `failed`.
    #[schema(value_type = String, example = "running")]
    pub status: JobStatus,
    /// While running: what it is doing (`starting`, `reading`, `decoding`,
    /// `encoding`, `variants`, `storing`, `describing`); otherwise null.
    pub stage: Option<String>,
    /// How far it got, 0 to 100 (100 once done).
    #[schema(minimum = 0, maximum = 100)]
    pub progress: i64,
    /// Attempts so far (a retry or a take-over after a crash counts one).
    pub attempts: i64,
    /// Attempts allowed before it fails.
    pub max_attempts: i64,
    /// Why it failed (status failed), or why the last attempt did (status
    /// queued after a failure).
    pub error: Option<String>,
    /// When it was queued.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

impl Job {
    /// What clients see of it.
    pub fn info(&self) -> JobInfo {
        JobInfo {
            id: self.id.clone(),
            kind: self.kind,
            subject_id: self.subject_id.clone(),
            status: self.status,
            stage: self.stage.clone(),
            progress: self.progress,
            attempts: self.attempts,
            max_attempts: self.max_attempts,
            error: self.error.clone(),
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }

    /// The agent session whose turn queued it, if any.
    pub fn session_id(&self) -> Option<&str> {
        self.payload["sessionId"].as_str()
    }
}

/// What processing made of an image.
#[derive(Debug, Clone)]
pub struct ImageResult {
    /// URL of the stored original.
    pub url: String,
    /// Its type.
    pub mime: String,
    /// Width after orientation.
    pub width: i64,
    /// Height after orientation.
    pub height: i64,
    /// Size of the stored original.
    pub bytes: i64,
    /// `{ name: { width, height, webp, url } }`.
    pub variants: Value,
    /// Average colour.
    pub color: String,
    /// Every file written: URL path and type.
    pub files: Vec<ImageFile>,
}

/// A file served under `/uploads`.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageFile {
    /// URL path (`/uploads/<site>/<name>`).
    pub path: String,
    /// Content-Type it is served with.
    pub mime: String,
}

pub(crate) fn millis(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

/// Delay before attempt `attempts + 1`: 5 s, 20 s, 80 s, ... at most 10 min.
fn backoff(attempts: i64) -> Duration {
    let exp = attempts.clamp(1, 8) as u32 - 1;
    Duration::from_secs((5u64 * 4u64.pow(exp)).min(600))
}

fn upload_from_row(row: &Row) -> Result<(Upload, String)> {
    Ok((
        read_row!(row => Upload { id, url, filename, mime, bytes, sha256, width, height, created_at }),
        row.try_get("path")?,
    ))
}

fn job_from_row(row: &Row) -> Result<Job> {
    let payload: String = row.try_get("payload")?;
    Ok(read_row!(row => Job {
        id, subject_id, attempts, max_attempts, error, stage, progress, created_at, updated_at;
        kind: wire_col(row, "kind")?,
        scope: Scope::new(row.try_get::<String, _>("site_id")?, row.try_get::<String, _>("env")?),
        payload: serde_json::from_str(&payload).map_err(|e| StoreError::Corrupt(format!("job payload: {e}")))?,
        status: wire_col(row, "status")?,
    }))
}

/// Records that `path` serves `image_id`'s file as `mime`.
pub(crate) fn register_file(conn: &Conn, path: &str, image_id: &str, mime: &str) -> Result<()> {
    db::query("INSERT INTO image_files (path, image_id, mime) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING")
        .bind(path)
        .bind(image_id)
        .bind(mime)
        .execute(conn)?;
    Ok(())
}

/// Queues a job of `kind` on `subject_id`, due now, inside a write.
fn queue_job(c: &Conn, kind: JobKind, scope: &Scope, subject_id: &str, payload: &Value) -> Result<()> {
    let now = Utc::now();
    db::query(
        "INSERT INTO jobs (id, kind, site_id, env, subject_id, payload, status, attempts, max_attempts, run_after,
         created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'queued', 0, ?7, ?8, ?9, ?9)",
    )
    .bind(new_id())
    .bind(kind.as_str())
    .bind_scope(scope)
    .bind(subject_id)
    .bind(payload.to_string())
    .bind(MAX_ATTEMPTS)
    .bind(millis(now))
    .bind(now)
    .execute(c)?;
    Ok(())
}

/// Marks this attempt of `job` done and loads its image, inside the write
/// that completes it; a conflict when a later attempt took the job over.
fn finish_job_image(c: &Conn, job: &Job) -> Result<Image> {
    if !Store::finish_attempt(c, job, JobStatus::Done, None)? {
        return Err(StoreError::conflict(None, format!("job {} was taken over by a later attempt", job.id)));
    }
    any_image(c, &job.scope, &job.subject_id)
}

/// An image of the scope by id, archived or not.
fn any_image(conn: &Conn, scope: &Scope, id: &str) -> Result<Image> {
    found(db::row_in("images", scope, id).fetch_optional(conn)?, Image::from_row, "image", id)
}

/// Applies `edit` to `before`, the image `job` works on, and writes the
/// result as a logged update by `actor` (see [`job_context`]) unless it
/// changed nothing.
fn edit_job_image(c: &Conn, job: &Job, actor: &str, before: Image, edit: impl FnOnce(&mut Image)) -> Result<Image> {
    let mut after = before.clone();
    edit(&mut after);
    if after != before {
        write_version(c, &job.scope, &job_context(job, actor), &before, &mut after, ChangeAction::Update)?;
    }
    Ok(after)
}

/// The change-log context of a job's work: the system, within the session
/// and turn that queued it (so undoing an agent's turn undoes the
/// processing of the images it made before the images themselves).
fn job_context(job: &Job, actor: &str) -> ChangeContext {
    let text = |k: &str| job.payload[k].as_str().map(str::to_string);
    ChangeContext {
        actor: actor.into(),
        session_id: text("sessionId"),
        turn_id: text("turnId"),
        ..ChangeContext::system()
    }
}

/// A job's payload: `extra` plus the session and turn of `ctx`.
pub fn job_payload(ctx: &ChangeContext, mut extra: Value) -> Value {
    if let Some(s) = &ctx.session_id {
        extra["sessionId"] = json!(s);
    }
    if let Some(t) = &ctx.turn_id {
        extra["turnId"] = json!(t);
    }
    extra
}

/// Alt text, description and tags given with an upload.
#[derive(Debug, Clone, Default)]
pub struct ImageMeta {
    /// Alternative text.
    pub alt: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Tags.
    pub tags: Vec<String>,
    /// Where the file came from (default: an upload).
    pub source: Option<ImageSource>,
    /// Photographer, profile and photo URLs of an imported stock photo.
    pub attribution: Option<Value>,
}

impl Store {
    /// Records a staged upload.
    pub async fn record_upload(&self, scope: &Scope, u: NewUpload) -> Result<Upload> {
        let url = format!("/uploads/{}/incoming/{}", scope.site_id, u.id);
        let now = Utc::now();
        db::query(
            "INSERT INTO uploads (id, site_id, env, url, path, filename, mime, bytes, sha256, width, height, created_by, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        )
        .bind(&u.id)
        .bind_scope(scope)
        .bind(&url)
        .bind(&u.path)
        .bind(&u.filename)
        .bind(&u.mime)
        .bind(u.bytes)
        .bind(&u.sha256)
        .bind(u.width)
        .bind(u.height)
        .bind(&u.created_by)
        .bind(now)
        .write(&self.db).await?;
        Ok(Upload {
            id: u.id,
            url,
            filename: u.filename,
            mime: u.mime,
            bytes: u.bytes,
            sha256: u.sha256,
            width: u.width,
            height: u.height,
            created_at: now,
        })
    }

    /// An upload of the scope by id or url, with its staged path. Another
    /// site's upload is not found.
    pub async fn upload(&self, scope: &Scope, id_or_url: &str) -> Result<(Upload, String)> {
        let row = db::query("SELECT * FROM uploads WHERE (id = ?1 OR url = ?1) AND site_id = ?2 AND env = ?3")
            .bind(id_or_url)
            .bind_scope(scope)
            .read_optional(&self.db)
            .await?
            .ok_or_else(|| StoreError::not_found("upload", id_or_url))?;
        upload_from_row(&row)
    }

    /// Forgets an upload no image was made of (the rest of its request was
    /// refused), so a refused request leaves nothing behind.
    pub async fn discard_upload(&self, scope: &Scope, id: &str) -> Result<()> {
        db::query(
            "DELETE FROM uploads WHERE id = ?1 AND site_id = ?2 AND env = ?3
             AND NOT EXISTS (SELECT 1 FROM jobs WHERE json_extract(payload, '$.uploadId') = ?1
                             AND site_id = ?2 AND env = ?3)",
        )
        .bind(id)
        .bind_scope(scope)
        .write(&self.db)
        .await?;
        Ok(())
    }

    /// Makes an image of an upload: a live image of the scope with the same
    /// content is returned (`false`) — given the attribution `meta` carries
    /// when it had none, as a logged update; otherwise a new image in
    /// status processing and its processing job are written in one
    /// transaction with the change-log record (`true`).
    pub async fn create_image_from_upload(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        upload: &Upload,
        meta: ImageMeta,
    ) -> Result<(Image, bool)> {
        let (ctx, scope, upload) = (ctx.clone(), scope.clone(), upload.clone());
        self.db
            .write(move |c| {
            let (ctx, scope) = (&ctx, &scope);
            let existing = db::query(
                "SELECT * FROM images WHERE site_id = ?1 AND env = ?2 AND archive_id IS NULL AND content_hash = ?3 LIMIT 1",
            )
            .bind_scope(scope)
            .bind(&upload.sha256)
            .fetch_optional(c)?;
            if let Some(row) = existing {
                let before = Image::from_row(&row)?;
                // The same bytes imported from a photo provider: the image
                // keeps its credit, which a plain upload of them lacked.
                if before.attribution.is_none() && meta.attribution.is_some() {
                    let mut after = before.clone();
                    after.attribution = meta.attribution;
                    after.source = meta.source.unwrap_or(before.source);
                    crate::record::write_version(c, scope, ctx, &before, &mut after, ChangeAction::Update)?;
                    return Ok((after, false));
                }
                return Ok((before, false));
            }
            let input = NewImage {
                url: upload.url.clone(),
                filename: upload.filename.clone(),
                mime: Some(upload.mime.clone()),
                width: Some(upload.width),
                height: Some(upload.height),
                bytes: Some(upload.bytes),
                content_hash: Some(upload.sha256.clone()),
                alt: meta.alt,
                description: meta.description,
                tags: Some(meta.tags),
                categories: None,
                source: meta.source,
                attribution: meta.attribution,
            };
            let image = crate::records::new_image(input, ImageStatus::Processing);
            crate::record::create(c, ctx, scope, &image)?;
            queue_job(c, JobKind::ProcessImage, scope, &image.id, &job_payload(ctx, json!({"uploadId": upload.id})))?;
                Ok((image, true))
            })
            .await
    }

    /// Claims the next due job of `kinds` — queued and due, or running with
    /// an expired lease — for `lease`, counting an attempt.
    pub async fn claim_job(&self, kinds: &[JobKind], lease: Duration) -> Result<Option<Job>> {
        let now = Utc::now();
        // On PostgreSQL several processes claim at once: the row is locked
        // as it is picked, and one locked by another claim is passed over.
        // (SQLite's writer holds the whole database's lock already.)
        let lock = if self.db.is_postgres() { " FOR UPDATE SKIP LOCKED" } else { "" };
        // Only the kinds asked for, which this version runs: another's (a
        // newer replica's) wait for it. The names are constants of `JobKind`.
        let kinds = kinds.iter().map(|k| format!("'{k}'")).collect::<Vec<_>>().join(", ");
        let row = db::query(format!(
            "UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_until = ?1, updated_at = ?2,
             stage = 'starting', progress = 0
             WHERE id = (SELECT id FROM jobs WHERE ((status = 'queued' AND run_after <= ?3)
                                            OR (status = 'running' AND lease_until <= ?3)) AND kind IN ({kinds})
                         ORDER BY run_after, id LIMIT 1{lock})
             RETURNING *"
        ))
        .bind(millis(now) + lease.as_millis() as i64)
        .bind(now)
        .bind(millis(now))
        .write_optional(&self.db)
        .await?;
        row.as_ref().map(job_from_row).transpose()
    }

    /// The latest job of `scope` working on `subject_id`.
    pub async fn job_of(&self, scope: &Scope, subject_id: &str) -> Result<Option<Job>> {
        Ok(self.jobs_of(scope, subject_id).await?.into_iter().next())
    }

    /// A job of `scope` by id.
    pub async fn job(&self, scope: &Scope, id: &str) -> Result<Job> {
        found(db::row_in("jobs", scope, id).read_optional(&self.db).await?, job_from_row, "job", id)
    }

    /// The jobs of `scope` working on `subject_id`, newest first.
    pub async fn jobs_of(&self, scope: &Scope, subject_id: &str) -> Result<Vec<Job>> {
        let rows = db::query(
            "SELECT * FROM jobs WHERE subject_id = ?1 AND site_id = ?2 AND env = ?3
             ORDER BY created_at DESC, id DESC LIMIT 100",
        )
        .bind(subject_id)
        .bind_scope(scope)
        .read_all(&self.db)
        .await?;
        rows.iter().map(job_from_row).collect()
    }

    /// Notes how far this attempt of a running job got (`stage`, `progress`
    /// from 0 to 100; none: only that it is alive) and renews its lease
    /// for `lease`. False when the attempt no longer holds the job.
    pub async fn job_progress(&self, job: &Job, step: Option<(&str, i64)>, lease: Duration) -> Result<bool> {
        let now = Utc::now();
        let done = db::query(
            "UPDATE jobs SET lease_until = ?3, updated_at = ?4, stage = coalesce(?5, stage),
             progress = coalesce(?6, progress)
             WHERE id = ?1 AND attempts = ?2 AND status = 'running' AND site_id = ?7 AND env = ?8",
        )
        .bind(&job.id)
        .bind(job.attempts)
        .bind(millis(now) + lease.as_millis() as i64)
        .bind(now)
        .bind(step.map(|s| s.0))
        .bind(step.map(|s| s.1.clamp(0, 100)))
        .bind_scope(&job.scope)
        .write(&self.db)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// How many jobs are queued or running.
    pub async fn pending_jobs(&self) -> Result<i64> {
        db::query_scalar("SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')").read_one(&self.db).await
    }

    /// Marks this attempt of `job` done (false when another attempt took it over).
    fn finish_attempt(conn: &Conn, job: &Job, status: JobStatus, error: Option<&str>) -> Result<bool> {
        let done = db::query(
            "UPDATE jobs SET status = ?3, error = ?4, lease_until = NULL, updated_at = ?5, stage = NULL,
             progress = CASE WHEN ?3 = 'done' THEN 100 ELSE progress END
             WHERE id = ?1 AND attempts = ?2 AND status = 'running' AND site_id = ?6 AND env = ?7",
        )
        .bind(&job.id)
        .bind(job.attempts)
        .bind(status.as_str())
        .bind(error)
        .bind(Utc::now())
        .bind_scope(&job.scope)
        .execute(conn)?;
        Ok(done.rows_affected() == 1)
    }

    /// Completes an image's processing job: the image takes the result
    /// (status completed, a logged update by `system:media`), its files are
    /// registered for serving, and the job is done — in one transaction.
    pub async fn complete_image_job(&self, job: &Job, result: ImageResult) -> Result<Image> {
        let job = job.clone();
        self.db
            .write(move |c| {
                let job = &job;
                let before = finish_job_image(c, job)?;
                let after = edit_job_image(c, job, "system:media", before, |after| {
                    after.url = result.url;
                    after.mime = result.mime;
                    after.width = Some(result.width);
                    after.height = Some(result.height);
                    after.bytes = Some(result.bytes);
                    after.variants = result.variants;
                    after.color = Some(result.color);
                    after.status = ImageStatus::Completed;
                    after.error = None;
                })?;
                for f in &result.files {
                    register_file(c, &f.path, &after.id, &f.mime)?;
                }
                Ok(after)
            })
            .await
    }

    /// Records a failed attempt: the job runs again after a backoff while
    /// `retry` and attempts remain; otherwise it fails and so does its image,
    /// with `reason`. Returns whether it will run again.
    pub async fn fail_job(&self, job: &Job, reason: &str, retry: bool) -> Result<bool> {
        let (job, reason) = (job.clone(), reason.to_string());
        self.db
            .write(move |c| {
                let (job, reason) = (&job, reason.as_str());
                let again = retry && job.attempts < job.max_attempts;
                if again {
                    let done = db::query(
                    "UPDATE jobs SET status = 'queued', error = ?3, lease_until = NULL, run_after = ?4, updated_at = ?5,
                     stage = NULL, progress = 0
                     WHERE id = ?1 AND attempts = ?2 AND status = 'running' AND site_id = ?6 AND env = ?7",
                )
                .bind(&job.id)
                .bind(job.attempts)
                .bind(reason)
                .bind(millis(Utc::now()) + backoff(job.attempts).as_millis() as i64)
                .bind(Utc::now())
                .bind_scope(&job.scope)
                .execute(c)?;
                    return Ok(done.rows_affected() == 1);
                }
                if !Self::finish_attempt(c, job, JobStatus::Failed, Some(reason))? {
                    return Ok(false);
                }
                if job.kind == JobKind::ProcessImage {
                    let before = any_image(c, &job.scope, &job.subject_id)?;
                    edit_job_image(c, job, "system:media", before, |after| {
                        after.status = ImageStatus::Failed;
                        after.error = Some(reason.to_string());
                    })?;
                }
                Ok(false)
            })
            .await
    }

    /// The type a path under `/uploads` is served as, while one of its
    /// images is live and completed.
    pub async fn served_file(&self, path: &str) -> Result<Option<ImageFile>> {
        let mime: Option<String> = db::query_scalar(
            "SELECT f.mime FROM image_files f JOIN images i ON i.id = f.image_id
             WHERE f.path = ?1 AND i.archive_id IS NULL AND i.status = 'completed' LIMIT 1",
        )
        .bind(path)
        .read_optional(&self.db)
        .await?;
        Ok(mime.map(|mime| ImageFile { path: path.to_string(), mime }))
    }

    /// Up to `limit` live images (any scope) with no vector of `model`, or
    /// one made at an older version; with the hash of the text it was made of.
    pub async fn images_to_embed(&self, model: &str, limit: u32) -> Result<Vec<(Scope, Image, Option<String>)>> {
        let rows = db::query(
            "SELECT i.*, e.text_hash AS known_hash FROM images i
             LEFT JOIN embeddings e ON e.entity_id = i.id AND e.model = ?1 AND e.site_id = i.site_id AND e.env = i.env
             WHERE i.archive_id IS NULL AND (e.entity_id IS NULL OR e.version < i.version)
             ORDER BY i.id LIMIT ?2",
        )
        .bind(model)
        .bind(limit as i64)
        .read_all(&self.db)
        .await?;
        rows.iter().map(|r| Ok((Scope::of_row(r)?, Image::from_row(r)?, r.try_get("known_hash")?))).collect()
    }

    /// Stores the (unit-length) vector of a record for `model`, made of
    /// the record's text at `version` (a page's: its text version, see
    /// [`crate::SearchDocument::version`]). A change made while the text
    /// was being embedded leaves the record newer than the vector, so the
    /// next sweep embeds it again.
    #[allow(clippy::too_many_arguments)]
    pub async fn put_embedding(
        &self,
        scope: &Scope,
        entity: &str,
        id: &str,
        model: &str,
        text_hash: &str,
        version: i64,
        vector: &[f32],
    ) -> Result<()> {
        let blob: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
        // Only the entities whose vectors are searched.
        crate::vectors::table(entity)?;
        let (row_scope, row_entity, row_id, row_model, text_hash, dims) =
            (scope.clone(), entity.to_string(), id.to_string(), model.to_string(), text_hash.to_string(), vector.len());
        let (pgvector, text) = (self.pgvector, crate::vectors::vector_text(vector));
        let generation = self
            .db
            .write(move |c| {
            let (scope, entity, id, model) = (&row_scope, row_entity.as_str(), row_id.as_str(), row_model.as_str());
            db::query(
                "INSERT INTO embeddings (entity_id, model, entity, site_id, env, text_hash, version, dims, vector, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?10, ?7, ?8, ?9)
                 ON CONFLICT (entity_id, model) DO UPDATE SET text_hash = excluded.text_hash, version = excluded.version,
                 dims = excluded.dims, vector = excluded.vector, updated_at = excluded.updated_at
                 WHERE embeddings.site_id = excluded.site_id AND embeddings.env = excluded.env",
            )
            .bind(id)
            .bind(model)
            .bind(entity)
            .bind_scope(scope)
            .bind(&text_hash)
            .bind(dims as i64)
            .bind(blob)
            .bind(Utc::now())
            .bind(version)
            .execute(c)?;
            if pgvector {
                db::query(
                    "UPDATE embeddings SET embedding = CAST(?1 AS TEXT)::vector
                     WHERE entity_id = ?2 AND model = ?3 AND site_id = ?4 AND env = ?5",
                )
                .bind(text)
                .bind(id)
                .bind(model)
                .bind_scope(scope)
                    .execute(c)?;
            }
            crate::vectors::raise(c, scope, entity, model)
            })
            .await?;
        self.vector_written(scope, entity, model, generation, id, vector);
        Ok(())
    }

    /// Notes that the vector of an `entity` record of `scope` is current
    /// at `version` (the text read at that version is the one its vector
    /// was made of).
    pub async fn touch_embedding(
        &self,
        scope: &Scope,
        entity: &str,
        id: &str,
        model: &str,
        version: i64,
    ) -> Result<()> {
        // Only the entities whose vectors are searched.
        crate::vectors::table(entity)?;
        db::query(
            "UPDATE embeddings SET version = ?3
             WHERE entity_id = ?1 AND model = ?2 AND version < ?3 AND site_id = ?4 AND env = ?5",
        )
        .bind(id)
        .bind(model)
        .bind(version)
        .bind_scope(scope)
        .write(&self.db)
        .await?;
        Ok(())
    }

    /// Every vector of `entity` records of `scope` for `model`, live records only.
    pub async fn embeddings(&self, scope: &Scope, entity: &str, model: &str) -> Result<Vec<(String, Vec<f32>)>> {
        let rows: Vec<(String, Vec<u8>)> = db::query_as(
            "SELECT e.entity_id, e.vector FROM embeddings e
             JOIN images i ON i.id = e.entity_id AND i.site_id = e.site_id AND i.env = e.env
             WHERE e.site_id = ?1 AND e.env = ?2 AND e.entity = ?3 AND e.model = ?4 AND i.archive_id IS NULL",
        )
        .bind_scope(scope)
        .bind(entity)
        .bind(model)
        .read_all(&self.db)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(id, blob)| {
                let v = blob.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
                (id, v)
            })
            .collect())
    }

    /// Queues a job of `kind` on `subject_id`, due now.
    pub async fn enqueue_job(&self, kind: JobKind, scope: &Scope, subject_id: &str, payload: Value) -> Result<()> {
        let (scope, subject_id) = (scope.clone(), subject_id.to_string());
        self.db.write(move |c| queue_job(c, kind, &scope, &subject_id, &payload)).await
    }

    /// Completes a describe job: the texts a vision model wrote fill the
    /// image's empty alt, description and tags only (never a person's),
    /// marked as generated; a logged update by `system:vision`.
    pub async fn complete_describe_job(
        &self,
        job: &Job,
        alt: Option<String>,
        description: Option<String>,
        tags: Vec<String>,
    ) -> Result<Image> {
        let job = job.clone();
        self.db
            .write(move |c| {
                let job = &job;
                let before = finish_job_image(c, job)?;
                let mark = |field: &str, after: &mut Image| {
                    if !after.generated.iter().any(|f| f == field) {
                        after.generated.push(field.to_string());
                    }
                };
                edit_job_image(c, job, "system:vision", before, |after| {
                    if let Some(alt) = alt.filter(|a| !a.trim().is_empty())
                        && after.alt.as_deref().is_none_or(|a| a.trim().is_empty())
                    {
                        after.alt = Some(alt.chars().take(300).collect());
                        mark("alt", after);
                    }
                    if let Some(d) = description.filter(|d| !d.trim().is_empty())
                        && after.description.as_deref().is_none_or(|d| d.trim().is_empty())
                    {
                        after.description = Some(d.chars().take(2000).collect());
                        mark("description", after);
                    }
                    if !tags.is_empty() && after.tags.is_empty() {
                        after.tags = tags;
                        mark("tags", after);
                    }
                })
            })
            .await
    }

    /// The live images of `scope` among `ids`, in no particular order.
    pub async fn live_images(&self, scope: &Scope, ids: &[String]) -> Result<Vec<Image>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut q = db::QueryBuilder::new("SELECT * FROM images WHERE site_id = ");
        q.push_bind(&scope.site_id).push(" AND env = ").push_bind(&scope.env);
        q.push(" AND archive_id IS NULL AND id IN (");
        q.push_list(ids, ", ", |q, id| {
            q.push_bind(id);
        });
        q.push(")");
        let rows = q.build().read_all(&self.db).await?;
        rows.iter().map(Image::from_row).collect()
    }

    /// Up to `limit` uploads (any scope) received before `before` that no
    /// image was made of (no job names them), with their staged paths.
    pub async fn expired_uploads(&self, before: DateTime<Utc>, limit: u32) -> Result<Vec<(Scope, Upload, String)>> {
        let rows = db::query(
            "SELECT * FROM uploads u WHERE created_at < ?1
             AND NOT EXISTS (SELECT 1 FROM jobs j WHERE json_extract(j.payload, '$.uploadId') = u.id
                             AND j.site_id = u.site_id AND j.env = u.env)
             ORDER BY created_at LIMIT ?2",
        )
        .bind(before)
        .bind(limit as i64)
        .read_all(&self.db)
        .await?;
        rows.iter()
            .map(|r| {
                let (upload, path) = upload_from_row(r)?;
                Ok((Scope::of_row(r)?, upload, path))
            })
            .collect()
    }

    /// Every URL path registered for the images of a site (live, archived,
    /// any status): the files under its folder that are kept.
    pub async fn registered_files(&self, site_id: &str) -> Result<std::collections::HashSet<String>> {
        let paths: Vec<String> = db::query_scalar(
            "SELECT f.path FROM image_files f JOIN images i ON i.id = f.image_id WHERE i.site_id = ?1",
        )
        .bind(site_id)
        .read_all(&self.db)
        .await?;
        Ok(paths.into_iter().collect())
    }

    /// Whether upload `id` of a site is recorded, and the status of the
    /// latest job made of it: `None` when there is no such upload,
    /// `Some(None)` when no image was made of it.
    pub async fn upload_job_status(&self, site_id: &str, id: &str) -> Result<Option<Option<JobStatus>>> {
        let row: Option<(Option<String>,)> = db::query_as(
            "SELECT (SELECT j.status FROM jobs j WHERE json_extract(j.payload, '$.uploadId') = u.id
                     AND j.site_id = u.site_id AND j.env = u.env ORDER BY j.created_at DESC LIMIT 1)
             FROM uploads u WHERE u.id = ?1 AND u.site_id = ?2",
        )
        .bind(id)
        .bind(site_id)
        .read_optional(&self.db)
        .await?;
        row.map(|(status,)| status.map(|s| wire_text("status", &s)).transpose()).transpose()
    }

    /// The status of job `id` of a site, if there is one.
    pub async fn job_status(&self, site_id: &str, id: &str) -> Result<Option<JobStatus>> {
        let status: Option<String> = db::query_scalar("SELECT status FROM jobs WHERE id = ?1 AND site_id = ?2")
            .bind(id)
            .bind(site_id)
            .read_optional(&self.db)
            .await?;
        status.map(|s| wire_text("status", &s)).transpose()
    }

    /// Makes every lease end now, as if the processes holding them had
    /// stopped (tests of restarts).
    pub async fn expire_leases(&self) -> Result<u64> {
        let done = db::query("UPDATE jobs SET lease_until = 0 WHERE status = 'running'").write(&self.db).await?;
        Ok(done.rows_affected())
    }
}

#[cfg(test)]
mod tests {
    use super::backoff;
    use std::time::Duration;

    #[test]
    fn backoff_grows_and_is_bounded() {
        assert_eq!(backoff(1), Duration::from_secs(5));
        assert_eq!(backoff(2), Duration::from_secs(20));
        assert_eq!(backoff(3), Duration::from_secs(80));
        assert_eq!(backoff(50), Duration::from_secs(600));
    }
}
