-- When each person last signed in, for the back-office's Users screen:
-- set as a browser session starts, and read with the person (no scan of
-- the sessions per request). Filled from the sessions kept so far.
ALTER TABLE users ADD COLUMN last_sign_in_at TEXT;
UPDATE users SET last_sign_in_at = (SELECT MAX(ws.created_at) FROM web_sessions ws WHERE ws.user_id = users.id);
