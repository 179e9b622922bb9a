//! Previews of drafts outside the back-office: a short-lived link that lets
//! the site's own front end (or the delivery API) show a page's or an
//! entry's draft, and the site's setting saying where that front end is.
//!
//! Making a link needs [`Permission::Read`]; changing where the front end
//! is needs [`Permission::Administer`].

use crate::content::Content;
use crate::{AppError, AppResult, Permission, authorize};
use chrono::{DateTime, Utc};
use quire_core::model::{EntityKind, Site};
use serde::Serialize;

/// The longest preview URL a site may set.
const URL_MAX: usize = 2000;

/// A link to a draft as it would be published.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreviewLink {
    /// Where to open it: the site's preview URL with its placeholders
    /// filled, or the delivery API's route for the document.
    pub url: String,
    /// The secret that lets delivery show the drafts (`previewToken`).
    pub token: String,
    /// When the link stops working.
    pub expires_at: DateTime<Utc>,
}

/// The placeholders a preview URL may hold.
const PLACEHOLDERS: [&str; 5] = ["{slug}", "{collection}", "{kind}", "{id}", "{token}"];

/// Refuses a preview URL that is not an absolute http(s) URL once its
/// placeholders are filled in, or that is too long.
fn check_preview_url(url: &str) -> AppResult<()> {
    let bad = |why: &str| AppError::invalid("previewUrl", why.to_string());
    if url.chars().count() > URL_MAX {
        return Err(bad("at most 2000 characters"));
    }
    let filled = PLACEHOLDERS.iter().fold(url.to_string(), |u, p| u.replace(p, "x"));
    let parsed = url::Url::parse(&filled).map_err(|e| bad(&format!("not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(bad("an http or https URL with a host, e.g. https://www.example.com/{slug}?preview={token}"));
    }
    Ok(())
}

impl Content {
    /// The actor's site, with where its front end shows drafts.
    pub async fn site(&self) -> AppResult<Site> {
        authorize(self.actor(), Permission::Read)?;
        Ok(self.store().site(&self.actor().scope.site_id).await?)
    }

    /// Sets (or clears) where the site's own front end shows a draft: an
    /// http(s) URL that may hold `{slug}`, `{collection}`, `{kind}`, `{id}`
    /// and `{token}`.
    pub async fn set_preview_url(&self, url: Option<&str>) -> AppResult<Site> {
        authorize(self.actor(), Permission::Administer)?;
        let url = url.map(str::trim).filter(|u| !u.is_empty());
        if let Some(url) = url {
            check_preview_url(url)?;
        }
        let site = &self.actor().scope.site_id;
        self.store().set_preview_url(site, url).await?;
        Ok(self.store().site(site).await?)
    }

    /// A link showing the draft of a page or an entry (by id, or a page's
    /// slug) as it would be published, working for an hour.
    pub async fn preview_link(&self, kind: EntityKind, name: &str) -> AppResult<PreviewLink> {
        authorize(self.actor(), Permission::Read)?;
        let (store, scope) = (self.store(), &self.actor().scope);
        let (id, slug, collection) = match kind {
            EntityKind::Page => {
                let page = match store.page(scope, name).await {
                    Ok(page) => page,
                    Err(_) => store.page_by_slug(scope, name).await?,
                };
                (page.id, page.slug, None)
            }
            EntityKind::Entry => {
                let entry = store.entry(scope, name).await?;
                let collection = store.collection(scope, &entry.collection_id).await?;
                (entry.id, entry.slug, Some(collection.slug))
            }
            other => {
                return Err(AppError::invalid("entity", format!("{other} has no preview of its own: page or entry")));
            }
        };
        let (token, expires_at) = store.create_preview_link(scope, &self.actor().id).await?;
        let site = store.site(&scope.site_id).await?;
        let url = match &site.preview_url {
            Some(template) => [
                ("{slug}", slug.as_str()),
                ("{collection}", collection.as_deref().unwrap_or_default()),
                ("{kind}", kind.as_str()),
                ("{id}", id.as_str()),
                ("{token}", token.as_str()),
            ]
            .iter()
            .fold(template.clone(), |u, (p, v)| u.replace(p, &urlencoding(v))),
            None => match &collection {
                None => format!("/api/v1/delivery/pages/{slug}?previewToken={token}"),
                Some(c) => format!("/api/v1/delivery/collections/{c}/entries?previewToken={token}"),
            },
        };
        Ok(PreviewLink { url, token, expires_at })
    }
}

/// `value` percent-encoded for a URL's path or query.
fn urlencoding(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::check_preview_url;

    #[test]
    fn a_preview_url_is_an_http_url_with_placeholders() {
        assert!(check_preview_url("https://www.example.com/{slug}?preview={token}").is_ok());
        assert!(check_preview_url("http://localhost:3000/api/draft?kind={kind}&id={id}&t={token}").is_ok());
        for bad in ["ftp://example.com/{slug}", "/relative/{slug}", "https://", "javascript:alert(1)"] {
            assert!(check_preview_url(bad).is_err(), "{bad}");
        }
    }
}
