//! Agents, chat sessions and their messages.
//!
//! Agents are configuration records (logged like content; disabling is their
//! archive). Sessions hold what a paused turn needs to resume after a
//! restart: status, active tools, working memory, pending approvals and
//! usage. Messages are stored as provider-neutral JSON bodies; this module
//! does not interpret them.

use crate::db::{self, Conn, Row, read_row};
use crate::list::{Listing, page_of};
use crate::log::new_id;
use crate::record::{Record, enum_col, found, json_col, json_opt, write_version};
use crate::{Result, Scope, Store, StoreError};
use chrono::{DateTime, Utc};
use quire_core::input::{AgentPatch, NewAgent};
use quire_core::model::*;
use serde_json::Value;

fn session_from_row(row: &Row) -> Result<AgentSession> {
    Ok(AgentSession {
        id: row.try_get("id")?,
        agent_id: row.try_get("agent_id")?,
        actor: row.try_get("actor")?,
        group: enum_col(row, "grp", |f, s| {
            quire_core::access::Group::parse(s).map_err(|e| quire_core::FieldError::new(f, e))
        })?,
        title: row.try_get("title")?,
        status: enum_col(row, "status", SessionStatus::parse)?,
        turns: row.try_get("turns")?,
        steps: row.try_get("steps")?,
        active_tools: json_col(row, "active_tools")?,
        memory: json_col(row, "memory")?,
        pending: json_col(row, "pending")?,
        context: json_opt(row, "context")?,
        contexts: json_col(row, "contexts")?,
        input_tokens: row.try_get("input_tokens")?,
        output_tokens: row.try_get("output_tokens")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// One stored message of a session.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredMessage {
    /// Position in the session, from 1.
    pub seq: i64,
    /// The turn it belongs to.
    pub turn: i64,
    /// The message (role, content, tool calls or result).
    pub body: Value,
    /// When it was stored.
    pub at: DateTime<Utc>,
}

/// A small change of a session's state, written with the step's new
/// messages: only what is set changes (working memory and active tools
/// only when they changed), so a step never rewrites the whole session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionUpdate {
    /// The new status.
    pub status: Option<SessionStatus>,
    /// Steps taken in the current turn.
    pub steps: Option<i64>,
    /// Input and output tokens used, all turns.
    pub usage: Option<(i64, i64)>,
    /// Tools activated in the session.
    pub active_tools: Option<Vec<String>>,
    /// Working memory.
    pub memory: Option<Value>,
    /// Calls waiting for approval.
    pub pending: Option<Value>,
}

/// A session write in the writer's queue.
#[derive(Debug)]
pub struct QueuedWrite(crate::db::Queued<()>);

impl QueuedWrite {
    /// Waits until the write committed; answers its failure otherwise.
    pub async fn done(self) -> Result<()> {
        self.0.done().await
    }
}

/// What a new session starts with.
#[derive(Debug, Clone)]
pub struct NewSession {
    /// The id the session takes when its client chose one (an AG-UI
    /// client's `threadId`, checked by `quire_core::text::check_client_id`);
    /// none: a new one. An id already taken, in any scope, is a conflict on
    /// `id` that says nothing of the session holding it.
    pub id: Option<String>,
    /// The agent.
    pub agent_id: String,
    /// Who chats.
    pub actor: String,
    /// Their group.
    pub group: quire_core::access::Group,
    /// A title.
    pub title: String,
    /// What the user's UI shows.
    pub context: Option<Value>,
    /// The contexts the person chose for the first turn, by key.
    pub contexts: Vec<String>,
}

/// An event to store: `(session, id, kind, data)`.
pub type NewEvent = (String, u64, String, String);

/// Appends `bodies` (JSON texts, as one JSON array) to a session's
/// messages after its last one, all of turn `turn`: one statement.
fn append_messages(conn: &Conn, session_id: &str, turn: i64, bodies: &str, at: DateTime<Utc>) -> Result<()> {
    db::query(
        "INSERT INTO agent_messages (session_id, seq, turn, body, at)
         SELECT ?1, last.seq + m.key + 1, ?2, m.value, ?3
         FROM json_each(?4) AS m, (SELECT COALESCE(MAX(seq), 0) AS seq FROM agent_messages WHERE session_id = ?1) AS last",
    )
    .bind(session_id)
    .bind(turn)
    .bind(at)
    .bind(bodies)
    .execute(conn)?;
    Ok(())
}

fn json_text<T: serde::Serialize>(v: &T) -> Result<String> {
    Ok(serde_json::to_string(v)?)
}

/// An agent of the scope by id or alias.
fn agent_by_id_or_alias(conn: &Conn, scope: &Scope, id_or_alias: &str) -> Result<Agent> {
    let row = db::query("SELECT * FROM agents WHERE (id = ?1 OR alias = ?1) AND site_id = ?2 AND env = ?3")
        .bind(id_or_alias)
        .bind_scope(scope)
        .fetch_optional(conn)?;
    found(row, Agent::from_row, "agent", id_or_alias)
}

impl Store {
    /// Creates an agent.
    pub async fn create_agent(&self, ctx: &ChangeContext, scope: &Scope, input: NewAgent) -> Result<Agent> {
        self.create_record(ctx, scope, input.into_agent(new_id(), Utc::now())).await
    }

    /// Checks `agent` as a write would (its values, its alias among the
    /// scope's, the contexts it gains), as new or as the next version of
    /// `before`, changing nothing: a preview refuses with it what the write
    /// would, before anyone is asked to approve it.
    pub async fn check_agent(&self, scope: &Scope, agent: &Agent, before: Option<&Agent>) -> Result<()> {
        let (scope, agent, before) = (scope.clone(), agent.clone(), before.cloned());
        self.db
            .read(move |c| {
                let old = before.as_ref().map(|b| (b, b.columns()));
                crate::record::check(c, &scope, &agent, &agent.columns(), old.as_ref().map(|(b, cols)| (*b, cols)))
            })
            .await
    }

    /// The agents of a scope, by alias.
    pub async fn agents(&self, scope: &Scope) -> Result<Vec<Agent>> {
        let rows = db::query("SELECT * FROM agents WHERE site_id = ?1 AND env = ?2 ORDER BY alias")
            .bind_scope(scope)
            .read_all(&self.db)
            .await?;
        rows.iter().map(Agent::from_row).collect()
    }

    /// An agent by id or alias.
    pub async fn agent(&self, scope: &Scope, id_or_alias: &str) -> Result<Agent> {
        let (scope, id_or_alias) = (scope.clone(), id_or_alias.to_string());
        self.db.read(move |c| agent_by_id_or_alias(c, &scope, &id_or_alias)).await
    }

    /// Updates an agent; `expected_version` guards against lost updates.
    pub async fn update_agent(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        id_or_alias: &str,
        patch: &AgentPatch,
        expected_version: Option<i64>,
    ) -> Result<Agent> {
        let (ctx, scope, id_or_alias, patch) = (ctx.clone(), scope.clone(), id_or_alias.to_string(), patch.clone());
        self.db
            .write(move |c| {
                let (ctx, scope) = (&ctx, &scope);
                let current = agent_by_id_or_alias(c, scope, &id_or_alias)?;
                if let Some(v) = expected_version.filter(|v| *v != current.version) {
                    return Err(StoreError::conflict(
                        Some("version"),
                        format!("agent {} is at version {}, not {v}; read it again", current.alias, current.version),
                    ));
                }
                let mut next = patch.apply(&current);
                if next == current {
                    return Ok(current);
                }
                write_version(c, scope, ctx, &current, &mut next, ChangeAction::Update)?;
                Ok(next)
            })
            .await
    }

    /// Starts a chat session.
    pub async fn create_session(
        &self,
        scope: &Scope,
        agent_id: &str,
        actor: &str,
        group: quire_core::access::Group,
        title: &str,
        context: Option<Value>,
    ) -> Result<AgentSession> {
        let now = Utc::now();
        let id = new_id();
        db::query(
            "INSERT INTO agent_sessions (id, site_id, env, agent_id, actor, grp, title, context, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)",
        )
        .bind(&id)
        .bind_scope(scope)
        .bind(agent_id)
        .bind(actor)
        .bind(group.as_str())
        .bind(title)
        .bind(context.map(|c| c.to_string()))
        .bind(now)
        .write(&self.db).await?;
        self.session(scope, &id).await
    }

    /// A session of the scope.
    pub async fn session(&self, scope: &Scope, id: &str) -> Result<AgentSession> {
        found(db::row_in("agent_sessions", scope, id).read_optional(&self.db).await?, session_from_row, "session", id)
    }

    /// Sessions of the scope, newest first; of one actor when given.
    pub async fn sessions(
        &self,
        scope: &Scope,
        actor: Option<&str>,
        limit: u32,
        cursor: Option<&str>,
    ) -> Result<Listing<AgentSession>> {
        let after = cursor.map(crate::list::decode_key).transpose()?;
        let rows = db::query(
            "SELECT * FROM agent_sessions WHERE site_id = ?1 AND env = ?2 AND (actor = ?3 OR ?3 IS NULL)
               AND (id < ?4 OR ?4 IS NULL)
             ORDER BY id DESC LIMIT ?5",
        )
        .bind_scope(scope)
        .bind(actor)
        .bind(after)
        .bind(limit as i64 + 1)
        .read_all(&self.db)
        .await?;
        let items = rows.iter().map(session_from_row).collect::<Result<Vec<_>>>()?;
        Ok(page_of(items, limit, |s| crate::list::encode_key(&s.id)))
    }

    /// Stores messages and the session's state together (one transaction).
    pub async fn save_session(&self, scope: &Scope, session: &AgentSession, messages: &[(i64, Value)]) -> Result<()> {
        let (scope, session, messages) = (scope.clone(), session.clone(), messages.to_vec());
        self.db
            .write(move |c| {
            let done = db::query(
                "UPDATE agent_sessions SET title = ?1, status = ?2, turns = ?3, steps = ?4, active_tools = ?5, memory = ?6,
                    pending = ?7, context = ?8, input_tokens = ?9, output_tokens = ?10, updated_at = ?11
                 WHERE id = ?12 AND site_id = ?13 AND env = ?14",
            )
            .bind(&session.title)
            .bind(session.status.as_str())
            .bind(session.turns)
            .bind(session.steps)
            .bind(json_text(&session.active_tools)?)
            .bind(session.memory.to_string())
            .bind(session.pending.to_string())
            .bind(session.context.as_ref().map(|c| c.to_string()))
            .bind(session.input_tokens)
            .bind(session.output_tokens)
            .bind(Utc::now())
            .bind(&session.id)
            .bind_scope(&scope)
            .execute(c)?;
            if done.rows_affected() != 1 {
                return Err(StoreError::not_found("session", session.id.clone()));
            }
            if !messages.is_empty() {
                let mut seq: i64 =
                    db::query_scalar("SELECT COALESCE(MAX(seq), 0) FROM agent_messages WHERE session_id = ?1")
                        .bind(&session.id)
                        .fetch_one(c)?;
                let now = Utc::now();
                for (turn, body) in &messages {
                    seq += 1;
                    db::query("INSERT INTO agent_messages (session_id, seq, turn, body, at) VALUES (?1, ?2, ?3, ?4, ?5)")
                        .bind(&session.id)
                        .bind(seq)
                        .bind(turn)
                        .bind(body.to_string())
                        .bind(now)
                        .execute(c)?;
                }
            }
                Ok(())
            })
            .await?;
        Ok(())
    }

    /// Starts a session with its first message, running its first turn:
    /// one write, in the next group commit.
    pub async fn start_session(&self, scope: &Scope, new: NewSession, message: &Value) -> Result<AgentSession> {
        let now = Utc::now();
        let chosen = new.id.is_some();
        let session = AgentSession {
            id: new.id.unwrap_or_else(new_id),
            agent_id: new.agent_id,
            actor: new.actor,
            group: new.group,
            title: new.title,
            status: SessionStatus::Running,
            turns: 1,
            steps: 0,
            active_tools: Vec::new(),
            memory: Value::Object(Default::default()),
            pending: Value::Array(Vec::new()),
            context: new.context,
            contexts: new.contexts,
            input_tokens: 0,
            output_tokens: 0,
            created_at: now,
            updated_at: now,
        };
        let (row, scope, bodies) = (session.clone(), scope.clone(), Value::Array(vec![message.clone()]).to_string());
        let replica = self.replica.clone();
        self.db
            .write(move |conn| {
                let s = row;
                {
                    db::query(
                        "INSERT INTO agent_sessions (id, site_id, env, agent_id, actor, grp, title, status, turns, context,
                            created_at, updated_at, runner, contexts)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'running', 1, ?8, ?9, ?9, ?10, ?11)",
                    )
                    .bind(&s.id)
                    .bind_scope(&scope)
                    .bind(&s.agent_id)
                    .bind(&s.actor)
                    .bind(s.group.as_str())
                    .bind(&s.title)
                    .bind(s.context.as_ref().map(|c| c.to_string()))
                    .bind(s.created_at)
                    .bind(&*replica)
                    .bind(json_text(&s.contexts)?)
                    .execute(conn)?;
                    append_messages(conn, &s.id, 1, &bodies, s.created_at)?;
                    Ok(())
                }
            })
            .await
            .map_err(|e| match e {
                e if chosen && e.is_unique_violation() => {
                    StoreError::conflict(Some("id"), format!("session id {} is taken", session.id))
                }
                e => e,
            })?;
        Ok(session)
    }

    /// Starts the next turn of a session in one of `from`: running, its
    /// turn counted, steps reset, the UI context replaced when given, the
    /// contexts chosen for the turn set, and the message stored — one write. Answers the turn's number, or None
    /// when the session is in no state of `from` (another turn has it).
    pub async fn begin_turn(
        &self,
        scope: &Scope,
        id: &str,
        from: &[SessionStatus],
        context: Option<&Value>,
        contexts: &[String],
        message: &Value,
    ) -> Result<Option<i64>> {
        let contexts = json_text(&contexts)?;
        let from = serde_json::to_string(&from.iter().map(|s| s.as_str()).collect::<Vec<_>>())?;
        let (id, scope) = (id.to_string(), scope.clone());
        let context = context.map(Value::to_string);
        let bodies = Value::Array(vec![message.clone()]).to_string();
        let replica = self.replica.clone();
        self.db
            .write(move |conn| {
                let now = Utc::now();
                let turn: Option<i64> = db::query_scalar(
                    "UPDATE agent_sessions SET status = 'running', turns = turns + 1, steps = 0,
                            context = COALESCE(?1, context), updated_at = ?2, runner = ?7, contexts = ?8
                         WHERE id = ?3 AND site_id = ?4 AND env = ?5 AND status IN (SELECT value FROM json_each(?6))
                         RETURNING turns",
                )
                .bind(context)
                .bind(now)
                .bind(&id)
                .bind_scope(&scope)
                .bind(from)
                .bind(&*replica)
                .bind(contexts)
                .fetch_optional(conn)?;
                if let Some(turn) = turn {
                    append_messages(conn, &id, turn, &bodies, now)?;
                }
                Ok(turn)
            })
            .await
    }

    /// Records a step: the small state change and the new messages (of
    /// turn `turn`, appended after the last) in one write, in the next
    /// group commit. Nothing else of the session is rewritten. It answers
    /// as soon as the write is queued: writes run in the order they were
    /// queued, and the answer's [`QueuedWrite::done`] tells when this one
    /// committed.
    pub async fn queue_step(
        &self,
        scope: &Scope,
        session_id: &str,
        update: &SessionUpdate,
        turn: i64,
        messages: &[Value],
    ) -> Result<QueuedWrite> {
        let (id, scope) = (session_id.to_string(), scope.clone());
        let status = update.status.map(|s| s.as_str());
        let steps = update.steps;
        let usage = update.usage;
        let tools = update.active_tools.as_ref().map(json_text).transpose()?;
        let memory = update.memory.as_ref().map(Value::to_string);
        let pending = update.pending.as_ref().map(Value::to_string);
        let bodies = (!messages.is_empty()).then(|| serde_json::to_string(messages)).transpose()?;
        let replica = self.replica.clone();
        self.db
            .queue(move |conn| {
                let now = Utc::now();
                let done = db::query(
                    "UPDATE agent_sessions SET status = COALESCE(?1, status), steps = COALESCE(?2, steps),
                            input_tokens = COALESCE(?3, input_tokens), output_tokens = COALESCE(?4, output_tokens),
                            active_tools = COALESCE(?5, active_tools), memory = COALESCE(?6, memory),
                            pending = COALESCE(?7, pending), updated_at = ?8
                         WHERE id = ?9 AND site_id = ?10 AND env = ?11 AND (runner = ?12 OR runner IS NULL)",
                )
                .bind(status)
                .bind(steps)
                .bind(usage.map(|u| u.0))
                .bind(usage.map(|u| u.1))
                .bind(tools)
                .bind(memory)
                .bind(pending)
                .bind(now)
                .bind(&id)
                .bind_scope(&scope)
                .bind(&*replica)
                .execute(conn)?;
                if done.rows_affected() != 1 {
                    return Err(StoreError::TakenOver { session: id });
                }
                if let Some(bodies) = bodies {
                    append_messages(conn, &id, turn, &bodies, now)?;
                }
                if matches!(status, Some("idle" | "failed")) {
                    turn_finished(conn, &scope, &id, turn)?;
                }
                Ok(())
            })
            .await
            .map(QueuedWrite)
    }

    /// The messages of a session, in order.
    pub async fn session_messages(&self, scope: &Scope, session_id: &str) -> Result<Vec<StoredMessage>> {
        // Scope check: the session must belong to the scope.
        self.session(scope, session_id).await?;
        // Messages have no site of their own: their session's names it.
        let rows = db::query(
            "SELECT seq, turn, body, at FROM agent_messages WHERE session_id = ?1
             AND EXISTS (SELECT 1 FROM agent_sessions s WHERE s.id = ?1 AND s.site_id = ?2 AND s.env = ?3) ORDER BY seq",
        )
        .bind(session_id)
        .bind_scope(scope)
            .read_all(&self.db)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(read_row!(r => StoredMessage {
                    seq, turn, at;
                    body: json_col(r, "body")?,
                }))
            })
            .collect()
    }

    /// Moves a session from one of `from` to `to` if it is in one of them;
    /// answers whether it did. Only one caller wins a race. A session moved
    /// to running is run by this process from then on.
    pub async fn claim_session(
        &self,
        scope: &Scope,
        id: &str,
        from: &[SessionStatus],
        to: SessionStatus,
    ) -> Result<bool> {
        let from: Vec<&str> = from.iter().map(|s| s.as_str()).collect();
        let done = db::query(
            "UPDATE agent_sessions SET status = ?1, updated_at = ?2,
                    runner = CASE WHEN ?1 = 'running' THEN ?7 ELSE runner END
             WHERE id = ?3 AND site_id = ?4 AND env = ?5 AND status IN (SELECT value FROM json_each(?6))",
        )
        .bind(to.as_str())
        .bind(Utc::now())
        .bind(id)
        .bind_scope(scope)
        .bind(serde_json::to_string(&from)?)
        .bind(&*self.replica)
        .write(&self.db)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Every paused session, in every scope (to resume once answered).
    pub async fn paused_sessions(&self) -> Result<Vec<(Scope, AgentSession)>> {
        let rows = db::query("SELECT * FROM agent_sessions WHERE status = 'paused' ORDER BY updated_at")
            .read_all(&self.db)
            .await?;
        rows.iter().map(|r| Ok((Scope::of_row(r)?, session_from_row(r)?))).collect()
    }

    /// Tells the processes sharing the database that this one is alive
    /// and runs its turns (see [`Store::orphaned_sessions`]); forgets
    /// processes silent for a day. On PostgreSQL the beat runs on a
    /// connection apart from the writer's, so it never waits behind a
    /// write that waits on another replica's locks (a beat late by the
    /// silence would hand a live turn to another replica).
    pub async fn heartbeat(&self) -> Result<()> {
        let replica = self.replica.clone();
        let beat = move |c: &db::Conn| {
            let now = Utc::now();
            db::query(
                "INSERT INTO agent_runners (id, seen_at) VALUES (?1, ?2)
                     ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at",
            )
            .bind(&*replica)
            .bind(now)
            .execute(c)?;
            db::query("DELETE FROM agent_runners WHERE seen_at < ?1")
                .bind(now - chrono::Duration::days(1))
                .execute(c)?;
            Ok(())
        };
        if self.db.is_postgres() { self.db.apart(beat).await } else { self.db.write(beat).await }
    }

    /// Running sessions whose runner has not beaten for `silent` (it
    /// stopped, or was killed) and which have not changed for as long, with
    /// that runner: theirs to take over.
    pub async fn orphaned_sessions(&self, silent: std::time::Duration) -> Result<Vec<(Scope, AgentSession, String)>> {
        let since = Utc::now() - chrono::Duration::from_std(silent).unwrap_or(chrono::Duration::MAX);
        let rows = db::query(
            "SELECT * FROM agent_sessions WHERE status = 'running' AND updated_at < ?1
               AND COALESCE(runner, '') NOT IN (SELECT id FROM agent_runners WHERE seen_at >= ?1)
             ORDER BY updated_at",
        )
        .bind(since)
        .read_all(&self.db)
        .await?;
        rows.iter()
            .map(|r| {
                Ok((
                    Scope::of_row(r)?,
                    session_from_row(r)?,
                    r.try_get::<Option<String>, _>("runner")?.unwrap_or_default(),
                ))
            })
            .collect()
    }

    /// Takes a running session over from `runner` (as
    /// [`Store::orphaned_sessions`] named it) if it is still silent for
    /// `silent`: answers whether this process runs it now. Only one process wins; the one it was taken from can
    /// write no step of it any more.
    pub async fn take_over_session(
        &self,
        scope: &Scope,
        id: &str,
        runner: &str,
        silent: std::time::Duration,
    ) -> Result<bool> {
        let now = Utc::now();
        let since = now - chrono::Duration::from_std(silent).unwrap_or(chrono::Duration::MAX);
        let done = db::query(
            "UPDATE agent_sessions SET runner = ?1, updated_at = ?2
             WHERE id = ?3 AND site_id = ?4 AND env = ?5 AND status = 'running' AND COALESCE(runner, '') = ?6
               AND updated_at < ?7 AND COALESCE(runner, '') NOT IN (SELECT id FROM agent_runners WHERE seen_at >= ?7)",
        )
        .bind(&*self.replica)
        .bind(now)
        .bind(id)
        .bind_scope(scope)
        .bind(runner)
        .bind(since)
        .write(&self.db)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Appends events to sessions' streams, in one statement: `(session,
    /// id, kind, data)`. An event already stored is left as it is.
    pub async fn append_events(&self, events: impl AsRef<[NewEvent]>) -> Result<()> {
        /// One event as the statement reads it, borrowed from the batch.
        #[derive(serde::Serialize)]
        struct EventRow<'a> {
            s: &'a str,
            i: u64,
            k: &'a str,
            d: &'a str,
        }
        let events = events.as_ref();
        if events.is_empty() {
            return Ok(());
        }
        // One statement, linear in the events (a join of one json_each per
        // column would compare every pair); the batch's text written in one
        // buffer of about its size, the events not copied first.
        let size: usize = events.iter().map(|(s, _, k, d)| s.len() + k.len() + d.len() * 9 / 8 + 48).sum();
        let mut rows = Vec::with_capacity(size + 2);
        serde_json::to_writer(
            &mut rows,
            &events.iter().map(|(s, i, k, d)| EventRow { s, i: *i, k, d }).collect::<Vec<_>>(),
        )?;
        // serde_json writes UTF-8 only.
        let rows = String::from_utf8(rows).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        db::query(
            "INSERT INTO agent_events (session_id, id, kind, data)
             SELECT json_extract(e.value, '$.s'), CAST(json_extract(e.value, '$.i') AS BIGINT),
                    json_extract(e.value, '$.k'), json_extract(e.value, '$.d')
             FROM json_each(?1) AS e WHERE true
             ON CONFLICT (session_id, id) DO NOTHING",
        )
        .bind(rows)
        .write(&self.db)
        .await?;
        Ok(())
    }

    /// A session's stored events after `after`, or, without it, from its
    /// latest run's start: `(id, data)` in order.
    pub async fn events_after(&self, session: &str, after: Option<u64>) -> Result<Vec<(u64, String)>> {
        let rows = db::query(
            "SELECT id, data FROM agent_events WHERE session_id = ?1
               AND id >= COALESCE(?2, (SELECT MAX(id) FROM agent_events WHERE session_id = ?1 AND kind = 'RUN_STARTED'), 0)
             ORDER BY id",
        )
        .bind(session)
        .bind(after.map(|a| i64::try_from(a).unwrap_or(i64::MAX - 1) + 1))
        .read_all(&self.db)
        .await?;
        rows.iter().map(|r| Ok((r.try_get::<i64, _>("id")? as u64, r.try_get("data")?))).collect()
    }

    /// The stored events of `sessions` after the id given with each:
    /// `(session, id, data)`, each session's in order of id, at most
    /// `limit` of each.
    pub async fn events_since(&self, sessions: &[(String, u64)], limit: u32) -> Result<Vec<(String, u64, String)>> {
        let mut events = Vec::new();
        for (session, after) in sessions {
            let rows =
                db::query("SELECT id, data FROM agent_events WHERE session_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3")
                    .bind(session)
                    .bind(i64::try_from(*after).unwrap_or(i64::MAX))
                    .bind(limit as i64)
                    .read_all(&self.db)
                    .await?;
            for r in &rows {
                events.push((session.clone(), r.try_get::<i64, _>("id")? as u64, r.try_get("data")?));
            }
        }
        Ok(events)
    }

    /// Forgets stored events older than `age` (by their ids, which are
    /// when they were emitted); answers how many.
    pub async fn prune_events(&self, age: std::time::Duration) -> Result<u64> {
        let before = Utc::now() - chrono::Duration::from_std(age).unwrap_or(chrono::Duration::MAX);
        let done =
            db::query("DELETE FROM agent_events WHERE id < ?1").bind(before.timestamp_micros()).write(&self.db).await?;
        Ok(done.rows_affected())
    }
}

/// Tells subscribers turn `turn` of session `id` finished (its session as
/// it now stands: the status, steps and tokens so far).
fn turn_finished(conn: &Conn, scope: &Scope, id: &str, turn: i64) -> Result<()> {
    let row = db::query(
        "SELECT actor, agent_id, status, steps, input_tokens, output_tokens, release_id FROM agent_sessions WHERE id = ?1",
    )
    .bind(id)
    .fetch_one(conn)?;
    let data = serde_json::json!({
        "sessionId": id,
        "turn": turn,
        "agentId": row.try_get::<String, _>("agent_id")?,
        "status": row.try_get::<String, _>("status")?,
        "steps": row.try_get::<i64, _>("steps")?,
        "inputTokens": row.try_get::<i64, _>("input_tokens")?,
        "outputTokens": row.try_get::<i64, _>("output_tokens")?,
        "releaseId": row.try_get::<Option<String>, _>("release_id")?,
    });
    let actor: String = row.try_get("actor")?;
    crate::webhooks::announce(conn, scope, &actor, "turn", "finished", &format!("{id}.{turn}"), data)
}
