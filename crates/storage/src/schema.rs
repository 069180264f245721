//! Diesel table definitions, matching `migrations/{sqlite,postgres}`.

// The views `account_balances` and `key_balances` (migration `2026-12-05-000001_balance_changes`)
// list the columns of `accounts` and `api_keys`, and the balances are read through them: a column
// added to either table is added to its view too.
diesel::table! {
    accounts (id) {
        id -> Text,
        name -> Text,
        card_on_file -> Bool,
        free_allowance_units -> BigInt,
        free_used_units -> BigInt,
        free_held_units -> BigInt,
        invoice_units -> BigInt,
        created_at -> BigInt,
    }
}

diesel::table! {
    api_keys (id) {
        id -> Text,
        account_id -> Text,
        secret_hash -> Text,
        label -> Nullable<Text>,
        spend_cap_units -> Nullable<BigInt>,
        spent_units -> BigInt,
        held_units -> BigInt,
        created_at -> BigInt,
        revoked_at -> Nullable<BigInt>,
        prefix -> Nullable<Text>,
        last_used_at -> Nullable<BigInt>,
        submit_rate_per_minute -> Nullable<BigInt>,
        read_rate_per_minute -> Nullable<BigInt>,
    }
}

diesel::table! {
    tasks (id) {
        id -> Text,
        key_id -> Text,
        account_id -> Text,
        engine -> Text,
        job -> Text,
        status -> Text,
        created_at -> BigInt,
        updated_at -> BigInt,
        started_at -> Nullable<BigInt>,
        finished_at -> Nullable<BigInt>,
        lease_owner -> Nullable<Text>,
        lease_expires_at -> Nullable<BigInt>,
        attempt -> Integer,
        outputs -> Nullable<Text>,
        price_units -> BigInt,
        hold_allowance_units -> BigInt,
        cost_units -> Nullable<BigInt>,
        error -> Nullable<Text>,
        sandbox -> Bool,
        priority -> Integer,
        result -> Nullable<Text>,
        failure_kind -> Nullable<Text>,
        provider -> Nullable<Text>,
        provider_handle -> Nullable<Text>,
        provider_callback -> Nullable<Text>,
        provider_millis -> Nullable<BigInt>,
        provider_cost_units -> Nullable<BigInt>,
        input_bytes -> BigInt,
        expired_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    ledger (id) {
        id -> BigInt,
        task_id -> Text,
        key_id -> Text,
        account_id -> Text,
        kind -> Text,
        amount_units -> BigInt,
        allowance_units -> BigInt,
        created_at -> BigInt,
    }
}

diesel::table! {
    settings (name) {
        name -> Text,
        value -> Text,
    }
}

diesel::table! {
    console_logins (account_id) {
        account_id -> Text,
        email -> Text,
        password_hash -> Text,
        created_at -> BigInt,
        verified_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    console_links (token_hash) {
        token_hash -> Text,
        purpose -> Text,
        account_id -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
        used_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    allowance_grants (identity) {
        identity -> Text,
        account_id -> Text,
        address_range -> Text,
        granted_at -> BigInt,
    }
}

diesel::table! {
    console_sessions (token_hash) {
        token_hash -> Text,
        account_id -> Text,
        csrf_token -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
    }
}

diesel::table! {
    console_invites (token_hash) {
        token_hash -> Text,
        account_id -> Text,
        email -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
        used_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    console_attempts (id) {
        id -> BigInt,
        subject -> Text,
        at -> BigInt,
    }
}

diesel::table! {
    idempotency_keys (key_id, idempotency_key) {
        key_id -> Text,
        idempotency_key -> Text,
        request_hash -> Text,
        task_id -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    rate_buckets (key_id, class) {
        key_id -> Text,
        class -> Text,
        next_free_at -> BigInt,
    }
}

diesel::table! {
    key_webhooks (key_id) {
        key_id -> Text,
        secret -> Text,
        previous_secret -> Nullable<Text>,
        previous_until -> Nullable<BigInt>,
        default_url -> Nullable<Text>,
        default_on_running -> Bool,
        updated_at -> BigInt,
    }
}

diesel::table! {
    task_webhooks (task_id) {
        task_id -> Text,
        url -> Text,
        on_running -> Bool,
    }
}

diesel::table! {
    webhook_deliveries (id) {
        id -> Text,
        task_id -> Text,
        key_id -> Text,
        event -> Text,
        url -> Text,
        status -> Text,
        attempts -> Integer,
        next_attempt_at -> Nullable<BigInt>,
        last_status_code -> Nullable<Integer>,
        last_error -> Nullable<Text>,
        created_at -> BigInt,
        finished_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    webhook_attempts (delivery_id, attempt) {
        delivery_id -> Text,
        attempt -> Integer,
        at -> BigInt,
        status_code -> Nullable<Integer>,
        error -> Nullable<Text>,
        duration_ms -> BigInt,
    }
}

diesel::table! {
    oauth_clients (id) {
        id -> Text,
        secret_hash -> Nullable<Text>,
        name -> Text,
        redirect_uris -> Text,
        auth_method -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    oauth_connections (key_id) {
        key_id -> Text,
        client_id -> Text,
        account_id -> Text,
        scope -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    oauth_codes (code_hash) {
        code_hash -> Text,
        key_id -> Text,
        client_id -> Text,
        redirect_uri -> Text,
        code_challenge -> Text,
        resource -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
        used_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    oauth_tokens (token_hash) {
        token_hash -> Text,
        kind -> Text,
        key_id -> Text,
        client_id -> Text,
        resource -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
        used_at -> Nullable<BigInt>,
        revoked_at -> Nullable<BigInt>,
    }
}

diesel::allow_tables_to_appear_in_same_query!(oauth_connections, oauth_clients);
// A poll reads its key and its task in one statement (`polls`).
diesel::allow_tables_to_appear_in_same_query!(api_keys, tasks);

diesel::table! {
    balance_changes (id) {
        id -> BigInt,
        account_id -> Text,
        key_id -> Text,
        free_held_units -> BigInt,
        free_used_units -> BigInt,
        invoice_units -> BigInt,
        held_units -> BigInt,
        spent_units -> BigInt,
    }
}
