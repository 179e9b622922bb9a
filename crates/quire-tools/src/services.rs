//! What tools run against: the store, the media folder and storage, the
//! notes vaults, the media settings and the models and clients some tools
//! use. Built once by whoever serves the registry (the server, the CLI).

use crate::settings::{ExternalSettings, MediaSettings};
use quire_store::Store;
use std::path::PathBuf;

/// What tools run against.
#[derive(Clone, Debug)]
pub struct Services {
    /// The store.
    pub store: Store,
    /// Local folder of media, one folder per site named by its id: what
    /// is staged (received uploads, job work folders, under
    /// `<site>/incoming/`) and, with the local storage, the published files.
    pub uploads_dir: PathBuf,
    /// Where the published files `/uploads` serves are kept: `uploads_dir`
    /// by default, or an S3-compatible bucket.
    pub storage: crate::storage::Storage,
    /// The notes vault of each site.
    pub vaults: crate::vaults::Vaults,
    /// Upload limits, decoding limits and the job worker's wake-up.
    pub media: MediaSettings,
    /// The embedding model semantic search uses; none: full text alone.
    pub embedder: Option<crate::embed::SharedEmbedder>,
    /// The vision model that writes alt text for new images; none: nothing is written.
    pub describer: Option<crate::describe::SharedDescriber>,
    /// The guarded HTTP client and the providers of the external tools.
    pub external: ExternalSettings,
}

impl Services {
    /// Services over a data directory: uploads (and, until
    /// [`Services::storage`] is set otherwise, the published files) in
    /// `<data>/uploads`, vaults in `<data>/vaults/<site>`.
    pub fn new(store: Store, data_dir: &std::path::Path) -> Self {
        Services {
            store,
            uploads_dir: data_dir.join("uploads"),
            storage: crate::storage::Storage::local(data_dir.join("uploads")),
            vaults: crate::vaults::Vaults::new(data_dir.join("vaults")),
            media: MediaSettings::default(),
            embedder: None,
            describer: None,
            external: ExternalSettings::default(),
        }
    }
}
