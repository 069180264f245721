-- Synchronous recipes are claimed ahead of background jobs (higher priority first).
ALTER TABLE tasks ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
-- A recipe's structured result (for example a traced parcel's measurements), as JSON.
ALTER TABLE tasks ADD COLUMN result TEXT;
-- Why a failed task failed: 'input' (the client's input is unusable) or 'job' (anything else).
ALTER TABLE tasks ADD COLUMN failure_kind TEXT;
DROP INDEX tasks_claimable;
CREATE INDEX tasks_claimable ON tasks (priority DESC, created_at) WHERE status IN ('queued', 'running');
