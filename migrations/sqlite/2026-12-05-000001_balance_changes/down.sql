-- The changes not yet added in go into the rows first, so nothing recorded is lost.
UPDATE accounts SET
    free_held_units = free_held_units + COALESCE((SELECT CAST(SUM(c.free_held_units) AS BIGINT) FROM balance_changes c WHERE c.account_id = accounts.id), 0),
    free_used_units = free_used_units + COALESCE((SELECT CAST(SUM(c.free_used_units) AS BIGINT) FROM balance_changes c WHERE c.account_id = accounts.id), 0),
    invoice_units = invoice_units + COALESCE((SELECT CAST(SUM(c.invoice_units) AS BIGINT) FROM balance_changes c WHERE c.account_id = accounts.id), 0);
UPDATE api_keys SET
    held_units = held_units + COALESCE((SELECT CAST(SUM(c.held_units) AS BIGINT) FROM balance_changes c WHERE c.key_id = api_keys.id), 0),
    spent_units = spent_units + COALESCE((SELECT CAST(SUM(c.spent_units) AS BIGINT) FROM balance_changes c WHERE c.key_id = api_keys.id), 0);
DROP VIEW key_balances;
DROP VIEW account_balances;
DROP TABLE balance_changes;
