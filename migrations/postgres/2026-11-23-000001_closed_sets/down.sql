ALTER TABLE ledger DROP CONSTRAINT ledger_kind_known;
ALTER TABLE tasks DROP CONSTRAINT tasks_failure_kind_known;
ALTER TABLE tasks DROP CONSTRAINT tasks_status_known;
