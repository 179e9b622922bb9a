//! Publishing many documents at once, on the demo site with 500 pages more
//! (SQLite, in a temporary folder): a release of all 500 against one
//! publishing call naming them, each over drafts changed since the last
//! round, five rounds each, alternating.
//!
//! Run: `cargo bench -p quire-tools --bench releases` (prints medians).

use quire_core::input::{NewPage, PagePatch};
use quire_core::model::{EntityKind, PublishStatus, ReleaseAction};
use quire_store::{PublishAction, Stage};
use std::time::Instant;

mod common;
use common::{Demo, demo};

const PAGES: usize = 500;
const ROUNDS: usize = 5;

#[tokio::main]
async fn main() {
    let Demo { dir: _dir, store, scope, services: _services, ctx: _ctx } = demo().await;
    let person = quire_store::testing::person();
    let mut ids = Vec::new();
    for i in 0..PAGES {
        let input = NewPage {
            name: format!("Launch {i}"),
            slug: format!("launch-{i}"),
            status: Some(PublishStatus::Published),
            ..serde_json::from_value(serde_json::json!({"name": "x", "slug": "x"})).unwrap()
        };
        ids.push(store.create_page(&person, &scope, input).await.unwrap().id);
    }
    let (mut releases, mut calls, mut staging) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS * 2 {
        for id in &ids {
            let patch = PagePatch { name: Some(format!("Launch, round {round}")), ..Default::default() };
            store.update_page(&person, &scope, id, patch).await.unwrap();
        }
        if round % 2 == 0 {
            let release = store.create_release(&person, &scope, &format!("Round {round}"), None).await.unwrap();
            let started = Instant::now();
            for id in &ids {
                let stage = Stage {
                    entity: EntityKind::Page,
                    name: id.clone(),
                    action: ReleaseAction::Publish,
                    keep: false,
                    locale: None,
                };
                store.stage(&person, &scope, &release.id, stage).await.unwrap();
            }
            staging.push(started.elapsed().as_secs_f64() * 1e3);
            let started = Instant::now();
            store.publish_release(&person, &scope, &release.id, None).await.unwrap();
            releases.push(started.elapsed().as_secs_f64() * 1e3);
        } else {
            let started = Instant::now();
            store.publishing(&person, &scope, PublishAction::Publish, EntityKind::Page, &ids, None).await.unwrap();
            calls.push(started.elapsed().as_secs_f64() * 1e3);
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!("| {PAGES} pages, {ROUNDS} rounds | median (ms) |\n| --- | --- |");
    println!("| staging them into a release, one call each | {:.0} |", median(staging));
    println!("| publishing the release (one transaction) | {:.0} |", median(releases));
    println!("| one publishing call naming them (one transaction) | {:.0} |", median(calls));
}
