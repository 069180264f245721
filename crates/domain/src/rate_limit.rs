//! Request rate limits as token buckets, kept in the generic cell rate algorithm's form (GCRA):
//! one number per bucket, the time at which it would be full again (its "theoretical arrival
//! time"). A bucket of `burst` tokens refills at `per_minute` tokens a minute; a request takes one.
//! Pure: the caller keeps the number (in the database, shared by every api-server) and the clock.

/// The two kinds of requests, limited separately: spending ones are costly to serve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RateClass {
    /// Requests that start billed work (`POST /v1/generate`, the recipes, the spending tools).
    Submit,
    /// Every other authenticated request (polls, usage, models, the connector).
    Read,
}

impl RateClass {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            RateClass::Submit => "submit",
            RateClass::Read => "read",
        }
    }
}

/// A bucket's size and refill rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    /// Tokens added per minute (at least 1).
    pub per_minute: u32,
    /// Most tokens held at once: the largest burst (at least 1).
    pub burst: u32,
}

impl Rate {
    /// A rate of `per_minute` whose bucket holds `burst_secs` seconds of it (at least one token).
    pub fn new(per_minute: u32, burst_secs: u32) -> Rate {
        let per_minute = per_minute.max(1);
        let burst = (u64::from(per_minute) * u64::from(burst_secs) / 60).clamp(1, u64::from(u32::MAX)) as u32;
        Rate { per_minute, burst }
    }

    /// Milliseconds between two tokens.
    fn interval_ms(self) -> i64 {
        (60_000 / i64::from(self.per_minute)).max(1)
    }
}

/// What a bucket gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    /// Tokens given (at most those asked for; 0 when the bucket is empty).
    pub granted: u32,
    /// The bucket's new full-again time, to store.
    pub full_at: i64,
    /// Tokens left in the bucket after this grant.
    pub remaining: u32,
    /// Milliseconds until the next token, when none was given; otherwise 0.
    pub retry_after_ms: i64,
    /// Milliseconds until the bucket is full again.
    pub reset_ms: i64,
}

/// Takes up to `wanted` tokens at time `now` from the bucket whose full-again time is `full_at`,
/// after putting back `returned` tokens taken earlier and not used (never more than were taken:
/// the bucket cannot pass full).
pub fn take(full_at: i64, now: i64, rate: Rate, wanted: u32, returned: u32) -> Grant {
    let interval = rate.interval_ms();
    let capacity = interval.saturating_mul(i64::from(rate.burst));
    // Time the bucket owes: tokens missing times the interval. Never negative: a full bucket.
    let owed = full_at.saturating_sub(interval.saturating_mul(i64::from(returned))).saturating_sub(now).max(0);
    let available = u32::try_from((capacity - owed.min(capacity)) / interval).unwrap_or(u32::MAX);
    let granted = wanted.min(available);
    let owed = owed + interval * i64::from(granted);
    let retry_after_ms = if granted == 0 && wanted > 0 { owed + interval - capacity } else { 0 };
    Grant {
        granted,
        full_at: now + owed,
        remaining: available - granted,
        retry_after_ms: retry_after_ms.max(0),
        reset_ms: owed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATE: Rate = Rate { per_minute: 60, burst: 10 };

    #[test]
    fn a_full_bucket_gives_its_burst_then_one_token_per_interval() {
        let mut full_at = 0;
        let now = 1_000_000;
        let first = take(full_at, now, RATE, 25, 0);
        assert_eq!((first.granted, first.remaining), (10, 0));
        full_at = first.full_at;
        assert_eq!(full_at, now + 10_000, "ten tokens owed, one a second");
        let empty = take(full_at, now, RATE, 1, 0);
        assert_eq!((empty.granted, empty.retry_after_ms), (0, 1_000));
        let later = take(full_at, now + 1_000, RATE, 5, 0);
        assert_eq!(later.granted, 1, "one second refills one token");
        let much_later = take(later.full_at, now + 3_600_000, RATE, 100, 0);
        assert_eq!(much_later.granted, 10, "the bucket never holds more than its burst");
    }

    #[test]
    fn returned_tokens_go_back_but_never_past_full() {
        let now = 5_000_000;
        let lease = take(0, now, RATE, 8, 0);
        assert_eq!(lease.remaining, 2);
        // Six of the eight were used; two come back with the next request.
        let next = take(lease.full_at, now, RATE, 10, 2);
        assert_eq!(next.granted, 4);
        let overfull = take(0, now, RATE, 10, 50);
        assert_eq!(overfull.granted, 10);
    }

    #[test]
    fn over_any_window_no_more_than_burst_plus_refill_is_granted() {
        // A client asking every 7 ms for 10 minutes, in leases of up to 4 tokens.
        let rate = Rate::new(600, 10);
        let (mut full_at, mut given) = (0, 0u64);
        let start = 10_000_000;
        let mut now = start;
        while now < start + 600_000 {
            let grant = take(full_at, now, rate, 4, 0);
            full_at = grant.full_at;
            given += u64::from(grant.granted);
            now += 7;
        }
        let ceiling = u64::from(rate.burst) + 600 * 10;
        assert!(given <= ceiling && given >= ceiling - 10, "{given} of {ceiling}");
    }

    #[test]
    fn rates_hold_at_least_one_token() {
        assert_eq!(Rate::new(600, 10), Rate { per_minute: 600, burst: 100 });
        assert_eq!(Rate::new(3, 10), Rate { per_minute: 3, burst: 1 });
        assert_eq!(Rate::new(0, 0), Rate { per_minute: 1, burst: 1 });
    }
}
