DROP INDEX tasks_running_here;
DROP INDEX tasks_claimable;
CREATE INDEX tasks_claimable ON tasks (priority DESC, created_at) WHERE status IN ('queued', 'running');
