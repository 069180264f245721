//! A learned reader of sentences, beside the phrase rules: it catches a preference phrased in
//! words no rule lists ("we'd love someone who won't need the elevator"). A sentence's WordPiece
//! pieces go through all-MiniLM-L6-v2 (a sentence transformer, Apache-2.0, its weights stored as
//! bytes), the mean of its last hidden states is the sentence, and a small network (one hidden
//! layer) says whether it states a preference and under which category.
//!
//! The network was trained on the development corpus and the held-out corpora once measured,
//! labelled by the phrase rules' categories and by hand (`models/fair_housing/README.md`,
//! `train.py`). Reading a sentence takes milliseconds, so the check still runs at submit.

mod encoder;
mod wordpiece;

use super::Category;
use encoder::{Encoder, Shape};
use std::sync::LazyLock;
use wordpiece::WordPiece;

/// BERT's markers around a sentence's pieces.
const CLS: u32 = 101;
const SEP: u32 = 102;
/// Longer sentences are read up to this many pieces, the markers included, as in training.
const MAX_PIECES: usize = 128;

/// The vocabulary, one piece per line in order of id (whole words roughly from common to rare).
pub(super) static VOCAB: &str = include_str!("../../../../models/fair_housing/vocab.txt");
static WEIGHTS: &[u8] = include_bytes!("../../../../models/fair_housing/sentence_model.bin");

/// The network's classes, in the order of its outputs.
const CLASSES: [Option<Category>; 8] = [
    None,
    Some(Category::FamilialStatus),
    Some(Category::Age),
    Some(Category::Religion),
    Some(Category::Disability),
    Some(Category::RaceOrNationalOrigin),
    Some(Category::Sex),
    Some(Category::Steering),
];

/// A sentence the model gives a higher chance than this of stating a preference is a finding.
/// Chosen on the development corpus's cross-validation (docs/recipes.md): lower catches more
/// implied preferences and drops more lawful sentences.
const FLAG_ABOVE: f32 = 0.95;

/// The model, read once from the bytes built into the binary; `None` if they do not parse, which
/// a test rules out.
static MODEL: LazyLock<Option<SentenceModel>> = LazyLock::new(|| SentenceModel::parse(VOCAB, WEIGHTS));

/// The category of the preference `sentence` states, if the model reads one.
pub(super) fn preference_in(sentence: &str) -> Option<Category> {
    MODEL.as_ref()?.preference_in(sentence)
}

struct SentenceModel {
    pieces: WordPiece,
    encoder: Encoder,
    hidden: Layer,
    output: Layer,
}

/// A dense layer: `outputs` rows of `inputs` weights, then the biases.
struct Layer {
    inputs: usize,
    weights: Vec<f32>,
    biases: Vec<f32>,
}

impl Layer {
    fn apply(&self, input: &[f32]) -> Vec<f32> {
        self.weights
            .chunks_exact(self.inputs)
            .zip(&self.biases)
            .map(|(row, bias)| row.iter().zip(input).map(|(w, x)| w * x).sum::<f32>() + bias)
            .collect()
    }
}

/// Reads little-endian values off the front of a byte slice.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn u32(&mut self) -> Option<usize> {
        let (head, rest) = self.0.split_first_chunk::<4>()?;
        self.0 = rest;
        usize::try_from(u32::from_le_bytes(*head)).ok()
    }

    fn f32s(&mut self, n: usize) -> Option<Vec<f32>> {
        let bytes = self.0.get(..n.checked_mul(4)?)?;
        self.0 = &self.0[bytes.len()..];
        Some(bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
    }

    fn i8s(&mut self, n: usize) -> Option<Vec<i8>> {
        let bytes = self.0.get(..n)?;
        self.0 = &self.0[n..];
        Some(bytes.iter().map(|&b| b as i8).collect())
    }

    fn layer(&mut self, inputs: usize, outputs: usize) -> Option<Layer> {
        let weights = self.f32s(inputs.checked_mul(outputs)?)?;
        let biases = self.f32s(outputs)?;
        Some(Layer { inputs, weights, biases })
    }
}

impl SentenceModel {
    /// The layout `train.py` writes: eight little-endian u32 (pieces, width, layers, heads,
    /// inner width, positions, hidden units, classes), the encoder ([`Encoder::read`]), then the
    /// hidden layer's and the output layer's f32 weights (row by row) and biases.
    fn parse(vocab: &str, bytes: &[u8]) -> Option<SentenceModel> {
        let pieces = WordPiece::new(vocab)?;
        let mut reader = Reader(bytes);
        let shape = Shape {
            pieces: reader.u32()?,
            width: reader.u32()?,
            layers: reader.u32()?,
            heads: reader.u32()?,
            inner: reader.u32()?,
            positions: reader.u32()?,
        };
        let (hidden, classes) = (reader.u32()?, reader.u32()?);
        if classes != CLASSES.len() || shape.pieces != vocab.lines().count() || shape.positions < MAX_PIECES {
            return None;
        }
        let encoder = Encoder::read(&mut reader, &shape)?;
        let hidden_layer = reader.layer(shape.width, hidden)?;
        let output = reader.layer(hidden, classes)?;
        reader.0.is_empty().then_some(SentenceModel { pieces, encoder, hidden: hidden_layer, output })
    }

    fn preference_in(&self, sentence: &str) -> Option<Category> {
        let chances = self.chances(sentence)?;
        if chances[0] >= 1.0 - FLAG_ABOVE {
            return None;
        }
        // The likeliest category among the preferences.
        let best = (1..CLASSES.len()).max_by(|&a, &b| chances[a].total_cmp(&chances[b]))?;
        CLASSES[best]
    }

    /// The chance of each class ([`CLASSES`]' order) for `sentence`; `None` when it has no piece.
    fn chances(&self, sentence: &str) -> Option<Vec<f32>> {
        let pieces = self.pieces.ids(sentence);
        if pieces.is_empty() {
            return None;
        }
        let ids: Vec<u32> =
            std::iter::once(CLS).chain(pieces.into_iter().take(MAX_PIECES - 2)).chain(std::iter::once(SEP)).collect();
        let mut mean = self.encoder.mean_state(&ids)?;
        let norm = mean.iter().map(|m| m * m).sum::<f32>().sqrt();
        if norm == 0.0 {
            return None;
        }
        mean.iter_mut().for_each(|m| *m /= norm);
        let hidden: Vec<f32> = self.hidden.apply(&mean).into_iter().map(|h| h.max(0.0)).collect();
        let logits = self.output.apply(&hidden);
        let top = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let weights: Vec<f32> = logits.iter().map(|l| (l - top).exp()).collect();
        let total: f32 = weights.iter().sum();
        Some(weights.into_iter().map(|w| w / total).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_built_into_the_binary_parses() {
        assert!(MODEL.is_some());
    }

    /// The ids BERT's own tokenizer gives sentences of the training corpora (in English and the
    /// other languages it holds), written by `train.py` with Hugging Face `tokenizers`.
    #[test]
    fn pieces_are_those_of_berts_own_tokenizer() {
        let pieces = WordPiece::new(VOCAB).expect("vocabulary");
        let check = include_str!("../../../../models/fair_housing/wordpiece_check.tsv");
        let mut compared = 0;
        for line in check.lines().filter(|l| !l.starts_with('#')) {
            let (sentence, ids) = line.rsplit_once('\t').expect("sentence<TAB>ids");
            let expected: Vec<u32> = ids.split_whitespace().map(|id| id.parse().expect("id")).collect();
            assert_eq!(pieces.ids(sentence), expected, "{sentence:?}");
            compared += 1;
        }
        assert!(compared >= 300, "{compared} sentences compared");
    }

    /// The chances `train.py` computed with scikit-learn for sentences of the training corpora,
    /// which this reader of the same weights must give too.
    #[test]
    fn the_network_gives_the_chances_it_was_trained_to() {
        let model = MODEL.as_ref().expect("model");
        let check = include_str!("../../../../models/fair_housing/model_check.tsv");
        let mut compared = 0;
        for line in check.lines().filter(|l| !l.starts_with('#')) {
            let (sentence, chance) = line.rsplit_once('\t').expect("sentence<TAB>chance");
            let expected: f32 = chance.parse().expect("chance");
            let clean = model.chances(sentence).expect("pieces")[0];
            assert!((clean - expected).abs() < 1e-4, "{sentence:?}: {clean} against {expected}");
            compared += 1;
        }
        assert!(compared >= 50, "{compared} sentences compared");
    }

    #[test]
    fn text_with_no_piece_reads_as_nothing() {
        assert_eq!(preference_in(""), None);
        assert_eq!(preference_in(" \u{200b}\t"), None);
    }
}
