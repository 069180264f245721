-- Idempotent retries, per-key rate limits and retention. Times are Unix milliseconds.

-- A client's `Idempotency-Key` on a spending request, kept 24 hours: the task it created and a
-- fingerprint of the request (the endpoint and its body), so a retry gets the same task and a
-- different request under the same key is refused.
CREATE TABLE idempotency_keys (
    key_id TEXT NOT NULL REFERENCES api_keys(id),
    idempotency_key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    task_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (key_id, idempotency_key)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);

-- Per-key overrides of the deployment's request rates (requests per minute); NULL: the default.
ALTER TABLE api_keys ADD COLUMN submit_rate_per_minute BIGINT;
ALTER TABLE api_keys ADD COLUMN read_rate_per_minute BIGINT;

-- The shared token buckets of the rate limits, one per key and class of request: the
-- theoretical arrival time of the next request (GCRA), in Unix milliseconds.
CREATE TABLE rate_buckets (
    key_id TEXT NOT NULL,
    class TEXT NOT NULL,
    next_free_at BIGINT NOT NULL,
    PRIMARY KEY (key_id, class)
);

-- When a finished task's job, outputs and stored inputs were removed by the retention sweeper; its
-- money (price, cost, ledger rows) is kept.
ALTER TABLE tasks ADD COLUMN expired_at BIGINT;
CREATE INDEX tasks_by_finish ON tasks (finished_at) WHERE finished_at IS NOT NULL AND expired_at IS NULL;
