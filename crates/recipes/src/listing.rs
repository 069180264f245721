//! The listing's details as people write them: "$525,000", "3 bd | 2 ba", "1,850 sq ft",
//! "0.25-acre lot", and the reel's voiceover script. Shared by the reel and the listing kit. A
//! missing detail is left out, never shown as "null" or invented.

use crate::numbers::thousands;
use domain::reel::{Amount, ListingDetails};
use serde::{Deserialize, Serialize};

use domain::limits::{
    DESCRIPTION_MAX_CHARS, DETAIL_MAX_CHARS, FEATURES_MAX, FEATURE_MAX_CHARS, LICENSE_MAX_CHARS, LOT_ACRES_MAX,
    PRICE_MAX_USD, ROOMS_MAX, SQUARE_FEET_MAX, YEAR_BUILT_MAX, YEAR_BUILT_MIN,
};

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
    /// "0.25-acre lot", or the client's own wording.
    pub lot_size: Option<String>,
    /// Year built.
    pub year_built: Option<i64>,
    /// The description, white space tidied.
    pub description: Option<String>,
    /// Features, in the client's order, empty ones dropped.
    pub features: Vec<String>,
    /// The open house, as written.
    pub open_house: Option<String>,
    /// The agent's email.
    pub email: Option<String>,
    /// The agent's licence number.
    pub license_number: Option<String>,
    /// Bedrooms, bathrooms and living area as numbers, for the script.
    beds: Option<f64>,
    baths: Option<f64>,
    square_feet: Option<f64>,
}

impl Listing {
    /// Checks and formats `details`; the error names the field.
    pub fn from_details(details: &ListingDetails) -> Result<Listing, (String, String)> {
        let text_up_to =
            |field: &str, value: &Option<String>, max: usize| -> Result<Option<String>, (String, String)> {
                let Some(value) = value else { return Ok(None) };
                let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
                if value.chars().count() > max {
                    return Err((format!("details.{field}"), format!("at most {max} characters")));
                }
                Ok((!value.is_empty()).then_some(value))
            };
        let text = |field: &str, value: &Option<String>| text_up_to(field, value, DETAIL_MAX_CHARS);
        let count = |field: &str, value: Option<f64>, max: f64| -> Result<Option<f64>, (String, String)> {
            match value {
                Some(v) if !(0.0..=max).contains(&v) || !v.is_finite() => {
                    Err((format!("details.{field}"), format!("must be between 0 and {max}")))
                }
                other => Ok(other),
            }
        };
        let beds = count("beds", details.beds, ROOMS_MAX)?;
        let baths = count("baths", details.baths, ROOMS_MAX)?;
        let square_feet = count("square_feet", details.square_feet, SQUARE_FEET_MAX)?;
        let price = match &details.price {
            None => None,
            Some(Amount::Number(n)) if !n.is_finite() || *n < 0.0 || *n > PRICE_MAX_USD => {
                return Err(("details.price".into(), format!("must be between 0 and {PRICE_MAX_USD} dollars")))
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
        let lot_size = match &details.lot_size {
            None => None,
            Some(Amount::Number(acres)) if !acres.is_finite() || *acres <= 0.0 || *acres > LOT_ACRES_MAX => {
                return Err((
                    "details.lot_size".into(),
                    format!("acres must be more than 0 and at most {LOT_ACRES_MAX}"),
                ))
            }
            Some(Amount::Number(acres)) => Some(format!("{}-acre lot", acres_text(*acres))),
            Some(Amount::Text(t)) => text("lot_size", &Some(t.clone()))?,
        };
        if let Some(year) = details.year_built.filter(|y| !(YEAR_BUILT_MIN..=YEAR_BUILT_MAX).contains(y)) {
            return Err((
                "details.year_built".into(),
                format!("{year} is not a year between {YEAR_BUILT_MIN} and {YEAR_BUILT_MAX}"),
            ));
        }
        let features = details.features.clone().unwrap_or_default();
        if features.len() > FEATURES_MAX {
            return Err(("details.features".into(), format!("at most {FEATURES_MAX} features")));
        }
        let features = features
            .iter()
            .enumerate()
            .map(|(i, f)| text_up_to(&format!("features[{i}]"), &Some(f.clone()), FEATURE_MAX_CHARS))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .flatten()
            .map(|f| f.trim_end_matches(['.', ',', ';']).to_string())
            .filter(|f| !f.is_empty())
            .collect();
        let email = text("email", &details.email)?;
        if email.as_ref().is_some_and(|e| !looks_like_email(e)) {
            return Err(("details.email".into(), "expected an email address such as agent@example.com".into()));
        }
        Ok(Listing {
            lot_size,
            year_built: details.year_built,
            description: text_up_to("description", &details.description, DESCRIPTION_MAX_CHARS)?,
            features,
            // "Open House: Sat 1-3" reads "Open house Open House: Sat 1-3" in the templates.
            open_house: text("open_house", &details.open_house)?.and_then(|o| {
                let lower = o.to_lowercase();
                let rest = if lower.starts_with("open house") {
                    o["open house".len()..].trim_start_matches([':', '-', ' '])
                } else {
                    &o
                };
                (!rest.is_empty()).then(|| rest.to_string())
            }),
            email,
            license_number: text_up_to("license_number", &details.license_number, LICENSE_MAX_CHARS)?,
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

    /// True when there is something about the property itself to show (not only the agent).
    pub fn describes_property(&self) -> bool {
        self.price.is_some()
            || self.facts.is_some()
            || self.address.is_some()
            || self.headline.is_some()
            || self.description.is_some()
            || !self.features.is_empty()
            || self.lot_size.is_some()
            || self.year_built.is_some()
            || self.open_house.is_some()
    }

    /// True when the end card has something to show.
    pub fn has_contact(&self) -> bool {
        self.agent_name.is_some() || self.brokerage.is_some() || self.phone.is_some()
    }

    /// "3 bedrooms, 2.5 bathrooms and 1,850 square feet of living space.", from whichever are
    /// known.
    pub fn rooms_sentence(&self) -> Option<String> {
        let rooms = self.rooms();
        let area = self.square_feet.filter(|a| *a > 0.0);
        let mut words = rooms;
        if let Some(area) = area {
            words.push(format!("{} square feet of living space", thousands(area.round() as u64)));
        }
        (!words.is_empty()).then(|| format!("{}.", capitalise(&join_words(&words))))
    }

    fn rooms(&self) -> Vec<String> {
        let mut rooms = Vec::new();
        if let Some(beds) = self.beds {
            rooms.push(plural(beds, "bedroom"));
        }
        if let Some(baths) = self.baths {
            rooms.push(plural(baths, "bathroom"));
        }
        rooms
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
        let mut rooms = self.rooms();
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

/// "0.25", "1.5", "12": up to two decimals, no trailing zeros.
fn acres_text(acres: f64) -> String {
    let text = format!("{acres:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// One `@` with something on each side and a dot in the domain, no spaces.
fn looks_like_email(text: &str) -> bool {
    match text.split_once('@') {
        Some((user, domain)) => {
            !user.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !text.contains(char::is_whitespace)
                && !domain.contains('@')
        }
        None => false,
    }
}

/// "3", "2.5", "2.75".
fn number(n: f64) -> String {
    let text = format!("{n:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn plural(n: f64, noun: &str) -> String {
    if n == 1.0 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", number(n))
    }
}

/// "a, b and c".
pub(crate) fn join_words(words: &[String]) -> String {
    match words {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The text with its first letter in upper case.
pub(crate) fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// The text as a sentence ending in a full stop (or its own ! or ?).
pub(crate) fn sentence(text: &str) -> String {
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
    fn kit_details_read_as_people_write_them() {
        let listing = Listing::from_details(&details(serde_json::json!({
            "lot_size": 0.25, "year_built": 1998, "features": [" Quartz counters. ", "", "Two-car garage"],
            "email": "dana@shoreline.example", "beds": 1, "square_feet": 900,
        })))
        .unwrap();
        assert_eq!(listing.lot_size.as_deref(), Some("0.25-acre lot"));
        assert_eq!(listing.features, vec!["Quartz counters", "Two-car garage"]);
        assert_eq!(listing.rooms_sentence().as_deref(), Some("1 bedroom and 900 square feet of living space."));
        let quarter =
            Listing::from_details(&details(serde_json::json!({"baths": 2.75, "open_house": "Open House: Sat 1-3"})))
                .unwrap();
        assert_eq!(quarter.facts.as_deref(), Some("2.75 ba"));
        assert_eq!(quarter.open_house.as_deref(), Some("Sat 1-3"));
        let worded = Listing::from_details(&details(serde_json::json!({"lot_size": "10,890 sq ft"}))).unwrap();
        assert_eq!(worded.lot_size.as_deref(), Some("10,890 sq ft"));
        for (bad, field) in [
            (serde_json::json!({"year_built": 1200}), "details.year_built"),
            (serde_json::json!({"lot_size": -1}), "details.lot_size"),
            (serde_json::json!({"email": "dana at shoreline"}), "details.email"),
            (serde_json::json!({"features": ["x".repeat(81)]}), "details.features[0]"),
            (serde_json::json!({"features": vec!["pool"; 21]}), "details.features"),
            (serde_json::json!({"description": "x".repeat(4001)}), "details.description"),
        ] {
            assert_eq!(Listing::from_details(&details(bad)).unwrap_err().0, field);
        }
    }

    #[test]
    fn bad_details_name_the_field() {
        let long = "x".repeat(DETAIL_MAX_CHARS + 1);
        let error = Listing::from_details(&details(serde_json::json!({"headline": long}))).unwrap_err();
        assert_eq!(error.0, "details.headline");
        let error = Listing::from_details(&details(serde_json::json!({"beds": -1}))).unwrap_err();
        assert_eq!(error.0, "details.beds");
        let error = Listing::from_details(&details(serde_json::json!({"price": -5}))).unwrap_err();
        assert_eq!(error.0, "details.price");
    }
}
