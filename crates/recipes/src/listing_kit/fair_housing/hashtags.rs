//! Hashtags read as the words they run together ("#lightskinonly" as "#light skin only"), so a
//! preference glued into one tag meets the same rules and model as the words written apart.
//!
//! A tag is cut where its capitals start words ("#NoKidsAllowed", each word then kept whole, since
//! a capitalised word is often a name) and between letters and digits; a tag written in one case
//! is cut into the likeliest words of English, as Word Ninja does: a word's cost
//! is its rank's logarithm under Zipf's law, and the cut of least total cost wins. The words and
//! their order of frequency are the sentence model's vocabulary (BERT's, whose whole words run
//! roughly from common to rare), already built into the binary; the `wordninja` crate would bring
//! a second list of its own and an unmaintained command-line parser with it.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::LazyLock;

/// Tags longer than this (in bytes) are left as written: no real tag runs this many words
/// together, and the cut's cost grows with the length.
const LONGEST_TAG: usize = 60;
/// The longest word the cut tries (in letters).
const LONGEST_WORD: usize = 20;
/// What a letter no word covers costs: more than any word, so it is the last resort that lets
/// every run be cut.
const UNKNOWN_LETTER_COST: f64 = 30.0;
/// What reading a word as the plural of a listed one adds ("walkers", "gays").
const PLURAL_COST: f64 = 1.0;

/// Each whole word of the vocabulary with its cost.
static WORD_COSTS: LazyLock<HashMap<&'static str, f64>> = LazyLock::new(|| word_costs(super::sentence_model::VOCAB));

fn word_costs(vocab: &'static str) -> HashMap<&'static str, f64> {
    let words: Vec<&str> = vocab
        .lines()
        .filter(|w| w.bytes().all(|b| b.is_ascii_lowercase()) && (w.len() > 1 || matches!(*w, "a" | "i")))
        .collect();
    let count_ln = (words.len() as f64).ln();
    let mut costs = HashMap::with_capacity(words.len());
    for (rank, word) in words.into_iter().enumerate() {
        costs.entry(word).or_insert((((rank + 1) as f64) * count_ln).ln());
    }
    costs
}

/// `text` with each hashtag that runs words together spelled out, and the spelled-out tags paired
/// with the tags as written, in order (for [`joined_back`]).
pub(super) fn spelled_out(text: &str) -> (Cow<'_, str>, Vec<(String, String)>) {
    let mut out = String::new();
    let mut pairs = Vec::new();
    let mut copied = 0;
    for (start, _) in text.match_indices('#') {
        if text[..start].chars().next_back().is_some_and(char::is_alphanumeric) {
            continue;
        }
        let body_len = text[start + 1..].find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(text.len() - start - 1);
        let tag = &text[start..start + 1 + body_len];
        let Some(words) = tag_words(&tag[1..]) else { continue };
        let spelled = format!("#{}", words.join(" "));
        out.push_str(&text[copied..start]);
        out.push_str(&spelled);
        copied = start + tag.len();
        pairs.push((spelled, tag.to_string()));
    }
    if pairs.is_empty() {
        return (Cow::Borrowed(text), pairs);
    }
    out.push_str(&text[copied..]);
    (Cow::Owned(out), pairs)
}

/// `text` with each spelled-out tag that is still there, word for word, written as it was.
pub(super) fn joined_back(text: &str, pairs: &[(String, String)]) -> String {
    let mut text = text.to_string();
    let mut from = 0;
    for (spelled, tag) in pairs {
        let found = text[from..]
            .match_indices(spelled.as_str())
            .map(|(i, _)| from + i)
            .find(|&i| !text[i + spelled.len()..].starts_with(|c: char| c.is_ascii_alphanumeric()));
        if let Some(i) = found {
            text.replace_range(i..i + spelled.len(), tag);
            from = i + tag.len();
        }
    }
    text
}

/// The words `body` (a tag without its `#`) runs together, lower-cased; `None` when it is one
/// word, or too long to cut.
fn tag_words(body: &str) -> Option<Vec<String>> {
    if body.is_empty() || body.len() > LONGEST_TAG {
        return None;
    }
    let mut words = Vec::new();
    let camel_case = body.as_bytes().windows(2).any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    for run in runs(body) {
        if run.starts_with(|c: char| c.is_ascii_digit()) || camel_case {
            // The writer's capitals already show where the words start; a capitalised word is
            // kept whole, as it is often a name ("#BlacksburgVA", not "blacks burg").
            words.push(run.to_ascii_lowercase());
        } else {
            words.extend(cut(&run.to_ascii_lowercase()));
        }
    }
    (words.len() > 1).then_some(words)
}

/// `body` split where a digit meets a letter and where a capital follows a lower-case letter
/// ("NoKids55plus" into "No", "Kids", "55", "plus").
fn runs(body: &str) -> Vec<&str> {
    let bytes = body.as_bytes();
    let mut runs = Vec::new();
    let mut start = 0;
    for i in 1..bytes.len() {
        let (before, here) = (bytes[i - 1], bytes[i]);
        let kind_changes = before.is_ascii_digit() != here.is_ascii_digit();
        let word_starts = before.is_ascii_lowercase() && here.is_ascii_uppercase();
        if kind_changes || word_starts {
            runs.push(&body[start..i]);
            start = i;
        }
    }
    runs.push(&body[start..]);
    runs
}

/// The cut of `letters` (lower-case ASCII) into words of least total cost.
fn cut(letters: &str) -> Vec<String> {
    let n = letters.len();
    // best[i]: the least cost of the first i letters, and where its last word starts.
    let mut best: Vec<(f64, usize)> = vec![(f64::INFINITY, 0); n + 1];
    best[0] = (0.0, 0);
    for end in 1..=n {
        for start in end.saturating_sub(LONGEST_WORD)..end {
            let cost = best[start].0 + word_cost(&letters[start..end]);
            if cost < best[end].0 {
                best[end] = (cost, start);
            }
        }
    }
    let mut words = Vec::new();
    let mut end = n;
    while end > 0 {
        let start = best[end].1;
        words.push(letters[start..end].to_string());
        end = start;
    }
    words.reverse();
    words
}

/// A word's cost: its own, a listed word's plural's, or its letters' as unknown.
fn word_cost(word: &str) -> f64 {
    if let Some(&cost) = WORD_COSTS.get(word) {
        return cost;
    }
    let plural = ["es", "s"].iter().find_map(|ending| WORD_COSTS.get(word.strip_suffix(ending)?));
    plural.map_or(UNKNOWN_LETTER_COST * word.len() as f64, |cost| cost + PLURAL_COST)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_read_as_their_words() {
        for (tag, words) in [
            ("#lightskinonly", "#light skin only"),
            ("#nowalkers", "#no walkers"),
            ("#nolittleones", "#no little ones"),
            ("#keepitwhite", "#keep it white"),
            ("#NoKidsAllowed", "#no kids allowed"),
            ("#nogays", "#no gays"),
            ("#55plus", "#55 plus"),
            ("#OpenHouseSaturday", "#open house saturday"),
            ("#firsttimehomebuyer", "#first time home buyer"),
            ("#NOKIDS", "#no kids"),
            ("#BlacksburgVA", "#blacksburg va"),
            ("#lightskinonly55", "#light skin only 55"),
            ("#ChristiansburgRealEstate", "#christiansburg real estate"),
        ] {
            assert_eq!(spelled_out(tag).0, words, "{tag}");
        }
    }

    #[test]
    fn one_word_tags_and_other_hashes_are_left_alone() {
        for text in ["#blessed", "License #12345", "Unit#4", "#", "Call # now", "#nyc"] {
            assert_eq!(spelled_out(text).0, text);
        }
    }

    #[test]
    fn what_is_left_of_a_tag_is_written_back_as_it_was() {
        let text = "Sunny loft #JustListed #nokids #JustListed";
        let (spelled, pairs) = spelled_out(text);
        assert_eq!(spelled, "Sunny loft #just listed #no kids #just listed");
        assert_eq!(joined_back(&spelled, &pairs), text);
        assert_eq!(joined_back("Sunny loft #just listed #just listed", &pairs), "Sunny loft #JustListed #JustListed");
    }
}
