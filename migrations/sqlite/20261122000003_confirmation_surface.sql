-- The surface a destructive call came through: a call from an AI surface
-- (agent, MCP) must be approved by someone else, through a human surface.
ALTER TABLE confirmations ADD COLUMN requested_via TEXT NOT NULL DEFAULT 'rest';
