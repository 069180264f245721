//! Exact USD amounts.

use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::{Add, Sub};
use std::str::FromStr;

/// Number of decimal places every amount carries, on the wire and in storage.
pub const USD_SCALE: u32 = 4;

/// An exact amount of US dollars with four decimal places.
///
/// Amounts are kept as [`Decimal`]; storage uses whole ten-thousandths of a dollar ([`Usd::units`]) so
/// that sums in SQL stay exact on every backend. On the wire an amount is a decimal string such as
/// `"0.0400"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Usd(Decimal);

impl Usd {
    /// Zero dollars.
    pub const ZERO: Usd = Usd(Decimal::from_parts(0, 0, 0, false, USD_SCALE));

    /// Rounds `value` to four decimals, half away from zero (how published prices are rounded).
    pub fn new(value: Decimal) -> Self {
        let mut rounded = value.round_dp_with_strategy(USD_SCALE, RoundingStrategy::MidpointAwayFromZero);
        rounded.rescale(USD_SCALE);
        Usd(rounded)
    }

    /// Builds an amount from whole ten-thousandths of a dollar, as stored in the database.
    pub fn from_units(units: i64) -> Self {
        Usd(Decimal::new(units, USD_SCALE))
    }

    /// The amount in whole ten-thousandths of a dollar.
    pub fn units(self) -> i64 {
        let mut value = self.0;
        value.rescale(USD_SCALE);
        // A Usd is always built at scale 4, so the mantissa is the unit count. Amounts beyond
        // i64 (about 9e14 USD) cannot be constructed from storage and are clamped defensively.
        i64::try_from(value.mantissa()).unwrap_or(i64::MAX)
    }

    /// The amount as a [`Decimal`] at scale 4.
    pub fn as_decimal(self) -> Decimal {
        self.0
    }

    /// The smaller of two amounts.
    pub fn min(self, other: Usd) -> Usd {
        if self <= other {
            self
        } else {
            other
        }
    }

    /// `self - other`, or zero when that would be negative.
    pub fn saturating_sub(self, other: Usd) -> Usd {
        if self > other {
            Usd(self.0 - other.0)
        } else {
            Usd::ZERO
        }
    }

    /// Whether the amount is zero.
    pub fn is_zero(self) -> bool {
        self.0.is_zero()
    }
}

impl Add for Usd {
    type Output = Usd;
    fn add(self, rhs: Usd) -> Usd {
        Usd::new(self.0 + rhs.0)
    }
}

impl Sub for Usd {
    type Output = Usd;
    fn sub(self, rhs: Usd) -> Usd {
        Usd::new(self.0 - rhs.0)
    }
}

impl std::iter::Sum for Usd {
    fn sum<I: Iterator<Item = Usd>>(iter: I) -> Usd {
        iter.fold(Usd::ZERO, |acc, x| acc + x)
    }
}

impl fmt::Display for Usd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Error for a string that is not a non-negative decimal dollar amount.
#[derive(Debug, thiserror::Error)]
#[error("not a valid USD amount: {0:?}")]
pub struct ParseUsdError(String);

impl FromStr for Usd {
    type Err = ParseUsdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let value = Decimal::from_str(s.trim()).map_err(|_| ParseUsdError(s.to_string()))?;
        if value.is_sign_negative() || value.scale() > USD_SCALE {
            return Err(ParseUsdError(s.to_string()));
        }
        Ok(Usd::new(value))
    }
}

impl Serialize for Usd {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Usd {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[test]
    fn formats_with_four_decimals() {
        assert_eq!(Usd::new(dec!(0.04)).to_string(), "0.0400");
        assert_eq!(Usd::from_units(400).to_string(), "0.0400");
        assert_eq!(Usd::ZERO.to_string(), "0.0000");
        assert_eq!(Usd::from_units(0).to_string(), "0.0000");
    }

    #[test]
    fn rounds_half_away_from_zero() {
        assert_eq!(Usd::new(dec!(0.00005)).units(), 1);
        assert_eq!(Usd::new(dec!(0.00004)).units(), 0);
    }

    #[test]
    fn parses_and_rejects() {
        assert_eq!("5".parse::<Usd>().map(Usd::units).ok(), Some(50_000));
        assert!("-1".parse::<Usd>().is_err());
        assert!("0.00001".parse::<Usd>().is_err());
        assert!("abc".parse::<Usd>().is_err());
    }

    #[test]
    fn units_round_trip() {
        for units in [0, 1, 399, 50_000, 123_456_789] {
            assert_eq!(Usd::from_units(units).units(), units);
        }
    }
}
