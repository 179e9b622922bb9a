//! Where each site's notes vault lives, opened once per site and shared.

use crate::error::{ErrorCode, ToolError};
use quire_store::{Scope, Store};
use quire_vault::Vault;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The vault folders of all sites: `<root>/<site slug>` unless configured
/// otherwise (an existing Obsidian vault, say).
#[derive(Clone, Debug)]
pub struct Vaults {
    root: PathBuf,
    by_site: HashMap<String, PathBuf>,
    open: Arc<Mutex<HashMap<String, Arc<Vault>>>>,
}

impl Vaults {
    /// Vaults under `root`, one folder per site slug.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Vaults { root: root.into(), by_site: HashMap::new(), open: Arc::default() }
    }

    /// Uses `path` as the vault of the site with this slug.
    pub fn with_site(mut self, slug: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        self.by_site.insert(slug.into(), path.into());
        self
    }

    /// The folder of a site's vault.
    pub fn folder(&self, slug: &str) -> PathBuf {
        self.by_site.get(slug).cloned().unwrap_or_else(|| self.root.join(slug))
    }

    /// The vault of a scope's site (created on first use).
    pub async fn of(&self, store: &Store, scope: &Scope) -> Result<Arc<Vault>, ToolError> {
        if let Some(v) = self.open.lock().unwrap_or_else(|e| e.into_inner()).get(&scope.site_id) {
            return Ok(Arc::clone(v));
        }
        let site = store.site(&scope.site_id).await?;
        let folder = self.folder(&site.slug);
        let vault = tokio::task::spawn_blocking(move || Vault::open(folder))
            .await
            .map_err(|e| ToolError::new(ErrorCode::Internal, e.to_string(), ""))?
            .map_err(|e| {
                tracing::error!(error = %e, "cannot open the vault");
                ToolError::new(ErrorCode::Internal, "the notes vault cannot be opened", "See the server log.")
            })?;
        let vault = Arc::new(vault);
        self.open.lock().unwrap_or_else(|e| e.into_inner()).insert(scope.site_id.clone(), Arc::clone(&vault));
        Ok(vault)
    }
}
