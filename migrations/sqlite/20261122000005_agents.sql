-- Agents, their chat sessions and the messages of those sessions.

CREATE TABLE agents (
    id               TEXT PRIMARY KEY,
    site_id          TEXT NOT NULL REFERENCES sites(id),
    env              TEXT NOT NULL,
    alias            TEXT NOT NULL,
    name             TEXT NOT NULL,
    description      TEXT NOT NULL DEFAULT '',
    profile          TEXT NOT NULL DEFAULT 'default',
    system_prompt    TEXT NOT NULL DEFAULT '',
    tools            TEXT NOT NULL DEFAULT '[]',   -- JSON: names, "category:<c>", "tag:<t>"
    pinned           TEXT NOT NULL DEFAULT '[]',   -- JSON: tool names always active
    allowed_groups   TEXT NOT NULL DEFAULT '[]',   -- JSON: groups; empty means every group
    approval_policy  TEXT NOT NULL DEFAULT 'user' CHECK (approval_policy IN ('user', 'conversational')),
    enabled          INTEGER NOT NULL DEFAULT 1,
    version          INTEGER NOT NULL DEFAULT 1,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    UNIQUE (site_id, env, alias)
);

CREATE TABLE agent_sessions (
    id             TEXT PRIMARY KEY,
    site_id        TEXT NOT NULL REFERENCES sites(id),
    env            TEXT NOT NULL,
    agent_id       TEXT NOT NULL REFERENCES agents(id),
    actor          TEXT NOT NULL,                -- who chats: token:<id> or local:admin
    grp            TEXT NOT NULL,                -- their group when the session started
    title          TEXT NOT NULL DEFAULT '',
    status         TEXT NOT NULL DEFAULT 'idle' CHECK (status IN ('idle', 'running', 'paused', 'failed')),
    turns          INTEGER NOT NULL DEFAULT 0,
    steps          INTEGER NOT NULL DEFAULT 0,   -- steps taken in the current turn
    active_tools   TEXT NOT NULL DEFAULT '[]',   -- JSON: tools activated by searchTools
    memory         TEXT NOT NULL DEFAULT '{}',   -- JSON: working memory
    pending        TEXT NOT NULL DEFAULT '[]',   -- JSON: tool calls waiting for approval
    context        TEXT,                         -- JSON: what the user's UI is showing
    input_tokens   INTEGER NOT NULL DEFAULT 0,
    output_tokens  INTEGER NOT NULL DEFAULT 0,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE INDEX agent_sessions_scope ON agent_sessions (site_id, env, actor, updated_at);
CREATE INDEX agent_sessions_paused ON agent_sessions (status) WHERE status = 'paused';

CREATE TABLE agent_messages (
    session_id  TEXT NOT NULL REFERENCES agent_sessions(id),
    seq         INTEGER NOT NULL,
    turn        INTEGER NOT NULL,
    body        TEXT NOT NULL,                   -- JSON: role, content, tool calls or tool result, usage
    at          TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
