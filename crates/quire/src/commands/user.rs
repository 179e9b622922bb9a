//! `quire user create | list | disable | enable | link`: the people who sign
//! in to the back-office.

use super::AnyResult;
use crate::cli::UserCommand;
use crate::services::{DataDir, Existing};
use quire_core::access::Group;
use quire_store::NewUser;
use std::io::Read;

/// A sign-in link: on the configured public URL, else on the configured
/// address `serve` listens on. With neither, the address a server was
/// started on (`--addr`) is not known here: the link is its path alone,
/// and a note on stderr says so. An address that listens everywhere
/// (`0.0.0.0`) names no host: the link uses localhost and a note says that
/// works on the server's machine only.
fn link(config: &crate::config::Config, secret: &str) -> String {
    let path = format!("/sign-in/link/{secret}");
    let set = |v: &Option<String>| v.as_deref().map(str::trim).filter(|v| !v.is_empty()).map(str::to_string);
    if let Some(base) = set(&config.public_url) {
        return format!("{}{path}", base.trim_end_matches('/'));
    }
    let Some(addr) = set(&config.addr) else {
        eprintln!(
            "note: the server's address is not configured (neither public_url nor addr is set), so the sign-in \
             link has no host: open it on the address `quire serve` printed, or set public_url \
             (QUIRE_PUBLIC_URL) so links carry it"
        );
        return path;
    };
    match addr.parse::<std::net::SocketAddr>() {
        Ok(listen) if listen.ip().is_unspecified() => {
            eprintln!(
                "note: addr {addr} listens on every address, so the link names localhost, which works on the \
                 server's machine only: set public_url (QUIRE_PUBLIC_URL) to the address people reach it at"
            );
            format!("http://localhost:{}{path}", listen.port())
        }
        _ => format!("http://{addr}{path}"),
    }
}

/// Runs `quire user …` on the data directory `data`.
pub async fn run(command: UserCommand, config: &crate::config::Config, data: &DataDir) -> AnyResult {
    match command {
        UserCommand::Create { email, group, sites, envs, name, password_stdin } => {
            let group = Group::parse(&group)?;
            let password = if password_stdin {
                let mut line = String::new();
                std::io::stdin().read_to_string(&mut line)?;
                let line = line.lines().next().unwrap_or_default().to_string();
                Some(line)
            } else {
                None
            };
            let store = data.open_existing(Existing::Database).await?;
            let sites = if sites.is_empty() { vec![config.default_site.clone()] } else { sites };
            let environments = (!envs.is_empty()).then_some(envs);
            let user = store
                .create_user(NewUser {
                    email,
                    display_name: name,
                    group,
                    sites: sites.into_iter().map(|s| (s, environments.clone())).collect(),
                    password,
                })
                .await?;
            outln!("created user {} ({}, {})", user.email, user.id, user.group.as_str())?;
            if !user.has_password {
                let secret = store.create_sign_in_link(&user.id).await?;
                outln!("sign-in link (one use, 24 hours): {}", link(config, &secret))?;
            }
            store.close().await;
        }
        UserCommand::List { json } => {
            let store = data.open_existing(Existing::Database).await?;
            let users = store.users().await?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&users)?)?;
            } else {
                outln!("{:<36}  {:<32} {:<20} {:<7} {:<24} {}", "ID", "EMAIL", "NAME", "GROUP", "SITES", "STATUS")?;
                for u in &users {
                    let sites = u.sites.iter().map(|s| s.slug.as_str()).collect::<Vec<_>>().join(",");
                    let status = if u.disabled_at.is_some() { "disabled" } else { "active" };
                    outln!(
                        "{:<36}  {:<32} {:<20} {:<7} {:<24} {}",
                        u.id,
                        u.email,
                        u.display_name,
                        u.group.as_str(),
                        sites,
                        status
                    )?;
                }
            }
            store.close().await;
        }
        UserCommand::Disable { user } => {
            let store = data.open_existing(Existing::Database).await?;
            let user = store.set_user_disabled(&user, true).await?;
            outln!("disabled user {}; their sessions have ended", user.email)?;
            store.close().await;
        }
        UserCommand::Enable { user } => {
            let store = data.open_existing(Existing::Database).await?;
            let user = store.set_user_disabled(&user, false).await?;
            outln!("enabled user {}", user.email)?;
            store.close().await;
        }
        UserCommand::Link { user } => {
            let store = data.open_existing(Existing::Database).await?;
            let user = store.user(&user).await?;
            if user.disabled_at.is_some() {
                return Err(format!("user {} is disabled; enable them first", user.email).into());
            }
            let secret = store.create_sign_in_link(&user.id).await?;
            outln!("{}", link(config, &secret))?;
            store.close().await;
        }
    }
    Ok(())
}
