//! all-MiniLM-L6-v2's encoder (a six-layer BERT) over weights stored as bytes: each row of each
//! matrix (a piece's embedding, a neuron's weights) is signed bytes times a scale of its own, as
//! `train.py` wrote them and read them back when it trained the network on top. The embedding
//! tables stay bytes (a sentence reads a few rows); the layers' matrices are widened to `f32` once,
//! so each layer is a few matrix products.

use super::Reader;
use ndarray::{s, Array1, Array2, Axis};

/// Rows of signed bytes, each with its scale.
struct ByteRows {
    width: usize,
    scales: Vec<f32>,
    codes: Vec<i8>,
}

impl ByteRows {
    fn read(reader: &mut Reader, rows: usize, width: usize) -> Option<Self> {
        let scales = reader.f32s(rows)?;
        let codes = reader.i8s(rows.checked_mul(width)?)?;
        Some(ByteRows { width, scales, codes })
    }

    /// Row `index` as numbers.
    fn row(&self, index: usize) -> Option<impl Iterator<Item = f32> + '_> {
        let scale = *self.scales.get(index)?;
        let codes = self.codes.get(index * self.width..(index + 1) * self.width)?;
        Some(codes.iter().map(move |&c| f32::from(c) * scale))
    }

    fn widened(&self) -> Option<Array2<f32>> {
        let values: Vec<f32> = (0..self.scales.len()).flat_map(|i| self.row(i).into_iter().flatten()).collect();
        Array2::from_shape_vec((self.scales.len(), self.width), values).ok()
    }
}

/// A dense layer: `outputs × inputs` weights, then the biases.
struct Dense {
    weights: Array2<f32>,
    biases: Array1<f32>,
}

impl Dense {
    fn read(reader: &mut Reader, inputs: usize, outputs: usize) -> Option<Self> {
        let weights = ByteRows::read(reader, outputs, inputs)?.widened()?;
        let biases = Array1::from(reader.f32s(outputs)?);
        Some(Dense { weights, biases })
    }

    fn apply(&self, input: &Array2<f32>) -> Array2<f32> {
        input.dot(&self.weights.t()) + &self.biases
    }
}

/// A layer norm's gains and offsets.
struct Norm {
    gains: Array1<f32>,
    offsets: Array1<f32>,
}

impl Norm {
    fn read(reader: &mut Reader, width: usize) -> Option<Self> {
        Some(Norm { gains: Array1::from(reader.f32s(width)?), offsets: Array1::from(reader.f32s(width)?) })
    }

    fn apply(&self, states: &mut Array2<f32>) {
        for mut row in states.rows_mut() {
            let width = row.len() as f32;
            let mean = row.sum() / width;
            let variance = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / width;
            let spread = (variance + 1e-12).sqrt();
            row.iter_mut()
                .zip(self.gains.iter().zip(&self.offsets))
                .for_each(|(v, (g, o))| *v = (*v - mean) / spread * g + o);
        }
    }
}

/// One transformer layer: self-attention, then the feed-forward network, each with a residual
/// connection and a layer norm.
struct Layer {
    query: Dense,
    key: Dense,
    value: Dense,
    attention_output: Dense,
    attention_norm: Norm,
    intermediate: Dense,
    output: Dense,
    output_norm: Norm,
}

/// The encoder's shape, as the file's header gives it.
pub(super) struct Shape {
    pub(super) pieces: usize,
    pub(super) width: usize,
    pub(super) layers: usize,
    pub(super) heads: usize,
    pub(super) inner: usize,
    pub(super) positions: usize,
}

/// The encoder: three embedding tables (pieces, positions, token types) as bytes, and its layers.
pub(super) struct Encoder {
    heads: usize,
    words: ByteRows,
    positions: ByteRows,
    token_types: ByteRows,
    embedding_norm: Norm,
    layers: Vec<Layer>,
}

impl Encoder {
    /// Reads the matrices (each with its biases) and then the layer norms, in `train.py`'s order.
    pub(super) fn read(reader: &mut Reader, shape: &Shape) -> Option<Self> {
        let width = shape.width;
        if shape.heads == 0 || !width.is_multiple_of(shape.heads) {
            return None;
        }
        let words = ByteRows::read(reader, shape.pieces, width)?;
        let positions = ByteRows::read(reader, shape.positions, width)?;
        let token_types = ByteRows::read(reader, 2, width)?;
        let mut dense = Vec::new();
        for _ in 0..shape.layers {
            dense.push([
                Dense::read(reader, width, width)?,
                Dense::read(reader, width, width)?,
                Dense::read(reader, width, width)?,
                Dense::read(reader, width, width)?,
                Dense::read(reader, width, shape.inner)?,
                Dense::read(reader, shape.inner, width)?,
            ]);
        }
        let embedding_norm = Norm::read(reader, width)?;
        let mut layers = Vec::new();
        for [query, key, value, attention_output, intermediate, output] in dense {
            let attention_norm = Norm::read(reader, width)?;
            let output_norm = Norm::read(reader, width)?;
            layers.push(Layer {
                query,
                key,
                value,
                attention_output,
                attention_norm,
                intermediate,
                output,
                output_norm,
            });
        }
        Some(Encoder { heads: shape.heads, words, positions, token_types, embedding_norm, layers })
    }

    /// The mean of the last hidden states over `ids` (a sentence's pieces between [CLS] and
    /// [SEP]); `None` for an id or a position the tables do not hold.
    pub(super) fn mean_state(&self, ids: &[u32]) -> Option<Vec<f32>> {
        let width = self.words.width;
        let mut states = Array2::<f32>::zeros((ids.len(), width));
        for (position, (&id, mut row)) in ids.iter().zip(states.rows_mut()).enumerate() {
            let word = self.words.row(usize::try_from(id).ok()?)?;
            let place = self.positions.row(position)?;
            let token_type = self.token_types.row(0)?;
            for (v, ((w, p), t)) in row.iter_mut().zip(word.zip(place).zip(token_type)) {
                *v = w + p + t;
            }
        }
        self.embedding_norm.apply(&mut states);
        for layer in &self.layers {
            states = self.layer(layer, states);
        }
        states.mean_axis(Axis(0)).map(|mean| mean.to_vec())
    }

    fn layer(&self, layer: &Layer, states: Array2<f32>) -> Array2<f32> {
        let (query, key, value) = (layer.query.apply(&states), layer.key.apply(&states), layer.value.apply(&states));
        let size = states.ncols() / self.heads;
        let mut context = Array2::<f32>::zeros(states.raw_dim());
        for head in 0..self.heads {
            let columns = s![.., head * size..(head + 1) * size];
            let mut scores = query.slice(columns).dot(&key.slice(columns).t()) / (size as f32).sqrt();
            for mut row in scores.rows_mut() {
                let top = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                row.mapv_inplace(|s| (s - top).exp());
                let total = row.sum();
                row.mapv_inplace(|s| s / total);
            }
            context.slice_mut(columns).assign(&scores.dot(&value.slice(columns)));
        }
        let mut attended = states + layer.attention_output.apply(&context);
        layer.attention_norm.apply(&mut attended);
        let mut inner = layer.intermediate.apply(&attended);
        // GELU, with the error function as BERT defines it.
        inner.mapv_inplace(|v| 0.5 * v * (1.0 + libm::erf(f64::from(v) / std::f64::consts::SQRT_2) as f32));
        let mut output = attended + layer.output.apply(&inner);
        layer.output_norm.apply(&mut output);
        output
    }
}
