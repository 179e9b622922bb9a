//! The Environments screen as plain forms: an admin makes a copy of
//! production, compares it after a change (each record by its name, never
//! its id), promotes it, sees a conflict refused whole with its reason and
//! settled by a choice, and undoes a promotion after a confirmation;
//! locking and archiving; an editor and a viewer are offered nothing and
//! refused.

mod common;

use axum::http::StatusCode;
use common::site;
use quire_core::access::Group;
use quire_core::input::PagePatch;
use quire_core::model::ChangeContext;
use quire_store::Scope;

/// Renames page `slug` in environment `env` (as the system).
async fn rename(site: &common::Site, env: &str, slug: &str, name: &str) -> String {
    let scope = Scope::new(&site.scope.site_id, env);
    let id = site.store.page_by_slug(&scope, slug).await.unwrap().id;
    let patch = PagePatch { name: Some(name.into()), ..Default::default() };
    site.store.update_page(&ChangeContext::system(), &scope, &id, patch).await.unwrap();
    id
}

async fn page_name(site: &common::Site, env: &str, slug: &str) -> String {
    site.store.page_by_slug(&Scope::new(&site.scope.site_id, env), slug).await.unwrap().name
}

#[tokio::test]
async fn a_copy_is_compared_by_name_promoted_and_the_promotion_undone_after_a_confirmation() {
    let site = site().await;
    let admin = site.browser("admin@example.org", Group::Admin).await;

    let ((status, body), to) =
        site.post(&admin, "/environments", &[("key", "next"), ("name", "Next release"), ("from", "production")]).await;
    assert_eq!((status, to.as_str()), (StatusCode::SEE_OTHER, "/environments?done=created"), "{body}");
    let (_, list) = site.get(&admin, &to).await;
    assert!(list.contains("Environment made."), "{list}");
    assert!(list.contains(r#"value="Next release""#), "the new one is listed with its name: {list}");
    assert!(list.contains("<td>production</td>"), "copied from production: {list}");

    let (_, same) = site.get(&admin, "/environments/compare?from=next&to=production").await;
    assert!(same.contains("Nothing differs"), "a fresh copy holds what production holds: {same}");

    let about = rename(&site, "next", "about", "About the team").await;
    let (status, compared) = site.get(&admin, "/environments/compare?from=next&to=production").await;
    assert_eq!(status, StatusCode::OK);
    assert!(compared.contains("1 record(s) differ"), "{compared}");
    assert!(compared.contains("page About the team"), "named by the source's name: {compared}");
    assert!(compared.contains("Changed in next."), "{compared}");
    assert!(compared.contains(r#"<pre class="after">About the team</pre>"#), "the field's new value: {compared}");
    assert!(compared.contains(r#"<pre class="before">About</pre>"#), "the field's value in production: {compared}");
    assert!(!compared.contains("conflict</span>"), "not a conflict: {compared}");
    assert!(!compared.contains(&about), "no id is shown: {compared}");

    // The record is ticked by default, named by its lineage (production's id).
    let lineage = site.page_id("about").await;
    assert!(compared.contains(&format!(r#"name="item" value="{lineage}""#)), "{compared}");
    let ((status, _), to) =
        site.post(&admin, "/environments/production/promote", &[("from", "next"), ("item", &lineage)]).await;
    assert_eq!(
        (status, to.as_str()),
        (StatusCode::SEE_OTHER, "/environments/compare?from=next&to=production&done=promoted")
    );
    assert_eq!(page_name(&site, "production", "about").await, "About the team");

    let (_, after) = site.get(&admin, &to).await;
    assert!(after.contains("Nothing differs"), "{after}");
    assert!(after.contains("page “About the team” changed"), "the promotion is listed: {after}");
    let promotion = site.store.promotions(&site.scope.site_id, "production").await.unwrap().remove(0);
    let undo = format!("/environments/production/promotions/{}/undo", promotion.id);
    assert!(after.contains(&format!(r#"href="{undo}""#)), "{after}");

    // Undo asks first, then puts production back.
    let (status, question) = site.get(&admin, &undo).await;
    assert_eq!(status, StatusCode::OK);
    assert!(question.contains("Undo the promotion from next into production"), "{question}");
    assert!(question.contains("page “About the team” changed"), "{question}");
    assert_eq!(page_name(&site, "production", "about").await, "About the team", "asking changed nothing");
    let ((status, _), to) = site.post(&admin, &undo, &[]).await;
    assert_eq!(
        (status, to.as_str()),
        (StatusCode::SEE_OTHER, "/environments/compare?from=next&to=production&done=undone")
    );
    assert_eq!(page_name(&site, "production", "about").await, "About");
    let (_, undone) = site.get(&admin, &to).await;
    assert!(undone.contains("Undone:"), "{undone}");
    assert!(!undone.contains(&format!(r#"href="{undo}""#)), "an undone promotion offers no Undo: {undone}");
}

#[tokio::test]
async fn an_unsettled_conflict_is_refused_whole_by_name_and_a_choice_settles_it() {
    let site = site().await;
    let admin = site.browser("admin@example.org", Group::Admin).await;
    site.post(&admin, "/environments", &[("key", "next"), ("from", "production")]).await;
    rename(&site, "next", "about", "About us (next)").await;
    let in_production = rename(&site, "production", "about", "About us (live)").await;

    let (_, compared) = site.get(&admin, "/environments/compare?from=next&to=production").await;
    assert!(compared.contains("conflict</span>"), "{compared}");
    assert!(compared.contains("Changed in both next and production"), "{compared}");
    assert!(compared.contains("Take next&#39;s copy") || compared.contains("Take next's copy"), "{compared}");

    let ((status, refused), _) =
        site.post(&admin, "/environments/production/promote", &[("from", "next"), ("item", &in_production)]).await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert!(refused.contains(r#"id="promote-error""#), "{refused}");
    assert!(refused.contains("nothing was promoted: 1 conflict to resolve"), "{refused}");
    assert!(refused.contains("page “About us (next)” changed in both"), "named: {refused}");
    assert!(!refused.contains(&format!("({in_production})")), "not by its id: {refused}");
    assert_eq!(page_name(&site, "production", "about").await, "About us (live)", "nothing was applied");

    // Nothing ticked is refused too, saying so.
    let ((status, none), _) = site.post(&admin, "/environments/production/promote", &[("from", "next")]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(none.contains("Choose at least one record to promote."), "{none}");

    let resolve = format!("resolve-{in_production}");
    let keep = [("from", "next"), ("item", in_production.as_str()), (resolve.as_str(), "target")];
    let ((status, _), _) = site.post(&admin, "/environments/production/promote", &keep).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(page_name(&site, "production", "about").await, "About us (live)", "kept");

    let take = [("from", "next"), ("item", in_production.as_str()), (resolve.as_str(), "source")];
    let ((status, _), _) = site.post(&admin, "/environments/production/promote", &take).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(page_name(&site, "production", "about").await, "About us (next)", "taken from next");
}

#[tokio::test]
async fn locking_renaming_and_archiving_go_through_the_forms_and_the_current_one_is_not_archived() {
    let site = site().await;
    let admin = site.browser("admin@example.org", Group::Admin).await;

    let ((status, body), _) = site.post(&admin, "/environments", &[("key", "Not A Key")]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.contains(r#"id="e-env-key""#), "the reason is beside the key: {body}");
    assert!(body.contains(r#"value="Not A Key""#), "what was typed is kept: {body}");

    let ((status, _), to) = site.post(&admin, "/environments/staging", &[("locked", "true")]).await;
    assert_eq!((status, to.as_str()), (StatusCode::SEE_OTHER, "/environments?done=locked"));
    let staging = site.store.environment(&site.scope.site_id, "staging").await.unwrap();
    assert!(staging.locked);
    let (_, list) = site.get(&admin, "/environments").await;
    assert!(list.contains(&format!(r#"aria-label="Unlock {}""#, staging.name)), "{list}");

    site.post(&admin, "/environments/staging", &[("name", "Staging area")]).await;
    assert_eq!(site.store.environment(&site.scope.site_id, "staging").await.unwrap().name, "Staging area");

    let (status, question) = site.get(&admin, "/environments/staging/archive").await;
    assert_eq!(status, StatusCode::OK);
    assert!(question.contains("Archive the environment Staging area?"), "{question}");
    assert!(site.store.environment(&site.scope.site_id, "staging").await.unwrap().archived_at.is_none());
    let ((status, _), to) = site.post(&admin, "/environments/staging/archive", &[]).await;
    assert_eq!((status, to.as_str()), (StatusCode::SEE_OTHER, "/environments?done=archived"));
    assert!(site.store.environment(&site.scope.site_id, "staging").await.unwrap().archived_at.is_some());
    // A person's credential reaches the site's live environments: an
    // archived one leaves the list and the switcher.
    let (_, list) = site.get(&admin, &to).await;
    assert!(list.contains("Archived: its tokens stop"), "{list}");
    assert!(!list.contains("<code>staging</code>") && !list.contains(r#"value="demo/staging""#), "{list}");
    assert!(list.contains("quire env restore"), "the way back is named: {list}");

    // The one the person works in is refused, with the reason on the question.
    let ((status, refused), _) = site.post(&admin, "/environments/production/archive", &[]).await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert!(refused.contains("is the one this credential acts in"), "{refused}");
}

#[tokio::test]
async fn editors_and_viewers_see_the_environments_and_differences_but_are_offered_and_allowed_nothing() {
    let site = site().await;
    let admin = site.browser("admin@example.org", Group::Admin).await;
    site.post(&admin, "/environments", &[("key", "next"), ("from", "production")]).await;
    let id = rename(&site, "next", "about", "About the team").await;
    for (email, group) in [("ed@example.org", Group::Editor), ("vi@example.org", Group::Viewer)] {
        let who = site.browser(email, group).await;
        let (status, list) = site.get(&who, "/environments").await;
        assert_eq!(status, StatusCode::OK);
        assert!(list.contains("<code>next</code>"), "{list}");
        for offered in ["Make environment", ">Lock<", "Archive…", ">Rename<"] {
            assert!(!list.contains(offered), "{group:?} is offered {offered}: {list}");
        }
        let (_, compared) = site.get(&who, "/environments/compare?from=next&to=production").await;
        assert!(compared.contains("page About the team"), "{compared}");
        assert!(!compared.contains("Promote the chosen records"), "{compared}");
        assert!(!compared.contains(r#"name="item""#), "{compared}");

        let ((status, _), _) = site.post(&who, "/environments", &[("key", "mine")]).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let lineage = site.page_id("about").await;
        let ((status, _), _) =
            site.post(&who, "/environments/production/promote", &[("from", "next"), ("item", &lineage)]).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let (status, _) = site.get(&who, "/environments/next/archive").await;
        assert_eq!(status, StatusCode::FORBIDDEN);
    }
    assert!(site.store.environment(&site.scope.site_id, "mine").await.is_err(), "nothing was made");
    assert_eq!(page_name(&site, "production", "about").await, "About", "nothing was promoted");
    let _ = id;
}
