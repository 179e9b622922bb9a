//! `quire images upload`: image files into the media library, through the
//! same functions as an upload over HTTP.

use super::{AnyResult, Outcome};
use crate::cli::CallerArgs;
use crate::config::Config;
use crate::services::{DataDir, Existing, cli_context, services};
use std::path::PathBuf;

/// Uploads and processes `files` (waiting for each unless `no_wait`) and
/// prints each image as JSON; failed when one of them failed.
pub async fn upload(
    files: Vec<PathBuf>,
    alt: Option<String>,
    no_wait: bool,
    caller: CallerArgs,
    config: &Config,
    data: &DataDir,
) -> AnyResult<Outcome> {
    let store = data.open_existing(Existing::Database).await?;
    let ctx = cli_context(&store, config, caller).await?;
    let services = services(&store, &data.path, config)?;
    let mut out = Vec::new();
    let mut outcome = Outcome::Succeeded;
    for file in &files {
        let meta = quire_store::ImageMeta { alt: alt.clone(), ..Default::default() };
        let made = match quire_tools::media::receive_path(&services, &ctx, file).await {
            Ok(upload) => quire_tools::images::create_from_upload(&services, &ctx, &upload, meta).await,
            Err(e) => Err(e),
        };
        let made = match made {
            Ok((image, _)) if no_wait => Ok(image),
            Ok((image, _)) => {
                let wait = std::time::Duration::from_secs(120);
                quire_tools::media::settle(&services, &ctx.scope, &image.id, wait).await
            }
            Err(e) => Err(e),
        };
        let failed = match &made {
            Ok(image) => image.status == quire_core::model::ImageStatus::Failed,
            Err(_) => true,
        };
        if failed {
            outcome = Outcome::Failed;
        }
        out.push(match made {
            Ok(image) => serde_json::json!({"file": file, "image": image}),
            Err(e) => serde_json::json!({"file": file, "error": e.message}),
        });
    }
    outln!("{}", serde_json::to_string_pretty(&out)?)?;
    store.close().await;
    Ok(outcome)
}
