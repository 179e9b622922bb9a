-- The head of each queue: a record's deliveries to one subscription go
-- one at a time in the order of their changes, and only the oldest pending
-- one (its head, 1) may be attempted. Marked when a delivery is enqueued
-- and handed on when the head is delivered or fails for good, so the
-- sender finds what is due with one index range instead of comparing each
-- pending delivery with the ones before it.
ALTER TABLE webhook_deliveries ADD COLUMN head INTEGER NOT NULL DEFAULT 0;
UPDATE webhook_deliveries SET head = 1
WHERE status = 'pending'
  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e
                  WHERE e.webhook_id = webhook_deliveries.webhook_id AND e.subject = webhook_deliveries.subject
                    AND e.status = 'pending' AND e.seq < webhook_deliveries.seq);
DROP INDEX webhook_deliveries_due;
DROP INDEX webhook_deliveries_order;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, head, next_at, seq);
CREATE INDEX webhook_deliveries_queue ON webhook_deliveries (webhook_id, subject, status, seq);
