-- Task statuses, failure kinds and ledger kinds are closed sets: the database itself refuses any
-- other value, so a stray write can never turn into, say, a silent release. SQLite cannot add a
-- CHECK to an existing table, so triggers enforce the same rule on insert and update.
CREATE TRIGGER tasks_status_known_insert BEFORE INSERT ON tasks
    WHEN NEW.status NOT IN ('queued', 'running', 'succeeded', 'failed')
        OR (NEW.failure_kind IS NOT NULL AND NEW.failure_kind NOT IN ('input', 'job'))
BEGIN
    SELECT RAISE(ABORT, 'CHECK constraint failed: unknown task status or failure kind');
END;
CREATE TRIGGER tasks_status_known_update BEFORE UPDATE OF status, failure_kind ON tasks
    WHEN NEW.status NOT IN ('queued', 'running', 'succeeded', 'failed')
        OR (NEW.failure_kind IS NOT NULL AND NEW.failure_kind NOT IN ('input', 'job'))
BEGIN
    SELECT RAISE(ABORT, 'CHECK constraint failed: unknown task status or failure kind');
END;
CREATE TRIGGER ledger_kind_known_insert BEFORE INSERT ON ledger
    WHEN NEW.kind NOT IN ('hold', 'capture', 'release')
BEGIN
    SELECT RAISE(ABORT, 'CHECK constraint failed: unknown ledger kind');
END;
CREATE TRIGGER ledger_kind_known_update BEFORE UPDATE OF kind ON ledger
    WHEN NEW.kind NOT IN ('hold', 'capture', 'release')
BEGIN
    SELECT RAISE(ABORT, 'CHECK constraint failed: unknown ledger kind');
END;
