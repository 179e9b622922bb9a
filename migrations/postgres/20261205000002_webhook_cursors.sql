-- Each subscription's place in the change log (decision 0049, as built
-- after issue 34's write budget): on SQLite a change's deliveries are made
-- from the log after it commits, up to a window of waiting deliveries per
-- subscription, and the cursor moves past what was read in the same
-- transaction; on PostgreSQL each change still enqueues its own. A
-- subscription hears of the changes logged after it was made.
ALTER TABLE webhooks ADD COLUMN cursor BIGINT NOT NULL DEFAULT 0;
UPDATE webhooks SET cursor = (SELECT COALESCE(MAX(id), 0) FROM changes);
-- The window: a subscription's waiting deliveries, counted.
CREATE INDEX webhook_deliveries_waiting ON webhook_deliveries (webhook_id, status);
