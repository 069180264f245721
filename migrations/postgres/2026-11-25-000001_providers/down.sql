DROP INDEX tasks_tracked_due;
ALTER TABLE tasks DROP COLUMN provider_cost_units;
ALTER TABLE tasks DROP COLUMN provider_millis;
ALTER TABLE tasks DROP COLUMN provider_callback;
ALTER TABLE tasks DROP COLUMN provider_handle;
ALTER TABLE tasks DROP COLUMN provider;
