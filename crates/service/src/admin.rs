//! The operator's use-cases: accounts, keys, caps and the ledger.

use crate::rate_limit::KeyRates;
use crate::{Operator, Service, ServiceError};
use domain::{keys, KeyLimits, Usd};
use storage::{Account, ApiKey, LedgerEntry, LedgerMismatch, NewKeySecret};

/// An API key as its owner and the operator see it: never its secret or the secret's hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountKey {
    /// Key id (`key_...`).
    pub id: String,
    /// The owner's name for it.
    pub label: Option<String>,
    /// The secret's first characters, to tell keys apart.
    pub prefix: Option<String>,
    /// Creation time, Unix milliseconds.
    pub created_at: i64,
    /// Revocation time, if revoked.
    pub revoked_at: Option<i64>,
    /// Last authenticated use (recorded at most once a minute).
    pub last_used_at: Option<i64>,
    /// Its own request rates, where set (otherwise the deployment's).
    pub rates: KeyRates,
    limits: KeyLimits,
}

impl AccountKey {
    /// Its spend cap, spend and holds.
    pub fn limits(&self) -> KeyLimits {
        self.limits
    }
}

impl From<ApiKey> for AccountKey {
    fn from(key: ApiKey) -> AccountKey {
        AccountKey {
            limits: key.limits(),
            id: key.id,
            label: key.label,
            prefix: key.prefix,
            created_at: key.created_at,
            revoked_at: key.revoked_at,
            last_used_at: key.last_used_at,
            rates: KeyRates {
                submits_per_minute: key.submit_rate_per_minute.and_then(|r| u32::try_from(r).ok()),
                reads_per_minute: key.read_rate_per_minute.and_then(|r| u32::try_from(r).ok()),
            },
        }
    }
}

/// A freshly created key with its secret, which exists only in this value.
#[derive(Clone, Debug)]
pub struct NewKey {
    /// The stored key.
    pub key: AccountKey,
    /// The secret to hand to the user once.
    pub secret: String,
    /// The webhook signing secret (`whsec_...`) made with a new key, also handed over once; `None`
    /// when an existing key got a new API secret (its webhook secret is rotated apart).
    pub webhook_secret: Option<String>,
}

impl Operator<'_> {
    /// Creates an account with the deployment's free allowance.
    pub async fn create_account(&self, name: &str, card_on_file: bool) -> Result<Account, ServiceError> {
        let (name, allowance) = (name.trim().to_string(), self.service.config().free_allowance);
        if name.is_empty() {
            return Err(ServiceError::BadRequest("account name must not be empty".into()));
        }
        self.service.db(move |db| db.create_account(&name, card_on_file, allowance)).await
    }

    /// Sets or clears an account's card-on-file flag.
    pub async fn set_card_on_file(&self, name: &str, on: bool) -> Result<Account, ServiceError> {
        let name = name.to_string();
        self.service.db(move |db| db.set_card_on_file(&name, on)).await
    }

    /// Creates a key for an account; the secret is returned once and only its hash is kept.
    pub async fn create_key(
        &self,
        account: &str,
        spend_cap: Option<Usd>,
        label: Option<&str>,
    ) -> Result<NewKey, ServiceError> {
        let name = account.to_string();
        let account = self.service.db(move |db| db.account_by_name(&name)).await?;
        self.service.issue_key(&account.id, label, spend_cap).await
    }

    /// Revokes a key: it authenticates nothing from now on, and every unfinished job it queued
    /// is cancelled, unbilled: queued ones at once, running ones when their worker next renews
    /// its lease (it then stops the job's process), and those at a provider are cancelled there.
    pub async fn revoke_key(&self, key_id: &str) -> Result<AccountKey, ServiceError> {
        let key_id = key_id.to_string();
        let revoked = self.service.db(move |db| db.revoke_key(&key_id)).await?;
        // Callers waiting on a cancelled job (a synchronous recipe) answer now.
        self.service.inner.finished.notify_waiters();
        for task_id in &revoked.cancelled {
            self.service.discard_inputs(task_id).await;
        }
        for stored in &revoked.upstream {
            self.service.cancel_upstream(stored).await;
        }
        Ok(revoked.key.into())
    }

    /// Deletes the account `name`: every key is revoked (its unfinished jobs cancelled unbilled, as
    /// [`Self::revoke_key`] does), and its console login, sessions and links are removed. Its
    /// ledger stays. Returns the keys revoked now.
    pub async fn delete_account(&self, name: &str) -> Result<usize, ServiceError> {
        let name = name.to_string();
        let account = self.service.db(move |db| db.account_by_name(&name)).await?;
        self.delete_account_by_id(&account.id).await
    }

    pub(crate) async fn delete_account_by_id(&self, account_id: &str) -> Result<usize, ServiceError> {
        let id = account_id.to_string();
        let keys = self.service.db(move |db| db.account_keys(&id)).await?;
        let mut revoked = 0;
        for key in keys.iter().filter(|k| k.revoked_at.is_none()) {
            self.revoke_key(&key.id).await?;
            revoked += 1;
        }
        let id = account_id.to_string();
        self.service.db(move |db| db.delete_login(&id)).await?;
        Ok(revoked)
    }

    /// Sets or removes a key's spend cap.
    pub async fn set_spend_cap(&self, key_id: &str, cap: Option<Usd>) -> Result<AccountKey, ServiceError> {
        let key_id = key_id.to_string();
        self.service.db(move |db| db.set_spend_cap(&key_id, cap)).await.map(AccountKey::from)
    }

    /// Sets a key's own request rates per minute (`None`: the deployment's default; see
    /// `RATE_LIMIT_*`), which take effect within a second on every api-server.
    pub async fn set_key_rates(&self, key_id: &str, rates: KeyRates) -> Result<(), ServiceError> {
        let key_id = key_id.to_string();
        self.service.db(move |db| db.set_key_rates(&key_id, rates.submits_per_minute, rates.reads_per_minute)).await
    }

    /// An account's keys.
    pub async fn list_keys(&self, account: &str) -> Result<Vec<AccountKey>, ServiceError> {
        let account = account.to_string();
        Ok(self.service.db(move |db| db.list_keys(&account)).await?.into_iter().map(AccountKey::from).collect())
    }

    /// An account's ledger, oldest first.
    pub async fn account_ledger(&self, account: &str) -> Result<Vec<LedgerEntry>, ServiceError> {
        let account = account.to_string();
        self.service.db(move |db| db.account_ledger(&account)).await
    }

    /// Provider work finished in the last `days` days, by provider and engine: billed amounts
    /// beside the providers' costs.
    pub async fn provider_margins(&self, days: u32) -> Result<Vec<storage::ProviderMargin>, ServiceError> {
        let since = storage::now_millis() - i64::from(days) * 86_400_000;
        self.service.db(move |db| db.provider_margins(since)).await
    }

    /// Balances that differ from their recomputation from the ledger; empty when the books balance.
    pub async fn verify_ledger(&self) -> Result<Vec<LedgerMismatch>, ServiceError> {
        self.service.db(|db| db.verify_ledger()).await
    }

    /// On a deployment with no accounts yet, creates a `dev` account and key and returns its
    /// secret, so a first local run works without any setup.
    pub async fn bootstrap_dev_key(&self) -> Result<Option<NewKey>, ServiceError> {
        if self.service.db(|db| db.count_accounts()).await? > 0 {
            return Ok(None);
        }
        self.create_account("dev", false).await?;
        self.create_key("dev", None, Some("created at first start")).await.map(Some)
    }
}

impl Service {
    /// Creates a key for the account `account_id`: a fresh secret, of which only the hash and
    /// the display prefix are kept.
    pub(crate) async fn issue_key(
        &self,
        account_id: &str,
        label: Option<&str>,
        spend_cap: Option<Usd>,
    ) -> Result<NewKey, ServiceError> {
        let secret = keys::secret_from_random(rand::random());
        let (account_id, hash, prefix) =
            (account_id.to_string(), keys::hash_secret(&secret), keys::display_prefix(&secret));
        let label = label.map(str::to_string);
        let webhook_secret = webhooks::SigningSecret::generate().to_string();
        let stored_webhook_secret = webhook_secret.clone();
        let key = self
            .db(move |db| {
                let stored =
                    NewKeySecret { hash: &hash, prefix: Some(&prefix), webhook_secret: Some(&stored_webhook_secret) };
                db.create_account_key(&account_id, &stored, label.as_deref(), spend_cap)
            })
            .await?;
        Ok(NewKey { key: key.into(), secret, webhook_secret: Some(webhook_secret) })
    }
}
