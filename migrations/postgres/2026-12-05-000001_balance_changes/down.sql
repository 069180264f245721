DROP VIEW key_balances;
DROP VIEW account_balances;
DROP TABLE balance_changes;
