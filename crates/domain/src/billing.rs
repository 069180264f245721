//! Billing decisions: holding a job's price at submit, settling it once when the job ends.
//!
//! A job's quoted price is held against the key's spend cap and, without a card on file, against
//! the account's free allowance, in the same transaction that creates the task. When the job
//! succeeds its cost (never above the hold) is captured and the rest released; when it fails the
//! whole hold is released. Checking and reserving in one step is what keeps concurrent submits from
//! overshooting a cap.

use crate::catalog::PriceRule;
use crate::money::Usd;
use crate::validation::Produced;
use serde::{Deserialize, Serialize};

/// What a key has spent and has on hold, and its optional cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct KeyLimits {
    /// Cumulative spend cap, if any.
    pub cap: Option<Usd>,
    /// Billed spend so far.
    pub spent: Usd,
    /// Prices of jobs accepted but not yet settled.
    pub held: Usd,
}

impl KeyLimits {
    /// What the key may still commit under its cap, if it has one.
    pub fn headroom(&self) -> Option<Usd> {
        self.cap.map(|cap| cap.saturating_sub(self.spent + self.held))
    }
}

/// The account's free allowance and its use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct AccountLimits {
    /// The free allowance granted to the account.
    pub free_allowance: Usd,
    /// Free allowance already captured by succeeded jobs.
    pub free_used: Usd,
    /// Free allowance held by unsettled jobs.
    pub free_held: Usd,
    /// Whether a card is on file, so that use beyond the allowance is invoiced.
    pub card_on_file: bool,
}

impl AccountLimits {
    /// Free allowance neither used nor held.
    pub fn free_remaining(&self) -> Usd {
        self.free_allowance.saturating_sub(self.free_used + self.free_held)
    }
}

/// A hold placed on a job's price at submit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Hold {
    /// The whole held amount: the job's quoted price.
    pub total: Usd,
    /// The part drawn on the free allowance; the rest goes to the invoice on capture.
    pub from_allowance: Usd,
}

impl Hold {
    /// The part that will go on the account's invoice if captured.
    pub fn on_invoice(&self) -> Usd {
        self.total.saturating_sub(self.from_allowance)
    }
}

/// Why a job cannot be accepted; each maps to HTTP 402.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BillingRefusal {
    /// The key's spend plus holds plus this price would pass its cap.
    #[error(
        "spend cap reached: this job costs {price} USD but the key has {headroom} USD left under its {cap} USD cap \
         ({spent} spent, {held} held by running jobs); raise the key's cap or wait for running jobs to finish"
    )]
    SpendCapReached {
        /// The key's cap.
        cap: Usd,
        /// Billed so far.
        spent: Usd,
        /// On hold.
        held: Usd,
        /// Left under the cap.
        headroom: Usd,
        /// The refused job's price.
        price: Usd,
    },
    /// The free allowance does not cover the job and no card is on file.
    #[error(
        "free allowance used up; add a card: this job costs {price} USD and {remaining} USD of the free allowance is left"
    )]
    AllowanceUsedUp {
        /// Free allowance left.
        remaining: Usd,
        /// The refused job's price.
        price: Usd,
    },
}

/// Decides whether a job priced `price` may be accepted, and how its hold is split.
pub fn place_hold(key: &KeyLimits, account: &AccountLimits, price: Usd) -> Result<Hold, BillingRefusal> {
    if let Some(cap) = key.cap {
        let committed = key.spent + key.held;
        if committed + price > cap {
            return Err(BillingRefusal::SpendCapReached {
                cap,
                spent: key.spent,
                held: key.held,
                headroom: key.headroom().unwrap_or(Usd::ZERO),
                price,
            });
        }
    }
    let remaining = account.free_remaining();
    if remaining >= price {
        return Ok(Hold { total: price, from_allowance: price });
    }
    if !account.card_on_file {
        return Err(BillingRefusal::AllowanceUsedUp { remaining, price });
    }
    Ok(Hold { total: price, from_allowance: remaining })
}

/// How a hold is settled when its job succeeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Capture {
    /// The billed cost: what the job produced, never above the hold.
    pub cost: Usd,
    /// Part of the cost drawn on the free allowance.
    pub from_allowance: Usd,
    /// Part of the cost added to the invoice.
    pub to_invoice: Usd,
    /// Part of the hold given back.
    pub released: Usd,
    /// Part of the given-back hold that returns to the free allowance.
    pub released_from_allowance: Usd,
}

/// Settles `hold` for a job that succeeded at `cost`; the allowance is drawn first.
pub fn capture(hold: &Hold, cost: Usd) -> Capture {
    let cost = within_quote(cost, hold.total);
    let from_allowance = cost.min(hold.from_allowance);
    Capture {
        cost,
        from_allowance,
        to_invoice: cost - from_allowance,
        released: hold.total - cost,
        released_from_allowance: hold.from_allowance - from_allowance,
    }
}

/// What a succeeded job is billed, whatever ran it (an engine here, a provider, a recipe): its
/// engine's price rule applied to what it produced, never above its `quote`. `metered` is `None`
/// for work priced per call (a recipe) and for an engine no longer in the catalog: the quote is
/// the cost.
pub fn job_cost(quote: Usd, metered: Option<(&PriceRule, &Produced)>) -> Usd {
    metered.map_or(quote, |(rule, produced)| within_quote(rule.amount(produced), quote))
}

/// A recipe's quote: recipes are priced per call, at their catalog rule's unit price.
pub fn recipe_quote(rule: &PriceRule) -> Usd {
    rule.unit_price()
}

/// The one place "never bill above the quote" is written.
fn within_quote(amount: Usd, quote: Usd) -> Usd {
    amount.min(quote)
}

/// Longest compute time a provider can plausibly report for one job (a day), seconds.
pub const MAX_PROVIDER_SECONDS: f64 = 86_400.0;

/// What a job cost us at a provider, for margin reports only (never billed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProviderUsage {
    /// Compute time the provider reported, milliseconds.
    pub millis: Option<i64>,
    /// That time at the route's `cost_per_second`, when the route has one.
    pub cost: Option<Usd>,
}

/// The provider's reported compute time, kept only when plausible (finite, within
/// [`MAX_PROVIDER_SECONDS`]: it is a measurement the provider sends), and its cost at
/// `cost_per_second`.
pub fn provider_usage(reported_seconds: Option<f64>, cost_per_second: Option<Usd>) -> ProviderUsage {
    let seconds = reported_seconds.filter(|s| s.is_finite() && (0.0..=MAX_PROVIDER_SECONDS).contains(s));
    let millis = seconds.map(|s| (s * 1000.0).round() as i64);
    let cost = cost_per_second.zip(seconds).and_then(|(rate, seconds)| {
        let seconds = rust_decimal::Decimal::try_from(seconds).ok()?;
        rate.as_decimal().checked_mul(seconds).map(Usd::new)
    });
    ProviderUsage { millis, cost }
}

/// What we kept of `billed` after paying `provider_cost` (negative when the provider cost more).
pub fn margin(billed: Usd, provider_cost: Usd) -> Usd {
    billed - provider_cost
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn usd(units: i64) -> Usd {
        Usd::from_units(units)
    }

    #[test]
    fn cap_refuses_exactly_past_the_cap() {
        let key = KeyLimits { cap: Some(usd(1000)), spent: usd(400), held: usd(200) };
        let account = AccountLimits { free_allowance: usd(50_000), ..Default::default() };
        assert!(place_hold(&key, &account, usd(400)).is_ok());
        let refusal = place_hold(&key, &account, usd(401)).unwrap_err();
        assert!(refusal.to_string().starts_with("spend cap reached"));
    }

    #[test]
    fn allowance_needs_card_once_used_up() {
        let key = KeyLimits::default();
        let mut account = AccountLimits { free_allowance: usd(50_000), free_used: usd(49_900), ..Default::default() };
        let refusal = place_hold(&key, &account, usd(400)).unwrap_err();
        assert!(refusal.to_string().starts_with("free allowance used up; add a card"));
        account.card_on_file = true;
        let hold = place_hold(&key, &account, usd(400)).unwrap();
        assert_eq!((hold.from_allowance, hold.on_invoice()), (usd(100), usd(300)));
    }

    #[test]
    fn capture_draws_allowance_first_and_never_exceeds_hold() {
        let hold = Hold { total: usd(400), from_allowance: usd(100) };
        let c = capture(&hold, usd(250));
        assert_eq!((c.cost, c.from_allowance, c.to_invoice, c.released), (usd(250), usd(100), usd(150), usd(150)));
        assert_eq!(c.released_from_allowance, usd(0));
        assert_eq!(capture(&hold, usd(900)).cost, usd(400));
        let small = capture(&hold, usd(30));
        assert_eq!((small.from_allowance, small.released_from_allowance), (usd(30), usd(70)));
    }

    #[test]
    fn a_job_costs_what_it_produced_never_above_its_quote() {
        let per_second = PriceRule::Second { usd: usd(500) };
        let five_seconds = Produced { millis: 5_000, ..Produced::default() };
        assert_eq!(job_cost(usd(10_000), Some((&per_second, &five_seconds))), usd(2_500));
        assert_eq!(job_cost(usd(2_000), Some((&per_second, &five_seconds))), usd(2_000));
        assert_eq!(job_cost(usd(1_234), None), usd(1_234));
        assert_eq!(recipe_quote(&PriceRule::Call { usd: usd(700) }), usd(700));
    }

    #[test]
    fn provider_usage_keeps_plausible_reports_only() {
        let rate = Some(usd(10)); // 0.001 USD a second
        assert_eq!(provider_usage(Some(12.5), rate), ProviderUsage { millis: Some(12_500), cost: Some(usd(125)) });
        assert_eq!(provider_usage(Some(12.5), None), ProviderUsage { millis: Some(12_500), cost: None });
        for implausible in [f64::NAN, f64::INFINITY, -1.0, MAX_PROVIDER_SECONDS + 1.0] {
            assert_eq!(provider_usage(Some(implausible), rate), ProviderUsage::default(), "{implausible}");
        }
        assert_eq!(margin(usd(300), usd(450)), usd(-150));
    }

    #[derive(Clone, Debug)]
    enum Step {
        Submit(i64),
        Succeed(usize, i64),
        Fail(usize),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0i64..3_000).prop_map(Step::Submit),
            (0usize..64, 0i64..3_000).prop_map(|(i, c)| Step::Succeed(i, c)),
            (0usize..64).prop_map(Step::Fail),
        ]
    }

    proptest! {
        /// For any sequence of submits, successes and failures: captured + held never exceeds the
        /// cap or (without a card) the allowance, and failures cost nothing.
        #[test]
        fn limits_hold_for_any_sequence(
            cap in proptest::option::of(0i64..20_000),
            allowance in 0i64..20_000,
            card in any::<bool>(),
            steps in proptest::collection::vec(step(), 1..80),
        ) {
            let mut key = KeyLimits { cap: cap.map(usd), ..Default::default() };
            let mut account = AccountLimits { free_allowance: usd(allowance), card_on_file: card, ..Default::default() };
            let mut open: Vec<Hold> = Vec::new();
            let mut invoiced = Usd::ZERO;
            for step in steps {
                match step {
                    Step::Submit(price) => {
                        if let Ok(hold) = place_hold(&key, &account, usd(price)) {
                            key.held = key.held + hold.total;
                            account.free_held = account.free_held + hold.from_allowance;
                            open.push(hold);
                        }
                    }
                    Step::Succeed(i, cost) if !open.is_empty() => {
                        let hold = open.remove(i % open.len());
                        let c = capture(&hold, usd(cost));
                        prop_assert!(c.cost <= hold.total);
                        key.held = key.held - hold.total;
                        key.spent = key.spent + c.cost;
                        account.free_held = account.free_held - hold.from_allowance;
                        account.free_used = account.free_used + c.from_allowance;
                        invoiced = invoiced + c.to_invoice;
                    }
                    Step::Fail(i) if !open.is_empty() => {
                        let before = key.spent;
                        let hold = open.remove(i % open.len());
                        key.held = key.held - hold.total;
                        account.free_held = account.free_held - hold.from_allowance;
                        prop_assert_eq!(key.spent, before);
                    }
                    _ => {}
                }
                if let Some(cap) = key.cap {
                    prop_assert!(key.spent + key.held <= cap);
                }
                prop_assert!(account.free_used + account.free_held <= account.free_allowance);
                if !card {
                    prop_assert!(invoiced.is_zero());
                }
                prop_assert_eq!(key.spent, account.free_used + invoiced);
            }
        }
    }
}
