//! The developer console's use-cases: sign-in with a password (argon2id, rate-limited per address
//! and per account), database-backed sessions, operator invites, and the signed-in account's own
//! keys, standing and usage. Sign-up, address verification and password resets are in
//! [`crate::identity`].
//!
//! Keys are made, revoked and capped by the same operations the operator uses; the console only
//! adds the ownership check (another account's key is "not found").

use crate::rate_limit::KeyRates;
use crate::stored_job::IdSpace;
use crate::views::TaskView;
use crate::{AccountKey, Console, NewKey, Service, ServiceError};
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use domain::keys::hash_secret;
use domain::Usd;
use std::sync::OnceLock;
use storage::{now_millis, InviteError, SessionRecord};

/// How long a console session lasts.
pub const SESSION_TTL_MS: i64 = 14 * 24 * 3_600_000;
/// How long an invite link stays valid.
pub const INVITE_TTL_MS: i64 = 7 * 24 * 3_600_000;
/// Shortest accepted password, in characters.
pub const PASSWORD_MIN_CHARS: usize = 10;
/// Longest accepted password, in characters (hashing time must stay bounded).
pub const PASSWORD_MAX_CHARS: usize = 256;
/// Window over which failed sign-ins are counted.
pub const SIGN_IN_WINDOW_MS: i64 = 15 * 60_000;
/// Sign-in tries to one account from one address (over the day) with no wait between them; each
/// further try must wait [`SIGN_IN_FIRST_DELAY_MS`] after the one before, doubling with every
/// further try up to [`SIGN_IN_LONGEST_DELAY_MS`]. The owner's success clears them.
pub const SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS: i64 = 5;
/// The wait before the first sign-in try past the free ones, from one address to one account.
pub const SIGN_IN_FIRST_DELAY_MS: i64 = 30_000;
/// The longest wait between sign-in tries from one address to one account.
pub const SIGN_IN_LONGEST_DELAY_MS: i64 = 3_600_000;
/// Sign-in tries to one account from anywhere within the window before it refuses further tries.
pub const SIGN_IN_FAILURES_PER_ACCOUNT: i64 = 100;
/// Failed sign-ins from one address within the window before it refuses further tries.
pub const SIGN_IN_FAILURES_PER_ADDRESS: i64 = 20;
/// How long counted attempts are kept: the longest window.
pub(crate) const ATTEMPTS_KEPT_MS: i64 = 24 * 3_600_000;
/// Longest key label, in characters.
pub const LABEL_MAX_CHARS: usize = 80;

/// A new session: the token goes in the cookie and nowhere else.
#[derive(Clone, Debug)]
pub struct NewSession {
    /// The cookie's value.
    pub token: String,
    /// The signed-in account.
    pub account_id: String,
}

/// The signed-in user behind a session cookie.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsoleUser {
    /// Their account.
    pub account_id: String,
    /// Their login's email.
    pub email: String,
    /// The token every form of the session carries.
    pub csrf_token: String,
}

/// What the account page shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountOverview {
    /// The login's email.
    pub email: String,
    /// The account's name (the operator's handle for it).
    pub name: String,
    /// Free allowance granted.
    pub free_allowance: Usd,
    /// Free allowance not yet used or held.
    pub free_allowance_left: Usd,
    /// Whether use beyond the allowance may be invoiced.
    pub card_on_file: bool,
    /// Owed on the invoice.
    pub invoice_balance: Usd,
}

/// Spend per key per day.
#[derive(Clone, Debug)]
pub struct DailySpendReport {
    /// Days since 1970-01-01 (UTC), oldest first, ending today.
    pub days: Vec<i64>,
    /// The keys that spent in that time, in the order of the key list.
    pub keys: Vec<KeySpend>,
}

/// One key's spend per day of a [`DailySpendReport`].
#[derive(Clone, Debug)]
pub struct KeySpend {
    /// The key.
    pub key: AccountKey,
    /// Ten-thousandths of a dollar per day, aligned with the report's days.
    pub units: Vec<i64>,
}

/// One of the account's recent jobs, as its owner sees it.
#[derive(Clone, Debug)]
pub struct RecentJob {
    /// The task (or reel) with fresh signed output URLs.
    pub view: TaskView,
    /// The key that submitted it.
    pub key_id: String,
}

/// How long a signed-out form's token is good for: a sign-in page left open this long is
/// reloaded before it is sent.
pub const FORM_TOKEN_TTL_SECS: i64 = 2 * 3_600;

impl Console<'_> {
    /// A token for a signed-out form (sign-in, sign-up, reset), kept in the form and in a cookie:
    /// 32 random bytes, an expiry and the deployment's signature over both
    /// (`random.expires.signature`), so a token the service did not make, or one past its two
    /// hours, is refused even when a cookie of the same value was planted beside it.
    pub fn new_form_token(&self) -> String {
        let random = random_token();
        let expires = now_millis() / 1_000 + FORM_TOKEN_TTL_SECS;
        let signature = self.service.inner.signer.sign(&form_token_subject(&random), expires);
        format!("{random}.{expires}.{signature}")
    }

    /// Whether `token` is one of [`Console::new_form_token`]'s, signed here and not expired.
    pub fn form_token_is_valid(&self, token: &str) -> bool {
        let mut parts = token.splitn(3, '.');
        let (Some(random), Some(expires), Some(signature)) = (parts.next(), parts.next(), parts.next()) else {
            return false;
        };
        let Ok(expires) = expires.parse::<i64>() else { return false };
        self.service.inner.signer.verify(&form_token_subject(random), expires, signature, now_millis() / 1_000)
    }

    /// Whether visitors may create accounts themselves.
    pub fn sign_up_open(&self) -> bool {
        self.service.config().console_sign_up
    }

    /// Checks an email and password and opens a new session. Every try is counted before the
    /// password is checked, atomically, per address and per email from anywhere (a far higher
    /// limit), past which every try is refused for the rest of the window, and per email from that
    /// address, where past five tries each must wait longer after the last (30 s, doubling up to
    /// an hour). The per-email limit does not apply at an address the owner signed in from within
    /// the day, so tries spread over many addresses never lock the owner out of their own.
    pub async fn sign_in(&self, email: &str, password: &str, address: &str) -> Result<NewSession, ServiceError> {
        const WRONG: &str = "wrong email or password";
        let email = normalize_email(email).map_err(|_| ServiceError::Unauthorized(WRONG.into()))?;
        let from_here = format!("sign-in:{email}@{address}");
        // An address the owner signed in from within the day is theirs: the email's own limit,
        // which tries from everywhere fill, does not lock them out there.
        let known = format!("signed-in:{email}@{address}");
        let since = now_millis() - ATTEMPTS_KEPT_MS;
        let lookup = known.clone();
        let owners_address = self.service.db(move |db| db.happened_since(&lookup, since)).await?;
        let mut limits = vec![(format!("sign-in:{address}"), SIGN_IN_FAILURES_PER_ADDRESS)];
        if !owners_address {
            limits.push((format!("sign-in:{email}"), SIGN_IN_FAILURES_PER_ACCOUNT));
        }
        let delay = Some(from_here.clone());
        self.service.count_attempt(limits, SIGN_IN_WINDOW_MS, delay, "too many failed sign-ins").await?;
        let lookup = email.clone();
        let login = self.service.db(move |db| db.login_by_email(&lookup)).await?;
        // An unknown email costs the same hashing time as a wrong password, so timing does not
        // reveal which addresses have accounts.
        let stored = login.as_ref().map(|l| l.password_hash.clone());
        let matches = verify_password(password.to_string(), stored).await?;
        match login {
            Some(login) if matches && login.verified_at.is_none() => Err(ServiceError::Forbidden(
                "confirm your email address first: follow the link we mailed to it (signing up again sends a new one)"
                    .into(),
            )),
            Some(login) if matches => {
                // The owner's success forgives the tries made from their address, and marks it as
                // theirs for a day.
                self.service.db(move |db| db.clear_attempts(&from_here)).await?;
                self.service.db(move |db| db.record_event(&known)).await?;
                self.service.start_session(login.account_id).await
            }
            _ => Err(ServiceError::Unauthorized(WRONG.into())),
        }
    }

    /// The user of a session cookie, if the session is live.
    pub async fn console_user(&self, token: &str) -> Result<Option<ConsoleUser>, ServiceError> {
        let token_hash = hash_secret(token);
        self.service
            .db(move |db| {
                let Some(session) = db.session(&token_hash)? else { return Ok(None) };
                let email = db.login_of(&session.account_id)?.map(|l| l.email).unwrap_or_default();
                Ok::<_, storage::StorageError>(Some(ConsoleUser {
                    account_id: session.account_id,
                    email,
                    csrf_token: session.csrf_token,
                }))
            })
            .await
    }

    /// Ends the session of this cookie.
    pub async fn sign_out(&self, token: &str) -> Result<(), ServiceError> {
        let token_hash = hash_secret(token);
        self.service.db(move |db| db.delete_session(&token_hash)).await
    }

    /// Ends every session of the account, on every device.
    pub async fn sign_out_everywhere(&self, account_id: &str) -> Result<usize, ServiceError> {
        let account_id = account_id.to_string();
        self.service.db(move |db| db.delete_sessions_of(&account_id)).await
    }

    /// Makes an invite link that gives the operator-made account `account_name` a console login
    /// for `email`.
    pub async fn invite(&self, account_name: &str, email: &str) -> Result<String, ServiceError> {
        let email = normalize_email(email)?;
        let token = random_token();
        let (account_name, token_hash) = (account_name.to_string(), hash_secret(&token));
        self.service.db(move |db| db.create_invite(&account_name, &email, &token_hash, INVITE_TTL_MS)).await?;
        Ok(self.service.urls().invite(&token))
    }

    /// The email a live invite is for.
    pub async fn invite_email(&self, token: &str) -> Result<String, ServiceError> {
        let token_hash = hash_secret(token);
        self.service
            .db(move |db| db.invite_email(&token_hash))
            .await?
            .ok_or_else(|| ServiceError::NotFound(InviteError::Invalid.to_string()))
    }

    /// Sets the password of an invited login and signs it in.
    pub async fn accept_invite(&self, token: &str, password: &str) -> Result<NewSession, ServiceError> {
        let email = self.invite_email(token).await?;
        check_password(password, &email)?;
        let hash = hash_password(password.to_string()).await?;
        let token_hash = hash_secret(token);
        let account_id = self.service.db(move |db| db.accept_invite(&token_hash, &hash)).await?;
        self.service.start_session(account_id).await
    }

    /// The account's standing: allowance, card on file, invoice.
    pub async fn account_overview(&self, account_id: &str) -> Result<AccountOverview, ServiceError> {
        let account_id = account_id.to_string();
        let (account, login) = self
            .service
            .db(move |db| Ok::<_, storage::StorageError>((db.account(&account_id)?, db.login_of(&account_id)?)))
            .await?;
        let limits = account.limits();
        Ok(AccountOverview {
            email: login.map(|l| l.email).unwrap_or_default(),
            name: account.name,
            free_allowance: limits.free_allowance,
            free_allowance_left: limits.free_remaining(),
            card_on_file: limits.card_on_file,
            invoice_balance: Usd::from_units(account.invoice_units),
        })
    }

    /// The account's keys, oldest first.
    pub async fn account_keys(&self, account_id: &str) -> Result<Vec<AccountKey>, ServiceError> {
        let account_id = account_id.to_string();
        Ok(self.service.db(move |db| db.account_keys(&account_id)).await?.into_iter().map(AccountKey::from).collect())
    }

    /// Creates a key for the signed-in account; the secret is returned once.
    pub async fn create_account_key(
        &self,
        account_id: &str,
        label: Option<&str>,
        spend_cap: Option<Usd>,
    ) -> Result<NewKey, ServiceError> {
        let label = check_label(label)?;
        self.service.issue_key(account_id, label.as_deref(), spend_cap).await
    }

    /// Revokes one of the account's keys.
    pub async fn revoke_account_key(&self, account_id: &str, key_id: &str) -> Result<AccountKey, ServiceError> {
        self.owned_key(account_id, key_id).await?;
        self.service.operator().revoke_key(key_id).await
    }

    /// Sets or removes the cap of one of the account's keys.
    pub async fn set_account_key_cap(
        &self,
        account_id: &str,
        key_id: &str,
        cap: Option<Usd>,
    ) -> Result<AccountKey, ServiceError> {
        self.owned_key(account_id, key_id).await?;
        self.service.operator().set_spend_cap(key_id, cap).await
    }

    /// Sets one of the account's keys' own request rates per minute. An owner may only lower them
    /// (to between 1 and the deployment's rate; `None`: the deployment's), for a key handed to a
    /// less trusted client; raising them is the operator's (`admin key rate`).
    pub async fn set_account_key_rates(
        &self,
        account_id: &str,
        key_id: &str,
        rates: KeyRates,
    ) -> Result<(), ServiceError> {
        self.owned_key(account_id, key_id).await?;
        let limits = self.service.config().rate_limits;
        for (rate, default, what) in [
            (rates.submits_per_minute, limits.submits_per_minute, "spending requests"),
            (rates.reads_per_minute, limits.reads_per_minute, "other requests"),
        ] {
            let ceiling = if default == 0 { u32::MAX } else { default };
            if let Some(rate) = rate.filter(|r| *r == 0 || *r > ceiling) {
                return Err(ServiceError::BadRequest(format!(
                    "{what} per minute: {rate} is not between 1 and this service's rate of {ceiling}; \
                     leave it empty for the service's rate"
                )));
            }
        }
        self.service.operator().set_key_rates(key_id, rates).await
    }

    /// Gives one of the account's live keys a new secret, returned once; the old secret stops
    /// working at once. The key keeps its id, label, cap, spend and tasks.
    pub async fn rotate_account_key(&self, account_id: &str, key_id: &str) -> Result<NewKey, ServiceError> {
        self.owned_key(account_id, key_id).await?;
        let secret = domain::keys::secret_from_random(rand::random());
        let (key_id, hash, prefix) =
            (key_id.to_string(), domain::keys::hash_secret(&secret), domain::keys::display_prefix(&secret));
        let key = self
            .service
            .db(move |db| {
                db.replace_key_secret(
                    &key_id,
                    &storage::NewKeySecret { hash: &hash, prefix: Some(&prefix), webhook_secret: None },
                )
            })
            .await?
            .ok_or_else(|| ServiceError::BadRequest("a revoked key cannot be rotated; create a new key".into()))?;
        Ok(NewKey { key: key.into(), secret, webhook_secret: None })
    }

    /// One of the account's keys; another account's key is not found.
    pub async fn owned_key(&self, account_id: &str, key_id: &str) -> Result<AccountKey, ServiceError> {
        let lookup = key_id.to_string();
        let key = self.service.db(move |db| db.key(&lookup)).await;
        match key {
            Ok(key) if key.account_id == account_id => Ok(key.into()),
            Ok(_) | Err(ServiceError::NotFound(_)) => {
                Err(ServiceError::NotFound(format!("no key {key_id:?} in this account")))
            }
            Err(other) => Err(other),
        }
    }

    /// The account's captured spend per key per UTC day over the last `days` days, for each key
    /// that spent in that time.
    pub async fn daily_spend(&self, account_id: &str, days: i64) -> Result<DailySpendReport, ServiceError> {
        const DAY_MS: i64 = 86_400_000;
        let today = now_millis().div_euclid(DAY_MS);
        let days: Vec<i64> = (today - days + 1..=today).collect();
        let (account, since) = (account_id.to_string(), days[0] * DAY_MS);
        let (rows, keys) = self
            .service
            .db(move |db| {
                Ok::<_, storage::StorageError>((db.daily_spend(&account, since)?, db.account_keys(&account)?))
            })
            .await?;
        let keys = keys
            .into_iter()
            .filter_map(|key| {
                let units: Vec<i64> = days
                    .iter()
                    .map(|day| rows.iter().filter(|r| r.key_id == key.id && r.day == *day).map(|r| r.units).sum())
                    .collect();
                units.iter().any(|u| *u > 0).then_some(KeySpend { key: key.into(), units })
            })
            .collect();
        Ok(DailySpendReport { days, keys })
    }

    /// The account's latest jobs (tasks and reels of every key), newest first.
    pub async fn recent_jobs(&self, account_id: &str, limit: i64) -> Result<Vec<RecentJob>, ServiceError> {
        let account_id = account_id.to_string();
        let records = self.service.db(move |db| db.recent_tasks_of_account(&account_id, limit)).await?;
        records
            .iter()
            .map(|record| Ok(RecentJob { view: self.service.task_view(record)?, key_id: record.key_id.clone() }))
            .collect()
    }

    /// Cancels a queued or running job of any of the account's keys (as the key's own cancel
    /// does); a job of another account is a 404, an ended one a 409.
    pub async fn cancel_account_job(&self, account_id: &str, job_id: &str) -> Result<(), ServiceError> {
        let id = job_id.to_string();
        let record = self.service.db(move |db| db.task(&id)).await?;
        let record = record
            .filter(|record| record.account_id == account_id)
            .ok_or_else(|| ServiceError::NotFound(format!("no job {job_id:?} in this account")))?;
        self.service.cancel_of_key(&record.key_id, IdSpace::of(job_id), job_id).await
    }

    /// The ready-made MCP connector URL of a secret. The URL is itself a secret.
    pub fn connector_url(&self, secret: &str) -> String {
        self.service.urls().connector_with_key(secret)
    }
}

impl Service {
    /// Counts an attempt against each `(subject, limit)` over `window_ms`, and against `delay`'s
    /// subject under the sign-in's growing delay, or refuses it (429, saying `what` and when to
    /// try again) when a subject is at its limit or has not waited its delay.
    pub(crate) async fn count_attempt(
        &self,
        limits: Vec<(String, i64)>,
        window_ms: i64,
        delay: Option<String>,
        what: &str,
    ) -> Result<(), ServiceError> {
        let now = now_millis();
        let counted = self
            .db(move |db| {
                let limits: Vec<(&str, i64)> =
                    limits.iter().map(|(subject, limit)| (subject.as_str(), *limit)).collect();
                let delay = delay.as_deref().map(|subject| storage::GrowingDelay {
                    subject,
                    free: SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS,
                    first_ms: SIGN_IN_FIRST_DELAY_MS,
                    longest_ms: SIGN_IN_LONGEST_DELAY_MS,
                });
                db.count_attempt(&limits, now - window_ms, ATTEMPTS_KEPT_MS, delay)
            })
            .await?;
        let Err(refused) = counted else { return Ok(()) };
        let retry_after_ms = u64::try_from(refused.until - now_millis()).unwrap_or(0).max(1000);
        let wait = if retry_after_ms < 60_000 {
            format!("{} seconds", retry_after_ms.div_ceil(1000))
        } else {
            format!("{} minutes", retry_after_ms.div_ceil(60_000))
        };
        Err(ServiceError::TooManyRequests {
            message: format!("{what}; try again in {wait}"),
            retry_after_secs: retry_after_ms.div_ceil(1000),
        })
    }

    pub(crate) async fn start_session(&self, account_id: String) -> Result<NewSession, ServiceError> {
        let token = random_token();
        let now = now_millis();
        let record = SessionRecord {
            token_hash: hash_secret(&token),
            account_id: account_id.clone(),
            csrf_token: random_token(),
            created_at: now,
            expires_at: now + SESSION_TTL_MS,
        };
        self.db(move |db| db.create_session(&record)).await?;
        Ok(NewSession { token, account_id })
    }
}

/// Lower-cases and checks an email address.
pub(crate) fn normalize_email(email: &str) -> Result<String, ServiceError> {
    let email = email.trim().to_lowercase();
    let invalid = || ServiceError::BadRequest("enter a valid email address, such as name@example.com".into());
    let (local, domain) = email.split_once('@').ok_or_else(invalid)?;
    let well_formed = !local.is_empty()
        && email.len() <= 254
        && local.len() <= 64
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !domain.contains('@')
        && email.chars().all(|c| c.is_ascii_graphic() && !"<>()[]\\,;:\"".contains(c) || !c.is_ascii());
    if well_formed && !email.chars().any(char::is_control) && !email.chars().any(char::is_whitespace) {
        Ok(email)
    } else {
        Err(invalid())
    }
}

pub(crate) fn check_password(password: &str, email: &str) -> Result<(), ServiceError> {
    let chars = password.chars().count();
    if chars < PASSWORD_MIN_CHARS {
        return Err(ServiceError::BadRequest(format!("choose a password of at least {PASSWORD_MIN_CHARS} characters")));
    }
    if chars > PASSWORD_MAX_CHARS {
        return Err(ServiceError::BadRequest(format!("a password may have at most {PASSWORD_MAX_CHARS} characters")));
    }
    if password.trim().eq_ignore_ascii_case(email) {
        return Err(ServiceError::BadRequest("the password must not be your email address".into()));
    }
    Ok(())
}

fn check_label(label: Option<&str>) -> Result<Option<String>, ServiceError> {
    let label = label.map(str::trim).filter(|l| !l.is_empty());
    match label {
        Some(l) if l.chars().count() > LABEL_MAX_CHARS => {
            Err(ServiceError::BadRequest(format!("a label may have at most {LABEL_MAX_CHARS} characters")))
        }
        Some(l) if l.chars().any(char::is_control) => {
            Err(ServiceError::BadRequest("a label may not contain control characters".into()))
        }
        other => Ok(other.map(str::to_string)),
    }
}

/// argon2id with the crate's defaults (19 MiB, 2 passes), the OWASP-recommended minimum.
pub(crate) async fn hash_password(password: String) -> Result<String, ServiceError> {
    on_hashing_pool(move || {
        let salt = SaltString::encode_b64(&rand::random::<[u8; 16]>())
            .map_err(|e| ServiceError::Internal(format!("password salt: {e}")))?;
        Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|hash| hash.to_string())
            .map_err(|e| ServiceError::Internal(format!("password hashing: {e}")))
    })
    .await
}

/// Threads that hash passwords: one fewer than the cores (at least one), and none of the runtime's
/// blocking threads that the API's database calls use. Each argon2 run takes tens of milliseconds
/// of CPU and 19 MiB, so a flood of sign-ins queues here instead of taking the threads, the
/// memory and every core the API needs.
fn hashing_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1))
}

type HashingWork = Box<dyn FnOnce() + Send>;

/// The queue of the password-hashing pool, whose threads start on first use.
fn hashing_pool() -> &'static std::sync::mpsc::Sender<HashingWork> {
    static POOL: OnceLock<std::sync::mpsc::Sender<HashingWork>> = OnceLock::new();
    POOL.get_or_init(|| {
        let (queue, work) = std::sync::mpsc::channel::<HashingWork>();
        let work = std::sync::Arc::new(std::sync::Mutex::new(work));
        for n in 0..hashing_threads() {
            let work = work.clone();
            let spawned = std::thread::Builder::new().name(format!("password-hashing-{n}")).spawn(move || loop {
                // The lock is held only while taking the next item, not while hashing.
                let next = match work.lock() {
                    Ok(queue) => queue.recv(),
                    Err(_) => return,
                };
                match next {
                    Ok(job) => job(),
                    Err(_) => return,
                }
            });
            if let Err(e) = spawned {
                tracing::error!(error = %e, "a password-hashing thread could not start");
            }
        }
        queue
    })
}

/// Runs password-hashing `work` on the [`hashing_pool`] and waits for it without blocking the
/// runtime.
async fn on_hashing_pool<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ServiceError> + Send + 'static,
) -> Result<T, ServiceError> {
    let (answer, answered) = tokio::sync::oneshot::channel();
    let job: HashingWork = Box::new(move || {
        let _ = answer.send(work());
    });
    hashing_pool().send(job).map_err(|_| ServiceError::Internal("password hashing: the pool has stopped".into()))?;
    answered.await.map_err(|_| ServiceError::Internal("password hashing crashed".into()))?
}

/// Checks a password against a stored hash; with no stored hash, checks it against a decoy so the
/// time taken is the same.
pub(crate) async fn verify_password(password: String, stored: Option<String>) -> Result<bool, ServiceError> {
    static DECOY: OnceLock<String> = OnceLock::new();
    let decoy = match DECOY.get() {
        Some(decoy) => decoy.clone(),
        None => {
            let decoy = hash_password(random_token()).await?;
            DECOY.get_or_init(|| decoy).clone()
        }
    };
    let known = stored.is_some();
    let stored = stored.unwrap_or(decoy);
    on_hashing_pool(move || {
        let parsed =
            PasswordHash::new(&stored).map_err(|e| ServiceError::Internal(format!("stored password hash: {e}")))?;
        Ok(Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok() && known)
    })
    .await
}

/// What a signed-out form's token signs: its random part, in a namespace no download path or
/// callback shares.
fn form_token_subject(random: &str) -> String {
    format!("console-form:{random}")
}

/// 32 bytes of operating-system randomness, hex encoded: session, form and invite tokens.
pub fn random_token() -> String {
    hex::encode(rand::random::<[u8; 32]>())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// However many sign-ins arrive at once, no more hashes run than the pool has threads, and
    /// none on the runtime's blocking threads (which the API's database calls use).
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn password_hashing_runs_on_a_bounded_pool_of_its_own() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        let threads = hashing_threads();
        let (running, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let works = (0..threads * 4 + 3).map(|_| {
            let (running, most) = (running.clone(), most.clone());
            on_hashing_pool(move || {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(20));
                running.fetch_sub(1, Ordering::SeqCst);
                Ok(std::thread::current().name().unwrap_or_default().to_string())
            })
        });
        let handles: Vec<_> = works.map(tokio::spawn).collect();
        for handle in handles {
            let thread = handle.await.unwrap().unwrap();
            assert!(thread.starts_with("password-hashing-"), "hashed on {thread:?}");
        }
        let most = most.load(Ordering::SeqCst);
        assert!(most >= 1 && most <= threads, "{most} hashes ran at once on {threads} threads");
    }

    #[test]
    fn emails_are_normalized_and_checked() {
        assert_eq!(normalize_email("  Ada@Example.COM ").unwrap(), "ada@example.com");
        for bad in
            ["", "ada", "@example.com", "ada@example", "ada@.com", "a b@example.com", "ada@example.com.", "<a>@x.io"]
        {
            assert!(normalize_email(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn passwords_have_bounds() {
        assert!(check_password("short", "a@b.co").is_err());
        assert!(check_password(&"x".repeat(PASSWORD_MAX_CHARS + 1), "a@b.co").is_err());
        assert!(check_password("ada@example.com", "ada@example.com").is_err());
        assert!(check_password("correct horse battery", "a@b.co").is_ok());
    }

    #[test]
    fn labels_are_trimmed_and_bounded() {
        assert_eq!(check_label(Some("  ci  ")).unwrap().as_deref(), Some("ci"));
        assert_eq!(check_label(Some("   ")).unwrap(), None);
        assert!(check_label(Some(&"x".repeat(LABEL_MAX_CHARS + 1))).is_err());
        assert!(check_label(Some("a\u{0}b")).is_err());
    }

    #[tokio::test]
    async fn password_hashes_verify_only_the_right_password() {
        let hash = hash_password("correct horse battery".into()).await.unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_password("correct horse battery".into(), Some(hash.clone())).await.unwrap());
        assert!(!verify_password("correct horse batterz".into(), Some(hash)).await.unwrap());
        assert!(!verify_password("anything at all".into(), None).await.unwrap());
    }
}
