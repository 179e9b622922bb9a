-- Schedules are jobs of the publishing kinds: how late each ran, in
-- milliseconds after its time (run_after).
ALTER TABLE jobs ADD COLUMN late_ms INTEGER;
