DROP INDEX tasks_by_finish;
ALTER TABLE tasks DROP COLUMN expired_at;
DROP TABLE rate_buckets;
ALTER TABLE api_keys DROP COLUMN read_rate_per_minute;
ALTER TABLE api_keys DROP COLUMN submit_rate_per_minute;
DROP TABLE idempotency_keys;
