//! Media through the registry and the job worker: uploads typed from their
//! bytes, processing as a durable job (restart, retry, failure), stored
//! files without metadata, variants, dedupe, and sites kept apart.

mod common;

use base64::Engine as _;
use common::{Env, fails, ok};
use quire_core::access::Group;
use quire_core::model::{ImageStatus, JobKind};
use quire_media::samples::{self, SECRET};
use quire_tools::media::{MediaWorker, receive_bytes};
use serde_json::{Value, json};
use std::time::Duration;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn worker(env: &Env) -> MediaWorker {
    MediaWorker::new(env.registry.services().clone())
}

async fn create(env: &Env, bytes: &[u8], filename: &str) -> Value {
    ok(env.call("createImage", json!({"data": b64(bytes), "filename": filename, "alt": "A test image"})).await)
}

/// The id of the image [`create`] makes.
async fn create_id(env: &Env, bytes: &[u8], filename: &str) -> String {
    create(env, bytes, filename).await["item"]["id"].as_str().unwrap().to_string()
}

/// Every attempt at the job of image `id` is claimed and abandoned, as by
/// processes that crash; after the last, the worker gives up and the image
/// fails with the reason.
async fn abandon_every_attempt(env: &Env, id: &str) {
    for _ in 0..3 {
        env.store.claim_job(JobKind::MEDIA, Duration::from_secs(60)).await.unwrap().unwrap();
        env.store.expire_leases().await.unwrap();
    }
    assert_eq!(worker(env).drain().await.unwrap(), 1);
    let image = env.store.image(&env.scope, id).await.unwrap();
    assert_eq!(image.status, ImageStatus::Failed);
    assert!(image.error.as_deref().unwrap().starts_with("gave up after 3 attempts"), "{:?}", image.error);
}

/// The bytes a stored URL path holds on disk.
fn stored(env: &Env, url: &str) -> Vec<u8> {
    std::fs::read(env.dir.path().join(url.trim_start_matches('/'))).unwrap()
}

#[tokio::test]
async fn a_jpeg_is_processed_in_the_background_without_its_metadata() {
    let env = Env::new().await;
    let raw = samples::jpeg_with_exif(64, 32, 6);
    let created = create(&env, &raw, "holiday.jpg").await;
    let id = created["item"]["id"].as_str().unwrap().to_string();
    assert_eq!(created["item"]["status"], "processing");
    // The header's size, before orientation, until processing says otherwise.
    assert_eq!((created["item"]["width"].as_i64(), created["item"]["height"].as_i64()), (Some(64), Some(32)));

    assert_eq!(worker(&env).drain().await.unwrap(), 1);
    let image = env.store.image(&env.scope, &id).await.unwrap();
    assert_eq!(image.status, ImageStatus::Completed);
    assert_eq!((image.width, image.height), (Some(32), Some(64)), "EXIF orientation applied");
    assert_eq!(image.mime, "image/jpeg");
    assert!(image.url.starts_with(&format!("/uploads/{}/", env.scope.site_id)), "{}", image.url);
    assert!(image.url.ends_with(".jpg"));
    assert!(image.color.as_deref().is_some_and(|c| c.len() == 7 && c.starts_with('#')));
    assert_eq!(image.content_hash.as_deref().map(str::len), Some(64));

    let mut urls = vec![image.url.clone()];
    for name in ["thumbnail", "medium", "large"] {
        let v = &image.variants[name];
        assert_eq!((v["width"].as_i64(), v["height"].as_i64()), (Some(32), Some(64)), "{name}");
        urls.push(v["url"].as_str().unwrap().to_string());
        urls.push(v["webp"].as_str().unwrap().to_string());
    }
    for url in &urls {
        let bytes = stored(&env, url);
        assert!(!contains(&bytes, SECRET.as_bytes()), "{url} keeps the GPS secret");
        assert!(!contains(&bytes, b"Exif"), "{url} keeps EXIF");
        assert!(!contains(&bytes, b"xmpmeta"), "{url} keeps XMP");
    }
    // The file as received (with its GPS position) is gone.
    let incoming = env.dir.path().join(format!("uploads/{}/incoming", env.scope.site_id));
    let left: Vec<_> = std::fs::read_dir(&incoming).unwrap().collect();
    assert!(left.is_empty(), "incoming files left: {left:?}");
    // Processing is a logged change by the system.
    let changes = env.store.changes(&env.scope, &Default::default(), 50, None).await.unwrap();
    let by_worker = changes
        .items
        .iter()
        .find(|c| c.entity_id == id && c.action == quire_core::model::ChangeAction::Update)
        .unwrap();
    assert_eq!(by_worker.actor, "system:media");
}

#[tokio::test]
async fn duplicates_within_a_site_return_the_existing_image() {
    let env = Env::new().await;
    let png = samples::png(40, 30);
    let first = create(&env, &png, "a.png").await;
    let again = create(&env, &png, "b.png").await;
    assert_eq!(first["item"]["id"], again["item"]["id"]);
    assert!(again["message"].as_str().unwrap().contains("already in the library"));
    assert_eq!(worker(&env).drain().await.unwrap(), 1, "one job for one file");
}

#[tokio::test]
async fn refusals_say_what_was_found_and_change_nothing() {
    let env = Env::new().await;
    let before = env.store.images(&env.scope, None, 100, None).await.unwrap().items.len();
    let refused = |v: Value| fails(&v, "VALIDATION");
    let svg =
        refused(env.call("createImage", json!({"data": b64(&samples::svg_with_script()), "filename": "x.svg"})).await);
    assert_eq!(
        svg,
        "data: the file is an SVG image (SVG can carry scripts); only PNG, JPEG, WebP and GIF images are accepted"
    );
    let started = std::time::Instant::now();
    let bomb = refused(
        env.call("createImage", json!({"data": b64(&samples::png_bomb(60_000)), "filename": "bomb.png"})).await,
    );
    assert_eq!(bomb, "data: the image is 60000×60000 pixels (3600 megapixels); the limit is 16 megapixels");
    assert!(started.elapsed() < Duration::from_secs(1), "bomb took {:?}", started.elapsed());
    let html =
        refused(env.call("createImage", json!({"data": b64(b"<!doctype html><p>hi"), "filename": "x.png"})).await);
    assert!(html.contains("an HTML document"), "{html}");
    let both = refused(env.call("createImage", json!({"uploadId": "x", "data": "AAAA", "filename": "x.png"})).await);
    assert_eq!(both, "Provide exactly one of uploadId, url or data");
    let name = refused(env.call("createImage", json!({"data": b64(&samples::png(2, 2))})).await);
    assert_eq!(name, "filename: required with data");
    let not64 = refused(env.call("createImage", json!({"data": "not base64!", "filename": "x.png"})).await);
    assert!(not64.starts_with("data: not base64"), "{not64}");
    let big = "A".repeat(2_100_000);
    let limit = fails(&env.call("createImage", json!({"data": big, "filename": "x.png"})).await, "LIMIT");
    assert!(limit.starts_with("data: larger than 1500000 bytes"), "{limit}");
    assert_eq!(env.store.images(&env.scope, None, 100, None).await.unwrap().items.len(), before);
    let incoming = env.dir.path().join(format!("uploads/{}/incoming", env.scope.site_id));
    assert_eq!(std::fs::read_dir(&incoming).unwrap().count(), 0, "refused files are removed");
}

#[tokio::test]
async fn a_gif_header_before_html_fails_processing_and_nothing_is_stored() {
    let env = Env::new().await;
    // Its header is a GIF's, so it is taken in; decoding it is what fails.
    let poly = create(&env, &samples::gif_html_polyglot(), "x.gif").await;
    let id = poly["item"]["id"].as_str().unwrap().to_string();
    assert_eq!(worker(&env).drain().await.unwrap(), 1);
    let image = env.store.image(&env.scope, &id).await.unwrap();
    assert_eq!(image.status, ImageStatus::Failed);
    let reason = image.error.unwrap();
    assert!(reason.starts_with("the file starts as GIF but is not a readable GIF image"), "{reason}");
    assert!(env.store.served_file(&image.url).await.unwrap().is_none());
    let site = env.dir.path().join(format!("uploads/{}", env.scope.site_id));
    let gifs = std::fs::read_dir(&site)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "gif"));
    assert_eq!(gifs.count(), 0);
    let incoming = site.join("incoming");
    assert_eq!(std::fs::read_dir(&incoming).unwrap().count(), 0, "the received bytes are removed");
}

#[tokio::test]
async fn uploads_are_named_by_id_or_url_within_their_site_only() {
    let env = Env::new().await;
    let services = env.registry.services();
    let up = receive_bytes(services, &env.scope, "user:admin", "C:\\photos\\gate.webp", &samples::webp(20, 10))
        .await
        .unwrap();
    assert_eq!(up.filename, "gate.webp");
    assert_eq!(up.mime, "image/webp");
    assert_eq!(up.url, format!("/uploads/{}/incoming/{}", env.scope.site_id, up.id));
    let by_url = ok(env.call("createImage", json!({"url": up.url})).await);
    assert_eq!(by_url["item"]["filename"], "gate.webp");
    let by_id = ok(env.call("createImage", json!({"uploadId": up.id})).await);
    assert_eq!(by_id["item"]["id"], by_url["item"]["id"], "the same upload twice is one image");

    // Another site's token can name neither.
    let other = env.store.create_site("other", "Other", &["production"]).await.unwrap();
    let mut ctx = env.ctx(Group::Admin);
    ctx.scope = quire_store::Scope::new(other.id.clone(), "production");
    let up2 = receive_bytes(services, &env.scope, "user:admin", "x.gif", &samples::gif(8, 8, 2)).await.unwrap();
    let e = fails(&env.call_as(&ctx, "createImage", json!({"uploadId": up2.id})).await, "NOT_FOUND");
    assert_eq!(e, format!("uploadId: no upload {} in this site", up2.id));
    fails(&env.call_as(&ctx, "createImage", json!({"url": up2.url})).await, "NOT_FOUND");
    // Nor another environment of the same site.
    let mut staging = env.ctx(Group::Admin);
    staging.scope = quire_store::Scope::new(env.scope.site_id.clone(), "staging");
    if env.store.scope_of(&env.scope.site_id, "staging").await.is_ok() {
        fails(&env.call_as(&staging, "createImage", json!({"uploadId": up2.id})).await, "NOT_FOUND");
    }
    // A viewer may not create images at all.
    fails(&env.call_as(&env.ctx(Group::Viewer), "createImage", json!({"uploadId": up2.id})).await, "FORBIDDEN");
}

#[tokio::test]
async fn a_job_running_when_its_process_stopped_runs_again() {
    let env = Env::new().await;
    let id = create_id(&env, &samples::png(50, 50), "restart.png").await;
    // A process claims the job and stops before finishing it.
    let job = env.store.claim_job(JobKind::MEDIA, Duration::from_secs(120)).await.unwrap().unwrap();
    assert_eq!((job.status.as_str(), job.attempts), ("running", 1));
    // Its lease holds: nobody else takes the job meanwhile.
    assert!(env.store.claim_job(JobKind::MEDIA, Duration::from_secs(120)).await.unwrap().is_none());
    assert_eq!(worker(&env).drain().await.unwrap(), 0);
    // The lease ends (as it does 120 s after a crash); the next worker runs it.
    env.store.expire_leases().await.unwrap();
    assert_eq!(worker(&env).drain().await.unwrap(), 1);
    let image = env.store.image(&env.scope, &id).await.unwrap();
    assert_eq!(image.status, ImageStatus::Completed);
    let job_now = env.store.job_of(&env.scope, &id).await.unwrap().unwrap();
    assert_eq!((job_now.status.as_str(), job_now.attempts), ("done", 2));
    // The stopped process's late finish cannot overwrite the newer attempt.
    let late = env.store.fail_job(&job, "late", false).await.unwrap();
    assert!(!late);
    assert_eq!(env.store.image(&env.scope, &id).await.unwrap().status, ImageStatus::Completed);
}

/// The budget bounds one decode; a process runs one at a time, whoever
/// runs the job (the background worker, importImage, the CLI).
#[tokio::test]
async fn a_process_decodes_one_image_at_a_time() {
    let env = Env::new().await;
    let id = create_id(&env, &samples::png(64, 48), "waits.png").await;
    let services = env.registry.services().clone();
    // Another decode of this process holds the turn.
    let other = std::sync::Arc::clone(&services.media.decoding).acquire_owned().await.unwrap();
    let worker = MediaWorker::new(services.clone());
    let waiting = tokio::spawn(async move { worker.drain().await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let job = env.store.job_of(&env.scope, &id).await.unwrap().unwrap();
    assert_eq!((job.status.as_str(), job.stage.as_deref()), ("running", Some("starting")), "claimed, not reading");
    assert!(!waiting.is_finished());
    // importImage's wait does not take a job meanwhile: it answers in time.
    let started = std::time::Instant::now();
    let seen = quire_tools::media::settle(&services, &env.scope, &id, Duration::from_millis(300)).await.unwrap();
    assert_eq!(seen.status, ImageStatus::Processing);
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
    drop(other);
    assert_eq!(waiting.await.unwrap().unwrap(), 1);
    assert_eq!(env.store.image(&env.scope, &id).await.unwrap().status, ImageStatus::Completed);
}

#[tokio::test]
async fn an_image_that_cannot_be_processed_fails_with_the_reason() {
    // A limit lower than the image: the header passed when it arrived, the
    // limits of the worker are tighter (a configuration change meanwhile).
    let env = Env::new().await;
    let id = create_id(&env, &samples::png(300, 300), "big.png").await;
    let mut services = env.registry.services().clone();
    services.media.limits.max_pixels = 10_000;
    assert_eq!(MediaWorker::new(services).drain().await.unwrap(), 1);
    let image = env.store.image(&env.scope, &id).await.unwrap();
    assert_eq!(image.status, ImageStatus::Failed);
    assert_eq!(
        image.error.as_deref(),
        Some("the image is 300×300 pixels (0.09 megapixels); the limit is 0.01 megapixels")
    );
    let job = env.store.job_of(&env.scope, &id).await.unwrap().unwrap();
    assert_eq!((job.status.as_str(), job.attempts), ("failed", 1), "a file that cannot decode is not retried");
    let got = ok(env.call("getImage", json!({"id": id})).await);
    assert_eq!(got["items"][0]["status"], "failed");
    assert!(got["items"][0]["error"].as_str().unwrap().contains("300×300"));
}

#[tokio::test]
async fn a_job_whose_file_vanished_fails_and_retries_stop_after_the_last_attempt() {
    let env = Env::new().await;
    let id = create_id(&env, &samples::png(20, 20), "gone.png").await;
    abandon_every_attempt(&env, &id).await;
}

#[tokio::test]
async fn gif_animation_and_webp_are_kept_in_their_format() {
    let env = Env::new().await;
    let gif = create(&env, &samples::gif(24, 24, 4), "spin.gif").await;
    let webp = create(&env, &samples::webp(30, 20), "gate.webp").await;
    assert_eq!(worker(&env).drain().await.unwrap(), 2);
    let gif = env.store.image(&env.scope, gif["item"]["id"].as_str().unwrap()).await.unwrap();
    assert_eq!(gif.mime, "image/gif");
    assert!(gif.url.ends_with(".gif"));
    use image::AnimationDecoder;
    let bytes = stored(&env, &gif.url);
    let frames = image::codecs::gif::GifDecoder::new(std::io::Cursor::new(bytes)).unwrap().into_frames();
    assert_eq!(frames.count(), 4);
    let webp = env.store.image(&env.scope, webp["item"]["id"].as_str().unwrap()).await.unwrap();
    assert_eq!((webp.mime.as_str(), webp.width, webp.height), ("image/webp", Some(30), Some(20)));
    assert!(webp.variants["thumbnail"]["url"].as_str().unwrap().ends_with(".png"));
}

#[tokio::test]
async fn full_text_search_finds_word_forms_and_says_which_ranking_answered() {
    let env = Env::new().await;
    let sunset = ok(env
        .call(
            "createImage",
            json!({"data": b64(&samples::png(12, 8)), "filename": "IMG_2041.png", "alt": "Mountain sunset", "tags": ["alps"]}),
        )
        .await);
    ok(env
        .call(
            "createImage",
            json!({"data": b64(&samples::png(13, 8)), "filename": "beach.png", "alt": "A beach at noon"}),
        )
        .await);
    let found = ok(env.call("getImage", json!({"query": "sunset over the mountains"})).await);
    assert_eq!(found["ranking"], "fulltext");
    assert_eq!(found["items"][0]["id"], sunset["item"]["id"], "{found}");
    assert_eq!(found["count"], 1, "{found}");
    // Stems both ways, and tags count.
    let found = ok(env.call("getImage", json!({"query": "sunsets in the Alps"})).await);
    assert_eq!(found["items"][0]["id"], sunset["item"]["id"]);
    // Query syntax is data.
    for q in ["sunset*", "NEAR(sunset mountain)", "alt:sunset", "OR"] {
        ok(env.call("getImage", json!({"query": q})).await);
    }
    for q in ["\"", "-"] {
        let err = fails(&env.call("getImage", json!({"query": q})).await, "VALIDATION");
        assert_eq!(err, "query: has no letters or digits to search for");
    }
    // An archived image is not found.
    env.store
        .archive(
            &quire_core::model::ChangeContext::system(),
            &env.scope,
            quire_core::model::EntityKind::Image,
            &[sunset["item"]["id"].as_str().unwrap().to_string()],
        )
        .await
        .unwrap();
    assert_eq!(ok(env.call("getImage", json!({"query": "mountain sunset"})).await)["count"], 0);
}

#[tokio::test]
async fn undoing_an_agent_turn_undoes_the_processing_of_its_images_too() {
    let env = Env::new().await;
    let agent = env.agent("s-media", quire_tools::ApprovalPolicy::User);
    let made = ok(env
        .call_as(&agent, "createImage", json!({"data": b64(&samples::png(30, 30)), "filename": "agent.png"}))
        .await);
    let id = made["item"]["id"].as_str().unwrap().to_string();
    assert_eq!(worker(&env).drain().await.unwrap(), 1);
    assert_eq!(env.store.image(&env.scope, &id).await.unwrap().status, ImageStatus::Completed);
    let report =
        env.store.undo_turn(&quire_core::model::ChangeContext::system(), &env.scope, "s-media", "1").await.unwrap();
    assert_eq!(report.reverted.len(), 2, "the processing, then the creation");
    assert!(env.store.image(&env.scope, &id).await.is_err(), "the image is archived");
}

fn names(dir: &std::path::Path) -> std::collections::BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn the_clean_up_removes_unused_uploads_after_their_ttl_and_leftovers_of_failed_work() {
    let env = Env::new().await;
    let services = env.registry.services();
    let site = env.dir.path().join(format!("uploads/{}", env.scope.site_id));
    let incoming = site.join("incoming");
    let seeded = names(&site);
    // An upload no image was made of, one that became an image and was
    // processed, one whose image waits in the queue, and a second upload of
    // the same bytes as the processed one (the library answered that image).
    let unused = receive_bytes(services, &env.scope, "user:a", "unused.png", &samples::png(10, 10)).await.unwrap();
    let made = receive_bytes(services, &env.scope, "user:a", "made.png", &samples::png(12, 12)).await.unwrap();
    ok(env.call("createImage", json!({"uploadId": made.id})).await);
    assert_eq!(worker(&env).drain().await.unwrap(), 1);
    let again = receive_bytes(services, &env.scope, "user:a", "again.png", &samples::png(12, 12)).await.unwrap();
    let dup = ok(env.call("createImage", json!({"uploadId": again.id})).await);
    let waiting = receive_bytes(services, &env.scope, "user:a", "wait.png", &samples::png(14, 14)).await.unwrap();
    let queued = ok(env.call("createImage", json!({"uploadId": waiting.id})).await);
    // Leftovers of work that stopped or failed: a file written for an image
    // whose processing failed, a partial reception, a job's work folder.
    std::fs::write(site.join("0123456789abcdef0123456789abcdef.png"), b"orphan").unwrap();
    std::fs::write(incoming.join("0193aaaa-0000-7000-8000-000000000000.part"), b"partial").unwrap();
    std::fs::create_dir_all(incoming.join(".job-0193bbbb-0000-7000-8000-000000000000")).unwrap();
    std::fs::write(incoming.join(".job-0193bbbb-0000-7000-8000-000000000000/x.webp"), b"half").unwrap();
    let before = names(&site);

    // Now: everything is young; only the work folder of no running job goes.
    let now = chrono::Utc::now();
    let cleaned = worker(&env).clean(now).await.unwrap();
    assert_eq!((cleaned.uploads, cleaned.files), (0, 1), "{cleaned:?}");
    assert!(!incoming.join(".job-0193bbbb-0000-7000-8000-000000000000").exists());
    assert!(env.store.upload(&env.scope, &unused.id).await.is_ok());
    assert_eq!(names(&site), before);

    // Two hours on: leftovers are old enough, uploads still within the TTL.
    let cleaned = worker(&env).clean(now + chrono::Duration::hours(2)).await.unwrap();
    assert_eq!((cleaned.uploads, cleaned.files, cleaned.bytes), (0, 2, 13), "{cleaned:?}");
    assert!(!site.join("0123456789abcdef0123456789abcdef.png").exists());
    assert!(env.store.upload(&env.scope, &unused.id).await.is_ok());

    // A day on: the uploads no image was made of are gone, record and file;
    // the one whose image is queued stays, and so does every image's file.
    let cleaned = worker(&env).clean(now + chrono::Duration::hours(25)).await.unwrap();
    assert_eq!(cleaned.uploads, 2, "the unused upload and the duplicate: {cleaned:?}");
    for gone in [&unused, &again] {
        assert!(env.store.upload(&env.scope, &gone.id).await.is_err(), "{} is forgotten", gone.filename);
        assert!(!incoming.join(&gone.id).exists(), "{}'s file is removed", gone.filename);
    }
    assert!(env.store.upload(&env.scope, &waiting.id).await.is_ok());
    assert!(incoming.join(&waiting.id).exists(), "its image is still to be processed");
    let image = env.store.image(&env.scope, dup["item"]["id"].as_str().unwrap()).await.unwrap();
    assert_eq!(image.status, ImageStatus::Completed);
    assert!(env.store.served_file(&image.url).await.unwrap().is_some());
    assert!(site.join(image.url.rsplit('/').next().unwrap()).exists());
    assert!(seeded.is_subset(&names(&site)), "the seed's registered files stay");
    // The queued image is processed as usual afterwards.
    assert_eq!(worker(&env).drain().await.unwrap(), 1);
    let id = queued["item"]["id"].as_str().unwrap();
    assert_eq!(env.store.image(&env.scope, id).await.unwrap().status, ImageStatus::Completed);
    assert_eq!(names(&incoming), Default::default());
}

#[tokio::test]
async fn an_image_that_fails_for_good_leaves_no_received_file() {
    let env = Env::new().await;
    let id = create_id(&env, &samples::jpeg_with_exif(40, 20, 1), "given-up.jpg").await;
    let incoming = env.dir.path().join(format!("uploads/{}/incoming", env.scope.site_id));
    assert_eq!(names(&incoming).len(), 1, "the file as received waits for processing");
    // The image record stays, failed, with its reason: a person decides.
    abandon_every_attempt(&env, &id).await;
    assert_eq!(names(&incoming), Default::default(), "the received file (with its GPS position) is removed");
}
