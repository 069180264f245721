//! Per-key request rate limits, shared by every api-server: each key has a token bucket per class
//! of request (spending, other) in the database. A process takes tokens from it in leases, so most
//! requests cost a lookup in memory and only one in many a database write: a lease starts at one
//! token and doubles while the key keeps using whole leases (up to a quarter of its burst), lives
//! one second, and its unused tokens go back to the bucket with the next lease. The database never
//! gives out more than the bucket holds, so the limit holds across processes; a lease only decides
//! which process spends the tokens.
//!
//! A busy key's lease is renewed before it runs out: once half its tokens or half its life are
//! gone, the one request that notices has the next lease taken beside it (it does not wait for
//! the write) while the others go on spending this one. Otherwise every request in flight when a lease ran out would ask the database at once, and
//! queue on the bucket's row lock.

use crate::{Api, Caller, ServiceError};
use domain::rate_limit::{Rate, RateClass};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a process may keep leased tokens before they go back.
const LEASE_LIFETIME: Duration = Duration::from_secs(1);

/// Leases kept before expired ones are dropped.
const LEASES_KEPT: usize = 10_000;

/// The deployment's default rates (`0`: no limit for that class).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimits {
    /// Spending requests per key per minute.
    pub submits_per_minute: u32,
    /// Other requests per key per minute.
    pub reads_per_minute: u32,
    /// Seconds of the rate a key may spend at once (its bucket's size).
    pub burst_secs: u32,
}

/// A key's own rates, set by the operator or (lower than the default) by its owner.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyRates {
    /// Spending requests per minute, if set.
    pub submits_per_minute: Option<u32>,
    /// Other requests per minute, if set.
    pub reads_per_minute: Option<u32>,
}

/// Where a key stands after an admitted request, for the `RateLimit` answer headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateStatus {
    /// Requests per minute of the class.
    pub per_minute: u32,
    /// Largest burst.
    pub burst: u32,
    /// Requests left now (approximate with several api-servers: this process's lease and what
    /// the bucket held when it was taken).
    pub remaining: u32,
    /// Seconds until the bucket is full again.
    pub reset_secs: u64,
}

/// A request refused by its key's rate (or unchecked, the database being out of reach): where the
/// key stands, and the error to answer.
#[derive(Debug)]
pub struct RateRefusal {
    /// The key's standing (nothing remaining), unless the database could not say.
    pub status: Option<RateStatus>,
    /// The 429: what happened and when to retry.
    pub error: ServiceError,
}

impl From<RateRefusal> for ServiceError {
    fn from(refusal: RateRefusal) -> ServiceError {
        refusal.error
    }
}

struct Lease {
    tokens: u32,
    /// Tokens of the lease used so far.
    used: u32,
    size: u32,
    expires: Instant,
    /// What the bucket held after the lease was taken.
    bucket_remaining: u32,
    reset_at: Instant,
    /// After a refusal, requests until then are refused here, without asking the database: a
    /// client that keeps knocking costs a lookup in memory.
    refused_until: Option<Instant>,
    /// A request is taking the next lease ahead of this one running out.
    renewing: bool,
}

impl Lease {
    /// No tokens, expired: the next request asks the bucket.
    fn empty(now: Instant) -> Lease {
        Lease {
            tokens: 0,
            used: 0,
            size: 1,
            expires: now,
            bucket_remaining: 0,
            reset_at: now,
            refused_until: None,
            renewing: false,
        }
    }

    /// Whether the lease should be renewed now, ahead of running out: it is in use (a lease of one
    /// token runs out at once, and its next request asks anyway) and half its tokens or half its
    /// life are gone, and no other request is renewing it.
    fn due_for_renewal(&self, now: Instant) -> bool {
        !self.renewing
            && self.used >= 2
            && (self.tokens.saturating_mul(2) <= self.size
                || self.expires.saturating_duration_since(now) * 2 <= LEASE_LIFETIME)
    }
}

/// What the lease says about a request.
enum FromLease {
    /// Admitted; with `renew`, this request is to take the next lease, of that many tokens.
    Admitted { status: RateStatus, renew: Option<u32> },
    /// Still refused: seconds until a request can succeed.
    Refused(u64),
    /// Ask the bucket for `size` tokens, giving back `returned`.
    Ask { size: u32, returned: u32 },
}

/// This process's leases (see the module's documentation).
#[derive(Default)]
pub(crate) struct RateLimiter {
    leases: Mutex<HashMap<(String, RateClass), Lease>>,
}

impl RateLimiter {
    /// Takes one token from this process's lease, or says how many to ask the bucket for and how
    /// many unused ones to give back.
    fn take_leased(&self, key: &(String, RateClass), rate: Rate, now: Instant) -> FromLease {
        let mut leases = self.leases.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let Some(lease) = leases.get_mut(key) else { return FromLease::Ask { size: 1, returned: 0 } };
        let most = (rate.burst / 4).max(1);
        if lease.tokens > 0 && now < lease.expires {
            lease.tokens -= 1;
            lease.used += 1;
            let status = status(rate, lease.tokens + lease.bucket_remaining, lease.reset_at, now);
            if !lease.due_for_renewal(now) {
                return FromLease::Admitted { status, renew: None };
            }
            // Half its tokens gone within half its life: twice the lease; otherwise, half its life
            // gone, what it used meanwhile twice over.
            let size = if lease.tokens.saturating_mul(2) <= lease.size {
                lease.size.saturating_mul(2).min(most)
            } else {
                lease.used.saturating_mul(2).clamp(1, most)
            };
            lease.renewing = true;
            return FromLease::Admitted { status, renew: Some(size) };
        }
        if let Some(until) = lease.refused_until.filter(|until| now < *until) {
            return FromLease::Refused(until.saturating_duration_since(now).as_secs_f64().ceil().max(1.0) as u64);
        }
        let returned = if now < lease.expires { 0 } else { lease.tokens };
        let size = if lease.used >= lease.size { (lease.size * 2).min(most) } else { lease.used.clamp(1, most) };
        lease.tokens -= returned;
        FromLease::Ask { size, returned }
    }

    /// Refuses the key's requests of the class here until `retry_after_ms` from `now`.
    fn refuse(&self, key: (String, RateClass), retry_after_ms: i64, now: Instant) {
        let mut leases = self.leases.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let until = now + Duration::from_millis(u64::try_from(retry_after_ms).unwrap_or(0));
        leases.entry(key).or_insert_with(|| Lease::empty(now)).refused_until = Some(until);
    }

    /// Keeps the tokens of `grant` (asked for `size`), but the one the current request takes.
    fn store(&self, key: (String, RateClass), size: u32, grant: &domain::rate_limit::Grant, now: Instant) {
        let mut leases = self.leases.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if leases.len() >= LEASES_KEPT {
            leases.retain(|_, lease| lease.expires > now);
        }
        let reset_at = reset_at(grant, now);
        let lease = leases.entry(key).or_insert_with(|| Lease::empty(now));
        // Tokens a concurrent request leased meanwhile are kept, not lost.
        let kept = if lease.expires > now { lease.tokens } else { 0 };
        *lease = Lease {
            tokens: kept + grant.granted - 1,
            used: 1,
            size,
            expires: now + LEASE_LIFETIME,
            bucket_remaining: grant.remaining,
            reset_at,
            refused_until: None,
            renewing: false,
        };
    }

    /// Adds a renewal's `grant` (asked for `size`) to the key's lease, all of it (the request that
    /// renewed was admitted from the lease already). With nothing granted (an empty bucket, or the
    /// database out of reach) the lease stays marked as renewing, so no other request tries again:
    /// it runs out and is asked for as usual, which replaces it.
    fn renewed(&self, key: &(String, RateClass), size: u32, grant: Option<&domain::rate_limit::Grant>, now: Instant) {
        let Some(grant) = grant.filter(|grant| grant.granted > 0) else { return };
        let mut leases = self.leases.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let Some(lease) = leases.get_mut(key) else { return };
        lease.renewing = false;
        // Tokens the lease still holds stay with it, under the new lifetime.
        lease.tokens = if lease.expires > now { lease.tokens + grant.granted } else { grant.granted };
        lease.used = 0;
        lease.size = size;
        lease.expires = now + LEASE_LIFETIME;
        lease.bucket_remaining = grant.remaining;
        lease.reset_at = reset_at(grant, now);
    }
}

/// When the bucket of `grant`, taken at `now`, is full again.
fn reset_at(grant: &domain::rate_limit::Grant, now: Instant) -> Instant {
    now + Duration::from_millis(u64::try_from(grant.reset_ms).unwrap_or(0))
}

fn status(rate: Rate, remaining: u32, reset_at: Instant, now: Instant) -> RateStatus {
    RateStatus {
        per_minute: rate.per_minute,
        burst: rate.burst,
        remaining: remaining.min(rate.burst),
        reset_secs: reset_at.saturating_duration_since(now).as_secs_f64().ceil() as u64,
    }
}

impl Api<'_> {
    /// Counts one request of `class` against the caller's rate: where it stands, `None` when the
    /// class is not limited, or 429 with the seconds until a request can succeed.
    pub async fn admit(&self, caller: &Caller, class: RateClass) -> Result<Option<RateStatus>, RateRefusal> {
        let limits = self.service.config().rate_limits;
        let (own, default) = match class {
            RateClass::Submit => (caller.rates.submits_per_minute, limits.submits_per_minute),
            RateClass::Read => (caller.rates.reads_per_minute, limits.reads_per_minute),
        };
        let per_minute = own.unwrap_or(default);
        if per_minute == 0 {
            return Ok(None);
        }
        let rate = Rate::new(per_minute, limits.burst_secs);
        let limiter = &self.service.inner.rate_limiter;
        let key = (caller.key_id.clone(), class);
        let now = Instant::now();
        let refused = |retry_after_secs: u64| {
            let what = match class {
                RateClass::Submit => "spending requests",
                RateClass::Read => "requests",
            };
            let error = ServiceError::TooManyRequests {
                message: format!(
                    "rate limit reached: this key may make {per_minute} {what} a minute (bursts of {}); \
                     retry after {retry_after_secs} s",
                    rate.burst
                ),
                retry_after_secs,
            };
            let status = RateStatus { per_minute, burst: rate.burst, remaining: 0, reset_secs: retry_after_secs };
            RateRefusal { status: Some(status), error }
        };
        let (size, returned) = match limiter.take_leased(&key, rate, now) {
            FromLease::Admitted { status, renew: None } => return Ok(Some(status)),
            FromLease::Admitted { status, renew: Some(size) } => {
                // The request is admitted already: the renewal runs beside it rather than making it
                // wait for a write. A failed renewal costs nothing: the lease runs out and is asked
                // for as usual.
                let service = self.service.clone();
                let key_id = caller.key_id.clone();
                tokio::spawn(async move {
                    let grant = service.db(move |db| db.take_rate_tokens(&key_id, class, rate, size, 0)).await;
                    service.inner.rate_limiter.renewed(&key, size, grant.as_ref().ok(), Instant::now());
                });
                return Ok(Some(status));
            }
            FromLease::Refused(retry_after_secs) => return Err(refused(retry_after_secs)),
            FromLease::Ask { size, returned } => (size, returned),
        };
        let key_id = caller.key_id.clone();
        let grant = self
            .service
            .db(move |db| db.take_rate_tokens(&key_id, class, rate, size, returned))
            .await
            .map_err(|error| RateRefusal { status: None, error })?;
        if grant.granted == 0 {
            // Concurrent requests of this process may have leased tokens meanwhile.
            if let FromLease::Admitted { status, .. } = limiter.take_leased(&key, rate, Instant::now()) {
                return Ok(Some(status));
            }
            limiter.refuse(key, grant.retry_after_ms, now);
            return Err(refused((grant.retry_after_ms.max(1) as u64).div_ceil(1000)));
        }
        limiter.store(key, size, &grant, now);
        Ok(Some(status(rate, grant.remaining + grant.granted - 1, reset_at(&grant, now), now)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::rate_limit::Grant;

    fn grant(granted: u32) -> Grant {
        Grant { granted, full_at: 0, remaining: 1_000, retry_after_ms: 0, reset_ms: 0 }
    }

    /// Takes one token, expecting it admitted; returns the renewal it asks for, if any.
    fn admitted(limiter: &RateLimiter, key: &(String, RateClass), rate: Rate, now: Instant) -> Option<u32> {
        match limiter.take_leased(key, rate, now) {
            FromLease::Admitted { renew, .. } => renew,
            _ => panic!("the lease should have admitted the request"),
        }
    }

    #[test]
    fn a_busy_lease_is_renewed_once_by_one_request_before_it_runs_out() {
        let limiter = RateLimiter::default();
        let rate = Rate::new(60_000, 10); // a burst of 10,000: leases of up to 2,500
        let key = ("key".to_string(), RateClass::Read);
        let now = Instant::now();
        // A lease of 8 (the request that asked took one).
        limiter.store(key.clone(), 8, &grant(8), now);
        // Seven left; the next three requests leave six, five and four: half the lease.
        assert_eq!(admitted(&limiter, &key, rate, now), None);
        assert_eq!(admitted(&limiter, &key, rate, now), None);
        assert_eq!(admitted(&limiter, &key, rate, now), Some(16), "half the tokens gone: twice the lease");
        // While that request renews, the others spend what is left without asking.
        for _ in 0..4 {
            assert_eq!(admitted(&limiter, &key, rate, now), None);
        }
        assert!(matches!(limiter.take_leased(&key, rate, now), FromLease::Ask { .. }), "the lease is spent");
        limiter.renewed(&key, 16, Some(&grant(16)), now);
        for _ in 0..7 {
            assert_eq!(admitted(&limiter, &key, rate, now), None);
        }
        assert_eq!(admitted(&limiter, &key, rate, now), Some(32));
    }

    #[test]
    fn a_lease_half_way_through_its_life_is_renewed_for_what_it_used() {
        let limiter = RateLimiter::default();
        let rate = Rate::new(60_000, 10);
        let key = ("key".to_string(), RateClass::Read);
        let start = Instant::now();
        limiter.store(key.clone(), 100, &grant(100), start);
        assert_eq!(admitted(&limiter, &key, rate, start), None);
        let later = start + LEASE_LIFETIME / 2;
        // Three used in half a second: six asked for, the 97 left kept under a new lifetime.
        assert_eq!(admitted(&limiter, &key, rate, later), Some(6));
        limiter.renewed(&key, 6, Some(&grant(6)), later);
        // Past the first lease's end, its 97 tokens and the 6 granted live on.
        let past_first_lease = start + LEASE_LIFETIME * 6 / 5;
        assert_eq!(admitted(&limiter, &key, rate, past_first_lease), None);
        let leases = limiter.leases.lock().unwrap();
        assert_eq!(leases[&key].tokens, 102);
    }

    #[test]
    fn a_renewal_that_gets_nothing_leaves_the_lease_to_run_out() {
        let limiter = RateLimiter::default();
        let rate = Rate::new(60_000, 10);
        let key = ("key".to_string(), RateClass::Read);
        let now = Instant::now();
        limiter.store(key.clone(), 4, &grant(4), now);
        // Three left; the next request leaves two, half the lease, and renews it.
        assert_eq!(admitted(&limiter, &key, rate, now), Some(8));
        limiter.renewed(&key, 8, Some(&grant(0)), now);
        // Nothing granted: the two tokens left are spent without asking again, then the lease is
        // asked for, and the answer replaces it (renewals resume).
        for _ in 0..2 {
            assert_eq!(admitted(&limiter, &key, rate, now), None);
        }
        assert!(matches!(limiter.take_leased(&key, rate, now), FromLease::Ask { .. }));
        limiter.store(key.clone(), 8, &grant(8), now);
        assert_eq!(admitted(&limiter, &key, rate, now), None);
    }
}
