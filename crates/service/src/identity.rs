//! Proving a console login's address: sign-up mails a verification link and the free allowance is
//! given only when it is followed (once per identity, a bounded number per address range); the
//! same mailed links reset a forgotten password. Sign-up answers the same whether or not the
//! address has an account, so it reveals nothing; the address's owner learns by mail.

use crate::console::{
    check_password, hash_password, normalize_email, random_token, verify_password, NewSession, ATTEMPTS_KEPT_MS,
};
use crate::mail::Mail;
use crate::{Console, ServiceError};
use domain::keys::hash_secret;
use domain::Usd;
use std::net::IpAddr;
use storage::{AllowanceGrant, LinkPurpose};

/// How long a verification link works.
pub const VERIFY_LINK_TTL_MS: i64 = 24 * 3_600_000;
/// How long a password-reset link works.
pub const RESET_LINK_TTL_MS: i64 = 3_600_000;
/// The window over which an address range's free allowances are counted.
pub const ALLOWANCE_RANGE_WINDOW_MS: i64 = 30 * 24 * 3_600_000;
/// Reset requests per address, and per email, within [`RESET_WINDOW_MS`].
const RESETS_PER_ADDRESS: i64 = 20;
const RESETS_PER_EMAIL: i64 = 5;
const RESET_WINDOW_MS: i64 = 3_600_000;

impl Console<'_> {
    /// Starts an account for `email`: the same answer whatever the address already is, and a
    /// mail to it. A new address gets an account without allowance and a verification link; an
    /// address not yet verified gets a new link; an address with an account or a live invite gets
    /// a notice (sign in, or reset the password). Each client address may start
    /// `console_sign_ups_per_address` a day, counted before anything is checked.
    pub async fn sign_up(&self, email: &str, password: &str, address: &str) -> Result<(), ServiceError> {
        if !self.sign_up_open() {
            return Err(ServiceError::Forbidden(
                "sign-up is closed on this deployment; ask its operator for an invite link".into(),
            ));
        }
        let email = normalize_email(email)?;
        check_password(password, &email)?;
        if let Some(limit) = self.service.config().console_sign_ups_per_address {
            let limits = vec![(format!("sign-up:{address}"), i64::from(limit.get()))];
            self.service
                .count_attempt(limits, ATTEMPTS_KEPT_MS, None, "too many new accounts from this address")
                .await?;
        }
        // Hashed whatever happens next, so the time taken does not tell the cases apart.
        let hash = hash_password(password.to_string()).await?;
        let lookup = email.clone();
        match self.service.db(move |db| db.login_by_email(&lookup)).await? {
            Some(login) if login.verified_at.is_none() => self.mail_verification(&login.account_id, &email).await,
            Some(_) => self.mail_taken_notice(&email).await,
            None => {
                let (new, hash) = (email.clone(), hash);
                match self.service.db(move |db| db.sign_up(&new, &hash, Usd::ZERO)).await {
                    Ok(account) => self.mail_verification(&account.id, &email).await,
                    // Taken meanwhile, or held by a live invite.
                    Err(ServiceError::BadRequest(_)) => self.mail_taken_notice(&email).await,
                    Err(other) => Err(other),
                }
            }
        }
    }

    /// Follows a verification link: verifies the login, gives the free allowance if its identity
    /// and the client's address range may still have one, and signs in.
    pub async fn verify_email(&self, token: &str, address: &str) -> Result<NewSession, ServiceError> {
        let account_id = self.use_link(LinkPurpose::Verify, token).await?;
        self.grant_on_verification(&account_id, address).await?;
        self.service.start_session(account_id).await
    }

    /// Mails a password-reset link to `email` if it has a login; answers the same either way.
    pub async fn request_password_reset(&self, email: &str, address: &str) -> Result<(), ServiceError> {
        let email = normalize_email(email)?;
        let limits =
            vec![(format!("reset:{address}"), RESETS_PER_ADDRESS), (format!("reset:{email}"), RESETS_PER_EMAIL)];
        self.service.count_attempt(limits, RESET_WINDOW_MS, None, "too many password resets").await?;
        let lookup = email.clone();
        let Some(login) = self.service.db(move |db| db.login_by_email(&lookup)).await? else { return Ok(()) };
        let token = self.new_link(LinkPurpose::Reset, &login.account_id, RESET_LINK_TTL_MS).await?;
        let link = self.service.urls().console_link("reset", &token);
        self.send(
            &email,
            "Reset your password",
            format!(
                "Someone asked to reset the password of your account.\n\nChoose a new one here (the link works once, for an hour):\n{link}\n\nIf it was not you, ignore this mail: your password stays as it is."
            ),
        )
        .await
    }

    /// Follows a reset link: sets the new password, ends every session, verifies the address (the
    /// link proved it) and signs in.
    pub async fn reset_password(&self, token: &str, password: &str, address: &str) -> Result<NewSession, ServiceError> {
        let expired = || ServiceError::NotFound("this reset link is not valid any more; ask for a new one".into());
        let token_hash = hash_secret(token);
        let peek = token_hash.clone();
        let account_id =
            self.service.db(move |db| db.link_account(LinkPurpose::Reset, &peek)).await?.ok_or_else(expired)?;
        // A refused password leaves the link usable for the next try.
        let email = self.login(&account_id).await?;
        check_password(password, &email)?;
        let hash = hash_password(password.to_string()).await?;
        let used = self.service.db(move |db| db.use_link(LinkPurpose::Reset, &token_hash)).await?;
        if used.as_deref() != Some(account_id.as_str()) {
            return Err(expired());
        }
        let id = account_id.clone();
        self.service.db(move |db| db.set_password(&id, &hash)).await?;
        self.grant_on_verification(&account_id, address).await?;
        self.service.start_session(account_id).await
    }

    /// Changes a signed-in login's password after checking the current one; every session ends
    /// and a new one starts.
    pub async fn change_password(
        &self,
        account_id: &str,
        current: &str,
        new: &str,
    ) -> Result<NewSession, ServiceError> {
        let email = self.check_current_password(account_id, current, "the current password is wrong").await?;
        check_password(new, &email)?;
        let hash = hash_password(new.to_string()).await?;
        let id = account_id.to_string();
        self.service.db(move |db| db.set_password(&id, &hash)).await?;
        self.service.start_session(account_id.to_string()).await
    }

    /// Deletes the signed-in account after checking its password: every key revoked (unfinished
    /// jobs cancelled, unbilled), the login and every session removed.
    pub async fn delete_account(&self, account_id: &str, password: &str) -> Result<(), ServiceError> {
        self.check_current_password(account_id, password, "the password is wrong").await?;
        self.service.operator().delete_account_by_id(account_id).await.map(|_| ())
    }

    /// The signed-in login's email, once `password` is checked against it (400 saying `wrong`
    /// when it does not match).
    async fn check_current_password(
        &self,
        account_id: &str,
        password: &str,
        wrong: &str,
    ) -> Result<String, ServiceError> {
        let id = account_id.to_string();
        let login = self.service.db(move |db| db.login_of(&id)).await?;
        let (email, stored) = login.map(|l| (l.email, l.password_hash)).unzip();
        if !verify_password(password.to_string(), stored).await? {
            return Err(ServiceError::BadRequest(wrong.into()));
        }
        email.ok_or_else(|| ServiceError::NotFound("no console login for this account".into()))
    }

    async fn login(&self, account_id: &str) -> Result<String, ServiceError> {
        let id = account_id.to_string();
        let login = self.service.db(move |db| db.login_of(&id)).await?;
        login.map(|l| l.email).ok_or_else(|| ServiceError::NotFound("no console login for this account".into()))
    }

    /// Verifies the login and gives the allowance if its identity and range may still have one;
    /// what happened is logged for the operator.
    async fn grant_on_verification(&self, account_id: &str, address: &str) -> Result<(), ServiceError> {
        let email = self.login(account_id).await?;
        let config = self.service.config();
        let grant = AllowanceGrant {
            identity: email_identity(&email),
            address_range: address_range(address),
            allowance: config.free_allowance,
            per_range: config.allowances_per_address_range,
            window_ms: ALLOWANCE_RANGE_WINDOW_MS,
        };
        let id = account_id.to_string();
        let verified = self.service.db(move |db| db.verify_login(&id, &grant)).await?;
        tracing::info!(account = %account_id, outcome = ?verified, "console address verified");
        Ok(())
    }

    async fn use_link(&self, purpose: LinkPurpose, token: &str) -> Result<String, ServiceError> {
        let token_hash = hash_secret(token);
        self.service.db(move |db| db.use_link(purpose, &token_hash)).await?.ok_or_else(|| {
            ServiceError::NotFound("this link is not valid any more; sign up again for a new one".into())
        })
    }

    async fn new_link(&self, purpose: LinkPurpose, account_id: &str, ttl_ms: i64) -> Result<String, ServiceError> {
        let token = random_token();
        let (id, token_hash) = (account_id.to_string(), hash_secret(&token));
        self.service.db(move |db| db.create_link(purpose, &id, &token_hash, ttl_ms)).await?;
        Ok(token)
    }

    async fn mail_verification(&self, account_id: &str, email: &str) -> Result<(), ServiceError> {
        let token = self.new_link(LinkPurpose::Verify, account_id, VERIFY_LINK_TTL_MS).await?;
        let link = self.service.urls().console_link("verify", &token);
        let allowance = self.service.config().free_allowance;
        self.send(
            email,
            "Confirm your email address",
            format!(
                "Welcome. Confirm this address to finish creating your account and receive the free allowance of {allowance} USD (the link works once, for 24 hours):\n{link}\n\nIf you did not sign up, ignore this mail and no account will be used."
            ),
        )
        .await
    }

    async fn mail_taken_notice(&self, email: &str) -> Result<(), ServiceError> {
        let urls = self.service.urls();
        let (sign_in, reset) = (urls.console_page("sign-in"), urls.console_page("reset"));
        self.send(
            email,
            "You already have an account",
            format!(
                "Someone tried to create an account with this address, which already has one (or an invite waiting for it).\n\nSign in: {sign_in}\nForgot your password? {reset}\n\nIf it was not you, nothing changed and you need do nothing."
            ),
        )
        .await
    }

    async fn send(&self, to: &str, subject: &str, body: String) -> Result<(), ServiceError> {
        let mail = Mail { to: to.to_string(), subject: subject.to_string(), body };
        self.service.config().mailer.send(mail).await
    }
}

/// The identity an email address's allowance is counted under: lower case, without a
/// `+sub-address`, and for Gmail without dots (which Gmail ignores) and on one domain.
pub fn email_identity(email: &str) -> String {
    let email = email.to_lowercase();
    let Some((local, domain)) = email.rsplit_once('@') else { return email };
    let local = local.split('+').next().unwrap_or(local);
    match domain {
        "gmail.com" | "googlemail.com" => format!("{}@gmail.com", local.replace('.', "")),
        _ => format!("{local}@{domain}"),
    }
}

/// The range a client address's allowances are counted under: its IPv4 /24 or IPv6 /48, the
/// block one customer of a provider usually holds.
pub fn address_range(address: &str) -> String {
    match address.parse::<IpAddr>() {
        Ok(IpAddr::V4(v4)) => {
            let [a, b, c, _] = v4.octets();
            format!("{a}.{b}.{c}.0/24")
        }
        Ok(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => address_range(&v4.to_string()),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}::/48", s[0], s[1], s[2])
            }
        },
        Err(_) => address.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_and_ranges_fold_what_one_person_or_customer_controls() {
        assert_eq!(email_identity("J.Doe+promo@GoogleMail.com"), "jdoe@gmail.com");
        assert_eq!(email_identity("j.doe+x@example.com"), "j.doe@example.com");
        assert_eq!(address_range("203.0.113.77"), "203.0.113.0/24");
        assert_eq!(address_range("2001:db8:abcd:12::1"), "2001:db8:abcd::/48");
        assert_eq!(address_range("::ffff:198.51.100.9"), "198.51.100.0/24");
        assert_eq!(address_range("unknown"), "unknown");
    }
}
