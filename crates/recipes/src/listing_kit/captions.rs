//! The kit's texts, written from the listing by templates: MLS remarks, portal and website
//! descriptions, a social caption with hashtags and the story's line. Numbers read as people
//! write them, a missing detail is left out (never "null", never invented), and the MLS remarks
//! fit their limit and carry no contact details (MLS rules keep those out of public remarks).

use crate::listing::{capitalise, join_words, sentence, Listing};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// The disclosure every piece carries when a photo is virtually staged.
pub const STAGED_DISCLOSURE: &str = "One or more photos virtually staged.";

/// The written pieces of the kit.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Captions {
    /// Public remarks for the MLS: within `mls_remarks_max` characters, no contact details.
    pub mls_remarks: String,
    /// A listing-portal description, in paragraphs.
    pub portal: String,
    /// A website description, with the agent's contact.
    pub website: String,
    /// A social caption with hashtags.
    pub social: String,
    /// One short line for the story.
    pub story_line: String,
}

/// Writes every caption for `listing`.
pub fn write(listing: &Listing, staged: bool, mls_remarks_max: usize) -> Captions {
    Captions {
        mls_remarks: mls_remarks(listing, staged, mls_remarks_max),
        portal: portal(listing, staged),
        website: website(listing, staged),
        social: social(listing, staged),
        story_line: story_line(listing),
    }
}

/// The sentences that describe the property: headline, rooms, age and lot, description, features.
fn property_sentences(listing: &Listing) -> Vec<String> {
    let mut sentences = Vec::new();
    if let Some(headline) = &listing.headline {
        sentences.push(sentence(headline));
    }
    if let Some(rooms) = listing.rooms_sentence() {
        sentences.push(rooms);
    }
    if let Some(built) = built_and_lot(listing) {
        sentences.push(built);
    }
    if let Some(description) = &listing.description {
        sentences.extend(split_sentences(description));
    }
    if !listing.features.is_empty() {
        let features: Vec<String> = listing.features.iter().map(|f| lower_first(f)).collect();
        sentences.push(format!("Features include {}.", join_words(&features)));
    }
    sentences
}

/// "Built in 1998 on a 0.25-acre lot." from whichever is known.
fn built_and_lot(listing: &Listing) -> Option<String> {
    match (listing.year_built, &listing.lot_size) {
        (Some(year), Some(lot)) if lot.ends_with("-acre lot") => Some(format!("Built in {year} on a {lot}.")),
        (Some(year), Some(lot)) => Some(format!("Built in {year}. Lot size: {}.", lot.trim_end_matches('.'))),
        (Some(year), None) => Some(format!("Built in {year}.")),
        (None, Some(lot)) if lot.ends_with("-acre lot") => Some(format!("Set on a {lot}.")),
        (None, Some(lot)) => Some(format!("Lot size: {}.", lot.trim_end_matches('.'))),
        (None, None) => None,
    }
}

/// Public MLS remarks: the property sentences that fit `max` characters, whole sentences only,
/// without contact details; the staged disclosure is kept first in line for the space.
fn mls_remarks(listing: &Listing, staged: bool, max: usize) -> String {
    let mut budget = max;
    if staged {
        budget = budget.saturating_sub(STAGED_DISCLOSURE.len() + 1);
    }
    let mut kept: Vec<String> = Vec::new();
    let mut used = 0;
    for sentence in property_sentences(listing) {
        if carries_contact(&sentence, listing) {
            continue;
        }
        let cost = sentence.chars().count() + usize::from(!kept.is_empty());
        if used + cost <= budget {
            used += cost;
            kept.push(sentence);
        } else if kept.is_empty() {
            // Even the first sentence is too long: cut it at a word.
            kept.push(cut_at_word(&sentence, budget));
            break;
        }
    }
    if kept.is_empty() {
        // Nothing about the rooms or the house: the location and the price still say something.
        let fallback = [
            listing.address.as_ref().map(|a| format!("Located at {}.", a.trim_end_matches('.'))),
            listing.price.as_deref().map(offered_at),
        ];
        for sentence in fallback.into_iter().flatten() {
            let cost = sentence.chars().count() + usize::from(!kept.is_empty());
            if used + cost <= budget {
                used += cost;
                kept.push(sentence);
            }
        }
    }
    if staged {
        kept.push(STAGED_DISCLOSURE.to_string());
    }
    kept.join(" ")
}

/// The portal description: where it is, the property, price and open house.
fn portal(listing: &Listing, staged: bool) -> String {
    let mut paragraphs = Vec::new();
    let mut opening = Vec::new();
    if let Some(headline) = &listing.headline {
        opening.push(sentence(headline));
    }
    if let Some(address) = &listing.address {
        opening.push(format!("Welcome to {}.", address.trim_end_matches('.')));
    }
    if let Some(price) = &listing.price {
        opening.push(offered_at(price));
    }
    paragraphs.push(opening.join(" "));
    let body: Vec<String> =
        property_sentences(listing).into_iter().skip(usize::from(listing.headline.is_some())).collect();
    paragraphs.push(body.join(" "));
    if let Some(open_house) = &listing.open_house {
        paragraphs.push(format!("Open house: {}.", open_house.trim_end_matches('.')));
    }
    if staged {
        paragraphs.push(STAGED_DISCLOSURE.into());
    }
    paragraphs.retain(|p| !p.is_empty());
    paragraphs.join("\n\n")
}

/// The website description: the portal text and the agent's contact.
fn website(listing: &Listing, staged: bool) -> String {
    let mut text = portal(listing, false);
    if let Some(contact) = contact_sentence(listing) {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&contact);
    }
    if staged {
        text.push_str("\n\n");
        text.push_str(STAGED_DISCLOSURE);
    }
    text
}

/// "Contact Dana Reyes of Shoreline Realty at (860) 555-0142 or dana@example.com. License #123."
fn contact_sentence(listing: &Listing) -> Option<String> {
    let who = match (&listing.agent_name, &listing.brokerage) {
        (Some(agent), Some(brokerage)) => Some(format!("{agent} of {brokerage}")),
        (Some(agent), None) => Some(agent.clone()),
        (None, Some(brokerage)) => Some(brokerage.clone()),
        (None, None) => None,
    };
    let ways: Vec<&str> = [&listing.phone, &listing.email].into_iter().flatten().map(String::as_str).collect();
    let mut text = match (who, ways.is_empty()) {
        (Some(who), true) => format!("Contact {who} for a private tour."),
        (Some(who), false) => format!("Contact {who} at {}.", ways.join(" or ")),
        (None, false) => format!("Call or write {} for a private tour.", ways.join(" or ")),
        (None, true) => return None,
    };
    if let Some(license) = &listing.license_number {
        text.push_str(&format!(" License #{}.", license.trim_start_matches('#')));
    }
    Some(text)
}

/// A social caption: short lines, then hashtags.
fn social(listing: &Listing, staged: bool) -> String {
    let mut lines = Vec::new();
    lines.push(match &listing.headline {
        Some(headline) => format!("Just listed: {}", headline.trim_end_matches('.')),
        None => "Just listed!".to_string(),
    });
    if let Some(address) = &listing.address {
        lines.push(address.clone());
    }
    let figures: Vec<&str> = [&listing.price, &listing.facts].into_iter().flatten().map(String::as_str).collect();
    if !figures.is_empty() {
        lines.push(figures.join(" | "));
    }
    if let Some(open_house) = &listing.open_house {
        lines.push(format!("Open house: {open_house}"));
    }
    let contact: Vec<&str> = [&listing.agent_name, &listing.phone].into_iter().flatten().map(String::as_str).collect();
    if !contact.is_empty() {
        lines.push(format!("Tours: {}", contact.join(" | ")));
    }
    if staged {
        lines.push(STAGED_DISCLOSURE.into());
    }
    lines.push(String::new());
    lines.push(hashtags(listing).join(" "));
    lines.join("\n")
}

/// #JustListed #HomeForSale, the town's tags when the address names it, #OpenHouse when there is one.
pub fn hashtags(listing: &Listing) -> Vec<String> {
    let mut tags = vec!["#JustListed".to_string(), "#HomeForSale".to_string()];
    if let Some((town, state)) = listing.address.as_deref().and_then(town_and_state) {
        tags.push(format!("#{town}{state}"));
        tags.push(format!("#{town}RealEstate"));
    } else {
        tags.push("#RealEstate".into());
    }
    if listing.open_house.is_some() {
        tags.push("#OpenHouse".into());
    }
    tags
}

/// The town and state of "42 Harbor Lane, Mystic, CT 06355" as tag words ("Mystic", "CT").
fn town_and_state(address: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = address.split(',').map(str::trim).collect();
    if parts.len() < 3 {
        return None;
    }
    let town: String = parts[parts.len() - 2]
        .split_whitespace()
        .map(|w| w.chars().filter(|c| c.is_alphanumeric()).collect::<String>())
        .map(|w| capitalise(&w))
        .collect();
    let state: String = parts[parts.len() - 1]
        .split_whitespace()
        .next()?
        .chars()
        .filter(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_uppercase();
    (!town.is_empty() && (2..=3).contains(&state.len())).then_some((town, state))
}

/// The story's one line: the open house when there is one, otherwise the price.
fn story_line(listing: &Listing) -> String {
    match (&listing.open_house, &listing.price) {
        (Some(open_house), _) => format!("Open house {open_house}"),
        (None, Some(price)) if is_amount(price) => format!("Just listed at {price}"),
        (None, Some(price)) => format!("Just listed: {price}"),
        (None, None) => "Just listed".into(),
    }
}

/// "Offered at $525,000." for an amount; "Price: Offers over $1.2M." for a worded price.
fn offered_at(price: &str) -> String {
    if is_amount(price) {
        format!("Offered at {price}.")
    } else {
        format!("Price: {}.", price.trim_end_matches('.'))
    }
}

/// Whether a formatted price is a plain amount ("$525,000", "$1,250,000.50").
fn is_amount(price: &str) -> bool {
    price
        .strip_prefix('$')
        .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit() || c == ',' || c == '.'))
}

/// Whether `sentence` names a way to reach the agent: a phone number, an email, a web address,
/// a word such as "call", or the agent or brokerage by name (any part of it of two letters or
/// more, as a capitalised word).
fn carries_contact(sentence: &str, listing: &Listing) -> bool {
    static PATTERNS: OnceLock<Option<[Regex; 3]>> = OnceLock::new();
    let patterns = PATTERNS.get_or_init(|| {
        Some([
            // (860) 555-0142, 860.555.0142, 555-0142, +1 860 555 0142.
            Regex::new(r"(\+?\d[\s.-]?)?\(?\b\d{3}\)?[\s.-]?\d{3}[\s.-]\d{4}\b|\b\d{3}[.-]\d{4}\b").ok()?,
            // dana@example.com, www.example.com, https://..., shoreline.realty.
            Regex::new(r"(?i)@|https?://|www\.|\b[a-z0-9-]+\.(com|net|org|realty|homes|house|properties|estate|io|co|us|biz|info|me)\b").ok()?,
            Regex::new(r"(?i)\b(call|text|e-?mail|contact|dm|phone|reach out)\b").ok()?,
        ])
    });
    // The patterns are constants covered by the tests; without them, fail closed.
    let Some(patterns) = patterns else { return true };
    if patterns.iter().any(|p| p.is_match(sentence)) {
        return true;
    }
    let words: Vec<&str> = sentence.split(|c: char| !c.is_alphanumeric() && c != '\'').collect();
    [&listing.agent_name, &listing.brokerage]
        .into_iter()
        .flatten()
        .flat_map(|name| name.split(|c: char| !c.is_alphanumeric() && c != '\''))
        .filter(|part| part.chars().count() >= 2 && part.chars().next().is_some_and(char::is_uppercase))
        .any(|part| words.contains(&part))
}

/// Sentences of a paragraph, each ending in its own punctuation.
pub fn split_sentences(text: &str) -> Vec<String> {
    let mut sentences = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        current.push(c);
        let next_is_break = chars.get(i + 1).is_none_or(|n| n.is_whitespace());
        let next_word = chars[i + 1..].iter().copied().find(|n| !n.is_whitespace());
        if matches!(c, '.' | '!' | '?') && next_is_break && full_stop_ends_sentence(&current, next_word) {
            sentences.push(current.trim().to_string());
            current.clear();
        }
    }
    if !current.trim().is_empty() {
        sentences.push(sentence(current.trim()));
    }
    sentences.retain(|s| !s.is_empty());
    sentences
}

/// Whether a full stop closing `before`, with `next_word` starting the text after it, ends a
/// sentence: not after an abbreviation ("St.", "approx."), nor after an initialism before a word
/// in lower case ("a U.S. birth certificate", "at 10 a.m. sharp") or an ellipsis before one.
pub(crate) fn full_stop_ends_sentence(before: &str, next_word: Option<char>) -> bool {
    let goes_on_lower_case = next_word.is_some_and(char::is_lowercase);
    let initialism_mid_sentence = ends_with_initialism(before) && goes_on_lower_case;
    // "We love diversity... just not here": a pause, not an end.
    let ellipsis_mid_sentence = before.ends_with("...") && goes_on_lower_case;
    !(ends_with_abbreviation(before) || initialism_mid_sentence || ellipsis_mid_sentence)
}

/// Whether `text`'s last word is an initialism: two or more letters, each followed by a full stop
/// ("U.S.", "a.m.").
fn ends_with_initialism(text: &str) -> bool {
    let word = text.split_whitespace().last().unwrap_or("");
    let pieces: Vec<&str> = word.split_terminator('.').collect();
    pieces.len() >= 2 && pieces.iter().all(|piece| piece.chars().count() == 1 && piece.chars().all(char::is_alphabetic))
}

/// "St.", "Mt.", "Dr.", "approx." do not end a sentence.
fn ends_with_abbreviation(text: &str) -> bool {
    let word = text.split_whitespace().last().unwrap_or("").to_lowercase();
    matches!(
        word.as_str(),
        "st." | "mt." | "mtn." | "dr." | "mr." | "mrs." | "ms." | "approx." | "sq." | "ft." | "no." | "ave." | "rd."
    ) && !text.ends_with("sq. ft.")
}

/// `text` cut at a word so that it and a closing full stop fit `max` characters.
fn cut_at_word(text: &str, max: usize) -> String {
    let mut out = String::new();
    for word in text.split_whitespace() {
        let extra = word.chars().count() + usize::from(!out.is_empty());
        if out.chars().count() + extra + 1 > max {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    let out = out.trim_end_matches([',', ';', ':', '-', '.']).to_string();
    if out.is_empty() {
        out
    } else {
        format!("{out}.")
    }
}

/// "Quartz counters" -> "quartz counters" inside a sentence; "Sub-Zero fridge" and "HVAC" stay.
fn lower_first(text: &str) -> String {
    let first_word = text.split_whitespace().next().unwrap_or("");
    if first_word.chars().skip(1).any(char::is_uppercase) {
        return text.to_string();
    }
    let mut chars = text.chars();
    chars.next().map(|c| c.to_lowercase().chain(chars).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::reel::ListingDetails;

    fn listing(value: serde_json::Value) -> Listing {
        let details: ListingDetails = serde_json::from_value(value).unwrap();
        Listing::from_details(&details).unwrap()
    }

    fn full() -> Listing {
        listing(serde_json::json!({
            "address": "42 Harbor Lane, Mystic, CT 06355", "price": 525000, "beds": 3, "baths": 2.5,
            "square_feet": 1850, "lot_size": 0.25, "year_built": 1998,
            "headline": "Waterfront colonial with a private dock",
            "description": "Sunlit rooms open to the water. Call Dana at (860) 555-0142 for a tour. The kitchen was redone in 2021.",
            "features": ["Quartz counters", "Sub-Zero fridge", "Two-car garage"],
            "open_house": "Saturday, June 7, 1-3 pm", "agent_name": "Dana Reyes", "phone": "(860) 555-0142",
            "email": "dana@shoreline.example", "brokerage": "Shoreline Realty", "license_number": "RES.0801234",
        }))
    }

    #[test]
    fn numbers_and_sentences_read_as_people_write_them() {
        let captions = write(&full(), false, 1000);
        assert_eq!(
            captions.mls_remarks,
            "Waterfront colonial with a private dock. 3 bedrooms, 2.5 bathrooms and 1,850 square feet of living \
             space. Built in 1998 on a 0.25-acre lot. Sunlit rooms open to the water. The kitchen was redone in \
             2021. Features include quartz counters, Sub-Zero fridge and two-car garage."
        );
        assert!(captions.portal.contains("Offered at $525,000."));
        assert!(captions.social.contains("$525,000 | 3 bd | 2.5 ba | 1,850 sq ft"), "{}", captions.social);
        assert!(captions.social.ends_with("#JustListed #HomeForSale #MysticCT #MysticRealEstate #OpenHouse"));
        assert!(captions.website.contains(
            "Contact Dana Reyes of Shoreline Realty at (860) 555-0142 or dana@shoreline.example. License #RES.0801234."
        ));
        assert_eq!(captions.story_line, "Open house Saturday, June 7, 1-3 pm");
    }

    #[test]
    fn mls_remarks_hold_no_contact_details_and_fit_the_limit() {
        let kit = full();
        for max in [100, 150, 240, 1000] {
            let remarks = write(&kit, true, max).mls_remarks;
            assert!(remarks.chars().count() <= max, "{max}: {remarks}");
            assert!(remarks.ends_with(STAGED_DISCLOSURE));
            for contact in ["555-0142", "Dana", "Shoreline", "@", "RES.0801234"] {
                assert!(!remarks.contains(contact), "{contact} in {remarks}");
            }
        }
        // A single overlong sentence is cut at a word, never mid-word.
        let long = listing(serde_json::json!({"description": "word ".repeat(300)}));
        let remarks = write(&long, false, 100).mls_remarks;
        assert!(remarks.chars().count() <= 100 && remarks.ends_with("word."), "{remarks}");
    }

    #[test]
    fn missing_details_are_left_out() {
        let sparse = listing(serde_json::json!({"baths": 2}));
        let captions = write(&sparse, false, 1000);
        for text in [&captions.mls_remarks, &captions.portal, &captions.website, &captions.social, &captions.story_line]
        {
            for bad in ["null", "None", "$0", "  ", "..", " ,"] {
                assert!(!text.contains(bad), "{bad:?} in {text:?}");
            }
        }
        assert_eq!(captions.mls_remarks, "2 bathrooms.");
        let priced = write(&listing(serde_json::json!({"price": "Offers over $1.2M"})), false, 1000);
        assert_eq!(priced.mls_remarks, "Price: Offers over $1.2M.");
        assert_eq!(priced.story_line, "Just listed: Offers over $1.2M");
        assert_eq!(captions.story_line, "Just listed");
        assert_eq!(captions.social, "Just listed!\n2 ba\n\n#JustListed #HomeForSale #RealEstate");
        let empty = write(&Listing::default(), false, 1000);
        assert_eq!(empty.mls_remarks, "");
        assert_eq!(empty.portal, "");
    }

    #[test]
    fn the_contact_filter_is_word_exact() {
        let kit = listing(serde_json::json!({"agent_name": "Ed Park", "brokerage": "eXp Realty", "description":
            "Expansive deck. Fenced parking for two. Renovated 2018-2021. Ask Ed for the survey. Visit danasells.net. \
             Text 860 555 0142 anytime."}));
        let remarks = write(&kit, false, 1000).mls_remarks;
        assert_eq!(remarks, "Expansive deck. Fenced parking for two. Renovated 2018-2021.");
    }

    /// The templates' own words pass the Fair Housing check, its sentence model included: the
    /// check never drops what the kit writes around the client's text.
    #[test]
    fn the_templates_own_sentences_pass_the_fair_housing_check() {
        use super::super::fair_housing::{is_clean, Policy};
        let bare = listing(serde_json::json!({"address": "7 Elm St, Dover, DE 19901", "beds": 1, "baths": 1}));
        for kit in [full(), bare] {
            for staged in [false, true] {
                let c = write(&kit, staged, 1000);
                for text in [&c.mls_remarks, &c.portal, &c.website, &c.social, &c.story_line] {
                    for paragraph in text.split('\n') {
                        assert!(is_clean(paragraph, Policy::default()), "{paragraph:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn sentences_split_on_their_ends_only() {
        assert_eq!(
            split_sentences("Near St. Mark's Square. Updated in 2020! Big yard"),
            vec!["Near St. Mark's Square.", "Updated in 2020!", "Big yard."]
        );
        assert_eq!(
            split_sentences("Open house at 10 a.m. sharp. Ski Mt. Hood from 8 a.m. Built in the U.S.A."),
            vec!["Open house at 10 a.m. sharp.", "Ski Mt. Hood from 8 a.m.", "Built in the U.S.A."]
        );
    }
}
