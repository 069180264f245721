-- The developer console: key prefixes and last use, console logins, sessions, invites and failed
-- sign-ins. Times are Unix milliseconds; tokens are stored only as their SHA-256.
ALTER TABLE api_keys ADD COLUMN prefix TEXT;
ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT;

-- One console login per account; the email is kept lower-cased.
CREATE TABLE console_logins (
    account_id TEXT PRIMARY KEY NOT NULL REFERENCES accounts(id),
    email TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE console_sessions (
    token_hash TEXT PRIMARY KEY NOT NULL,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    csrf_token TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX console_sessions_account ON console_sessions (account_id);

-- Invite links give accounts made by the operator a console login.
CREATE TABLE console_invites (
    token_hash TEXT PRIMARY KEY NOT NULL,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    email TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
);

-- Attempts by subject (failed sign-ins by address or email, sign-ups by address), counted over
-- a window to rate-limit.
CREATE TABLE console_attempts (
    id BIGSERIAL PRIMARY KEY,
    subject TEXT NOT NULL,
    at BIGINT NOT NULL
);
CREATE INDEX console_attempts_by_subject ON console_attempts (subject, at);
