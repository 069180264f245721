DROP TRIGGER ledger_kind_known_update;
DROP TRIGGER ledger_kind_known_insert;
DROP TRIGGER tasks_status_known_update;
DROP TRIGGER tasks_status_known_insert;
