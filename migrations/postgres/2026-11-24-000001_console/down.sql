DROP TABLE console_attempts;
DROP TABLE console_invites;
DROP TABLE console_sessions;
DROP TABLE console_logins;
ALTER TABLE api_keys DROP COLUMN last_used_at;
ALTER TABLE api_keys DROP COLUMN prefix;
