//! Fair use of agents ([decision 0047]): at most so many turns an hour per
//! token or person, and a daily budget of model tokens per site. Both are
//! counted in the database, so every replica shares them and a restart
//! forgets nothing; both are off until configured.
//!
//! A turn is counted when it is asked for, exactly (one statement that
//! adds it unless the hour's count is at the limit). A site's model tokens
//! are added after each model answer; a turn is refused once the day's
//! budget is spent, and a running turn stops before its next model call.
//!
//! [decision 0047]: ../../../../docs/decisions/0047-fair-use-in-the-database.md

use super::error::AgentError;
use super::{Person, Runtime};
use crate::message::Usage;
use chrono::Utc;
use quire_store::{Scope, StoreError, UsageAdd};
use std::sync::atomic::Ordering;

/// The limits of fair use of agents; zero: no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FairUse {
    /// Agent turns an hour per token or person.
    pub turns_per_hour: u32,
    /// Model tokens (prompt and answer) a day per site, counted from 00:00 UTC.
    pub model_tokens_per_day: u64,
}

const HOUR: i64 = 60 * 60;
const DAY: i64 = 24 * HOUR;

/// The start of the window of `len` seconds that `now` falls in.
fn window(now: i64, len: i64) -> i64 {
    now - now.rem_euclid(len)
}

/// Whether `actor`'s turns are counted: a token's or a person's (the local
/// admin of the machine is not limited).
fn counted(actor: &str) -> bool {
    actor.starts_with("token:") || actor.starts_with("user:")
}

impl Runtime {
    /// Sets the limits of fair use of agents.
    pub fn set_fair_use(&self, limits: FairUse) {
        self.turns_per_hour.store(u64::from(limits.turns_per_hour), Ordering::Relaxed);
        self.model_tokens_per_day.store(limits.model_tokens_per_day, Ordering::Relaxed);
    }

    /// Refuses a turn `person` asks for when the site's budget of today is
    /// spent or their turns of this hour are at the limit; otherwise
    /// counts it.
    pub(super) async fn take_turn(&self, person: &Person) -> Result<(), AgentError> {
        if let Some(refused) = self.budget_spent(&person.scope).await? {
            return Err(refused);
        }
        let limit = self.turns_per_hour.load(Ordering::Relaxed);
        if limit == 0 || !counted(&person.actor) {
            return Ok(());
        }
        let now = Utc::now().timestamp();
        let start = window(now, HOUR);
        let add = UsageAdd { key: format!("turns:{}", person.actor), window_start: start, by: 1 };
        match self.store().take_usage(add, limit as i64).await? {
            Some(_) => Ok(()),
            None => {
                let wait = (start + HOUR - now).max(1) as u64;
                Err(AgentError::Limited {
                    message: format!("at most {limit} agent turns an hour per token or person; try again in {wait} s"),
                    retry_after: wait,
                })
            }
        }
    }

    /// The refusal of a model call in `scope` when its site's model tokens
    /// of today have reached the daily budget; none otherwise (or with no
    /// budget).
    pub(super) async fn budget_spent(&self, scope: &Scope) -> Result<Option<AgentError>, StoreError> {
        let budget = self.model_tokens_per_day.load(Ordering::Relaxed);
        if budget == 0 {
            return Ok(None);
        }
        let now = Utc::now().timestamp();
        let start = window(now, DAY);
        let spent = self.store().usage(&budget_key(scope), start).await?;
        if spent < budget as i64 {
            return Ok(None);
        }
        let wait = (start + DAY - now).max(1) as u64;
        Ok(Some(AgentError::Limited {
            message: format!(
                "the site's daily budget of {budget} model tokens is spent ({spent} used); it renews at 00:00 UTC, in {wait} s"
            ),
            retry_after: wait,
        }))
    }

    /// Counts a model answer's tokens against its site's budget of today.
    pub(super) async fn spend(&self, scope: &Scope, usage: Usage) -> Result<(), StoreError> {
        if self.model_tokens_per_day.load(Ordering::Relaxed) == 0 {
            return Ok(());
        }
        let by = (usage.input_tokens + usage.output_tokens) as i64;
        let add = UsageAdd { key: budget_key(scope), window_start: window(Utc::now().timestamp(), DAY), by };
        self.store().add_usage(vec![add]).await.map(drop)
    }
}

/// What a site's model tokens are counted under.
fn budget_key(scope: &Scope) -> String {
    format!("model-tokens:site:{}", scope.site_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_start_on_the_hour_and_at_midnight_utc() {
        let t = 1_764_249_000; // 2025-11-27 13:10:00 UTC
        assert_eq!(window(t, HOUR), 1_764_248_400);
        assert_eq!(window(t, DAY), 1_764_201_600);
        assert!(counted("token:abc") && counted("user:abc") && !counted("local:admin"));
    }
}
