//! What happened in a conversation besides what the model and the person
//! said: a call that waited for a person's approval, a turn undone, a turn
//! that failed. Each is stored among the session's messages when it
//! happens, so the conversation can be shown again as it happened; none is
//! a [`crate::Message`], so the model never reads them.

use super::Runtime;
use super::calls::PendingCall;
use quire_core::model::SessionStatus;
use quire_store::{Scope, SessionUpdate, StoreError};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One thing that happened in a conversation besides its messages, stored
/// with them (`role` tells them apart).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Record {
    /// A call waited for a person: what they were asked (its answer is the
    /// approval's own, `approvalId`).
    Approval(Box<PendingCall>),
    /// A person undid a turn.
    #[serde(rename_all = "camelCase")]
    Undo {
        /// The turn undone.
        turn: i64,
        /// Who undid it (`user:<id>`, `token:<id>`).
        by: String,
        /// How many changes the undo wrote.
        reverted: usize,
        /// How many of the turn's open approvals it rejected.
        cancelled: u64,
    },
    /// The turn stopped on an error.
    Failure {
        /// Why, as the stream said it.
        message: String,
        /// The error's code.
        code: String,
    },
}

impl Record {
    /// The record as the database stores it among the messages.
    pub fn to_json(&self) -> Value {
        // A record is strings, numbers and JSON values: it always serialises.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Runtime {
    /// Stores `record` after a session's last message, outside any run of
    /// a turn. A session at rest (idle, paused or failed) is claimed for
    /// the moment of the write, so no turn starts or goes on meanwhile,
    /// and left as it was; while a turn runs, the record goes in through
    /// that turn's fence (refused when another process runs it).
    pub(super) async fn record_aside(
        &self,
        scope: &Scope,
        session_id: &str,
        record: &Record,
    ) -> Result<(), StoreError> {
        let store = self.store();
        let body = record.to_json();
        for rest in [SessionStatus::Idle, SessionStatus::Paused, SessionStatus::Failed] {
            if !store.claim_session(scope, session_id, &[rest], SessionStatus::Running).await? {
                continue;
            }
            let written = async {
                let mut session = store.session(scope, session_id).await?;
                session.status = rest;
                store.save_session(scope, &session, &[(session.turns, body)]).await
            }
            .await;
            if written.is_err() {
                // Back at rest, whatever failed: a claimed session no turn runs would wait forever.
                store.claim_session(scope, session_id, &[SessionStatus::Running], rest).await?;
            }
            return written;
        }
        let session = store.session(scope, session_id).await?;
        store.queue_step(scope, session_id, &SessionUpdate::default(), session.turns, &[body]).await?.done().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn records_are_stored_by_role_and_are_no_message_of_the_model() {
        let undo = Record::Undo { turn: 2, by: "user:u1".into(), reverted: 3, cancelled: 0 };
        assert_eq!(
            undo.to_json(),
            json!({ "role": "undo", "turn": 2, "by": "user:u1", "reverted": 3, "cancelled": 0 })
        );
        let asked = Record::Approval(Box::new(PendingCall {
            tool_call_id: "c1".into(),
            tool: "deletePage".into(),
            arguments: json!({ "ids": ["p1"] }),
            approval_id: "cf_1".into(),
            message: "Would archive 1 page(s): contact.".into(),
            items: json!([]),
            expires_at: None,
        }));
        let stored = asked.to_json();
        assert_eq!((stored["role"].as_str(), stored["approvalId"].as_str()), (Some("approval"), Some("cf_1")));
        assert_eq!(serde_json::from_value::<Record>(stored.clone()).unwrap(), asked);
        for body in [stored, undo.to_json(), Record::Failure { message: "m".into(), code: "c".into() }.to_json()] {
            assert!(serde_json::from_value::<crate::Message>(body).is_err(), "the model's conversation leaves it out");
        }
    }
}
