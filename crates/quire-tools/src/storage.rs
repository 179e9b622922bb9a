//! Where published media lives: the files `/uploads/<site>/<name>` serves
//! (originals and variants of processed images, the demo images), kept
//! under the key `<site id>/<name>` either in the uploads folder (the
//! default) or in a bucket of any S3-compatible object store. Both go
//! through the `object_store` crate, so writing, listing and removing are
//! one code path; only serving a local file takes the filesystem's own fast
//! path ([`Storage::local_path`]).
//!
//! What is staged before it is published — received uploads and the work
//! folders of jobs under `<site>/incoming/` — always stays on local disk:
//! it is streamed, read back by the decoder and renamed, which a filesystem
//! does well and an object store does not.

use object_store::local::LocalFileSystem;
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt as _, PutPayload};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use object_store::{GetOptions, GetRange, GetResult, ObjectMeta};

/// Where the published files are kept, as configured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum StorageConfig {
    /// The uploads folder of the data directory.
    #[default]
    Local,
    /// A bucket of an S3-compatible object store.
    S3(S3Config),
}

/// An S3-compatible bucket.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct S3Config {
    /// Base URL of the service, e.g. `https://s3.eu-west-1.amazonaws.com`
    /// or `http://127.0.0.1:9000`; none: Amazon S3 of the region.
    pub endpoint: Option<String>,
    /// The bucket (it must exist).
    pub bucket: String,
    /// The region requests are signed for.
    pub region: String,
    /// Access key id; none (with no secret): credentials from the `AWS_*`
    /// environment variables (keys, session token, web identity, instance
    /// role), not from `~/.aws` profiles.
    pub access_key_id: Option<String>,
    /// Secret access key.
    pub secret_access_key: Option<String>,
    /// Addresses the bucket as `<endpoint>/<bucket>` (most self-hosted
    /// stores) rather than `<bucket>.<endpoint>`.
    pub path_style: bool,
    /// Allows an `http://` endpoint (a store on this machine or a private
    /// network); otherwise only `https://` is accepted.
    pub allow_http: bool,
}

impl std::fmt::Debug for S3Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The secret stays out of logs and error messages.
        f.debug_struct("S3Config")
            .field("endpoint", &self.endpoint)
            .field("bucket", &self.bucket)
            .field("region", &self.region)
            .field("access_key_id", &self.access_key_id)
            .field("path_style", &self.path_style)
            .field("allow_http", &self.allow_http)
            .finish_non_exhaustive()
    }
}

/// A storage operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The configuration cannot work; the message names the field.
    #[error("{0}")]
    Config(String),
    /// Nothing is stored under the key.
    #[error("no stored file {0}")]
    NotFound(String),
    /// The local folder or the object store failed.
    #[error("storage: {0}")]
    Backend(String),
}

impl From<object_store::Error> for StorageError {
    fn from(e: object_store::Error) -> Self {
        match e {
            object_store::Error::NotFound { path, .. } => StorageError::NotFound(path),
            other => StorageError::Backend(other.to_string()),
        }
    }
}

/// The published media files, keyed `<site id>/<name>`. Cheap to clone.
#[derive(Clone)]
pub struct Storage {
    backend: Backend,
}

#[derive(Clone)]
enum Backend {
    /// Under `root`; the store is made on first use, once the folder
    /// exists (a command that only reads must not create it).
    Local {
        root: PathBuf,
        store: Arc<tokio::sync::OnceCell<Arc<LocalFileSystem>>>,
    },
    S3 {
        store: Arc<dyn ObjectStore>,
        bucket: String,
    },
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.backend {
            Backend::Local { root, .. } => f.debug_struct("Storage::Local").field("root", root).finish(),
            Backend::S3 { bucket, .. } => f.debug_struct("Storage::S3").field("bucket", bucket).finish(),
        }
    }
}

impl Storage {
    /// Files under `root` (the uploads folder), one folder per site.
    pub fn local(root: impl Into<PathBuf>) -> Self {
        Storage { backend: Backend::Local { root: root.into(), store: Arc::default() } }
    }

    /// Files in an S3-compatible bucket. Nothing is sent yet; a bad setting
    /// is an error naming it.
    pub fn s3(config: &S3Config) -> Result<Self, StorageError> {
        if config.bucket.trim().is_empty() {
            return Err(StorageError::Config("media.s3_bucket: required when media.storage is \"s3\"".into()));
        }
        if config.region.trim().is_empty() {
            return Err(StorageError::Config("media.s3_region: must not be empty".into()));
        }
        if config.access_key_id.is_some() != config.secret_access_key.is_some() {
            return Err(StorageError::Config(
                "media.s3_access_key_id and media.s3_secret_access_key: give both or neither".into(),
            ));
        }
        if let Some(endpoint) = &config.endpoint {
            let url = url::Url::parse(endpoint)
                .map_err(|e| StorageError::Config(format!("media.s3_endpoint: not a URL ({e}): {endpoint}")))?;
            match url.scheme() {
                "https" => {}
                "http" if config.allow_http => {}
                "http" => {
                    return Err(StorageError::Config(format!(
                        "media.s3_endpoint: plain http needs media.s3_allow_http = true: {endpoint}"
                    )));
                }
                other => {
                    return Err(StorageError::Config(format!(
                        "media.s3_endpoint: scheme {other} is not http or https: {endpoint}"
                    )));
                }
            }
        }
        // The same TLS provider every other client of this process uses.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let bucket = config.bucket.trim();
        // Keys configured: those alone (an ambient AWS_SESSION_TOKEN or
        // AWS_ENDPOINT_URL would otherwise join them). None: the AWS_*
        // variables (keys, session token, web identity, instance role).
        let mut builder = match (&config.access_key_id, &config.secret_access_key) {
            (Some(id), Some(secret)) => {
                object_store::aws::AmazonS3Builder::new().with_access_key_id(id).with_secret_access_key(secret)
            }
            _ => object_store::aws::AmazonS3Builder::from_env(),
        };
        builder = builder
            .with_bucket_name(bucket)
            .with_region(config.region.trim())
            .with_allow_http(config.allow_http)
            .with_virtual_hosted_style_request(!config.path_style)
            // A store that is down answers within seconds, not minutes:
            // two retries in ten seconds; no limit on a whole response
            // (a slow reader of a large original), but on each read.
            .with_retry(object_store::RetryConfig {
                backoff: object_store::BackoffConfig::default(),
                max_retries: 2,
                retry_timeout: std::time::Duration::from_secs(10),
            })
            .with_client_options(
                object_store::ClientOptions::default()
                    .with_allow_http(config.allow_http)
                    .with_connect_timeout(std::time::Duration::from_secs(5))
                    .with_timeout_disabled()
                    .with_read_timeout(std::time::Duration::from_secs(30)),
            );
        if let Some(endpoint) = &config.endpoint {
            let endpoint = endpoint.trim_end_matches('/');
            builder = builder.with_endpoint(if config.path_style {
                endpoint.to_string()
            } else {
                // Virtual-hosted requests take the endpoint as it is: the
                // bucket goes in front of its host.
                virtual_hosted(endpoint, bucket)?
            });
        }
        let store = builder.build().map_err(|e| StorageError::Config(format!("media storage (s3): {e}")))?;
        Ok(Storage { backend: Backend::S3 { store: Arc::new(store), bucket: config.bucket.trim().to_string() } })
    }

    /// The storage `config` describes, with `uploads_dir` for the local one.
    pub fn from_config(config: &StorageConfig, uploads_dir: &Path) -> Result<Self, StorageError> {
        match config {
            StorageConfig::Local => Ok(Storage::local(uploads_dir)),
            StorageConfig::S3(s3) => Storage::s3(s3),
        }
    }

    /// `local` or `s3 bucket <name>`, for logs.
    pub fn describe(&self) -> String {
        match &self.backend {
            Backend::Local { root, .. } => format!("local folder {}", root.display()),
            Backend::S3 { bucket, .. } => format!("s3 bucket {bucket}"),
        }
    }

    /// Whether the files are in the local folder.
    pub fn is_local(&self) -> bool {
        matches!(self.backend, Backend::Local { .. })
    }

    /// Where the file under `key` is on disk, for the local storage (served
    /// by the filesystem's own path); none for an object store.
    pub fn local_path(&self, key: &str) -> Option<PathBuf> {
        match &self.backend {
            Backend::Local { root, .. } => Some(root.join(key)),
            Backend::S3 { .. } => None,
        }
    }

    async fn store(&self) -> Result<Arc<dyn ObjectStore>, StorageError> {
        match &self.backend {
            Backend::S3 { store, .. } => Ok(store.clone()),
            Backend::Local { root, store } => {
                let local = store
                    .get_or_try_init(|| async {
                        tokio::fs::create_dir_all(root)
                            .await
                            .map_err(|e| StorageError::Backend(format!("cannot create {}: {e}", root.display())))?;
                        let fs = LocalFileSystem::new_with_prefix(root)?;
                        Ok::<_, StorageError>(Arc::new(fs))
                    })
                    .await?;
                Ok(local.clone() as Arc<dyn ObjectStore>)
            }
        }
    }

    /// Stores `bytes` under `key` whole: a reader sees the old file or the
    /// new one, never part of one. Storing again refreshes its time.
    pub async fn put(&self, key: &str, bytes: Vec<u8>) -> Result<(), StorageError> {
        let key = parse(key)?;
        // Not found here is the bucket (or folder), not the file: say what
        // the store said.
        let put = self.store().await?.put(&key, PutPayload::from(bytes)).await;
        put.map(|_| ())
            .map_err(|e| StorageError::Backend(format!("cannot store {key} in the {}: {e}", self.describe())))
    }

    /// The whole file under `key` (for files that are small by
    /// construction; serving streams through [`Storage::get`]).
    pub async fn read(&self, key: &str) -> Result<Vec<u8>, StorageError> {
        let key = parse(key)?;
        let got = self.store().await?.get(&key).await?;
        Ok(got.bytes().await?.to_vec())
    }

    /// Reads `key` with `options` (a range, conditions, or the head only);
    /// the body streams as it is read.
    pub async fn get(&self, key: &str, options: GetOptions) -> Result<GetResult, object_store::Error> {
        let key = Key::parse(key).map_err(|e| object_store::Error::Generic { store: "media", source: e.into() })?;
        let store =
            self.store().await.map_err(|e| object_store::Error::Generic { store: "media", source: e.into() })?;
        store.get_opts(&key, options).await
    }

    /// Metadata of `key`.
    pub async fn head(&self, key: &str) -> Result<ObjectMeta, StorageError> {
        let key = parse(key)?;
        Ok(self.store().await?.head(&key).await?)
    }

    /// Removes `key`; a file already gone is not an error.
    pub async fn delete(&self, key: &str) -> Result<(), StorageError> {
        let key = parse(key)?;
        match self.store().await?.delete(&key).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// The sites that have files: the first component of every key.
    pub async fn sites(&self) -> Result<Vec<String>, StorageError> {
        if let Backend::Local { root, .. } = &self.backend
            && !tokio::fs::try_exists(root).await.unwrap_or(false)
        {
            return Ok(Vec::new());
        }
        let listed = self.store().await?.list_with_delimiter(None).await?;
        Ok(listed.common_prefixes.iter().filter_map(|p| p.filename().map(str::to_string)).collect())
    }

    /// The files of `site` (its own level only: the staging folder under
    /// it is not published media), each with its name, size and time.
    pub async fn files(&self, site: &str) -> Result<Vec<StoredFile>, StorageError> {
        let prefix = parse(site)?;
        let listed = self.store().await?.list_with_delimiter(Some(&prefix)).await?;
        Ok(listed
            .objects
            .into_iter()
            .filter_map(|m| {
                let name = m.location.filename()?.to_string();
                Some(StoredFile { name, size: m.size, modified: m.last_modified })
            })
            .collect())
    }
}

/// A stored file of a site, as listed.
#[derive(Debug, Clone)]
pub struct StoredFile {
    /// Its name within the site.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// When it was last stored.
    pub modified: chrono::DateTime<chrono::Utc>,
}

fn parse(key: &str) -> Result<Key, StorageError> {
    Key::parse(key).map_err(|e| StorageError::Backend(format!("bad key {key}: {e}")))
}

impl quire_store::seed::SeedFiles for Storage {
    async fn read(&self, key: &str) -> Option<Vec<u8>> {
        Storage::read(self, key).await.ok()
    }

    async fn write(&self, key: &str, bytes: Vec<u8>) -> Result<(), String> {
        self.put(key, bytes).await.map_err(|e| e.to_string())
    }
}

/// `scheme://bucket.host[:port][/path]` of an endpoint `scheme://host…`.
fn virtual_hosted(endpoint: &str, bucket: &str) -> Result<String, StorageError> {
    let mut url = url::Url::parse(endpoint)
        .map_err(|e| StorageError::Config(format!("media.s3_endpoint: not a URL ({e}): {endpoint}")))?;
    let host = url.host_str().unwrap_or_default().to_string();
    url.set_host(Some(&format!("{bucket}.{host}")))
        .map_err(|e| StorageError::Config(format!("media.s3_bucket: {bucket} cannot lead a host name ({e})")))?;
    Ok(url.as_str().trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s3(endpoint: &str) -> S3Config {
        S3Config {
            endpoint: Some(endpoint.into()),
            bucket: "media".into(),
            region: "us-east-1".into(),
            access_key_id: Some("id".into()),
            secret_access_key: Some("secret".into()),
            path_style: true,
            allow_http: false,
        }
    }

    #[test]
    fn bad_settings_name_their_field() {
        let err = |c: &S3Config| Storage::s3(c).unwrap_err().to_string();
        assert!(err(&S3Config { bucket: " ".into(), ..s3("https://s3.example") }).starts_with("media.s3_bucket:"));
        assert!(err(&s3("s3.example")).starts_with("media.s3_endpoint: not a URL"));
        assert!(err(&s3("ftp://s3.example")).starts_with("media.s3_endpoint: scheme ftp"));
        assert!(err(&s3("http://127.0.0.1:9000")).contains("media.s3_allow_http"));
        assert!(err(&S3Config { secret_access_key: None, ..s3("https://s3.example") }).contains("both or neither"));
        assert!(Storage::s3(&S3Config { allow_http: true, ..s3("http://127.0.0.1:9000") }).is_ok());
        assert!(Storage::s3(&s3("https://s3.example")).is_ok());
    }

    #[test]
    fn virtual_hosted_requests_put_the_bucket_in_front_of_the_endpoints_host() {
        assert_eq!(
            virtual_hosted("https://s3.eu-west-1.amazonaws.com", "media").unwrap(),
            "https://media.s3.eu-west-1.amazonaws.com"
        );
        assert_eq!(virtual_hosted("http://minio.local:9000/", "m").unwrap(), "http://m.minio.local:9000");
        assert!(Storage::s3(&S3Config { path_style: false, ..s3("https://s3.example") }).is_ok());
    }

    #[test]
    fn the_secret_stays_out_of_debug_output() {
        assert!(!format!("{:?}", s3("https://s3.example")).contains("secret"));
    }
}
