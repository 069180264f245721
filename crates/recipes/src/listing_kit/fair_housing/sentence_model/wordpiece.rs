//! BERT's uncased WordPiece tokenizer (Devlin et al., 2019), as the sentence model was trained
//! with it: text cleaned of control characters, CJK ideographs set apart, lower-cased with accents
//! stripped, split at whitespace and punctuation, then each word cut greedily into the longest
//! pieces of the vocabulary (`##` marking a piece that continues a word). Written here rather than
//! taken from the `tokenizers` crate: the algorithm is these few lines, and that crate brings a
//! C++ suffix-array library and a thread pool into the build for it.

use std::collections::HashMap;
use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, GeneralCategoryGroup, UnicodeGeneralCategory};

/// A word longer than this (in characters) is one unknown piece, as in BERT.
const MAX_WORD_CHARS: usize = 100;

/// The vocabulary and the id of its unknown piece.
pub(crate) struct WordPiece {
    ids: HashMap<String, u32>,
    unknown: u32,
}

impl WordPiece {
    /// Reads a `vocab.txt`: one piece per line, its id the line's number. `None` when the
    /// vocabulary has no `[UNK]`.
    pub(crate) fn new(vocab: &str) -> Option<WordPiece> {
        let ids: HashMap<String, u32> = vocab.lines().zip(0u32..).map(|(piece, id)| (piece.to_string(), id)).collect();
        let unknown = *ids.get("[UNK]")?;
        Some(WordPiece { ids, unknown })
    }

    /// The ids of `text`'s pieces, without the `[CLS]` and `[SEP]` a transformer would add.
    pub(crate) fn ids(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        for word in basic_words(text) {
            self.push_pieces(&word, &mut ids);
        }
        ids
    }

    /// Cuts `word` into the longest pieces of the vocabulary, left to right; a word with a part
    /// no piece covers is one unknown piece.
    fn push_pieces(&self, word: &str, ids: &mut Vec<u32>) {
        let chars: Vec<(usize, char)> = word.char_indices().collect();
        if chars.len() > MAX_WORD_CHARS {
            ids.push(self.unknown);
            return;
        }
        let first = ids.len();
        let mut start = 0;
        let mut candidate = String::new();
        while start < chars.len() {
            let mut end = chars.len();
            let found = loop {
                if end == start {
                    break None;
                }
                let byte_end = chars.get(end).map_or(word.len(), |&(i, _)| i);
                candidate.clear();
                if start > 0 {
                    candidate.push_str("##");
                }
                candidate.push_str(&word[chars[start].0..byte_end]);
                if let Some(&id) = self.ids.get(candidate.as_str()) {
                    break Some(id);
                }
                end -= 1;
            };
            match found {
                Some(id) => ids.push(id),
                None => {
                    ids.truncate(first);
                    ids.push(self.unknown);
                    return;
                }
            }
            start = end;
        }
    }
}

/// The words of BERT's basic tokenizer: cleaned, lower-cased, unaccented, each punctuation mark
/// and each CJK ideograph a word of its own.
fn basic_words(text: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || is_control(c) {
            continue;
        }
        if is_whitespace(c) {
            spaced.push(' ');
        } else if is_cjk(c) {
            spaced.push(' ');
            spaced.push(c);
            spaced.push(' ');
        } else {
            spaced.push(c);
        }
    }
    let mut words = Vec::new();
    for token in spaced.split(' ').filter(|t| !t.is_empty()) {
        let plain: String =
            token.to_lowercase().nfd().filter(|&c| c.general_category() != GeneralCategory::NonspacingMark).collect();
        let mut word = String::new();
        for c in plain.chars() {
            if is_punctuation(c) {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                words.push(c.to_string());
            } else {
                word.push(c);
            }
        }
        if !word.is_empty() {
            words.push(word);
        }
    }
    words
}

fn is_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r') || c.general_category() == GeneralCategory::SpaceSeparator
}

fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r')
        && matches!(c.general_category(), GeneralCategory::Control | GeneralCategory::Format)
}

/// ASCII symbols count as punctuation too ("$", "^", "`"), as in BERT.
fn is_punctuation(c: char) -> bool {
    let code = c as u32;
    (33..=47).contains(&code)
        || (58..=64).contains(&code)
        || (91..=96).contains(&code)
        || (123..=126).contains(&code)
        || c.general_category_group() == GeneralCategoryGroup::Punctuation
}

/// The CJK Unified Ideographs blocks BERT sets apart (not Hangul, kana or other scripts).
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B820..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F)
}
