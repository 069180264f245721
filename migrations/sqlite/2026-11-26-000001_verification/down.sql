ALTER TABLE tasks DROP COLUMN input_bytes;
DROP TABLE allowance_grants;
DROP TABLE console_links;
ALTER TABLE console_logins DROP COLUMN verified_at;
