//! Misspelt class words ("childern", "handicaped", "Christain") read as the words they stand for,
//! so a typo does not carry a preference past the check.
//!
//! A word is read as a class word when it is one slip away from it: two neighbouring letters
//! swapped, a letter doubled or undoubled, or (in words of eight letters or more) one inner letter
//! left out. Words of their own that are one slip from a class word ("retires") are left alone.
//! Classified-ad shorthand with its vowels dropped ("adlts", "wht") is read for its word too.

use super::text::is_capitalised;
use std::borrow::Cow;

/// The class words whose misspellings are read for them (six letters or more: shorter words are
/// too close to ordinary ones).
const CLASS_WORDS: &[&str] = &[
    "children",
    "toddlers",
    "teenagers",
    "newlyweds",
    "families",
    "pregnant",
    "grandchildren",
    "handicapped",
    "disabled",
    "disability",
    "wheelchair",
    "wheelchairs",
    "christian",
    "christians",
    "catholic",
    "catholics",
    "muslim",
    "muslims",
    "jewish",
    "mormon",
    "mormons",
    "protestant",
    "baptist",
    "hispanic",
    "hispanics",
    "caucasian",
    "immigrants",
    "foreigners",
    "mexican",
    "mexicans",
    "asians",
    "seniors",
    "retirees",
    "elderly",
    "transgender",
    "lesbian",
    "lesbians",
    "gentlemen",
    "section",
    "english",
];

/// Ordinary words one slip away from a class word.
const ORDINARY: &[&str] = &["retires", "sections", "seniors'", "christina", "christin"];

/// `text` with each misspelt class word replaced by the class word, its first letter's case kept.
pub(super) fn corrected(text: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let mut copied = 0;
    let mut start = None;
    for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        match (c.is_ascii_alphabetic(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                start = None;
                // A capitalised word before another is a name ("Christina Lopez"), not a slip.
                let next_capitalised = is_capitalised(text[i..].trim_start());
                let in_a_name = is_capitalised(&text[s..]) && next_capitalised;
                if let Some(word) = class_word_meant(&text[s..i]).filter(|_| !in_a_name) {
                    out.push_str(&text[copied..s]);
                    let capital = text[s..].starts_with(|c: char| c.is_ascii_uppercase());
                    out.push_str(&if capital { word[..1].to_ascii_uppercase() + &word[1..] } else { word.to_string() });
                    copied = i;
                }
            }
            _ => {}
        }
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Class words as classified ads shorten them, vowels dropped ("Adlts only bldg", "Wht tenants
/// prfrd"); only forms that are no other word.
const SHORTHAND: &[(&str, &str)] = &[
    ("adlt", "adult"),
    ("adlts", "adults"),
    ("chldrn", "children"),
    ("wht", "white"),
    ("xtian", "christian"),
    ("xtians", "christians"),
    ("hndcp", "handicapped"),
    ("hndcpd", "handicapped"),
    ("dsbld", "disabled"),
    ("englsh", "english"),
];

/// The class word `word` is a slip for, or shorthand of, if any.
pub(super) fn class_word_meant(word: &str) -> Option<&'static str> {
    let lower = word.to_ascii_lowercase();
    if let Some(&(_, meant)) = SHORTHAND.iter().find(|(short, _)| *short == lower) {
        return Some(meant);
    }
    if lower.len() < 6 || CLASS_WORDS.contains(&lower.as_str()) || ORDINARY.contains(&lower.as_str()) {
        return None;
    }
    CLASS_WORDS.iter().copied().find(|class| one_slip(lower.as_bytes(), class.as_bytes()))
}

/// Whether `typed` is `meant` with one slip: neighbours swapped, a letter doubled or undoubled,
/// or an inner letter of a long word left out.
fn one_slip(typed: &[u8], meant: &[u8]) -> bool {
    let first_difference = typed.iter().zip(meant).take_while(|(a, b)| a == b).count();
    let i = first_difference;
    match typed.len() as isize - meant.len() as isize {
        0 => {
            i + 1 < typed.len()
                && typed[i] == meant[i + 1]
                && typed[i + 1] == meant[i]
                && typed[i + 2..] == meant[i + 2..]
        }
        // A letter left out of `meant` at `i`.
        -1 => {
            let rest_matches = typed[i..] == meant[i + 1..];
            let undoubled = i > 0 && meant[i] == meant[i - 1];
            let inner = i > 0 && i + 1 < meant.len() && meant.len() >= 8;
            rest_matches && (undoubled || inner)
        }
        // A letter doubled in `typed` at `i`.
        1 => i > 0 && typed[i] == typed[i - 1] && typed[i + 1..] == meant[i..],
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slips_are_read_for_the_class_word() {
        assert_eq!(corrected("No childern under 12."), "No children under 12.");
        assert_eq!(corrected("No handicaped tenants."), "No handicapped tenants.");
        assert_eq!(corrected("Christain tenants prefered."), "Christian tenants prefered.");
        assert_eq!(corrected("Seciton 8 renters."), "Section 8 renters.");
        assert_eq!(corrected("Perfect for famlies."), "Perfect for families.");
        assert_eq!(corrected("Grandchilldren welcome."), "Grandchildren welcome.");
        assert_eq!(corrected("Adlts only bldg."), "Adults only bldg.");
    }

    #[test]
    fn ordinary_words_are_left_alone() {
        for text in [
            "The owner retires next year.",
            "Senior center two blocks away.",
            "Wheelchair-accessible entrance.",
            "Both sections of the fence.",
            "A family room and a children's wing.",
            "Disable the alarm at the panel.",
            "Familiar layout with a preferred lender.",
            "Listed by Christina Lopez of Harbor Realty.",
            "Call Christin at the office.",
        ] {
            assert_eq!(corrected(text), text);
        }
    }
}
