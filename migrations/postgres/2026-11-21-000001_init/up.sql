-- Amounts are whole ten-thousandths of a US dollar; times are Unix milliseconds.
CREATE TABLE accounts (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL UNIQUE,
    card_on_file BOOLEAN NOT NULL DEFAULT FALSE,
    free_allowance_units BIGINT NOT NULL,
    free_used_units BIGINT NOT NULL DEFAULT 0,
    free_held_units BIGINT NOT NULL DEFAULT 0,
    invoice_units BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL
);

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY NOT NULL,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    secret_hash TEXT NOT NULL UNIQUE,
    label TEXT,
    spend_cap_units BIGINT,
    spent_units BIGINT NOT NULL DEFAULT 0,
    held_units BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE INDEX api_keys_account ON api_keys (account_id);

CREATE TABLE tasks (
    id TEXT PRIMARY KEY NOT NULL,
    key_id TEXT NOT NULL REFERENCES api_keys(id),
    account_id TEXT NOT NULL REFERENCES accounts(id),
    engine TEXT NOT NULL,
    job TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    started_at BIGINT,
    finished_at BIGINT,
    lease_owner TEXT,
    lease_expires_at BIGINT,
    attempt INTEGER NOT NULL DEFAULT 0,
    outputs TEXT,
    price_units BIGINT NOT NULL,
    hold_allowance_units BIGINT NOT NULL,
    cost_units BIGINT,
    error TEXT,
    sandbox BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX tasks_claimable ON tasks (created_at) WHERE status IN ('queued', 'running');
CREATE INDEX tasks_by_key ON tasks (key_id, created_at);

-- Append-only: every balance can be recomputed from it. One row per task and kind.
CREATE TABLE ledger (
    id BIGSERIAL PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES tasks(id),
    key_id TEXT NOT NULL,
    account_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    amount_units BIGINT NOT NULL,
    allowance_units BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (task_id, kind)
);
CREATE INDEX ledger_by_account ON ledger (account_id, id);
CREATE INDEX ledger_by_key ON ledger (key_id, id);

CREATE TABLE settings (
    name TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
