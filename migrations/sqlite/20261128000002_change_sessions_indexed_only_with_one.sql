-- Only changes made in an agent's session are looked up by session and
-- turn. Indexing the others too put every change of a person or a tool call
-- into one run of NULL keys in the middle of the index, where each insert
-- landed on the same page and split it again and again.

DROP INDEX changes_session;
CREATE INDEX changes_session ON changes (session_id, turn_id) WHERE session_id IS NOT NULL;
