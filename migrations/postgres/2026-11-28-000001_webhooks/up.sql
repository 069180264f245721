-- Completion webhooks. Times are Unix milliseconds.

-- Each key's webhook settings: the Standard Webhooks signing secret (`whsec_...`; the previous one
-- still signs beside it until `previous_until`, so receivers can switch without losing a
-- delivery), and the default target of the key's jobs that name none.
CREATE TABLE key_webhooks (
    key_id TEXT PRIMARY KEY REFERENCES api_keys(id),
    secret TEXT NOT NULL,
    previous_secret TEXT,
    previous_until BIGINT,
    default_url TEXT,
    default_on_running BOOLEAN NOT NULL DEFAULT FALSE,
    updated_at BIGINT NOT NULL
);

-- Where a task's webhooks go, and whether its start is sent too (terminal states always are).
CREATE TABLE task_webhooks (
    task_id TEXT PRIMARY KEY REFERENCES tasks(id),
    url TEXT NOT NULL,
    on_running BOOLEAN NOT NULL
);

-- One message per task and event, written in the transaction that changed the task's status, so
-- none is lost and none is made twice. `id` is the `webhook-id` every attempt carries. A pending
-- delivery is due at `next_attempt_at`; a worker sending it moves that forward by its lease, so a
-- worker killed mid-attempt leaves it due again.
CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES tasks(id),
    key_id TEXT NOT NULL,
    event TEXT NOT NULL,
    url TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT,
    last_status_code INTEGER,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    finished_at BIGINT,
    UNIQUE (task_id, event)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_by_key ON webhook_deliveries (key_id, created_at);

-- Every attempt of every delivery: when, the receiver's status code or the error, how long.
CREATE TABLE webhook_attempts (
    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries(id),
    attempt INTEGER NOT NULL,
    at BIGINT NOT NULL,
    status_code INTEGER,
    error TEXT,
    duration_ms BIGINT NOT NULL,
    PRIMARY KEY (delivery_id, attempt)
);
