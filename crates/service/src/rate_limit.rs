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
//! the write) while the others go on spending this one. Requests that find the lease spent while
//! the renewal is on its way wait for it rather than asking the database themselves. Otherwise
//! every request in flight when a lease ran out would ask the database at once, and queue on the
//! bucket's row lock.

use crate::{Api, Caller, ServiceError};
use domain::rate_limit::{Rate, RateClass};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::watch;

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
    /// The bucket as the latest of its grants left it.
    bucket: BucketView,
    /// After a refusal, requests until then are refused here, without asking the database: a
    /// client that keeps knocking costs a lookup in memory.
    refused_until: Option<Instant>,
    /// A request is taking the next lease ahead of this one running out.
    renewing: bool,
    /// Closed when that renewal has landed (its sender is dropped), for requests that found the
    /// lease spent meanwhile.
    renewal: Option<watch::Receiver<()>>,
}

impl Lease {
    /// No tokens, expired: the next request asks the bucket.
    fn empty(now: Instant) -> Lease {
        Lease {
            tokens: 0,
            used: 0,
            size: 1,
            expires: now,
            bucket: BucketView { remaining: 0, reset_at: now, full_at: i64::MIN },
            refused_until: None,
            renewing: false,
            renewal: None,
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
    /// Admitted; with `renew`, this request is to take the next lease, and drop the sender when
    /// it has landed.
    Admitted { status: RateStatus, renew: Option<Renewal> },
    /// The lease is spent and its renewal on its way: wait for it (until the sender is dropped).
    AwaitRenewal(watch::Receiver<()>),
    /// Still refused: seconds until a request can succeed.
    Refused(u64),
    /// Ask the bucket for `size` tokens, giving back `returned`.
    Ask { size: u32, returned: u32 },
}

/// A lease to take beside the request that was admitted.
struct Renewal {
    /// Tokens to ask for.
    size: u32,
    /// Dropped once the renewal has landed, which wakes the requests waiting for it.
    landed: watch::Sender<()>,
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
            let status = status(rate, lease.tokens + lease.bucket.remaining, lease.bucket.reset_at, now);
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
            let (landed, waiting) = watch::channel(());
            lease.renewal = Some(waiting);
            return FromLease::Admitted { status, renew: Some(Renewal { size, landed }) };
        }
        if let Some(renewal) = &lease.renewal {
            // A renewal whose task ended without landing (it cannot, short of the runtime
            // stopping) is not waited for.
            if renewal.has_changed().is_ok() {
                return FromLease::AwaitRenewal(renewal.clone());
            }
            lease.renewal = None;
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

    /// Keeps the tokens of `grant` (asked for `size`), but the one the current request takes, and
    /// says where the key stands: the lease (with tokens a renewal added meanwhile) and the bucket.
    fn store(
        &self,
        key: (String, RateClass),
        rate: Rate,
        size: u32,
        grant: &domain::rate_limit::Grant,
        now: Instant,
    ) -> RateStatus {
        let mut leases = self.leases.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if leases.len() >= LEASES_KEPT {
            leases.retain(|_, lease| lease.expires > now);
        }
        let lease = leases.entry(key).or_insert_with(|| Lease::empty(now));
        // Tokens a concurrent request leased meanwhile are kept, not lost.
        let (kept, bucket) = if lease.expires > now {
            (lease.tokens, lease.bucket.latest(BucketView::after(grant, now)))
        } else {
            (0, BucketView::after(grant, now))
        };
        *lease = Lease {
            tokens: kept + grant.granted - 1,
            used: 1,
            size,
            expires: now + LEASE_LIFETIME,
            bucket,
            refused_until: None,
            renewing: false,
            renewal: None,
        };
        status(rate, lease.tokens + bucket.remaining, bucket.reset_at, now)
    }

    /// Adds a renewal's `grant` (asked for `size`) to the key's lease, all of it (the request that
    /// renewed was admitted from the lease already). With nothing granted (an empty bucket, or the
    /// database out of reach) the lease stays marked as renewing, so no other request tries again:
    /// it runs out and is asked for as usual, which replaces it. The caller then drops the
    /// renewal's sender, which wakes the requests waiting for it.
    fn renewed(&self, key: &(String, RateClass), size: u32, grant: Option<&domain::rate_limit::Grant>, now: Instant) {
        let mut leases = self.leases.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let Some(lease) = leases.get_mut(key) else { return };
        lease.renewal = None;
        let Some(grant) = grant.filter(|grant| grant.granted > 0) else { return };
        lease.renewing = false;
        // Tokens the lease still holds stay with it, under the new lifetime.
        lease.tokens = if lease.expires > now { lease.tokens + grant.granted } else { grant.granted };
        lease.used = 0;
        lease.size = size;
        lease.expires = now + LEASE_LIFETIME;
        lease.bucket = lease.bucket.latest(BucketView::after(grant, now));
    }
}

/// The bucket as one grant left it.
#[derive(Clone, Copy)]
struct BucketView {
    /// Tokens it held.
    remaining: u32,
    /// When it is full again.
    reset_at: Instant,
    /// The database's full-again time, which only grows as tokens are taken: it orders the grants
    /// of a renewal and an ask that ran side by side, whose answers may arrive in either order.
    full_at: i64,
}

impl BucketView {
    /// The bucket after `grant`, taken at `now`.
    fn after(grant: &domain::rate_limit::Grant, now: Instant) -> BucketView {
        let reset_at = now + Duration::from_millis(u64::try_from(grant.reset_ms).unwrap_or(0));
        BucketView { remaining: grant.remaining, reset_at, full_at: grant.full_at }
    }

    /// Whichever of the two views the database wrote last.
    fn latest(self, other: BucketView) -> BucketView {
        if other.full_at >= self.full_at {
            other
        } else {
            self
        }
    }
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
        let (size, returned) = loop {
            match limiter.take_leased(&key, rate, Instant::now()) {
                FromLease::Admitted { status, renew: None } => return Ok(Some(status)),
                FromLease::Admitted { status, renew: Some(Renewal { size, landed }) } => {
                    // The request is admitted already: the renewal runs beside it rather than
                    // making it wait for a write. A failed renewal costs nothing: the lease runs
                    // out and is asked for as usual.
                    let service = self.service.clone();
                    let key_id = caller.key_id.clone();
                    tokio::spawn(async move {
                        let grant = service.db(move |db| db.take_rate_tokens(&key_id, class, rate, size, 0)).await;
                        service.inner.rate_limiter.renewed(&key, size, grant.as_ref().ok(), Instant::now());
                        drop(landed);
                    });
                    return Ok(Some(status));
                }
                FromLease::AwaitRenewal(mut renewal) => {
                    // Ends when the sender is dropped, once the renewal has landed.
                    let _ = renewal.changed().await;
                }
                FromLease::Refused(retry_after_secs) => return Err(refused(retry_after_secs)),
                FromLease::Ask { size, returned } => break (size, returned),
            }
        };
        let now = Instant::now();
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
        Ok(Some(limiter.store(key, rate, size, &grant, now)))
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
    fn admitted(limiter: &RateLimiter, key: &(String, RateClass), rate: Rate, now: Instant) -> Option<Renewal> {
        match limiter.take_leased(key, rate, now) {
            FromLease::Admitted { renew, .. } => renew,
            _ => panic!("the lease should have admitted the request"),
        }
    }

    /// The remaining count a request admitted from the lease is told.
    fn remaining(limiter: &RateLimiter, key: &(String, RateClass), rate: Rate, now: Instant) -> u32 {
        match limiter.take_leased(key, rate, now) {
            FromLease::Admitted { status, .. } => status.remaining,
            _ => panic!("the lease should have admitted the request"),
        }
    }

    #[test]
    fn a_busy_lease_is_renewed_once_by_one_request_and_the_others_wait_for_it_when_it_runs_out() {
        let limiter = RateLimiter::default();
        let rate = Rate::new(60_000, 10); // a burst of 10,000: leases of up to 2,500
        let key = ("key".to_string(), RateClass::Read);
        let now = Instant::now();
        // A lease of 8 (the request that asked took one).
        limiter.store(key.clone(), rate, 8, &grant(8), now);
        // Seven left; the next three requests leave six, five and four: half the lease.
        assert!(admitted(&limiter, &key, rate, now).is_none());
        assert!(admitted(&limiter, &key, rate, now).is_none());
        let renewal = admitted(&limiter, &key, rate, now).expect("half the tokens gone: a renewal");
        assert_eq!(renewal.size, 16, "twice the lease");
        // While that request renews, the others spend what is left without asking, then wait.
        for _ in 0..4 {
            assert!(admitted(&limiter, &key, rate, now).is_none());
        }
        let FromLease::AwaitRenewal(waiting) = limiter.take_leased(&key, rate, now) else {
            panic!("a spent lease whose renewal is on its way is waited for")
        };
        assert!(matches!(waiting.has_changed(), Ok(false)), "not before the renewal lands");
        limiter.renewed(&key, 16, Some(&grant(16)), now);
        drop(renewal.landed);
        assert!(waiting.has_changed().is_err(), "the waiting request wakes");
        // Sixteen more: half of them spent, the next renewal asks for twice as many.
        for _ in 0..7 {
            assert!(admitted(&limiter, &key, rate, now).is_none());
        }
        assert_eq!(admitted(&limiter, &key, rate, now).map(|renewal| renewal.size), Some(32));
    }

    #[test]
    fn a_lease_half_way_through_its_life_is_renewed_for_what_it_used() {
        let limiter = RateLimiter::default();
        let rate = Rate::new(60_000, 10);
        let key = ("key".to_string(), RateClass::Read);
        let start = Instant::now();
        limiter.store(key.clone(), rate, 100, &grant(100), start);
        assert!(admitted(&limiter, &key, rate, start).is_none());
        let later = start + LEASE_LIFETIME / 2;
        // Three used in half a second: six asked for, the 97 left kept under a new lifetime.
        assert_eq!(admitted(&limiter, &key, rate, later).map(|renewal| renewal.size), Some(6));
        limiter.renewed(&key, 6, Some(&grant(6)), later);
        // Past the first lease's end, its 97 tokens and the 6 granted live on.
        let past_first_lease = start + LEASE_LIFETIME * 6 / 5;
        assert!(admitted(&limiter, &key, rate, past_first_lease).is_none());
        let leases = limiter.leases.lock().unwrap();
        assert_eq!(leases[&key].tokens, 102);
    }

    #[test]
    fn a_renewal_that_gets_nothing_leaves_the_lease_to_run_out() {
        let limiter = RateLimiter::default();
        let rate = Rate::new(60_000, 10);
        let key = ("key".to_string(), RateClass::Read);
        let now = Instant::now();
        limiter.store(key.clone(), rate, 4, &grant(4), now);
        // Three left; the next request leaves two, half the lease, and renews it.
        let renewal = admitted(&limiter, &key, rate, now).expect("a renewal");
        assert_eq!(renewal.size, 8);
        limiter.renewed(&key, 8, Some(&grant(0)), now);
        drop(renewal.landed);
        // Nothing granted: the two tokens left are spent without asking again, then the lease is
        // asked for, and the answer replaces it (renewals resume).
        for _ in 0..2 {
            assert!(admitted(&limiter, &key, rate, now).is_none());
        }
        assert!(matches!(limiter.take_leased(&key, rate, now), FromLease::Ask { .. }));
        limiter.store(key.clone(), rate, 8, &grant(8), now);
        assert!(admitted(&limiter, &key, rate, now).is_none());
    }

    #[test]
    fn a_renewal_that_never_lands_is_not_waited_for() {
        let limiter = RateLimiter::default();
        let rate = Rate::new(60_000, 10);
        let key = ("key".to_string(), RateClass::Read);
        let now = Instant::now();
        limiter.store(key.clone(), rate, 4, &grant(4), now);
        drop(admitted(&limiter, &key, rate, now).expect("a renewal"));
        for _ in 0..2 {
            assert!(admitted(&limiter, &key, rate, now).is_none());
        }
        assert!(matches!(limiter.take_leased(&key, rate, now), FromLease::Ask { .. }));
    }

    #[test]
    fn leases_asked_for_side_by_side_count_the_bucket_as_the_database_last_wrote_it() {
        let rate = Rate::new(120, 10); // a burst of 20
        let key = ("key".to_string(), RateClass::Read);
        let now = Instant::now();
        let leased =
            |granted, remaining, full_at| Grant { granted, full_at, remaining, retry_after_ms: 0, reset_ms: 0 };
        // The database's answers to two requests in the order it wrote them.
        let (first, second) = (leased(2, 15, 2), leased(2, 13, 3));
        for first_lands_first in [true, false] {
            let limiter = RateLimiter::default();
            limiter.store(key.clone(), rate, 1, &leased(1, 17, 1), now);
            // The lease of one is spent: two requests ask.
            for _ in 0..2 {
                assert!(matches!(limiter.take_leased(&key, rate, now), FromLease::Ask { size: 2, .. }));
            }
            let order = if first_lands_first { [&first, &second] } else { [&second, &first] };
            for grant in order {
                limiter.store(key.clone(), rate, 2, grant, now);
            }
            // Both grants' tokens but the two taken, and the bucket after the second write.
            assert_eq!(remaining(&limiter, &key, rate, now), 1 + 13, "first lands first: {first_lands_first}");
        }
    }
}
