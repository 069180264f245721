//! Sentence and word handling for the rewrites: the sentence around a match, the proper name
//! after a landmark, articles and capitals.

use super::super::captions::full_stop_ends_sentence;

/// The byte range of the sentence holding `range`, with the space after it.
pub(super) fn sentence_around(text: &str, range: std::ops::Range<usize>) -> std::ops::Range<usize> {
    bounds_around(text, range, true)
}

/// The whole statement around `range`: its sentence with the clauses a semicolon joins to it,
/// the reach of a lawful context ("a 55-and-older community under HOPA; one resident must be
/// 55 or older").
pub(super) fn statement_around(text: &str, range: std::ops::Range<usize>) -> std::ops::Range<usize> {
    bounds_around(text, range, false)
}

/// The byte ranges of `text`'s statements (sentences with the clauses semicolons join to them),
/// each with the space after it.
pub(super) fn statements(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let range = bounds_around(text, start..start, false);
        if range.end <= start {
            break;
        }
        start = range.end;
        ranges.push(range);
    }
    ranges
}

/// The sentence around `range`, a semicolon ending one when `semicolons_end`.
fn bounds_around(text: &str, range: std::ops::Range<usize>, semicolons_end: bool) -> std::ops::Range<usize> {
    // Each end as the byte after its mark (a CJK full stop takes three bytes).
    let ends: Vec<usize> = text
        .char_indices()
        .filter(|&(i, c)| (semicolons_end || !matches!(c, ';' | '\u{ff1b}')) && is_sentence_end(text, i, c))
        .map(|(i, c)| i + c.len_utf8())
        .collect();
    let start = ends.iter().rev().find(|&&end| end <= range.start).map_or(0, |&end| end);
    // The sentence starts after the space that follows the previous one.
    let start = start + text[start..range.start].len() - text[start..range.start].trim_start().len();
    let end = ends.iter().find(|&&end| end > range.end).map_or(text.len(), |&end| end);
    let end = end + text[end..].len() - text[end..].trim_start().len();
    start..end
}

/// Whether the `c` at byte `i` ends a sentence: "!", "?", ";" or a line break, their full-width
/// forms, the ideographic full stop ("。", which needs no space after it), the full stops of
/// Urdu ("۔"), Hindi ("।") and Amharic ("።") and the Arabic question mark ("؟"), or a full stop
/// before a space or the end that ends one (see [`full_stop_ends_sentence`]; not a decimal point,
/// "2.5").
fn is_sentence_end(text: &str, i: usize, c: char) -> bool {
    match c {
        '!' | '?' | ';' | '\n' | '\u{3002}' | '\u{ff01}' | '\u{ff1f}' | '\u{ff1b}' | '\u{06d4}' | '\u{0964}'
        | '\u{1362}' | '\u{061f}' => true,
        '.' => {
            let after = &text[i + 1..];
            after.chars().next().is_none_or(char::is_whitespace)
                && full_stop_ends_sentence(&text[..=i], after.trim_start().chars().next())
        }
        _ => false,
    }
}

/// The length of the capitalised words at the start of `rest` (" Beth El" in " Beth El and the
/// beach").
pub(super) fn proper_name_after(rest: &str) -> usize {
    let words: Vec<(usize, &str)> = rest
        .split(' ')
        .scan(0, |position, word| {
            let start = *position;
            *position += word.len() + 1;
            Some((start, word))
        })
        .filter(|(_, w)| !w.is_empty())
        .collect();
    let mut end = 0;
    for (i, &(start, word)) in words.iter().enumerate() {
        // "Church of St. Paul": "of" joins a name that goes on.
        if word == "of" && words.get(i + 1).is_some_and(|(_, next)| is_capitalised(next)) {
            continue;
        }
        let bare = word.trim_end_matches([',', '.', ';', '!', '?', ')']);
        if !is_capitalised(bare) {
            break;
        }
        end = start + bare.len();
        let abbreviation = matches!(word, "St." | "Mt." | "Ft.");
        if bare.len() != word.len() && !abbreviation {
            break;
        }
        if abbreviation {
            end = start + word.len();
        }
    }
    end
}

/// Makes the article before `range` agree with `replacement` ("a safe" -> "an established");
/// returns the range shifted by any change.
pub(super) fn fix_article(
    text: &mut String,
    range: std::ops::Range<usize>,
    replacement: &str,
) -> std::ops::Range<usize> {
    let vowel = replacement.chars().next().is_some_and(|c| "aeiouAEIOU".contains(c));
    let before = text[..range.start].trim_end();
    let word_start = before.char_indices().rev().find(|(_, c)| !c.is_alphabetic()).map_or(0, |(i, c)| i + c.len_utf8());
    let article = &before[word_start..];
    let fixed = match (article, vowel) {
        ("a", true) => "an",
        ("A", true) => "An",
        ("an", false) => "a",
        ("An", false) => "A",
        _ => return range,
    };
    let shift = fixed.len() as isize - article.len() as isize;
    text.replace_range(word_start..word_start + article.len(), fixed);
    let move_by = |i: usize| (i as isize + shift) as usize;
    move_by(range.start)..move_by(range.end)
}

/// `replacement` with its first letter capitalised when `original`'s was and it starts a
/// sentence (`text_before` is what comes before it): "A lovely Christian home" reads "A lovely
/// home", not "A lovely Home". An `original` in capitals gives a replacement in capitals ("W/
/// NURSERY & MAN CAVE" reads "W/ NURSERY & BONUS ROOM").
pub(super) fn match_case(original: &str, replacement: &str, text_before: &str) -> String {
    if is_shouted(original) {
        return replacement.to_uppercase();
    }
    let starts_sentence =
        text_before.trim_end().is_empty() || text_before.trim_end().ends_with(['.', '!', '?', ';', ':', '\n']);
    if starts_sentence && is_capitalised(original) {
        let mut chars = replacement.chars();
        chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
    } else {
        replacement.to_string()
    }
}

/// Whether `words` are written in capitals: more than one letter and none in lower case
/// ("NO BOYS", not "I" or "Boys").
pub(super) fn is_shouted(words: &str) -> bool {
    words.chars().filter(|c| c.is_alphabetic()).count() > 1 && !words.chars().any(char::is_lowercase)
}

/// Whether `word` starts with a capital letter.
pub(super) fn is_capitalised(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_uppercase)
}

/// `text` with every run of whitespace made one space, as the check reads and returns it.
pub(super) fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::{match_case, statements};

    #[test]
    fn a_rewrite_keeps_the_case_of_what_it_replaces() {
        assert_eq!(match_case("MAN CAVE", "bonus room", "4BR W/ NURSERY & "), "BONUS ROOM");
        assert_eq!(match_case("Man cave", "bonus room", ""), "Bonus room");
        assert_eq!(match_case("Christian", "", "A lovely "), "");
        assert_eq!(match_case("man cave", "bonus room", "A "), "bonus room");
    }

    #[test]
    fn initialisms_before_a_lower_case_word_and_abbreviations_do_not_end_a_sentence() {
        let text = "Show a U.S. birth certificate. Open at 10 a.m. Come by! Built in the U.S. Ski Mt. Hood.";
        let found: Vec<&str> = statements(text).into_iter().map(|range| text[range].trim_end()).collect();
        assert_eq!(
            found,
            ["Show a U.S. birth certificate.", "Open at 10 a.m.", "Come by!", "Built in the U.S.", "Ski Mt. Hood."]
        );
    }

    #[test]
    fn an_ideographic_full_stop_ends_a_sentence_with_no_space_after_it() {
        let text = "駅から徒歩5分です。外国人不可。Near the park; quiet！Ask？";
        let found: Vec<&str> = statements(text).into_iter().map(|range| text[range].trim_end()).collect();
        assert_eq!(found, ["駅から徒歩5分です。", "外国人不可。", "Near the park; quiet！", "Ask？"]);
        // Urdu's and Hindi's full stops.
        let text = "مسجد کے قریب۔ سب کا خیرمقدم ہے۔ बाज़ार के पास। सभी का स्वागत है।";
        assert_eq!(statements(text).len(), 4);
    }
}
