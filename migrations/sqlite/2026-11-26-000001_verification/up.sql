-- Verified console emails, the links mailed to them, and the free allowances given. Times are
-- Unix milliseconds; tokens are stored only as their SHA-256.

-- A login's email is verified once its owner follows a link mailed to it; logins made before
-- verification existed count as verified.
ALTER TABLE console_logins ADD COLUMN verified_at BIGINT;
UPDATE console_logins SET verified_at = created_at;

-- Single-use links mailed to a login's address: `verify` (24 h) and `reset` (1 h).
CREATE TABLE console_links (
    token_hash TEXT PRIMARY KEY NOT NULL,
    purpose TEXT NOT NULL,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
);
CREATE INDEX console_links_account ON console_links (account_id);

-- One free allowance per verified identity (an email with its sub-address and, for Gmail, its dots
-- removed), and a bounded number per address range (IPv4 /24, IPv6 /48) per window.
CREATE TABLE allowance_grants (
    identity TEXT PRIMARY KEY NOT NULL,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    address_range TEXT NOT NULL,
    granted_at BIGINT NOT NULL
);
CREATE INDEX allowance_grants_by_range ON allowance_grants (address_range, granted_at);

-- Bytes of the inputs each task moved to the object store at submit, so the bytes one key holds in
-- unfinished tasks can be bounded.
ALTER TABLE tasks ADD COLUMN input_bytes BIGINT NOT NULL DEFAULT 0;
