-- Task statuses, failure kinds and ledger kinds are closed sets: the database itself refuses any
-- other value, so a stray write can never turn into, say, a silent release.
ALTER TABLE tasks ADD CONSTRAINT tasks_status_known
    CHECK (status IN ('queued', 'running', 'succeeded', 'failed'));
ALTER TABLE tasks ADD CONSTRAINT tasks_failure_kind_known
    CHECK (failure_kind IS NULL OR failure_kind IN ('input', 'job'));
ALTER TABLE ledger ADD CONSTRAINT ledger_kind_known
    CHECK (kind IN ('hold', 'capture', 'release'));
