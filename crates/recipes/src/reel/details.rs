//! The listing's details as people write them: "$525,000", "3 bd | 2 ba", "1,850 sq ft", and the
//! voiceover script. A missing detail is left out, never shown as "null" or invented.

use crate::numbers::thousands;
use domain::reel::{Amount, ListingDetails};
use serde::{Deserialize, Serialize};

/// Longest text accepted for each free-text detail, in characters.
pub const MAX_DETAIL_CHARS: usize = 120;

/// The details, checked and formatted for display.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Listing {
    /// "42 Harbor Lane, Mystic, CT".
    pub address: Option<String>,
    /// "$525,000" (or the client's own wording when it is not a plain amount).
    pub price: Option<String>,
    /// "3 bd | 2 ba | 1,850 sq ft", from whichever of the three are known.
    pub facts: Option<String>,
    /// The client's headline.
    pub headline: Option<String>,
    /// The agent's name.
    pub agent_name: Option<String>,
    /// The brokerage.
    pub brokerage: Option<String>,
    /// The agent's phone.
    pub phone: Option<String>,
    /// Bedrooms, bathrooms and living area as numbers, for the script.
    beds: Option<f64>,
    baths: Option<f64>,
    square_feet: Option<f64>,
}

impl Listing {
    /// Checks and formats `details`; the error names the field.
    pub fn from_details(details: &ListingDetails) -> Result<Listing, (String, String)> {
        let text = |field: &str, value: &Option<String>| -> Result<Option<String>, (String, String)> {
            let Some(value) = value else { return Ok(None) };
            let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
            if value.chars().count() > MAX_DETAIL_CHARS {
                return Err((format!("details.{field}"), format!("at most {MAX_DETAIL_CHARS} characters")));
            }
            Ok((!value.is_empty()).then_some(value))
        };
        let count = |field: &str, value: Option<f64>, max: f64| -> Result<Option<f64>, (String, String)> {
            match value {
                Some(v) if !(0.0..=max).contains(&v) || !v.is_finite() => {
                    Err((format!("details.{field}"), format!("must be between 0 and {max}")))
                }
                other => Ok(other),
            }
        };
        let beds = count("beds", details.beds, 100.0)?;
        let baths = count("baths", details.baths, 100.0)?;
        let square_feet = count("square_feet", details.square_feet, 10_000_000.0)?;
        let price = match &details.price {
            None => None,
            Some(Amount::Number(n)) if !n.is_finite() || *n < 0.0 || *n > 1e12 => {
                return Err(("details.price".into(), "must be between 0 and 1,000,000,000,000 dollars".into()))
            }
            Some(Amount::Number(n)) => Some(dollars(*n)),
            Some(Amount::Text(t)) => text("price", &Some(t.clone()))?.map(|t| plain_amount(&t).map_or(t, dollars)),
        };
        let mut facts = Vec::new();
        if let Some(beds) = beds {
            facts.push(format!("{} bd", number(beds)));
        }
        if let Some(baths) = baths {
            facts.push(format!("{} ba", number(baths)));
        }
        if let Some(area) = square_feet.filter(|a| *a > 0.0) {
            facts.push(format!("{} sq ft", thousands(area.round() as u64)));
        }
        Ok(Listing {
            address: text("address", &details.address)?,
            price,
            facts: (!facts.is_empty()).then(|| facts.join(" | ")),
            headline: text("headline", &details.headline)?,
            agent_name: text("agent_name", &details.agent_name)?,
            brokerage: text("brokerage", &details.brokerage)?,
            phone: text("phone", &details.phone)?,
            beds,
            baths,
            square_feet,
        })
    }

    /// True when the end card has something to show.
    pub fn has_contact(&self) -> bool {
        self.agent_name.is_some() || self.brokerage.is_some() || self.phone.is_some()
    }

    /// The voiceover: a few short sentences from the known details, in listing-video style.
    pub fn script(&self) -> String {
        let mut sentences = Vec::new();
        if let Some(headline) = &self.headline {
            sentences.push(sentence(headline));
        }
        if let Some(address) = &self.address {
            sentences.push(format!("Welcome to {}.", address.trim_end_matches('.')));
        }
        let mut rooms = Vec::new();
        if let Some(beds) = self.beds {
            rooms.push(plural(beds, "bedroom"));
        }
        if let Some(baths) = self.baths {
            rooms.push(plural(baths, "bathroom"));
        }
        if let Some(area) = self.square_feet.filter(|a| *a > 0.0) {
            rooms.push(format!("{} square feet", thousands(area.round() as u64)));
        }
        if !rooms.is_empty() {
            sentences.push(format!("{}.", capitalise(&join_words(&rooms))));
        }
        if let Some(price) = &self.price {
            sentences.push(format!("Offered at {}.", price.trim_end_matches('.')));
        }
        match (&self.agent_name, &self.brokerage, &self.phone) {
            (Some(agent), Some(brokerage), _) => sentences.push(format!("Call {agent} of {brokerage} for a tour.")),
            (Some(agent), None, _) => sentences.push(format!("Call {agent} for a tour.")),
            (None, Some(brokerage), _) => sentences.push(format!("Call {brokerage} for a tour.")),
            (None, None, Some(_)) => sentences.push("Call today for a tour.".into()),
            (None, None, None) => {}
        }
        if sentences.is_empty() {
            sentences.push("Take a look inside.".into());
        }
        sentences.join(" ")
    }
}

/// "$525,000"; cents only when there are some.
pub fn dollars(amount: f64) -> String {
    let cents = (amount * 100.0).round() as u64;
    if cents.is_multiple_of(100) {
        format!("${}", thousands(cents / 100))
    } else {
        format!("${}.{:02}", thousands(cents / 100), cents % 100)
    }
}

/// The amount in text such as "525000", "$525,000" or "525,000.00", or `None` when the text says
/// more than an amount ("Offers over $500k" is kept as written).
fn plain_amount(text: &str) -> Option<f64> {
    let digits = text.trim().trim_start_matches('$').trim().replace(',', "");
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    digits.parse().ok()
}

/// "3", "2.5".
fn number(n: f64) -> String {
    if n.fract() == 0.0 {
        format!("{}", n as u64)
    } else {
        format!("{}", (n * 10.0).round() / 10.0)
    }
}

fn plural(n: f64, noun: &str) -> String {
    if n == 1.0 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", number(n))
    }
}

/// "a, b and c".
fn join_words(words: &[String]) -> String {
    match words {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// The text as a sentence ending in a full stop (or its own ! or ?).
fn sentence(text: &str) -> String {
    let text = text.trim();
    if text.ends_with(['.', '!', '?']) {
        text.to_string()
    } else {
        format!("{text}.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn details(value: serde_json::Value) -> ListingDetails {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn numbers_read_as_people_write_them() {
        assert_eq!(dollars(525_000.0), "$525,000");
        assert_eq!(dollars(1_250_000.5), "$1,250,000.50");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_850), "1,850");
        let listing = Listing::from_details(&details(serde_json::json!({
            "price": "525000", "beds": 3, "baths": 2.5, "square_feet": 1850.4,
        })))
        .unwrap();
        assert_eq!(listing.price.as_deref(), Some("$525,000"));
        assert_eq!(listing.facts.as_deref(), Some("3 bd | 2.5 ba | 1,850 sq ft"));
        let worded = Listing::from_details(&details(serde_json::json!({"price": "Offers over $500k"}))).unwrap();
        assert_eq!(worded.price.as_deref(), Some("Offers over $500k"));
    }

    #[test]
    fn missing_details_are_left_out() {
        let listing = Listing::from_details(&details(serde_json::json!({"baths": 2, "address": "  "}))).unwrap();
        assert_eq!(listing.facts.as_deref(), Some("2 ba"));
        assert_eq!(listing.address, None);
        assert!(!listing.has_contact());
        let script = listing.script();
        assert_eq!(script, "2 bathrooms.");
        assert!(!script.contains("null") && !script.contains("None"));
        assert_eq!(Listing::default().script(), "Take a look inside.");
    }

    #[test]
    fn the_script_reads_naturally() {
        let listing = Listing::from_details(&details(serde_json::json!({
            "headline": "Waterfront colonial with a private dock", "address": "42 Harbor Lane, Mystic, CT",
            "price": 525000, "beds": 3, "baths": 1, "square_feet": 1850, "agent_name": "Dana Reyes",
            "brokerage": "Shoreline Realty", "phone": "(860) 555-0142",
        })))
        .unwrap();
        assert_eq!(
            listing.script(),
            "Waterfront colonial with a private dock. Welcome to 42 Harbor Lane, Mystic, CT. 3 bedrooms, \
             1 bathroom and 1,850 square feet. Offered at $525,000. Call Dana Reyes of Shoreline Realty for a tour."
        );
    }

    #[test]
    fn bad_details_name_the_field() {
        let long = "x".repeat(MAX_DETAIL_CHARS + 1);
        let error = Listing::from_details(&details(serde_json::json!({"headline": long}))).unwrap_err();
        assert_eq!(error.0, "details.headline");
        let error = Listing::from_details(&details(serde_json::json!({"beds": -1}))).unwrap_err();
        assert_eq!(error.0, "details.beds");
        let error = Listing::from_details(&details(serde_json::json!({"price": -5}))).unwrap_err();
        assert_eq!(error.0, "details.price");
    }
}
