-- What settlements moved and submits have not yet added to the accounts' and keys' rows: a
-- settlement appends here instead of updating those rows, so it never waits on a submit that holds
-- them, and the next submit of the account adds the rows up and deletes them under its lock. No
-- foreign keys: a key-share lock on the account's row would make a settlement wait on that submit.
CREATE TABLE balance_changes (
    id BIGSERIAL PRIMARY KEY,
    account_id TEXT NOT NULL,
    key_id TEXT NOT NULL,
    free_held_units BIGINT NOT NULL,
    free_used_units BIGINT NOT NULL,
    invoice_units BIGINT NOT NULL,
    held_units BIGINT NOT NULL,
    spent_units BIGINT NOT NULL
);
CREATE INDEX balance_changes_by_account ON balance_changes (account_id);
CREATE INDEX balance_changes_by_key ON balance_changes (key_id);

-- Accounts and keys with the changes not yet added in: what every reader of a balance reads, in
-- one statement (so one snapshot).
CREATE VIEW account_balances AS
SELECT a.id, a.name, a.card_on_file, a.free_allowance_units,
    a.free_used_units + COALESCE((SELECT CAST(SUM(c.free_used_units) AS BIGINT) FROM balance_changes c WHERE c.account_id = a.id), 0) AS free_used_units,
    a.free_held_units + COALESCE((SELECT CAST(SUM(c.free_held_units) AS BIGINT) FROM balance_changes c WHERE c.account_id = a.id), 0) AS free_held_units,
    a.invoice_units + COALESCE((SELECT CAST(SUM(c.invoice_units) AS BIGINT) FROM balance_changes c WHERE c.account_id = a.id), 0) AS invoice_units,
    a.created_at
FROM accounts a;

CREATE VIEW key_balances AS
SELECT k.id, k.account_id, k.secret_hash, k.label, k.spend_cap_units,
    k.spent_units + COALESCE((SELECT CAST(SUM(c.spent_units) AS BIGINT) FROM balance_changes c WHERE c.key_id = k.id), 0) AS spent_units,
    k.held_units + COALESCE((SELECT CAST(SUM(c.held_units) AS BIGINT) FROM balance_changes c WHERE c.key_id = k.id), 0) AS held_units,
    k.created_at, k.revoked_at, k.prefix, k.last_used_at, k.submit_rate_per_minute, k.read_rate_per_minute
FROM api_keys k;
