-- Agent turns across processes: who runs a turn, which processes are
-- alive, and every session's events for streams served by any process.

-- The process running the session's turn (set whenever it becomes running).
ALTER TABLE agent_sessions ADD COLUMN runner TEXT;
CREATE INDEX agent_sessions_running ON agent_sessions (status) WHERE status = 'running';

-- Each process running agent turns writes its heartbeat here; a running
-- session whose runner stopped beating is taken over by another.
CREATE TABLE agent_runners (
    id       TEXT PRIMARY KEY,
    seen_at  TEXT NOT NULL
);

-- The AG-UI events of every session, kept for a while after they were
-- emitted, so a stream reconnecting with Last-Event-ID to any process
-- gets what followed. An event's id is when it was emitted, in
-- microseconds since 1970: old events are found by it.
CREATE TABLE agent_events (
    session_id  TEXT NOT NULL,
    id          BIGINT NOT NULL,
    kind        TEXT NOT NULL,
    data        TEXT NOT NULL,
    PRIMARY KEY (session_id, id)
);
-- Old events are forgotten by id.
CREATE INDEX agent_events_id ON agent_events (id);
