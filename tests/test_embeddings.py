"""embeddings: GloVe, the offline sentence encoder, seeded gensim training."""
import numpy as np
import pytest

from embeval_nb.embeddings import (WordVectors, encode_sentences, l2_normalize, load_glove, train_fasttext,
                                   train_word2vec)


def test_glove_shape_and_known_word():
    g = load_glove()
    assert len(g) == 400_000 and g.dim == 50 and g.vectors.dtype == np.float32
    v, oov = g.lookup(["king", "qwzxqwzx"])
    assert v.shape == (1, 50) and oov == ["qwzxqwzx"] and np.isfinite(v).all()


def test_king_minus_man_plus_woman_is_queen():
    g = load_glove()
    (king, man, woman), _ = g.lookup(["king", "man", "woman"], normalize=True)
    target = king - man + woman
    sims = l2_normalize(np.asarray(g.vectors)) @ (target / np.linalg.norm(target))
    ranked = [g.words[i] for i in np.argsort(-sims)[:5] if g.words[i] not in ("king", "man", "woman")]
    assert ranked[0] == "queen"


def test_sentence_encoder_semantics_and_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEVAL_CACHE", str(tmp_path))
    e = encode_sentences(["cat", "feline", "stocks"])
    assert e.shape == (3, 384) and e.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1, atol=1e-5)
    assert e[0] @ e[1] > e[0] @ e[2]
    assert len(list((tmp_path / "sentences").glob("*.npy"))) == 1
    np.testing.assert_array_equal(encode_sentences(["cat", "feline", "stocks"]), e)
    with pytest.raises(ValueError, match="sequence of strings"):
        encode_sentences(["ok", None])


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
