//! Media intake and processing: files are received into their site's
//! folder ([`Incoming`]), typed from their bytes and checked against the
//! decoding limits before they are recorded as uploads; `createImage` makes
//! an image of an upload and queues its processing job, which the
//! [`MediaWorker`] of a serving process (or `quire images upload`) runs:
//! decode under limits, re-encode without metadata, store the hash-named
//! files next to the site's others (through [`crate::storage::Storage`],
//! a local folder or an S3-compatible bucket), complete the image. What is
//! received stays in the site's local staging folder (`incoming/`) until
//! then.

use crate::services::Services;
use crate::tool::{CallContext, ErrorCode, ToolError};
use quire_core::access::{Permission, authorize};
use quire_core::model::{EntityKind, Image, ImageStatus, JobKind, JobStatus, Upload};
use quire_media::{Format, MediaError};
use quire_store::{ImageFile, ImageResult, Job, NewUpload, Scope, StoreError};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub use crate::settings::{DEFAULT_MAX_UPLOAD_MB, JobEvent, MediaSettings};

/// Default pixel budget of one image in megapixels (`max_image_megapixels`).
pub use quire_media::DEFAULT_MAX_MEGAPIXELS;

/// Largest file `createImage` takes inline as base64 `data`, decoded.
pub const MAX_INLINE_BYTES: usize = 1_500_000;

fn internal(what: &str, e: impl std::fmt::Display) -> ToolError {
    tracing::error!(error = %e, "{what}");
    ToolError::new(ErrorCode::Internal, "internal error", "Try again later; the server log has details.")
}

/// A site's local folder under the uploads folder (its staging folder
/// `incoming/` is there whatever the storage). Site ids are UUIDs, so the
/// name is always one plain path component.
pub fn site_dir(services: &Services, scope: &Scope) -> PathBuf {
    services.uploads_dir.join(&scope.site_id)
}

/// The last component of a client's file name (browsers may send a path),
/// or `upload` when nothing is left.
pub fn clean_filename(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or_default().trim();
    let kept: String = last.chars().filter(|c| !c.is_control()).take(255).collect();
    if kept.is_empty() || kept == "." || kept == ".." { "upload".into() } else { kept }
}

/// A file being received: written to its site's folder as it arrives,
/// hashed on the way, refused as soon as it passes the size limit. Dropped
/// without [`Incoming::finish`], its partial file is removed.
pub struct Incoming {
    id: String,
    dir: PathBuf,
    part: PathBuf,
    file: Option<tokio::fs::File>,
    hasher: Sha256,
    bytes: u64,
    head: Vec<u8>,
    limit: u64,
}

impl Incoming {
    /// Starts receiving a file for `scope`.
    pub async fn begin(services: &Services, scope: &Scope) -> Result<Self, ToolError> {
        let id = uuid_v7();
        let dir = site_dir(services, scope).join("incoming");
        tokio::fs::create_dir_all(&dir).await.map_err(|e| internal("cannot create the incoming folder", e))?;
        let part = dir.join(format!("{id}.part"));
        let file = tokio::fs::File::create(&part).await.map_err(|e| internal("cannot create an incoming file", e))?;
        Ok(Incoming {
            id,
            dir,
            part,
            file: Some(file),
            hasher: Sha256::new(),
            bytes: 0,
            head: Vec::new(),
            limit: services.media.max_upload_bytes,
        })
    }

    /// Appends a chunk. Past the size limit this is a `Limit` error.
    pub async fn write(&mut self, chunk: &[u8]) -> Result<(), ToolError> {
        self.bytes += chunk.len() as u64;
        if self.bytes > self.limit {
            return Err(ToolError::new(
                ErrorCode::Limit,
                format!("the file is larger than the upload limit of {} MB", self.limit.div_ceil(1024 * 1024)),
                "Send a smaller file (the limit is the server's max_upload_mb).",
            ));
        }
        if self.head.len() < 64 {
            let take = (64 - self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..take]);
        }
        self.hasher.update(chunk);
        let file = self.file.as_mut().ok_or_else(|| internal("incoming file", "already closed"))?;
        file.write_all(chunk).await.map_err(|e| internal("cannot write an incoming file", e))
    }

    /// Types the received file from its bytes, reads its header under the
    /// decoding limits, and records it as an upload of `scope`. A refused
    /// file is removed; the error says what it was.
    pub async fn finish(
        mut self,
        services: &Services,
        scope: &Scope,
        actor: &str,
        filename: &str,
    ) -> Result<Upload, ToolError> {
        if let Some(mut file) = self.file.take() {
            file.flush().await.map_err(|e| internal("cannot write an incoming file", e))?;
            file.sync_all().await.map_err(|e| internal("cannot write an incoming file", e))?;
        }
        let budget = services.media.limits.max_pixels.div_ceil(1_000_000);
        let refuse = |e: MediaError| {
            let hint = match e {
                MediaError::TooManyPixels { .. } | MediaError::Limit(_) => format!(
                    "Scale the image down to at most {budget} megapixels (the server's max_image_megapixels) and send it again."
                ),
                _ => "Send a PNG, JPEG, WebP or GIF image within the limits.".to_string(),
            };
            ToolError::invalid(format!("file: {e}"), hint)
        };
        let format = quire_media::sniff(&self.head).map_err(refuse)?;
        let limits = services.media.limits;
        let part = self.part.clone();
        let (width, height) = tokio::task::spawn_blocking(move || {
            let file = std::fs::File::open(&part).map_err(|e| MediaError::Limit(e.to_string()))?;
            quire_media::inspect(std::io::BufReader::new(file), format, &limits)
        })
        .await
        .map_err(|e| internal("header check crashed", e))?
        .map_err(refuse)?;
        let path = self.dir.join(&self.id);
        tokio::fs::rename(&self.part, &path).await.map_err(|e| internal("cannot keep an incoming file", e))?;
        let relative = format!("{}/incoming/{}", scope.site_id, self.id);
        let upload = NewUpload {
            id: self.id.clone(),
            path: relative,
            filename: clean_filename(filename),
            mime: format.mime().to_string(),
            bytes: self.bytes as i64,
            sha256: hex::encode(std::mem::take(&mut self.hasher).finalize()),
            width: i64::from(width),
            height: i64::from(height),
            created_by: actor.to_string(),
        };
        // From here the file is the upload's, kept when this value drops.
        self.part = PathBuf::new();
        match services.store.record_upload(scope, upload).await {
            Ok(u) => Ok(u),
            Err(e) => {
                let _ = tokio::fs::remove_file(&path).await;
                Err(e.into())
            }
        }
    }
}

impl Drop for Incoming {
    fn drop(&mut self) {
        if !self.part.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.part);
        }
    }
}

/// Removes an upload whose request was refused after it arrived (its
/// record and its file), unless an image was made of it.
pub async fn discard(services: &Services, scope: &Scope, upload: &Upload) {
    if let Err(e) = services.store.discard_upload(scope, &upload.id).await {
        tracing::warn!(upload = %upload.id, error = %e, "could not discard an upload");
        return;
    }
    if services.store.upload(scope, &upload.id).await.is_err() {
        let path = site_dir(services, scope).join("incoming").join(&upload.id);
        let _ = tokio::fs::remove_file(path).await;
    }
}

/// Receives a whole file held in memory (base64 `data`, the CLI).
pub async fn receive_bytes(
    services: &Services,
    scope: &Scope,
    actor: &str,
    filename: &str,
    bytes: &[u8],
) -> Result<Upload, ToolError> {
    let mut incoming = Incoming::begin(services, scope).await?;
    incoming.write(bytes).await?;
    incoming.finish(services, scope, actor, filename).await
}

/// Receives a file from disk (`quire images upload`), streamed as an HTTP
/// upload is, for a caller who may create images.
pub async fn receive_path(services: &Services, ctx: &CallContext, path: &Path) -> Result<Upload, ToolError> {
    if let Err(refused) = authorize(&ctx.principal(), Permission::Write(EntityKind::Image)) {
        return Err(ToolError::new(ErrorCode::Forbidden, refused.message, "Use a token of a group that may."));
    }
    let shown = path.display();
    let mut file = tokio::fs::File::open(path)
        .await
        .map_err(|e| ToolError::new(ErrorCode::NotFound, format!("{shown}: {e}"), "Name a readable file."))?;
    let mut incoming = Incoming::begin(services, &ctx.scope).await?;
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = file
            .read(&mut buf)
            .await
            .map_err(|e| ToolError::new(ErrorCode::NotFound, format!("{shown}: {e}"), "Name a readable file."))?;
        if n == 0 {
            break;
        }
        incoming.write(&buf[..n]).await?;
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    incoming.finish(services, &ctx.scope, &ctx.actor, &name).await
}

/// Waits until image `id` leaves status processing, running due jobs in
/// this process meanwhile (another process may hold its job). While this
/// process decodes another image it only waits: that decode's worker runs
/// the job after it, and a job taken here would wait for its turn past
/// `timeout`.
pub async fn settle(services: &Services, scope: &Scope, id: &str, timeout: Duration) -> Result<Image, ToolError> {
    let worker = MediaWorker::new(services.clone());
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if services.media.decoding.available_permits() > 0 {
            worker.drain().await?;
        }
        let image = services.store.image(scope, id).await?;
        if image.status != ImageStatus::Processing || tokio::time::Instant::now() >= deadline {
            return Ok(image);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn uuid_v7() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// How old a file no image registers must be before the clean-up removes
/// it: far longer than any job may run, so a job's files are registered
/// (when it completes) before they could be taken for leftovers.
pub const ORPHAN_GRACE: Duration = Duration::from_secs(3600);

/// How often a serving process cleans up (and once when it starts).
pub const CLEAN_EVERY: Duration = Duration::from_secs(600);

/// How often the worker walks the vaults for notes to embed (each walk
/// reads only the notes whose modification time or size changed).
pub const NOTES_EVERY: Duration = Duration::from_secs(5);

/// What a clean-up removed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Cleaned {
    /// Uploads no image was made of (record and file).
    pub uploads: usize,
    /// Other files and work folders.
    pub files: usize,
    /// Bytes freed.
    pub bytes: u64,
}

/// Works the job queue: claims due jobs one at a time and runs them.
#[derive(Clone)]
pub struct MediaWorker {
    services: Services,
}

impl MediaWorker {
    /// A worker over `services`.
    pub fn new(services: Services) -> Self {
        MediaWorker { services }
    }

    /// Claims and runs one due job; false when none was due.
    pub async fn run_once(&self) -> Result<bool, StoreError> {
        let Some(job) = self.services.store.claim_job(JobKind::MEDIA, self.services.media.lease).await? else {
            return Ok(false);
        };
        self.run_job(job).await?;
        Ok(true)
    }

    /// Runs jobs until none is due.
    pub async fn drain(&self) -> Result<usize, StoreError> {
        let mut n = 0;
        while self.run_once().await? {
            n += 1;
        }
        Ok(n)
    }

    /// Works forever: runs due jobs, then waits to be woken or for a second
    /// (jobs queued by another process, retries coming due, expired leases).
    /// Between jobs it also embeds records whose text changed, and every
    /// [`NOTES_EVERY`] the notes of the vaults that changed, when an
    /// embedding model is configured (pausing a minute after a failure).
    pub async fn run(self) {
        let mut embed_after = tokio::time::Instant::now();
        let mut clean_after = tokio::time::Instant::now();
        let mut notes_after = tokio::time::Instant::now();
        loop {
            if tokio::time::Instant::now() >= clean_after {
                clean_after = tokio::time::Instant::now() + CLEAN_EVERY;
                if let Err(e) = self.clean(chrono::Utc::now()).await {
                    tracing::warn!(error = %e, "media clean-up could not reach the database");
                }
            }
            match self.drain().await {
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "media worker could not reach the job queue"),
            }
            if let Some(embedder) = &self.services.embedder
                && tokio::time::Instant::now() >= embed_after
            {
                let notes_due = tokio::time::Instant::now() >= notes_after;
                if notes_due {
                    notes_after = tokio::time::Instant::now() + NOTES_EVERY;
                }
                loop {
                    let services = &self.services;
                    let done = match crate::embed::embed_pending(&services.store, embedder.as_ref(), 32).await {
                        Ok(n) if notes_due => {
                            crate::embed::embed_notes(&services.store, &services.vaults, embedder.as_ref(), 32)
                                .await
                                .map(|m| n + m)
                        }
                        other => other,
                    };
                    match done {
                        Ok(0) => break,
                        Ok(n) => tracing::debug!(n, "embedded records and notes"),
                        Err(e) => {
                            tracing::warn!(error = %e, "could not embed; trying again in a minute");
                            embed_after = tokio::time::Instant::now() + Duration::from_secs(60);
                            break;
                        }
                    }
                }
            }
            let wake = self.services.media.wake.clone();
            let _ = tokio::time::timeout(Duration::from_secs(1), wake.notified()).await;
        }
    }

    /// Tells listeners where `job` is now (read back from the store).
    async fn publish(&self, job: &Job) {
        let events = &self.services.media.events;
        if events.receiver_count() == 0 {
            return;
        }
        if let Ok(now) = self.services.store.job(&job.scope, &job.id).await {
            let session_id = job.session_id().map(str::to_string);
            let _ = events.send(JobEvent { scope: job.scope.clone(), session_id, job: now.info() });
        }
    }

    /// Notes a stage of `job` (renewing its lease) and tells listeners.
    async fn step(&self, job: &Job, stage: &str, progress: i64) {
        let lease = self.services.media.lease;
        match self.services.store.job_progress(job, Some((stage, progress)), lease).await {
            Ok(true) => self.publish(job).await,
            Ok(false) => {}
            Err(e) => tracing::warn!(job = %job.id, error = %e, "could not note a job's progress"),
        }
    }

    async fn run_job(&self, job: Job) -> Result<(), StoreError> {
        self.publish(&job).await;
        let result = self.with_lease(&job, self.run_claimed(&job)).await;
        if job.kind == JobKind::ProcessImage
            && self.services.store.job_status(&job.scope.site_id, &job.id).await? == Some(JobStatus::Failed)
        {
            self.remove_failed_files(&job).await;
        }
        self.publish(&job).await;
        result
    }

    /// Runs `work`, renewing `job`'s lease every third of it meanwhile, so
    /// the job is taken over soon after its process stops, never while it
    /// is alive.
    async fn with_lease<T>(&self, job: &Job, work: impl std::future::Future<Output = T>) -> T {
        let lease = self.services.media.lease;
        let mut beat = tokio::time::interval(lease / 3);
        beat.tick().await;
        tokio::pin!(work);
        loop {
            tokio::select! {
                done = &mut work => return done,
                _ = beat.tick() => {
                    if let Err(e) = self.services.store.job_progress(job, None, lease).await {
                        tracing::warn!(job = %job.id, error = %e, "could not renew a job's lease");
                    }
                }
            }
        }
    }

    async fn run_claimed(&self, job: &Job) -> Result<(), StoreError> {
        let job = job.clone();
        let store = &self.services.store;
        if job.attempts > job.max_attempts {
            let reason = format!(
                "gave up after {} attempts; the last one did not finish (its process may have stopped)",
                job.max_attempts
            );
            store.fail_job(&job, &reason, false).await?;
            return Ok(());
        }
        if job.kind == JobKind::DescribeImage {
            if let Err((reason, retry)) = self.describe_image(&job).await {
                let again = store.fail_job(&job, &reason, retry).await?;
                tracing::warn!(image = %job.subject_id, again, "describing the image failed: {reason}");
            }
            return Ok(());
        }
        match self.process_image(&job).await {
            Ok(image) => {
                tracing::info!(image = %image.id, job = %job.id, "image processed");
                if self.services.describer.is_some() {
                    // Within the same session and turn as the processing.
                    let mut payload = json!({});
                    for key in ["sessionId", "turnId"] {
                        if let Some(v) = job.payload.get(key) {
                            payload[key] = v.clone();
                        }
                    }
                    store.enqueue_job(JobKind::DescribeImage, &job.scope, &image.id, payload).await?;
                }
                Ok(())
            }
            Err((reason, retry)) => {
                let again = store.fail_job(&job, &reason, retry).await?;
                tracing::warn!(image = %job.subject_id, job = %job.id, again, "image processing failed: {reason}");
                Ok(())
            }
        }
    }

    /// Removes what a job that failed for good leaves: the file as
    /// received (it may hold metadata, and no image will be made of it) and
    /// its work folder.
    async fn remove_failed_files(&self, job: &Job) {
        let services = &self.services;
        let _ = tokio::fs::remove_dir_all(job_dir(services, job)).await;
        let upload_id = job.payload["uploadId"].as_str().unwrap_or_default();
        if let Ok((upload, path)) = services.store.upload(&job.scope, upload_id).await
            && tokio::fs::remove_file(services.uploads_dir.join(&path)).await.is_ok()
        {
            tracing::info!(image = %job.subject_id, upload = %upload.id, bytes = upload.bytes,
                "removed the received file of an image that failed processing");
        }
    }

    /// Removes, as of `now`: uploads older than the upload TTL that no image
    /// was made of (record and file); files left in a site's folder that no
    /// image registers (written for an image whose processing then failed,
    /// or by a process that stopped) once older than [`ORPHAN_GRACE`];
    /// received files whose image failed or completed; partial receptions
    /// and work folders of jobs no longer running. Each removal is logged.
    pub async fn clean(&self, now: chrono::DateTime<chrono::Utc>) -> Result<Cleaned, StoreError> {
        let services = &self.services;
        let store = &services.store;
        let mut cleaned = Cleaned::default();
        let ttl = chrono::Duration::from_std(services.media.upload_ttl).unwrap_or(chrono::Duration::MAX);
        let before = now.checked_sub_signed(ttl).unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
        loop {
            let expired = store.expired_uploads(before, 100).await?;
            if expired.is_empty() {
                break;
            }
            for (scope, upload, path) in expired {
                store.discard_upload(&scope, &upload.id).await?;
                let file = services.uploads_dir.join(&path);
                let bytes = tokio::fs::metadata(&file).await.map(|m| m.len()).unwrap_or(0);
                let _ = tokio::fs::remove_file(&file).await;
                tracing::info!(site = %scope.site_id, upload = %upload.id, filename = %upload.filename, bytes,
                    "removed an upload no image was made of within the upload TTL");
                cleaned.uploads += 1;
                cleaned.bytes += bytes;
            }
        }
        let old_enough = |modified: Option<std::time::SystemTime>| {
            let grace = chrono::Duration::from_std(ORPHAN_GRACE).unwrap_or(chrono::Duration::MAX);
            modified.map(chrono::DateTime::<chrono::Utc>::from).is_some_and(|m| m + grace <= now)
        };
        // Published files (in the storage, local or not) no image registers.
        let storage = &services.storage;
        let sites = match storage.sites().await {
            Ok(sites) => sites,
            Err(e) => {
                tracing::warn!(error = %e, "media clean-up could not list the stored files");
                Vec::new()
            }
        };
        // Only this database's sites: a bucket may hold other things.
        let known: std::collections::HashSet<String> = store.sites().await?.into_iter().map(|s| s.id).collect();
        for site_id in sites.into_iter().filter(|s| known.contains(s)) {
            let registered = store.registered_files(&site_id).await?;
            let files = match storage.files(&site_id).await {
                Ok(files) => files,
                Err(e) => {
                    tracing::warn!(site = %site_id, error = %e, "media clean-up could not list a site's files");
                    continue;
                }
            };
            for file in files {
                if registered.contains(&format!("/uploads/{site_id}/{}", file.name))
                    || !old_enough(Some(file.modified.into()))
                {
                    continue;
                }
                let key = format!("{site_id}/{}", file.name);
                // Stored again since it was listed: a job is registering it.
                if storage.head(&key).await.is_ok_and(|m| !old_enough(Some(m.last_modified.into()))) {
                    continue;
                }
                match storage.delete(&key).await {
                    Ok(()) => {
                        tracing::info!(site = %site_id, file = %file.name, bytes = file.size,
                            "removed a file no image registers (its processing failed or stopped)");
                        cleaned.files += 1;
                        cleaned.bytes += file.size;
                    }
                    Err(e) => tracing::warn!(site = %site_id, file = %file.name, error = %e,
                        "media clean-up could not remove a file no image registers"),
                }
            }
        }
        // Staging, always on local disk.
        let Ok(mut sites) = tokio::fs::read_dir(&services.uploads_dir).await else {
            return Ok(cleaned);
        };
        while let Ok(Some(site)) = sites.next_entry().await {
            if !site.file_type().await.is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let site_id = site.file_name().to_string_lossy().into_owned();
            if storage.is_local() {
                cleaned = remove_staged_leftovers(&site.path(), &site_id, &old_enough, cleaned).await;
            }
            let Ok(mut incoming) = tokio::fs::read_dir(site.path().join("incoming")).await else { continue };
            while let Ok(Some(e)) = incoming.next_entry().await {
                let Ok(meta) = e.metadata().await else { continue };
                let name = e.file_name().to_string_lossy().into_owned();
                let old = old_enough(meta.modified().ok());
                let remove = if let Some(job) = name.strip_prefix(".job-") {
                    let status = store.job_status(&site_id, job).await?;
                    !matches!(status, Some(JobStatus::Queued | JobStatus::Running)) || old
                } else if name.ends_with(".part") {
                    old
                } else {
                    match store.upload_job_status(&site_id, &name).await? {
                        // Not recorded: the process stopped before it was.
                        None => old,
                        // Expired ones went above; this one is younger.
                        Some(None) => false,
                        Some(Some(status)) => matches!(status, JobStatus::Done | JobStatus::Failed),
                    }
                };
                if !remove {
                    continue;
                }
                let gone = if meta.is_dir() {
                    tokio::fs::remove_dir_all(e.path()).await
                } else {
                    tokio::fs::remove_file(e.path()).await
                };
                if gone.is_ok() {
                    tracing::info!(site = %site_id, file = %format!("incoming/{name}"), bytes = meta.len(),
                        "removed a received file or work folder no job needs");
                    cleaned.files += 1;
                    cleaned.bytes += if meta.is_dir() { 0 } else { meta.len() };
                }
            }
        }
        if cleaned != Cleaned::default() {
            tracing::info!(uploads = cleaned.uploads, files = cleaned.files, bytes = cleaned.bytes, "media clean-up");
        }
        Ok(cleaned)
    }

    /// Processes the upload behind `job`; an error is the reason and
    /// whether another attempt could succeed.
    async fn process_image(&self, job: &Job) -> Result<Image, (String, bool)> {
        let services = &self.services;
        let store = &services.store;
        let upload_id = job.payload["uploadId"].as_str().unwrap_or_default();
        let (upload, path) = store.upload(&job.scope, upload_id).await.map_err(|e| (e.to_string(), false))?;
        let staged = services.uploads_dir.join(&path);
        let format =
            Format::from_mime(&upload.mime).ok_or((format!("{} is not a processed type", upload.mime), false))?;
        let limits = services.media.limits;
        // One decode at a time in this process (see `MediaSettings::decoding`),
        // the file read only once it is this job's turn; the lease is
        // renewed meanwhile.
        let turn = Arc::clone(&services.media.decoding)
            .acquire_owned()
            .await
            .map_err(|_| ("this process stopped decoding images".to_string(), true))?;
        self.step(job, "reading", 5).await;
        let bytes = match tokio::fs::read(&staged).await {
            Ok(b) => b,
            Err(e) => return Err((format!("the uploaded file {} cannot be read: {e}", upload.url), false)),
        };
        let (steps, mut stepped) = tokio::sync::mpsc::unbounded_channel();
        let work = tokio::task::spawn_blocking(move || {
            let _turn = turn;
            quire_media::process_observed(&bytes, format, &limits, &mut |stage, pct| {
                let _ = steps.send((stage, pct));
            })
        });
        // The pipeline checks its time between steps; this bounds a step
        // that runs long (the thread finishes on its own, its result unused).
        let work = tokio::time::timeout(limits.max_time + Duration::from_secs(5), work);
        tokio::pin!(work);
        // Each stage is noted as it starts.
        let finished = loop {
            tokio::select! {
                done = &mut work => break done,
                Some((stage, pct)) = stepped.recv() => self.step(job, stage, i64::from(pct)).await,
            }
        };
        // Stages the pipeline passed just before it finished are noted too.
        while let Ok((stage, pct)) = stepped.try_recv() {
            self.step(job, stage, i64::from(pct)).await;
        }
        let processed = match finished {
            Err(_) => {
                return Err((format!("processing took longer than {} s", limits.max_time.as_secs()), false));
            }
            Ok(Err(e)) => return Err((format!("processing stopped unexpectedly: {e}"), true)),
            Ok(Ok(Err(e))) => {
                let _ = tokio::fs::remove_file(&staged).await;
                return Err((e.to_string(), false));
            }
            Ok(Ok(Ok(p))) => p,
        };
        self.step(job, "storing", 90).await;
        let url_of = |name: &str| format!("/uploads/{}/{name}", job.scope.site_id);
        let mut files = Vec::new();
        let mut variants = Map::new();
        let mut all = vec![&processed.original];
        for v in &processed.variants {
            all.push(&v.webp);
            all.push(&v.fallback);
            variants.insert(
                v.name.to_string(),
                json!({"width": v.webp.width, "height": v.webp.height, "url": url_of(&v.fallback.name), "webp": url_of(&v.webp.name)}),
            );
        }
        // Each file is stored whole (the storage stages it and puts it in
        // place at once): a process stopped midway leaves no part of a file
        // where it is served. A file stored but never registered (the job
        // failed after it) is an orphan the clean-up removes later: the
        // same hash-named file may be another image's, so nothing is
        // removed here.
        for f in all {
            let key = format!("{}/{}", job.scope.site_id, f.name);
            if let Err(e) = services.storage.put(&key, f.bytes.clone()).await {
                return Err((format!("cannot store {}: {e}", f.name), true));
            }
            files.push(ImageFile { path: url_of(&f.name), mime: f.format.mime().to_string() });
        }
        let result = ImageResult {
            url: url_of(&processed.original.name),
            mime: processed.format.mime().to_string(),
            width: i64::from(processed.width),
            height: i64::from(processed.height),
            bytes: processed.original.bytes.len() as i64,
            variants: Value::Object(variants),
            color: processed.color.clone(),
            files,
        };
        let image = store.complete_image_job(job, result).await.map_err(|e| (e.to_string(), true))?;
        // The file as received may carry metadata; only re-encoded files stay.
        let _ = tokio::fs::remove_file(&staged).await;
        Ok(image)
    }
}

impl MediaWorker {
    /// Has the vision model describe a processed image (its medium variant
    /// in the original's format) and fills what a person left empty.
    async fn describe_image(&self, job: &Job) -> Result<Image, (String, bool)> {
        let services = &self.services;
        let Some(describer) = &services.describer else {
            return Err(("no vision model is configured".into(), false));
        };
        let image = services.store.image(&job.scope, &job.subject_id).await.map_err(|e| (e.to_string(), false))?;
        let url = image.variants["medium"]["url"].as_str().unwrap_or(&image.url).to_string();
        let Some(format) = Format::from_mime(&image.mime) else {
            return Err((format!("{} cannot be described", image.mime), false));
        };
        let mime = if format == Format::Webp { "image/png" } else { format.mime() };
        let key = url.trim_start_matches("/uploads/");
        let bytes = services.storage.read(key).await.map_err(|e| (format!("cannot read {url}: {e}"), false))?;
        self.step(job, "describing", 50).await;
        let d = describer.describe(&bytes, mime).await.map_err(|e| (e, true))?;
        services.store.complete_describe_job(job, d.alt, d.description, d.tags).await.map_err(|e| (e.to_string(), true))
    }
}

/// Removes what the local storage leaves of a file whose storing was cut
/// off (`<name>#<digits>`, which its listings skip) once old enough.
async fn remove_staged_leftovers(
    dir: &Path,
    site_id: &str,
    old_enough: &impl Fn(Option<std::time::SystemTime>) -> bool,
    mut cleaned: Cleaned,
) -> Cleaned {
    let Ok(mut entries) = tokio::fs::read_dir(dir).await else { return cleaned };
    while let Ok(Some(e)) = entries.next_entry().await {
        let name = e.file_name().to_string_lossy().into_owned();
        let staged = name.rsplit_once('#').is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        let Ok(meta) = e.metadata().await else { continue };
        if staged
            && meta.is_file()
            && old_enough(meta.modified().ok())
            && tokio::fs::remove_file(e.path()).await.is_ok()
        {
            tracing::info!(site = %site_id, file = %name, bytes = meta.len(), "removed a file whose storing was cut off");
            cleaned.files += 1;
            cleaned.bytes += meta.len();
        }
    }
    cleaned
}

/// The local work folder of a job (under `incoming/`, never served).
/// Published files go through the storage, which stages them itself; the
/// folder is removed with the job's other leftovers.
pub fn job_dir(services: &Services, job: &Job) -> PathBuf {
    site_dir(services, &job.scope).join("incoming").join(format!(".job-{}", job.id))
}

#[cfg(test)]
mod tests {
    use super::clean_filename;

    #[test]
    fn file_names_lose_their_paths() {
        assert_eq!(clean_filename("C:\\fakepath\\team.png"), "team.png");
        assert_eq!(clean_filename("../../etc/passwd"), "passwd");
        assert_eq!(clean_filename("a/"), "upload");
        assert_eq!(clean_filename(".."), "upload");
        assert_eq!(clean_filename("sun\u{7}set.jpg"), "sunset.jpg");
    }
}
