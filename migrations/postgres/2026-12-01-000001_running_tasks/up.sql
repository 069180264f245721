-- The tasks running here, by key and account: each claim counts them to keep every key and
-- account within its share, and reads only these rows rather than the whole queue.
CREATE INDEX tasks_running_here ON tasks (key_id, account_id, lease_expires_at) WHERE status = 'running' AND provider IS NULL;
-- The claim's whole order, so a claim reads its candidates off the index and stops.
DROP INDEX tasks_claimable;
CREATE INDEX tasks_claimable ON tasks (priority DESC, created_at, id) WHERE status IN ('queued', 'running');
