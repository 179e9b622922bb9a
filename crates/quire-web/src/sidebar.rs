//! What the AI sidebar shows that the server renders: the release a turn of
//! an agent in release mode put its changes in (one of its own, or the one
//! the person chose), with each document's differences against the site,
//! field by field, and what can be done to it as it stands (publish,
//! schedule, open, discard).
//! The sidebar's script asks for it when a turn ends and when it shows a
//! conversation again; its buttons post to the release screen's own routes.

use crate::Person;
use crate::error::WebError;
use crate::releases::{ItemView, item_view};
use askama::Template;
use axum::extract::{Path, Query};
use axum::response::Html;
use quire_app::Failure;
use quire_app::releases::Release;
use quire_core::access::{Permission, authorize};
use quire_core::model::{EntityKind, ReleaseState};
use serde::Deserialize;

/// A turn's release as the sidebar shows it.
pub struct TurnRelease {
    /// The session it was made in.
    pub session: String,
    /// The turn whose changes it holds.
    pub turn: i64,
    pub release: Release,
    pub items: Vec<ItemView>,
}

impl TurnRelease {
    fn is(&self, state: &str) -> bool {
        self.release.state.as_str() == state
    }

    /// What the release's state means for the site, in the sidebar's words.
    fn standing(&self) -> &'static str {
        match self.release.state {
            ReleaseState::Open => {
                "This turn's changes wait in this release: the drafts and the site stay as they are until it is \
                 published."
            }
            ReleaseState::Scheduled => "This turn's changes are scheduled to go on the site.",
            ReleaseState::Published => "Published: this turn's changes are on the site.",
            ReleaseState::Reverted => "Published, then reverted: the site shows what it showed before.",
            ReleaseState::Discarded => "Discarded: this turn's changes will not be published.",
        }
    }
}

#[derive(Template)]
#[template(path = "ai_releases.html")]
struct TurnReleases {
    csrf: String,
    csrf_field: &'static str,
    /// Whether the person may publish and discard releases (the buttons;
    /// the use cases decide again).
    may_publish: bool,
    releases: Vec<TurnRelease>,
}

/// Which turn's release to show.
#[derive(Deserialize)]
pub struct TurnQuery {
    /// One turn; without it, every turn of the session that made one.
    #[serde(default)]
    turn: Option<i64>,
}

/// `GET /ai/sessions/{id}/releases`: the releases the session's turns put
/// their changes in (with `?turn=`, that turn's), oldest turn first, as
/// items of the sidebar's list; nothing when no turn made one.
pub async fn releases(
    person: Person,
    Path(session): Path<String>,
    Query(q): Query<TurnQuery>,
) -> Result<Html<String>, WebError> {
    let content = &person.content;
    // The person's own conversation (or any, for administrators).
    let turns: Vec<(i64, String)> = content
        .session_releases(&session)
        .await?
        .into_iter()
        .filter(|(turn, _)| q.turn.is_none_or(|t| t == *turn))
        .collect();
    let mut shown = Vec::new();
    for (turn, id) in turns {
        let review = match content.release_review(&id).await {
            Ok((review, _)) => review,
            // The turn staged nothing: it has no release.
            Err(e) if e.failure == Failure::NotFound => continue,
            Err(e) => return Err(e.into()),
        };
        let mut items = Vec::new();
        for item in review.items {
            items.push(item_view(content, item).await);
        }
        shown.push(TurnRelease { session: session.clone(), turn, release: review.release, items });
    }
    let who = person.actor().principal();
    let may_publish = [EntityKind::Page, EntityKind::Entry, EntityKind::Navigation]
        .into_iter()
        .any(|kind| authorize(&who, Permission::Publish(kind)).is_ok());
    let page =
        TurnReleases { csrf: person.session.csrf.clone(), csrf_field: crate::CSRF_FIELD, may_publish, releases: shown };
    Ok(Html(page.render()?))
}
