DROP INDEX tasks_claimable;
CREATE INDEX tasks_claimable ON tasks (created_at) WHERE status IN ('queued', 'running');
ALTER TABLE tasks DROP COLUMN failure_kind;
ALTER TABLE tasks DROP COLUMN result;
ALTER TABLE tasks DROP COLUMN priority;
