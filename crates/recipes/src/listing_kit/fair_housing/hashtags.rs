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
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::LazyLock;

/// Tags longer than this (in bytes) are left as written: no real tag runs this many words
/// together.
const LONGEST_TAG: usize = 140;
/// The longest word the cut tries (in letters).
const LONGEST_WORD: usize = 20;
/// What reading a word as the plural of a listed one adds ("walkers", "gays").
const PLURAL_COST: f64 = 1.0;
/// What reading letters as a slip for, or shorthand of, a class word adds ("#englshonly" as
/// "englsh only", which the spelling pass then reads as "english only").
const SLIP_COST: f64 = 2.0;
/// The words of one or two letters a tag is cut into; the vocabulary's others ("sb", "lo", "te")
/// are fragments, and would cut names into class words ("#menlopark" into "men lo park").
const SHORT_WORDS: &[&str] = &[
    "a", "i", "an", "as", "at", "be", "by", "do", "go", "he", "hi", "if", "in", "is", "it", "me", "my", "no", "of",
    "ok", "on", "or", "so", "to", "up", "us", "we",
];
/// The first of the private-use characters that mark where a spelled-out tag starts (right after
/// its `#`); the rules and the model read them as nothing.
const FIRST_MARKER: u32 = 0xE000;
const LAST_MARKER: u32 = 0xF8FF;

/// Each whole word of the vocabulary with its cost.
static WORD_COSTS: LazyLock<HashMap<&'static str, f64>> = LazyLock::new(|| word_costs(super::sentence_model::VOCAB));

fn word_costs(vocab: &'static str) -> HashMap<&'static str, f64> {
    let words: Vec<&str> = vocab
        .lines()
        .filter(|w| w.bytes().all(|b| b.is_ascii_lowercase()) && (w.len() > 2 || SHORT_WORDS.contains(w)))
        .collect();
    let count_ln = (words.len() as f64).ln();
    let mut costs = HashMap::with_capacity(words.len());
    for (rank, word) in words.into_iter().enumerate() {
        costs.entry(word).or_insert((((rank + 1) as f64) * count_ln).ln());
    }
    costs
}

/// A tag spelled out in the text the check reads.
struct SpelledTag {
    /// Follows the tag's `#`.
    marker: char,
    /// Its words, lower-cased.
    words: Vec<String>,
    /// The tag as written.
    as_written: String,
}

/// The tags [`spelled_out`] spelled out, to be written back by [`SpelledTags::joined_back`].
#[derive(Default)]
pub(super) struct SpelledTags(Vec<SpelledTag>);

/// `text` with each hashtag that runs words together spelled out: `#`, a marker of its own, and
/// its words ("#lightskinonly" as "#\u{E000}light skin only").
pub(super) fn spelled_out(text: &str) -> (Cow<'_, str>, SpelledTags) {
    let taken: HashSet<char> = text.chars().filter(|&c| (FIRST_MARKER..=LAST_MARKER).contains(&(c as u32))).collect();
    let mut markers = (FIRST_MARKER..=LAST_MARKER).filter_map(char::from_u32).filter(|c| !taken.contains(c));
    let mut out = String::new();
    let mut tags = Vec::new();
    let mut copied = 0;
    for (start, _) in text.match_indices('#') {
        if text[..start].chars().next_back().is_some_and(char::is_alphanumeric) {
            continue;
        }
        let body_len = text[start + 1..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(text.len() - start - 1);
        let as_written = &text[start..start + 1 + body_len];
        let Some(words) = tag_words(&as_written[1..]) else { continue };
        let Some(marker) = markers.next() else { break };
        out.push_str(&text[copied..start]);
        out.push('#');
        out.push(marker);
        out.push_str(&words.join(" "));
        copied = start + as_written.len();
        tags.push(SpelledTag { marker, words, as_written: as_written.to_string() });
    }
    if tags.is_empty() {
        return (Cow::Borrowed(text), SpelledTags::default());
    }
    out.push_str(&text[copied..]);
    (Cow::Owned(out), SpelledTags(tags))
}

impl SpelledTags {
    /// `text` without these tags' markers, as the output and findings quote it; private-use
    /// characters the client wrote stay.
    pub(super) fn without_markers(&self, text: &str) -> String {
        text.chars().filter(|c| !self.0.iter().any(|tag| tag.marker == *c)).collect()
    }

    /// The spelled-out tag in `text` that holds `range` (a finding inside it), with `replaced` in
    /// place of `range`: the tag's range from its `#` to its last word, the tag as written, and
    /// the rewritten tag run together again, lower-cased ("#mancave" becomes "#bonusroom").
    pub(super) fn rewritten_within(
        &self,
        text: &str,
        range: &Range<usize>,
        replaced: &str,
    ) -> Option<(Range<usize>, &str, String)> {
        self.0.iter().find_map(|tag| {
            let extent = tag.extent(text)?;
            if range.start < extent.start || extent.end < range.end {
                return None;
            }
            let words = format!("{}{replaced}{}", &text[extent.start..range.start], &text[range.end..extent.end]);
            let joined = tag.run_together(&words.split_whitespace().collect::<Vec<_>>()).to_lowercase();
            Some((extent, tag.as_written.as_str(), joined))
        })
    }

    /// `text` with each tag still in it written back: as written when its words are the ones it
    /// was read as, its words run together again when a rewrite or a spelling changed them.
    pub(super) fn joined_back(&self, text: &str) -> String {
        let mut text = text.to_string();
        for tag in &self.0 {
            let Some(extent) = tag.extent(&text) else { continue };
            let words: Vec<&str> = text[extent.start..extent.end].split_whitespace().collect();
            let as_read =
                words.iter().map(|w| w.trim_start_matches(['#', tag.marker])).eq(tag.words.iter().map(String::as_str));
            let joined = if as_read { tag.as_written.clone() } else { tag.run_together(&words) };
            text.replace_range(extent, &joined);
        }
        text
    }
}

impl SpelledTag {
    /// `words` (this tag's, its `#` and marker before the first) run together again as a tag,
    /// parted by underscores when it was written so.
    fn run_together(&self, words: &[&str]) -> String {
        let separator = if self.as_written.contains('_') { "_" } else { "" };
        format!("#{}", words.join(separator).trim_start_matches(['#', self.marker]))
    }

    /// Where this tag stands in `text`: its `#` and marker, then as many words as it was read
    /// as (a spelling may have changed them, not their number), punctuation after them left out.
    fn extent(&self, text: &str) -> Option<Range<usize>> {
        let start = text.find(&format!("#{}", self.marker))?;
        let mut end = start + 1 + self.marker.len_utf8();
        for _ in 0..self.words.len() {
            let rest = &text[end..];
            let word_start = end + (rest.len() - rest.trim_start().len());
            let word_len = text[word_start..].find(char::is_whitespace).unwrap_or(text.len() - word_start);
            end = word_start + word_len;
        }
        let end = start + text[start..end].trim_end_matches(|c: char| !c.is_alphanumeric() && c != self.marker).len();
        Some(start..end)
    }
}

/// `text` without any character a spelled-out tag could be marked with, for a reader of words
/// (the sentence model) that must not see them.
pub(super) fn without_any_marker(text: &str) -> String {
    text.chars().filter(|&c| !(FIRST_MARKER..=LAST_MARKER).contains(&(c as u32))).collect()
}

/// The words `body` (a tag without its `#`) runs together, lower-cased; `None` when it is one
/// word, too long, or holds letters no word covers (a name: "#Christiansburg").
fn tag_words(body: &str) -> Option<Vec<String>> {
    if body.is_empty() || body.len() > LONGEST_TAG {
        return None;
    }
    // Underscores part words as spaces do ("#no_kids_allowed"); a part no words cover is then
    // one word of its own (a name: "#menlo_park"), not a reason to leave the tag unread.
    let parted = body.contains('_');
    let mut words = Vec::new();
    for run in body.split('_').flat_map(runs).filter(|run| !run.is_empty()) {
        let capitalised =
            run.starts_with(|c: char| c.is_ascii_uppercase()) && run.bytes().any(|b| b.is_ascii_lowercase());
        if run.starts_with(|c: char| c.is_ascii_digit()) || capitalised {
            // The writer's capitals already show where this word starts; it is kept whole, as
            // it is often a name ("#BlacksburgVA", not "blacks burg").
            words.push(run.to_ascii_lowercase());
        } else {
            let lower = run.to_ascii_lowercase();
            match cut(&lower) {
                Some(cut) => words.extend(cut),
                None if parted => words.push(lower),
                None => return None,
            }
        }
    }
    (words.len() > 1).then_some(words)
}

/// `body` split where a digit meets a letter and where a capital follows a lower-case letter
/// ("NoKids55plus" into "No", "Kids", "55", "plus").
fn runs(body: &str) -> Vec<&str> {
    if body.is_empty() {
        return Vec::new();
    }
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

/// The cut of `letters` (lower-case ASCII) into words of least total cost; `None` when no cut
/// into known words exists.
fn cut(letters: &str) -> Option<Vec<String>> {
    let n = letters.len();
    // best[i]: the least cost of the first i letters, and where its last word starts.
    let mut best: Vec<(f64, usize)> = vec![(f64::INFINITY, 0); n + 1];
    best[0] = (0.0, 0);
    for end in 1..=n {
        for start in end.saturating_sub(LONGEST_WORD)..end {
            let Some(cost) = word_cost(&letters[start..end]) else { continue };
            if best[start].0 + cost < best[end].0 {
                best[end] = (best[start].0 + cost, start);
            }
        }
    }
    if best[n].0.is_infinite() {
        return None;
    }
    let mut words = Vec::new();
    let mut end = n;
    while end > 0 {
        let start = best[end].1;
        words.push(letters[start..end].to_string());
        end = start;
    }
    words.reverse();
    Some(words)
}

/// A word's cost: its own, a listed word's plural's, or a class word's it is a slip for; `None`
/// for no word.
fn word_cost(word: &str) -> Option<f64> {
    if let Some(&cost) = WORD_COSTS.get(word) {
        return Some(cost);
    }
    ["es", "s"]
        .iter()
        .find_map(|ending| Some(WORD_COSTS.get(word.strip_suffix(ending)?)? + PLURAL_COST))
        .or_else(|| Some(word_cost(super::spelling::class_word_meant(word)?)? + SLIP_COST))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_as(tag: &str) -> String {
        without_any_marker(&spelled_out(tag).0)
    }

    #[test]
    fn tags_are_read_as_their_words() {
        for (tag, words) in [
            ("#lightskinonly", "#light skin only"),
            ("#nowalkers", "#no walkers"),
            ("#nolittleones", "#no little ones"),
            ("#keepitwhite", "#keep it white"),
            ("#NoKidsAllowed", "#no kids allowed"),
            ("#nokidsOK", "#no kids ok"),
            ("#NOKIDS", "#no kids"),
            ("#nogays", "#no gays"),
            ("#55plus", "#55 plus"),
            ("#lightskinonly55", "#light skin only 55"),
            ("#OpenHouseSaturday", "#open house saturday"),
            ("#firsttimehomebuyer", "#first time home buyer"),
            ("#ChristiansburgRealEstate", "#christiansburg real estate"),
            ("#no_kids_allowed", "#no kids allowed"),
            ("#adults_only_building", "#adults only building"),
            ("#menlo_park_homes", "#menlo park homes"),
            ("#englshonly", "#englsh only"),
            ("#nochildern", "#no childern"),
        ] {
            assert_eq!(read_as(tag), words, "{tag}");
        }
    }

    #[test]
    fn one_word_tags_names_and_other_hashes_are_left_alone() {
        for text in [
            "#blessed",
            "License #12345",
            "Unit#4",
            "#",
            "Call # now",
            "#nyc",
            "#Christiansburg",
            "#menlopark",
            "#manteca",
            "#_",
            "#kids_",
        ] {
            assert_eq!(spelled_out(text).0, text);
        }
    }

    #[test]
    fn a_clients_private_use_characters_are_not_taken_for_markers() {
        let text = "Logo \u{E000} #nokids";
        let (spelled, tags) = spelled_out(text);
        assert_eq!(tags.without_markers(&spelled), "Logo \u{E000} #no kids");
        assert_eq!(tags.joined_back(&spelled), text);
    }

    #[test]
    fn a_tag_parted_by_underscores_is_written_back_with_them() {
        let text = "Quiet block #no_kids_allowed";
        let (spelled, tags) = spelled_out(text);
        assert_eq!(tags.joined_back(&spelled), text);
        let rewritten = spelled.replace("no kids allowed", "all are welcome");
        assert_eq!(tags.joined_back(&rewritten), "Quiet block #all_are_welcome");
    }

    #[test]
    fn what_is_left_of_a_tag_is_written_back_as_it_was() {
        let text = "#JUSTLISTED Sunny loft #nokids, #JustListed #open house Sat";
        let (spelled, tags) = spelled_out(text);
        assert_eq!(tags.without_markers(&spelled), "#just listed Sunny loft #no kids, #just listed #open house Sat");
        assert_eq!(tags.joined_back(&spelled), text);
        // The first tag's sentence dropped: the second is still the one written second.
        let second = spelled.find(", ").map(|i| &spelled[i + 2..]).unwrap_or_default();
        assert_eq!(tags.joined_back(second), "#JustListed #open house Sat");
        // A tag whose words a rewrite changed runs them together again.
        let rewritten = spelled.replace("no kids", "all welcome");
        assert_eq!(tags.joined_back(&rewritten), "#JUSTLISTED Sunny loft #allwelcome, #JustListed #open house Sat");
    }

    #[test]
    fn a_finding_inside_a_tag_is_rewritten_in_it() {
        let (spelled, tags) = spelled_out("Bonus space: #mancave.");
        let at = spelled.find("man cave").unwrap_or_default();
        let (extent, as_written, joined) =
            tags.rewritten_within(&spelled, &(at..at + 8), "Bonus Room").expect("inside the tag");
        assert_eq!(as_written, "#mancave");
        assert_eq!(tags.without_markers(&spelled[extent]), "#man cave");
        assert_eq!(joined, "#bonusroom");
        assert!(tags.rewritten_within(&spelled, &(0..5), "x").is_none());
        // A tag parted by underscores keeps them.
        let (spelled, tags) = spelled_out("Basement #man_cave_ready");
        let at = spelled.find("man cave").unwrap_or_default();
        let (_, _, joined) = tags.rewritten_within(&spelled, &(at..at + 8), "bonus room").expect("inside the tag");
        assert_eq!(joined, "#bonus_room_ready");
    }
}
