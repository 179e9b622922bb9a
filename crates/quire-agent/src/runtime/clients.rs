//! The model each agent runs on: clients by profile name, built from the
//! configured profiles on first use or injected.

use super::Runtime;
use crate::provider::{Profile, Provider, ProviderError};
use std::sync::Arc;

/// A profile and its client.
pub(super) type ProfileClient = (Profile, Arc<dyn Provider>);

impl Runtime {
    /// Runs agents of profile `name` (and, when `name` is `default`, of
    /// every profile not configured otherwise) on `provider`, with the
    /// limits of `profile`: any [`Provider`] implementation, so tests and
    /// benchmarks drive the loop in process and a new provider needs no
    /// change here. Replaces what `name` used before.
    pub fn set_provider(&self, name: &str, profile: Profile, provider: Arc<dyn Provider>) {
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        clients.insert(name.to_string(), (profile, provider));
    }

    /// The profile and client agents of `profile_name` run on: an injected
    /// or already built one, else one built from the configured profile
    /// (falling back to `default`, injected or configured). None when no
    /// profile applies.
    pub(super) fn client(&self, profile_name: &str) -> Result<Option<ProfileClient>, ProviderError> {
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = clients.get(profile_name) {
            return Ok(Some(c.clone()));
        }
        let key = if self.profiles.contains(profile_name) { profile_name } else { "default" };
        if let Some(c) = clients.get(key) {
            return Ok(Some(c.clone()));
        }
        let Some(profile) = self.profiles.get(key) else { return Ok(None) };
        let client = profile.client()?;
        clients.insert(key.to_string(), (profile.clone(), Arc::clone(&client)));
        Ok(Some((profile.clone(), client)))
    }
}
