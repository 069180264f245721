//! How a request at a provider is followed: when it is looked at, and what each look's answer
//! means. One policy, and one reading of answers, for the jobs workers track across restarts and
//! for the engine steps a recipe runs inline; only where the wait is kept differs (a timer in the
//! database, or the recipe's own task).

use crate::{Completion, Progress, ProviderError, ProviderName};
use std::time::Duration;

/// What follows one look at a request.
#[derive(Clone, Debug, PartialEq)]
pub enum Next {
    /// Look again after this wait; `started` when the provider has begun the work.
    LookAgain {
        /// The wait.
        after: Duration,
        /// Whether the request is running (rather than queued).
        started: bool,
    },
    /// The request finished with media.
    Succeeded(Completion),
    /// The request failed for good; the message says why, naming the provider.
    Failed(String),
    /// The request is still unfinished at its deadline: cancel it and fail the job.
    PastDeadline,
}

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

    /// What a look at a request of `provider`, `age` old with `deadline` to finish, means: a
    /// finished request ends; an unfinished one is looked at again, or past its deadline given up;
    /// an outage is retried until the deadline; a refusal or a malformed answer fails at once.
    pub fn after_look(
        &self,
        provider: ProviderName,
        look: Result<Progress, ProviderError>,
        age: Duration,
        deadline: Duration,
    ) -> Next {
        let past_deadline = age > deadline;
        match look {
            Ok(Progress::Succeeded(completion)) => Next::Succeeded(completion),
            Ok(Progress::Failed(reason)) => Next::Failed(format!("{provider} failed: {reason}")),
            Ok(Progress::Canceled) => Next::Failed(format!("{provider} cancelled the request")),
            Ok(Progress::Queued { .. } | Progress::Running) if past_deadline => Next::PastDeadline,
            Ok(Progress::Queued { .. }) => Next::LookAgain { after: self.next_look(age), started: false },
            Ok(Progress::Running) => Next::LookAgain { after: self.next_look(age), started: true },
            Err(e) if e.is_retryable() && !past_deadline => {
                tracing::warn!(%provider, error = %e, "the provider is unavailable; looking again later");
                Next::LookAgain { after: self.next_look(age), started: false }
            }
            Err(e) if e.is_retryable() => {
                Next::Failed(format!("{provider} did not answer for {} s: {e}", deadline.as_secs()))
            }
            Err(e) => Next::Failed(e.to_string()),
        }
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

    #[test]
    fn each_answer_means_one_thing_before_and_after_the_deadline() {
        let policy = PollPolicy::DEFAULT;
        let (young, old, deadline) = (Duration::from_secs(16), Duration::from_secs(301), Duration::from_secs(300));
        let fal = ProviderName::Fal;
        let running = || Ok(Progress::Running);
        assert_eq!(
            policy.after_look(fal, running(), young, deadline),
            Next::LookAgain { after: Duration::from_secs(2), started: true }
        );
        assert_eq!(policy.after_look(fal, running(), old, deadline), Next::PastDeadline);
        let queued = Ok(Progress::Queued { position: Some(3) });
        assert!(matches!(policy.after_look(fal, queued, young, deadline), Next::LookAgain { started: false, .. }));
        let outage = || Err(ProviderError::Unavailable { provider: fal, reason: "connection refused".into() });
        assert!(matches!(policy.after_look(fal, outage(), young, deadline), Next::LookAgain { .. }));
        let Next::Failed(message) = policy.after_look(fal, outage(), old, deadline) else { panic!("not failed") };
        assert!(message.starts_with("fal did not answer for 300 s"), "{message}");
        let failed = Ok(Progress::Failed("nsfw".into()));
        assert_eq!(policy.after_look(fal, failed, young, deadline), Next::Failed("fal failed: nsfw".into()));
    }
}
