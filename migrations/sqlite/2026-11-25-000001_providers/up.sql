-- Tasks run at an upstream provider: which one, the request it accepted (id and URLs, as JSON),
-- a verified callback kept for a request adopted from it, and what the provider reports it used.
ALTER TABLE tasks ADD COLUMN provider TEXT;
ALTER TABLE tasks ADD COLUMN provider_handle TEXT;
ALTER TABLE tasks ADD COLUMN provider_callback TEXT;
ALTER TABLE tasks ADD COLUMN provider_millis BIGINT;
ALTER TABLE tasks ADD COLUMN provider_cost_units BIGINT;
-- Tracked tasks wait as timers: lease_expires_at is when each is next looked at.
CREATE INDEX tasks_tracked_due ON tasks (lease_expires_at) WHERE provider IS NOT NULL AND status IN ('queued', 'running');
