-- What a running job is doing: its stage and a percentage, written by the
-- worker as it goes (each write also renews the lease).
ALTER TABLE jobs ADD COLUMN stage TEXT;
ALTER TABLE jobs ADD COLUMN progress INTEGER NOT NULL DEFAULT 0;

-- Uploads that never became an image are found by their job (or its
-- absence).
CREATE INDEX jobs_upload ON jobs (json_extract(payload, '$.uploadId'));
CREATE INDEX uploads_age ON uploads (created_at);
