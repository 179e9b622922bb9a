//! The people of a site, for its administrators: who may sign in to it,
//! in which group and environments, and when each last signed in; invite
//! one (a one-time sign-in link to pass on), change a person's group or
//! environments, take the site from them, disable and enable them.
//!
//! A person has one group on every site they work on, so what reaches
//! beyond the caller's site — the group or the account of someone who also
//! works elsewhere — is the instance administrator's to change. Nobody
//! changes their own group or account here, and a site keeps at least one
//! enabled administrator.

use crate::sites::instance_admin;
use crate::{Actor, AppError, AppResult, Permission, authorize};
use quire_core::access::Group;
use quire_store::{NewUser, Store};
pub use quire_store::{UserInfo, UserSite};

/// Someone to invite to the caller's site.
#[derive(Debug, Clone)]
pub struct Invitation {
    /// Their email address.
    pub email: String,
    /// The name others see (default: the email's local part).
    pub name: Option<String>,
    /// Their group.
    pub group: Group,
    /// The site's environments they may use (`None`: every one the caller may).
    pub environments: Option<Vec<String>>,
}

/// An invitation made: the person, and the one-time sign-in link's secret
/// when they have no password yet (the link sets it; `/sign-in/link/<secret>`).
#[derive(Debug, Clone)]
pub struct Invited {
    /// The person.
    pub user: UserInfo,
    /// Whether they had an account already (on another site): they keep it,
    /// with this site added.
    pub existing: bool,
    /// The sign-in link's secret, shown this once.
    pub link: Option<String>,
}

/// What to change about a person of the caller's site.
#[derive(Debug, Clone, Default)]
pub struct Change {
    /// Their group.
    pub group: Option<Group>,
    /// The site's environments they may use: `Some(None)` every one.
    pub environments: Option<Option<Vec<String>>>,
    /// Disable (`true`) or enable (`false`) their account.
    pub disabled: Option<bool>,
}

/// The people of the caller's site, disabled ones too, oldest first (admins).
pub async fn list(store: &Store, actor: &Actor) -> AppResult<Vec<UserInfo>> {
    authorize(actor, Permission::Administer)?;
    Ok(store.site_users(&actor.scope.site_id).await?)
}

/// One person of the caller's site (admins); others are not found.
pub async fn person(store: &Store, actor: &Actor, id: &str) -> AppResult<UserInfo> {
    authorize(actor, Permission::Administer)?;
    of_site(store, actor, id).await
}

async fn of_site(store: &Store, actor: &Actor, id: &str) -> AppResult<UserInfo> {
    let missing = || AppError::not_found(format!("there is no person \"{id}\" on this site"));
    let user = store.user(id).await.map_err(|_| missing())?;
    if !user.sites.iter().any(|s| s.site_id == actor.scope.site_id) {
        return Err(missing());
    }
    Ok(user)
}

/// The environments a grant asks for, checked against what the caller may
/// use itself: `None` (every one) becomes the caller's own list when the
/// caller may use only some.
async fn granted(store: &Store, actor: &Actor, asked: Option<Vec<String>>) -> AppResult<Option<Vec<String>>> {
    let site = store.site(&actor.scope.site_id).await?;
    let mine = actor.environments.clone().unwrap_or_else(|| site.environments.clone());
    match asked {
        Some(asked) => {
            if asked.is_empty() {
                return Err(AppError::invalid("environments", "name at least one environment, or none for all"));
            }
            if let Some(env) = asked.iter().find(|e| site.environments.contains(e) && !mine.contains(e)) {
                return Err(AppError::forbidden(format!(
                    "you may not use environment \"{env}\", so you cannot grant it"
                )));
            }
            Ok(Some(asked))
        }
        None if site.environments.iter().all(|e| mine.contains(e)) => Ok(None),
        None => Ok(Some(mine)),
    }
}

/// Invites someone to the caller's site (admins). A new person gets an
/// account without a password and a one-time sign-in link that sets it;
/// someone with an account on another site keeps it and their group (an
/// invitation naming another group is refused), with this site added.
pub async fn invite(store: &Store, actor: &Actor, invitation: Invitation) -> AppResult<Invited> {
    authorize(actor, Permission::Administer)?;
    let environments = granted(store, actor, invitation.environments).await?;
    let site = actor.scope.site_id.clone();
    if let Ok(found) = store.user(invitation.email.trim()).await {
        if found.sites.iter().any(|s| s.site_id == site) {
            return Err(AppError::conflict(format!("{} already works on this site", found.email)));
        }
        if found.group != invitation.group {
            return Err(AppError::invalid(
                "group",
                format!(
                    "{} already has an account as {} (one group on every site): invite them as {}, or ask the \
                     instance's administrator to change their group",
                    found.email,
                    found.group.as_str(),
                    found.group.as_str()
                ),
            ));
        }
        let user = store.set_user_site(&found.id, &site, environments).await?;
        tracing::info!(user = %user.id, site = %site, by = %actor.id, "person given a site");
        return Ok(Invited { user, existing: true, link: None });
    }
    let user = store
        .create_user(NewUser {
            email: invitation.email,
            display_name: invitation.name,
            group: invitation.group,
            sites: vec![(site, environments)],
            password: None,
        })
        .await?;
    let link = store.create_sign_in_link(&user.id).await?;
    tracing::info!(user = %user.id, group = user.group.as_str(), by = %actor.id, "person invited");
    Ok(Invited { user, existing: false, link: Some(link) })
}

/// Whether the person is one of the site's enabled administrators.
fn enabled_admin(user: &UserInfo) -> bool {
    user.group == Group::Admin && user.disabled_at.is_none()
}

/// Refuses a change that would leave the caller's site without an enabled
/// administrator: `user` is about to stop being one there.
async fn keeps_an_admin(store: &Store, actor: &Actor, user: &UserInfo) -> AppResult<()> {
    if !enabled_admin(user) {
        return Ok(());
    }
    let others = store.site_users(&actor.scope.site_id).await?;
    if others.iter().any(|u| u.id != user.id && enabled_admin(u)) {
        return Ok(());
    }
    Err(AppError::conflict(format!("{} is this site's only enabled administrator; make another one first", user.email)))
}

/// Refuses a change to the caller's own account, and (through
/// [`Permission::ChangePerson`]) one to the account or group of someone
/// who also works on other sites unless the caller is the instance's
/// administrator.
async fn may_change_account(store: &Store, actor: &Actor, user: &UserInfo, what: &str) -> AppResult<()> {
    if actor.user_id() == Some(user.id.as_str()) {
        return Err(AppError::conflict(format!("you cannot change your own {what}; another administrator can")));
    }
    let elsewhere = user.sites.len() > 1;
    let instance = elsewhere && instance_admin(store, actor).await?;
    authorize(actor, Permission::ChangePerson { elsewhere, instance })?;
    Ok(())
}

/// Changes a person of the caller's site (admins): their group, their
/// environments here, or whether their account is enabled (disabling ends
/// their sessions and revokes the tokens they made).
pub async fn change(store: &Store, actor: &Actor, id: &str, change: Change) -> AppResult<UserInfo> {
    authorize(actor, Permission::Administer)?;
    let mut user = of_site(store, actor, id).await?;
    if let Some(group) = change.group.filter(|g| *g != user.group) {
        may_change_account(store, actor, &user, "group").await?;
        if group != Group::Admin {
            keeps_an_admin(store, actor, &user).await?;
        }
    }
    if let Some(disabled) = change.disabled.filter(|d| *d != user.disabled_at.is_some()) {
        may_change_account(store, actor, &user, "account").await?;
        if disabled {
            keeps_an_admin(store, actor, &user).await?;
        }
    }
    let environments = match change.environments {
        Some(asked) => {
            if actor.user_id() == Some(user.id.as_str()) {
                return Err(AppError::conflict("you cannot change your own environments; another administrator can"));
            }
            Some(granted(store, actor, asked).await?)
        }
        None => None,
    };
    if let Some(group) = change.group.filter(|g| *g != user.group) {
        user = store.set_user_group(&user.id, group).await?;
    }
    if let Some(envs) = environments {
        user = store.set_user_site(&user.id, &actor.scope.site_id, envs).await?;
    }
    if let Some(disabled) = change.disabled.filter(|d| *d != user.disabled_at.is_some()) {
        user = store.set_user_disabled(&user.id, disabled).await?;
    }
    tracing::info!(user = %user.id, by = %actor.id, "person changed");
    Ok(user)
}

/// Takes the caller's site from a person who works on others too (admins):
/// their sessions here end and the tokens they made for it are revoked.
/// Someone who works here alone is disabled instead.
pub async fn remove(store: &Store, actor: &Actor, id: &str) -> AppResult<UserInfo> {
    authorize(actor, Permission::Administer)?;
    let user = of_site(store, actor, id).await?;
    if actor.user_id() == Some(user.id.as_str()) {
        return Err(AppError::conflict("you cannot take this site from yourself; another administrator can"));
    }
    keeps_an_admin(store, actor, &user).await?;
    let user = store.remove_user_site(&user.id, &actor.scope.site_id).await?;
    tracing::info!(user = %user.id, by = %actor.id, "site taken from a person");
    Ok(user)
}

/// A new one-time sign-in link for an invited person of the caller's site
/// who has not set a password yet (admins): the invitation sent again. A
/// person with a password signs in with it (the CLI's `quire user link`
/// resets one on the machine that holds the data).
pub async fn sign_in_link(store: &Store, actor: &Actor, id: &str) -> AppResult<String> {
    authorize(actor, Permission::Administer)?;
    let user = of_site(store, actor, id).await?;
    if user.has_password {
        return Err(AppError::conflict(format!(
            "{} has set a password and signs in with it; a link would let whoever holds it in as them",
            user.email
        )));
    }
    if user.disabled_at.is_some() {
        return Err(AppError::conflict(format!("{} is disabled; enable them first", user.email)));
    }
    Ok(store.create_sign_in_link(&user.id).await?)
}
