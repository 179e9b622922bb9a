//! Webhook deliveries ([decision 0049]): the sender every serving process
//! runs. It claims a due delivery from the outbox the store writes with
//! each change, signs it as the Standard Webhooks specification says
//! (`webhook-id`, `webhook-timestamp`, `webhook-signature`: `v1,` and the
//! base64 HMAC-SHA256 of `id.timestamp.body` under each of the
//! subscription's secrets, so a rotation signs with old and new), and
//! POSTs it through the guarded client the external tools use (private
//! addresses refused unless the operator allowed them). A 2xx delivers it;
//! anything else waits the next step of [`RETRIES`] (about a day and a half
//! in all), then fails for good.
//!
//! [decision 0049]: ../../../docs/decisions/0049-webhooks-outbox.md

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use futures_util::future::join_all;
use hmac::{Hmac, Mac};
use quire_net::{NetClient, Request};
use quire_store::{Claimed, Store};
use sha2::Sha256;
use std::time::Duration;

/// How long a delivery waits after each failed attempt: the first retry
/// after 5 s, the last about 37 hours after the first attempt.
pub const RETRIES: [Duration; 8] = [
    Duration::from_secs(5),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
    Duration::from_secs(2 * 60 * 60),
    Duration::from_secs(5 * 60 * 60),
    Duration::from_secs(10 * 60 * 60),
    Duration::from_secs(10 * 60 * 60),
    Duration::from_secs(10 * 60 * 60),
];

/// How long a sender holds a delivery it attempts.
const LEASE: Duration = Duration::from_secs(60);

/// The longest a sender sleeps between looks at what is due.
const POLL: Duration = Duration::from_millis(500);

/// The shortest: what is due after an attempt waits this long.
const IDLE: Duration = Duration::from_millis(20);

/// How many deliveries a sender claims and attempts at once (each the head
/// of its own record's queue, so their order does not matter).
pub const BATCH: usize = 32;

/// A new signing secret: `whsec_` and 24 random bytes in base64.
pub fn new_secret() -> Result<String, String> {
    let mut bytes = [0u8; 24];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness: {e}"))?;
    Ok(format!("whsec_{}", STANDARD.encode(bytes)))
}

/// The `webhook-signature` of `body` sent as message `id` at `timestamp`
/// (seconds): `v1,<signature>` for each secret, separated by spaces.
pub fn signature(secrets: &[String], id: &str, timestamp: i64, body: &str) -> String {
    secrets
        .iter()
        .filter_map(|secret| {
            let key = STANDARD.decode(secret.strip_prefix("whsec_").unwrap_or(secret)).ok()?;
            let mut mac = Hmac::<Sha256>::new_from_slice(&key).ok()?;
            mac.update(format!("{id}.{timestamp}.{body}").as_bytes());
            Some(format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes())))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Sends the outbox's deliveries.
pub struct Sender {
    store: Store,
    net: NetClient,
    retries: Vec<Duration>,
}

impl Sender {
    /// A sender over `store`, sending through `net`, waiting [`RETRIES`].
    pub fn new(store: Store, net: NetClient) -> Self {
        Self { store, net, retries: RETRIES.to_vec() }
    }

    /// The same sender waiting `retries` after each failed attempt instead
    /// (its length is the number of retries).
    pub fn with_retries(mut self, retries: Vec<Duration>) -> Self {
        self.retries = retries;
        self
    }

    /// Attempts every delivery due now, [`BATCH`] at a time at once;
    /// answers how many attempts it made.
    pub async fn run_due(&self) -> Result<usize, quire_store::StoreError> {
        let mut made = 0;
        loop {
            let claimed = self.store.claim_deliveries(LEASE, BATCH).await?;
            if claimed.is_empty() {
                return Ok(made);
            }
            made += claimed.len();
            for outcome in join_all(claimed.iter().map(|c| self.attempt(c))).await {
                outcome?;
            }
        }
    }

    /// Sends deliveries as they fall due, until the task is dropped.
    pub async fn run(self) {
        loop {
            if let Err(e) = self.run_due().await {
                tracing::warn!(error = %e, "webhook deliveries could not run; trying again");
            }
            let next = self.store.next_delivery_due().await.ok().flatten();
            let wait =
                next.and_then(|at| (at - chrono::Utc::now()).to_std().ok()).map_or(POLL, |until| until.min(POLL));
            // Never spin: a head due at once was just attempted or is held.
            tokio::time::sleep(wait.max(IDLE)).await;
        }
    }

    /// One attempt of `claimed`, recorded.
    async fn attempt(&self, claimed: &Claimed) -> Result<(), quire_store::StoreError> {
        let timestamp = chrono::Utc::now().timestamp();
        let request = Request::post(&claimed.url, claimed.payload.clone().into_bytes())
            .header("content-type", "application/json")
            .header("webhook-id", &claimed.id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature(&claimed.secrets, &claimed.id, timestamp, &claimed.payload))
            .max_bytes(64 * 1024);
        let (delivered, status, error) = match self.net.send(request).await {
            Ok(response) if response.ok() => (true, Some(response.status), None),
            Ok(response) => (false, Some(response.status), Some(format!("answered {}", response.status))),
            Err(e) => (false, None, Some(e.to_string())),
        };
        let retry = (!delivered).then(|| self.retries.get(claimed.attempt as usize - 1).copied()).flatten();
        if !delivered {
            tracing::info!(delivery = %claimed.id, attempt = claimed.attempt, error = ?error, "webhook delivery failed");
        }
        self.store.record_attempt(claimed, delivered, status, error.as_deref(), retry).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_follow_the_standard_webhooks_example() {
        // The specification's example (standard-webhooks, spec/standard-webhooks.md).
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_string();
        let body = r#"{"test": 2432232314}"#;
        let signed = signature(&[secret], "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body);
        assert_eq!(signed, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn a_rotation_signs_with_each_secret() {
        let (a, b) = (new_secret().unwrap(), new_secret().unwrap());
        let both = signature(&[a.clone(), b], "msg_1", 1, "{}");
        assert_eq!(both.split(' ').count(), 2);
        assert!(both.starts_with(&signature(&[a], "msg_1", 1, "{}")));
    }
}
