//! Upload an image: a file arrives chunk by chunk for the actor's site, is
//! typed from its bytes and checked against the upload limit and the pixel
//! budget, is recorded as an upload, and an image is made of it; an upload
//! whose request fails after it arrived is discarded.
//!
//! REST (`POST /api/v1/uploads`, `POST /api/v1/images`) and the
//! back-office's upload form read their multipart bodies and feed the file
//! here; reading the body is theirs, everything else is this module's.

use crate::{Actor, AppError, Permission, authorize};
use quire_core::model::{EntityKind, Image, Upload};
use quire_store::ImageMeta;
use quire_tools::media::Incoming;
use quire_tools::{ErrorCode, Services, ToolError};

/// Why a file was not received or no image was made of it.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// The file passed the upload limit (the server's `max_upload_mb`).
    #[error("{0}")]
    TooLarge(String),
    /// Refused for another reason: the actor may not create images, the
    /// bytes are not an image within the limits (field `file`), or the
    /// store failed.
    #[error(transparent)]
    Refused(#[from] AppError),
}

/// A use case's answer about an upload.
pub type UploadResult<T> = Result<T, UploadError>;

/// A file arriving for an image of the actor's site: started by
/// [`receive`], fed with [`Arriving::write`], checked and recorded by
/// [`Arriving::finish`]. Dropped before it is finished, nothing of it is
/// kept.
pub struct Arriving<'a> {
    services: &'a Services,
    actor: &'a Actor,
    filename: String,
    incoming: Incoming,
}

/// Starts receiving a file for an image of the actor's site, named
/// `filename` as the client named it (its last path component is kept).
/// Refused unless the actor's group may create images.
pub async fn receive<'a>(services: &'a Services, actor: &'a Actor, filename: &str) -> UploadResult<Arriving<'a>> {
    authorize(actor, Permission::Write(EntityKind::Image))?;
    let incoming = Incoming::begin(services, &actor.scope).await.map_err(AppError::from)?;
    Ok(Arriving { services, actor, filename: filename.to_string(), incoming })
}

impl Arriving<'_> {
    /// Appends a chunk of the file; past the upload limit the file is
    /// [`UploadError::TooLarge`].
    pub async fn write(&mut self, chunk: &[u8]) -> UploadResult<()> {
        self.incoming.write(chunk).await.map_err(refusal)
    }

    /// Types the file from its bytes, reads its header under the pixel
    /// budget and records it as an upload of the actor's site; a refused
    /// file is removed and the error (field `file`) says what it was.
    pub async fn finish(self) -> UploadResult<Upload> {
        let Arriving { services, actor, filename, incoming } = self;
        incoming.finish(services, &actor.scope, &actor.id, &filename).await.map_err(refusal)
    }
}

/// A refusal of the file being received: the size limit is its own kind,
/// anything else names the field `file`.
fn refusal(e: ToolError) -> UploadError {
    if e.code == ErrorCode::Limit {
        return UploadError::TooLarge(e.message);
    }
    let mut refused = AppError::from(e);
    refused.field = Some("file".into());
    UploadError::Refused(refused)
}

/// Makes an image of a received upload, with `meta` (alt text,
/// description, tags): the new image (processed in the background) and
/// `true`, or the image that already holds the same file and `false`. When
/// no image is made, the upload is discarded.
pub async fn create_image(
    services: &Services,
    actor: &Actor,
    upload: &Upload,
    meta: ImageMeta,
) -> UploadResult<(Image, bool)> {
    match quire_tools::images::create_from_upload(services, &actor.call_context(), upload, meta).await {
        Ok(made) => Ok(made),
        Err(e) => {
            discard(services, actor, upload).await;
            Err(AppError::from(e).into())
        }
    }
}

/// Forgets an upload whose request was refused after it arrived (its
/// record and its file), unless an image was made of it.
pub async fn discard(services: &Services, actor: &Actor, upload: &Upload) {
    quire_tools::media::discard(services, &actor.scope, upload).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_size_limit_is_its_own_refusal_and_the_rest_names_the_file() {
        let limit = ToolError::new(ErrorCode::Limit, "the file is larger than the upload limit of 1 MB", "");
        assert!(matches!(refusal(limit), UploadError::TooLarge(m) if m.contains("upload limit")));
        let invalid = ToolError::invalid("file: not an image", "");
        match refusal(invalid) {
            UploadError::Refused(e) => {
                assert_eq!((e.failure, e.field.as_deref()), (crate::Failure::Invalid, Some("file")));
            }
            other => panic!("{other:?}"),
        }
    }
}
