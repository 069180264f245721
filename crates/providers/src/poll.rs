//! How often a request at a provider is looked at: one policy for the jobs workers track across
//! restarts and for the engine steps a recipe runs inline.

use std::time::Duration;

/// When a request at a provider is looked at again: first after [`PollPolicy::first`], then every
/// `age / age_divisor` of the request's age, kept within [`PollPolicy::min`] and
/// [`PollPolicy::max`]. Short jobs are seen finishing quickly; long ones cost few requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PollPolicy {
    /// The first look after the request was submitted.
    pub first: Duration,
    /// The shortest wait between looks.
    pub min: Duration,
    /// The longest wait between looks.
    pub max: Duration,
    /// Looks are an `age_divisor`th of the request's age apart (within the bounds).
    pub age_divisor: u32,
}

impl PollPolicy {
    /// The policy of every request we make.
    pub const DEFAULT: PollPolicy = PollPolicy {
        first: Duration::from_millis(500),
        min: Duration::from_millis(500),
        max: Duration::from_secs(15),
        age_divisor: 8,
    };

    /// The wait before the next look at a request of this age.
    pub fn next_look(&self, age: Duration) -> Duration {
        (age / self.age_divisor.max(1)).clamp(self.min, self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_back_off_with_age_within_bounds() {
        let policy = PollPolicy::DEFAULT;
        assert_eq!(policy.next_look(Duration::ZERO), policy.min);
        assert_eq!(policy.next_look(Duration::from_secs(16)), Duration::from_secs(2));
        assert_eq!(policy.next_look(Duration::from_secs(3600)), policy.max);
    }
}
