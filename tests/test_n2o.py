"""Tests for embeval_nb.n2o and the shared layers it uses: exact cosine neighbours (embeval_nb.neighbours.cosine_knn)
against scikit-learn brute force (with ties, blocks, memory maps, sparse rows, a dask LocalCluster), N2O as a set
intersection, the chance level, paraphrase ranks, bad input, the corpus (embeval_nb.data) and the embedders
(embeval_nb.embeddings)."""
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import cosine_similarity
from sklearn.neighbors import NearestNeighbors

from embeval_nb import data as D
from embeval_nb import embeddings as EMB
from embeval_nb.data import ledes, mixed_sentence_corpus
from embeval_nb.embeddings import EMBEDDERS, sentence_embeddings
from embeval_nb.n2o import (chance_n2o, jaccard, n2o, n2o_matrix, needle_pairs, neighbour_overlap, outlier_neighbours,
                            overlap_matrix, paraphrase_ranks, popular_neighbours, token_overlap)
from embeval_nb.metrics import normalize_rows
from embeval_nb.neighbours import _block_rows, cosine_knn


def reference(E, queries, k, exclude_self=True):
    "Cosines by scikit-learn (float64), sorted by similarity then row: (sims, idx)."
    C = cosine_similarity(np.asarray(E[queries], dtype=np.float64), np.asarray(E, dtype=np.float64))
    if exclude_self:
        C[np.arange(len(queries)), queries] = -np.inf
    order = np.lexsort((np.broadcast_to(np.arange(C.shape[1]), C.shape), -C), axis=1)[:, :k]
    return np.take_along_axis(C, order, 1), order


def one_per_row(n, d):
    "An (n, d) sparse matrix with a one in every row (so that no row is empty)."
    return sp.csr_matrix((np.ones(n), (np.arange(n), np.arange(n) % d)), shape=(n, d))


def tied_data(seed, n=4000, d=32, dtype=np.float32):
    "Gaussian rows with exact ties: copies of row 1 and power-of-two multiples of row 2."
    rng = np.random.default_rng(seed)
    E = rng.normal(size=(n, d)).astype(dtype)
    E[500:520] = E[1]
    E[600], E[601], E[602] = 2 * E[2], 0.25 * E[2], 8 * E[2]
    queries = np.r_[1, 2, 505, rng.choice(np.arange(700, n), 37, replace=False)]
    return E, queries


# ---------------------------------------------------------------- cosine_knn
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("working_memory", [None, 0.04, 0.15])
def test_knn_matches_reference_with_ties(seed, working_memory):
    E, queries = tied_data(seed)
    if working_memory is not None:                                   # 262 and 983 rows a block: several blocks
        assert 1 < _block_rows(E, len(queries), working_memory) < len(E) // 3
    sims, idx = cosine_knn(E, queries, 25, working_memory=working_memory)
    ref_sims, ref_idx = reference(E, queries, 25)
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_allclose(sims, ref_sims, rtol=0, atol=1e-12)
    assert idx[0, :20].tolist() == list(range(500, 520)) and idx[1, :3].tolist() == [600, 601, 602]
    assert (np.diff(sims, axis=1) <= 0).all()


@pytest.mark.parametrize("seed", range(3))
def test_knn_matches_sklearn_nearest_neighbors(seed):
    rng = np.random.default_rng(seed)
    E = rng.normal(size=(3000, 48)).astype(np.float32)
    queries = rng.choice(3000, 50, replace=False)
    sims, idx = cosine_knn(E, queries, 30)
    dist, nbr = NearestNeighbors(n_neighbors=31, metric="cosine", algorithm="brute").fit(E).kneighbors(E[queries])
    assert (nbr[:, 0] == queries).all()
    np.testing.assert_array_equal(idx, nbr[:, 1:])
    np.testing.assert_allclose(sims, 1 - dist[:, 1:], atol=1e-6)


def test_knn_without_excluding_the_query():
    E, queries = tied_data(5)
    sims, idx = cosine_knn(E, queries, 10, exclude_self=False)
    ref_sims, ref_idx = reference(E, queries, 10, exclude_self=False)
    np.testing.assert_array_equal(idx, ref_idx)
    assert idx[0, 0] == 1 and idx[2, :2].tolist() == [1, 500]     # row 505 ties with row 1: the smaller row first


def test_knn_tie_crowd_takes_the_exact_pass():
    "More tied rows than candidates: the second, exact pass must still break the ties by row."
    E, _ = tied_data(6)
    E[1000:1600] = E[9]
    assert _block_rows(E, 2, 0.0025) == 327
    sims, idx = cosine_knn(E, [9, 1300], 40, working_memory=0.0025)
    assert idx[0].tolist() == list(range(1000, 1040)) and idx[1].tolist() == [9] + list(range(1000, 1039))
    np.testing.assert_array_equal(sims, np.ones((2, 40)))            # copies of the query's direction: exactly 1


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int32])
def test_knn_other_dtypes_are_read_as_float32(dtype):
    E, queries = tied_data(7, n=1500, d=16)
    E = (E * 10).astype(dtype)
    idx = cosine_knn(E, queries, 12)[1]
    np.testing.assert_array_equal(idx, reference(E.astype(np.float32), queries, 12)[1])


def test_knn_huge_and_tiny_rows():
    rng = np.random.default_rng(8)
    E = rng.normal(size=(1200, 20)).astype(np.float32)
    E[::3] *= np.float32(1e35)
    E[1::3] *= np.float32(1e-38)                                     # subnormal entries
    queries = rng.choice(1200, 30, replace=False)
    # scikit-learn's cosine_similarity leaves rows of norm below 10 eps unnormalised, so the reference is numpy's
    X = E.astype(np.float64) / np.linalg.norm(E.astype(np.float64), axis=1, keepdims=True)
    C = X[queries] @ X.T
    C[np.arange(len(queries)), queries] = -np.inf
    ref_idx = np.lexsort((np.broadcast_to(np.arange(len(E)), C.shape), -C), axis=1)[:, :15]
    ref_sims = np.take_along_axis(C, ref_idx, 1)
    sims, idx = cosine_knn(E, queries, 15)
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_allclose(sims, ref_sims, atol=1e-12)


def test_knn_memmap(tmp_path):
    E, queries = tied_data(9)
    np.save(tmp_path / "E.npy", E)
    M = np.load(tmp_path / "E.npy", mmap_mode="r")
    assert _block_rows(M, len(queries), 0.015) == 98
    a, b = cosine_knn(M, queries, 20, working_memory=0.015), cosine_knn(E, queries, 20)
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[0], b[0])


def test_knn_sparse_matches_reference():
    rng = np.random.default_rng(10)
    X = sp.random(3000, 400, density=0.02, random_state=10, format="csr") + one_per_row(3000, 400)
    X = sp.vstack([X, X[:10] * 4.0, X[:10]]).tocsr()                  # exact ties with rows 0-9
    queries = np.r_[0, 3, rng.choice(np.arange(10, 3000), 30, replace=False)]
    assert _block_rows(X, len(queries), 1.0) == 606
    sims, idx = cosine_knn(X, queries, 20, working_memory=1.0)
    ref_sims, ref_idx = reference(X.toarray(), queries, 20)
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_allclose(sims, ref_sims, atol=1e-12)
    assert idx[0, :2].tolist() == [3000, 3010]


@pytest.mark.parametrize("fmt", ["csc", "lil", "coo", "bsr"])
def test_knn_sparse_formats_other_than_csr(fmt):
    "Any scipy sparse format (check_corpus accepts them all) gives the neighbours of its CSR form."
    X = sp.random(1500, 200, density=0.03, random_state=22, format="csr") + one_per_row(1500, 200)
    queries = np.array([0, 3, 700, 1499])
    expected = cosine_knn(X, queries, 15)
    got = cosine_knn(X.asformat(fmt), queries, 15)
    np.testing.assert_array_equal(got[1], expected[1])
    np.testing.assert_array_equal(got[0], expected[0])


def test_knn_on_a_dask_local_cluster():
    da = pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    E, queries = tied_data(11)
    expected = cosine_knn(E, queries, 20)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        sims, idx = cosine_knn(da.from_array(E, chunks=(450, 32)), queries, 20)
        E[77] = 0
        with pytest.raises(ValueError, match="E row 77 is a zero vector"):
            cosine_knn(da.from_array(E, chunks=(450, 32)), queries, 20)
    np.testing.assert_array_equal(idx, expected[1])
    np.testing.assert_array_equal(sims, expected[0])


@pytest.mark.parametrize("queries,k,error,match", [
    ([1, 5000], 3, ValueError, r"queries\[1\] = 5000 is out of range for 4000 rows \(0\.\.3999\)"),
    ([-1], 3, ValueError, r"queries\[0\] = -1 is out of range"),
    ([4, 2, 4], 3, ValueError, r"queries repeats row 4 \(positions \[0, 2\]\)"),
    ([], 3, ValueError, "queries is empty"),
    ([[1, 2]], 3, ValueError, "queries must be a 1-D sequence of row indices, got shape"),
    ([1.0], 3, TypeError, "queries must hold integer row indices"),
    ("12", 3, TypeError, "queries must be a 1-D sequence of row indices, got str"),
    (None, 3, TypeError, "queries must be a 1-D sequence of row indices, got NoneType"),
    ([1], 4000, ValueError, r"k must be an integer in 1\.\.3999, got 4000 \(the corpus has 4000 rows and a query is not "
                            r"its own neighbour\)"),
    ([1], 0, ValueError, r"k must be an integer in 1\.\.3999, got 0"),
    ([1], 2.0, TypeError, "k must be an integer, got 2.0"),
    ([1], True, TypeError, "k must be an integer, got True"),
    ([1], None, TypeError, "k must be an integer, got None"),
])
def test_knn_bad_queries_and_k(queries, k, error, match):
    E, _ = tied_data(12)
    with pytest.raises(error, match=match):
        cosine_knn(E, queries, k)


def test_knn_bad_rows_are_named():
    E, _ = tied_data(13)
    for row, value, match in [(3333, 0.0, "E row 3333 is a zero vector"), (17, np.nan, "E row 17 has NaN"),
                              (18, np.inf, "E row 18 has NaN or infinite")]:
        X = E.copy()
        X[row] = value
        with pytest.raises(ValueError, match=match):
            cosine_knn(X, [1, 2], 5, working_memory=0.15)
    with pytest.raises(ValueError, match="E must be a non-empty 2-D"):
        cosine_knn(np.zeros((0, 4)), [0], 1)
    with pytest.raises(TypeError, match="E must be a numeric 2-D"):
        cosine_knn(np.array([["a", "b"]]), [0], 1)
    with pytest.raises(TypeError, match="E is None"):
        cosine_knn(None, [0], 1)
    with pytest.raises(ValueError, match="working_memory must be a number > 0, got 0"):
        cosine_knn(E, [0], 3, working_memory=0)
    with pytest.raises(TypeError, match="working_memory must be a real number"):
        cosine_knn(E, [0], 3, working_memory="32 MiB")
    with pytest.raises(TypeError, match="exclude_self must be True or False"):
        cosine_knn(E, [0], 3, exclude_self=1)
    with pytest.raises(ValueError, match="E row 1 is a zero vector"):
        cosine_knn(sp.csr_matrix([[1.0, 0], [0, 0], [0, 1]]), [0], 1)


def test_knn_rows_beyond_the_float32_range():
    "float64 rows too large or too small for float32 are scaled by a power of two per row: exact neighbours still."
    rng = np.random.default_rng(30)
    H = rng.normal(size=(400, 8))
    H[::2] *= 1e300
    H[1::2] *= 1e-300
    queries = np.array([0, 1, 7, 100])
    U = H / np.abs(H).max(1, keepdims=True)                           # exact scaling, then numpy's cosines
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    C = U[queries] @ U.T
    C[np.arange(len(queries)), queries] = -np.inf
    ref_idx = np.lexsort((np.broadcast_to(np.arange(len(H)), C.shape), -C), axis=1)[:, :12]
    sims, idx = cosine_knn(H, queries, 12)
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_allclose(sims, np.take_along_axis(C, ref_idx, 1), rtol=0, atol=1e-12)
    sims, idx = cosine_knn(np.full((5, 3), 1e300), [0], 2)              # identical rows: similarity exactly 1
    assert idx.tolist() == [[1, 2]] and sims.tolist() == [[1.0, 1.0]]


# ---------------------------------------------------------------- N2O
def test_overlap_is_a_set_intersection():
    a = np.array([[10, 11, 12, 13], [1, 2, 3, 4]])
    b = np.array([[13, 12, 11, 10], [4, 9, 2, 8]])
    np.testing.assert_allclose(neighbour_overlap(a, b), [1.0, 0.5])    # position by position: [0, 0]
    np.testing.assert_allclose(neighbour_overlap(a, b, k=2), [0.0, 0.0])
    np.testing.assert_allclose(neighbour_overlap(a[:, :3], b), [2 / 3, 1 / 3])
    with pytest.raises(ValueError, match="idx_a has 2 queries and idx_b has 1"):
        neighbour_overlap(a, b[:1])
    with pytest.raises(ValueError, match="repeats a row"):
        neighbour_overlap([[1, 2, 1]], [[1, 2, 3]])
    with pytest.raises(TypeError, match="idx_a must hold integer neighbour rows"):
        neighbour_overlap([[0.5, 1.0]], [[1, 2]])
    with pytest.raises(ValueError, match=r"k must be an integer in 1\.\.3, got 4 \(the shorter neighbour list\)"):
        neighbour_overlap(a[:, :3], b, k=4)
    with pytest.raises(TypeError, match="k must be an integer, got 2.0"):
        neighbour_overlap(a, b, k=2.0)


def test_n2o_with_itself_and_with_rescaled_rows_is_one():
    E, queries = tied_data(14)
    rng = np.random.default_rng(14)
    assert n2o(E, E, queries, 30) == 1.0
    assert n2o(E, E * rng.uniform(0.1, 10, (len(E), 1)).astype(np.float32), queries, 30) == 1.0


@pytest.mark.parametrize("n,k", [(2000, 50), (5000, 10)])
def test_random_embedders_overlap_at_the_chance_level(n, k):
    "Independent random embedders: mean N2O over many queries within 4 standard errors of k / (n - 1)."
    rng = np.random.default_rng(n + k)
    A, B = rng.normal(size=(n, 16)).astype(np.float32), rng.normal(size=(n, 16)).astype(np.float32)
    queries = rng.choice(n, 1000, replace=False)
    per_query = neighbour_overlap(cosine_knn(A, queries, k)[1], cosine_knn(B, queries, k)[1])
    p = chance_n2o(n, k)
    se = np.sqrt(p * (1 - p) / k / len(queries))                       # hypergeometric counts, nearly binomial
    assert abs(per_query.mean() - p) < 4 * se


def test_n2o_matrix_and_overlap_matrix():
    E, queries = tied_data(15)
    rng = np.random.default_rng(15)
    R = rng.normal(size=E.shape)
    M = n2o_matrix({"E": E, "E2": 3 * E, "R": R}, queries, 20)
    assert M.loc["E", "E2"] == 1.0 and np.allclose(M.values, M.values.T) and (np.diag(M) == 1).all()
    assert M.loc["E", "R"] == n2o(E, R, queries, 20)
    lists = {"E": cosine_knn(E, queries, 20)[1], "R": cosine_knn(R, queries, 20)[1]}
    assert overlap_matrix(lists, k=5).loc["E", "R"] == neighbour_overlap(lists["E"], lists["R"], 5).mean()
    with pytest.raises(ValueError, match="different numbers of rows"):
        n2o_matrix({"E": E, "short": E[:10]}, queries[:1], 3)
    with pytest.raises(ValueError, match="A has 4000 rows and B has 3999"):
        n2o(E, E[1:], [1], 3)


def test_chance_level_formula():
    assert chance_n2o(101, 50) == 0.5 and chance_n2o(8_000_001, 50) == 50 / 8_000_000
    with pytest.raises(ValueError):
        chance_n2o(10, 10)


# ---------------------------------------------------------------- token overlap, paraphrase ranks, popularity
def test_jaccard_and_token_overlap():
    assert jaccard(["a", "b", "b"], ["b", "c"]) == 1 / 3 and jaccard([], ["x"]) == 0
    with pytest.raises(ValueError, match="both empty"):
        jaccard([], [])
    with pytest.raises(TypeError, match="not a string"):
        jaccard(["a"], "a b")
    tokens = [["a", "b"], ["a", "b"], ["c"], ["a", "c"]]
    np.testing.assert_allclose(token_overlap(tokens, [0, 2], [[1, 3], [3, 0]]), [[1, 1 / 3], [1 / 2, 0]])
    with pytest.raises(ValueError, match="outside"):
        token_overlap(tokens, [0], [[7]])


def direct_rank_bounds(E, Q, T, tol=1e-12):
    """Ranks by scikit-learn's cosines (float64), as (low, high): 1 + the rows more similar than the target by more than
    `tol`, and 1 + the rows at least as similar up to `tol` (cosines that tie, at 0 say, differ in the last bits)."""
    C = cosine_similarity(Q.astype(np.float64), E.astype(np.float64))
    t = np.array([cosine_similarity(Q[i:i + 1].astype(np.float64), T[i:i + 1].astype(np.float64))[0, 0]
                  for i in range(len(Q))])
    return 1 + (C > t[:, None] + tol).sum(1), 1 + (C >= t[:, None] - tol).sum(1)


def exact_similarities(A, B):
    "(n, m) exact similarities by their definition, in plain numpy: dot products of canonical unit rows summed in column order, clipped to [-1, 1], exactly 1 for equal unit rows."
    A, B = normalize_rows(np.asarray(A, np.float64)), normalize_rows(np.asarray(B, np.float64))
    S = np.zeros((len(A), len(B)))
    for t in range(A.shape[1]): S += A[:, t, None] * B[None, :, t]       # elementwise IEEE steps: the kernel's order
    S = np.clip(S, -1, 1)
    S[(A[:, None, :] == B[None, :, :]).all(2)] = 1.0
    return S


def exact_ranks(E, Q, T):
    "Ranks by the definition of the exact similarity (ties against the target)."
    S = exact_similarities(Q, E)
    t = np.array([exact_similarities(Q[i:i + 1], T[i:i + 1])[0, 0] for i in range(len(Q))])
    return 1 + (S >= t[:, None]).sum(1)


def check_ranks(ranks, E, Q, T):
    "Ranks equal to the exact kernel's, bit for bit, and within scikit-learn's up to ties; the reference bounds returned."
    np.testing.assert_array_equal(ranks, exact_ranks(E, Q, T))
    low, high = direct_rank_bounds(E, Q, T)
    assert ((low <= ranks) & (ranks <= high)).all()
    return low, high


@pytest.mark.parametrize("seed", range(3))
def test_paraphrase_ranks_match_a_direct_count(seed):
    rng = np.random.default_rng(seed)
    E = rng.normal(size=(3000, 24)).astype(np.float32)
    Q = rng.normal(size=(40, 24)).astype(np.float32)
    T = (Q + rng.normal(scale=rng.uniform(0.5, 3, (40, 1)), size=Q.shape)).astype(np.float32)
    T[0] = Q[0]
    assert _block_rows(E, len(Q), 0.14) == 917
    ranks = paraphrase_ranks(E, Q, T, working_memory=0.14)
    np.testing.assert_array_equal(paraphrase_ranks(E, Q, T), ranks)        # one block
    low, high = check_ranks(ranks, E, Q, T)
    np.testing.assert_array_equal(low, high)                         # no near-ties here: scikit-learn's ranks exactly
    assert ranks[0] == 1 and ranks.min() >= 1


def test_paraphrase_ranks_ties_exclusion_sparse_and_dask():
    rng = np.random.default_rng(20)
    E = rng.normal(size=(2000, 16)).astype(np.float32)
    Q = rng.normal(size=(5, 16)).astype(np.float32)
    T = E[[10, 11, 12, 13, 14]] * 2                                  # each target ties with one corpus row
    ranks = paraphrase_ranks(E, Q, T)
    check_ranks(ranks, E, Q, T)
    assert (paraphrase_ranks(E, Q, T, exclude=[10, 11, 12, 13, 14]) == ranks - 1).all()
    da = pytest.importorskip("dask.array")
    np.testing.assert_array_equal(paraphrase_ranks(da.from_array(E, chunks=300), Q, T), ranks)
    X = sp.random(1500, 200, density=0.03, random_state=21, format="csr") + one_per_row(1500, 200)
    Qs, Ts = X[:20] + sp.eye(20, 200, k=50, format="csr"), X[20:40] * 4.0
    ranks = paraphrase_ranks(X, Qs, Ts)
    low, high = check_ranks(ranks, X.toarray(), Qs.toarray(), Ts.toarray())
    clear = high - low == 1                  # the only near-tie: the target's own row X[20 + i], which counts against it
    assert clear.sum() >= 4 and (ranks[clear] == high[clear]).all()
    assert (ranks[~clear] == 1501).all()     # targets orthogonal to their query: cosine exactly 0, tied with most rows
    np.testing.assert_array_equal(paraphrase_ranks(X, Qs, Ts, working_memory=0.05), ranks)
    with pytest.raises(TypeError, match="sparse if and only if"):
        paraphrase_ranks(X, Qs.toarray(), Ts)
    with pytest.raises(ValueError, match="queries has 5 rows and targets has 4"):
        paraphrase_ranks(E, Q, T[:4])
    with pytest.raises(ValueError, match="targets row 2 is a zero vector"):
        paraphrase_ranks(E, Q, T * [[1], [1], [0], [1], [1]])
    with pytest.raises(ValueError, match="exclude must hold"):
        paraphrase_ranks(E, Q, T, exclude=[1, 2])


def test_popular_and_outlier_neighbours():
    lists = {"a": np.array([[5, 6, 7, 8, 9]]), "b": np.array([[6, 5, 1, 2, 3]]), "c": np.array([[5, 4, 6, 0, 7]])}
    assert popular_neighbours(lists, top=3)[0].tolist() == [5, 6]
    out = outlier_neighbours(lists, top=5, k=5)[0]
    assert out == {"a": [(4, 8), (5, 9)], "b": [(3, 1), (4, 2), (5, 3)], "c": [(2, 4), (4, 0)]}
    with pytest.raises(ValueError, match="at least two"):
        popular_neighbours({"a": lists["a"]})


# ---------------------------------------------------------------- corpus and embedders
def test_corpus_sizes_and_queries():
    small = mixed_sentence_corpus(1500, seed=1)
    assert len(small) == 1500 and small.sentence.is_unique and len(ledes(small)) > 5
    assert (small.position.iloc[ledes(small)] == 0).all() and (small.source.iloc[ledes(small)] == "bbcsport").all()
    pairs = needle_pairs()
    held_out = set(pairs.sentence1) | set(pairs.sentence2)
    big = mixed_sentence_corpus(32000, exclude=held_out, seed=0)
    assert len(big) == 32000 and big.sentence.is_unique and not big.sentence.isin(held_out).any()
    assert set(D.NEWS_SOURCES) <= set(big.source) and big.source.isin(D.OTHER_SOURCES).sum() > 0
    assert len(ledes(big)) > 600
    with pytest.raises(ValueError, match="size must be an integer >= 2"):
        mixed_sentence_corpus(1)
    with pytest.raises(TypeError, match="size must be an integer, got 1500.0"):
        mixed_sentence_corpus(1500.0)


def test_needle_pairs_follow_the_paper():
    pairs = needle_pairs()
    assert len(pairs) == 145 and (pairs.genre == "main-news").all() and pairs.score.between(4, 5).all()
    assert (pairs.overlap < 0.6).all() and len(needle_pairs(max_overlap=1.0)) > len(pairs)
    with pytest.raises(ValueError, match=r"max_overlap must be a number in \[0, 1\], got 1.01"):
        needle_pairs(max_overlap=1.01)
    with pytest.raises(ValueError, match="low must be a number in"):
        needle_pairs(low=-1)


def test_embedders_registry_covers_the_families():
    assert len(EMBEDDERS) >= 14
    assert {e.composition for e in EMBEDDERS.values()} == {"n/a", "average", "[CLS]"}
    cls = [e for e in EMBEDDERS.values() if e.composition == "[CLS]"]
    assert all(any(o.options == (e.options[0], "mean") for o in EMBEDDERS.values()) for e in cls)


def test_average_word_vectors_against_a_loop():
    from embeval_nb.embeddings import WordVectors
    rng = np.random.default_rng(3)
    wv = WordVectors([f"w{i}" for i in range(50)], rng.normal(size=(50, 7)).astype(np.float32))
    docs = [[f"w{j}" for j in rng.integers(0, 60, rng.integers(0, 9))] for _ in range(40)]
    got = EMB.average_word_vectors(wv, docs)
    for doc, row in zip(docs, got):
        known = [wv.vectors[wv.index[w]] for w in doc if w in wv.index]
        np.testing.assert_allclose(row, np.mean(known, 0) if known else 0, rtol=1e-5, atol=1e-6)


def test_tfidf_against_the_formula():
    docs = [["a", "b", "b"], ["a", "c"], ["c", "d", "d", "d"], ["b"]]
    X = EMB.tfidf_vectors(docs).toarray()
    vocab = sorted({w for d in docs for w in d})
    df = {w: sum(w in d for d in docs) for w in vocab}
    for doc, row in zip(docs, X):
        raw = {w: doc.count(w) * np.log2(len(docs) / df[w]) for w in set(doc)}
        norm = np.sqrt(sum(v * v for v in raw.values()))
        assert sorted(np.round(row[row > 0], 12)) == sorted(np.round([v / norm for v in raw.values() if v > 0], 12))


def test_sentence_embeddings_cache_and_errors(monkeypatch, tmp_path):
    monkeypatch.setenv("EMBEVAL_CACHE", str(tmp_path))
    texts = ["The cat sat on the mat.", "A dog ran in the park.", "Stocks fell sharply on Monday."] * 3
    a = sentence_embeddings("w2v-sg", texts, seed=1)
    assert a.shape == (9, 100) and a.dtype == np.float32
    assert len(list((tmp_path / "embedders").glob("*.npy"))) == 1
    X = sentence_embeddings("tfidf", texts)
    assert sp.issparse(X) and X.shape[0] == 9 and len(list((tmp_path / "embedders").glob("*.sparse.npz"))) == 1
    def no_recompute(*args):
        raise AssertionError("computed again instead of read from the cache")
    monkeypatch.setattr(EMB, "_embed", no_recompute)                  # the second calls must come from the cache
    assert (a == sentence_embeddings("w2v-sg", texts, seed=1)).all()
    assert (X != sentence_embeddings("tfidf", texts)).nnz == 0
    with pytest.raises(AssertionError, match="computed again"):        # another seed is another entry
        sentence_embeddings("w2v-sg", texts, seed=2)
    with pytest.raises(ValueError, match="embedder must be one of 'tfidf', .*got 'elmo'"):
        sentence_embeddings("elmo", texts)
    with pytest.raises(TypeError, match="texts must be a sequence of strings, not one string"):
        sentence_embeddings("tfidf", "The cat sat on the mat.")
    with pytest.raises(TypeError, match=r"texts\[1\] is NoneType, expected str"):
        sentence_embeddings("tfidf", ["The cat sat on the mat.", None])
    fake = EMB.EncoderSpec("not-installed-weights", "not_installed_weights", "engine", 8, ("mean",), True)
    monkeypatch.setitem(EMB.ENCODERS, "fake-encoder", fake)
    with pytest.raises(ImportError, match="not-installed-weights"):
        sentence_embeddings(EMB.SentenceEmbedder("fake", "fake", "average", "8", "-", "encoder", ("fake-encoder", "mean")), texts)


# ---------------------------------------------------------------- the chapter's notebooks, at smoke scale
@pytest.fixture(scope="module")
def smoke(run_notebook):
    "What `papermill nbs/n2o.ipynb ... -p scale smoke` recorded."
    return run_notebook("n2o", scale="smoke")


def test_smoke_corpus_and_queries(smoke):
    c = smoke["n2o/corpus"]
    assert c["sentences"] == 2000 and sum(c["per_source"].values()) == 2000
    assert set(c["per_source"]) == set(D.NEWS_SOURCES) and 0 <= c["duplicate_share"] < 0.5
    q = smoke["n2o/queries"]
    assert q["ledes"] >= 20 and 20 <= q["distinct"] <= 40 and 5 < q["mean_tokens"] < 60
    assert smoke["n2o/needles"] == 20 and smoke["n2o/scale"] == "smoke"


def test_smoke_n2o_matrix(smoke):
    M = smoke["n2o/figure3"]
    names = list(M)
    assert len(names) == 10 and set(names) <= set(EMBEDDERS)
    for a in names:
        assert M[a][a] == 1.0
        for b in names:
            assert M[a][b] == M[b][a] and 0 <= M[a][b] <= 1
    lo, hi = smoke["n2o/figure3_range"]
    assert chance_n2o(2000, 50) < lo <= hi < 1                  # every pair above chance even at smoke scale
    assert M["fasttext"]["w2v-sg"] > M["fasttext"]["fasttext-sub"]    # the same objective with and without subwords


def test_smoke_robustness_and_token_overlap(smoke):
    r = smoke["n2o/robustness"]
    assert -1 <= r["Spearman across k: min"] <= r["Spearman across k: mean"] <= 1
    assert 0 <= r["sd of N2O across samples: min"] <= r["sd of N2O across samples: max"]
    for name, (est, lo, hi) in smoke["n2o/figure5"].items():
        assert 0 <= lo <= est <= hi <= 1
    assert smoke["n2o/figure5"]["tfidf"][0] == max(v[0] for v in smoke["n2o/figure5"].values())


def test_smoke_paraphrases_and_approximate_search(smoke):
    for name, row in smoke["n2o/table4"].items():
        assert 0 < row["mrr"] <= 1 and 0 <= row["top"] <= row["top5"] <= 20
        assert row["top"] / 20 <= row["mrr"] <= (row["top"] + (20 - row["top"]) / 2) / 20
    for key, row in smoke["n2o/appendix_c"].items():
        assert 0 <= row["recall"] <= 1 and row["ms"] > 0
    sizes = smoke["n2o/corpus_size"]
    assert set(sizes) == {"500", "1000", "2000"} and sizes["2000"]["spearman_with_full"] == pytest.approx(1)
    for c, v in smoke["n2o/task_association"].items():
        assert -1 <= v["rho"] <= 1 and 0 < v["p"] <= 1


def test_smoke_claims(smoke):
    from embeval_nb.core import paper_tables
    claims = smoke["n2o/claims"]
    keys = [c["key"] for c in claims]
    assert len(keys) == len(set(keys)) >= 28
    for c in claims:
        assert c["verdict"] in ("holds", "fails", "undecided", "untested", "untestable") and c["statement"] and c["paper"] and c["unit"]
        assert (c["verdict"] == "untested") == c["test"].startswith("not tested here"), c["key"]
        assert c["verdict"] == "untested" or "bootstrap over" in c["test"]
    by_key = {c["key"]: c for c in claims}
    assert by_key["elmo-pairs"]["verdict"] == "untested" and by_key["cls-outlier"]["verdict"] == "untested"
    assert by_key["subword-vs-analogue"]["verdict"] == "holds"   # subwords move fastText more than another implementation
    one = smoke["n2o/static_one_trained"]                       # the static-group claims with one corpus-trained model
    assert sum(n in ("w2v-sg", "w2v-cbow", "fasttext", "fasttext-sub") for n in one["group"]) == 1
    assert set(one["verdicts"]) == {"static-agree", "static-closer-within", "tfidf-outlier"}
    listed = {k for cell in paper_tables("n2o")["account"].claims for k in cell.split() if k != "-"}
    assert listed == set(keys)                                   # the account names every claim of the page, and no other
    assert all(key.startswith("n2o/") for key in smoke)


def test_theory_notebook_runs(run_notebook):
    run_notebook("n2o_theory")


def test_paper_numbers():
    from embeval_nb.core import paper_tables, paper_value
    t = paper_tables("n2o")
    assert sorted(t) == ["account", "numbers", "table1", "table4"] and len(t["table1"]) == 21 and len(t["table4"]) == 21
    assert paper_value(t["table4"].loc["tfidf", "MRR"]) == 0.672 and t["table4"].loc["bert-ft-cls", "# top"] == "19"
    assert paper_value(t["numbers"].loc["Spearman across k, mean", "value"]) == 0.996
    assert set(t["table4"].index) == set(t["table1"].index)


# ---------------------------------------------------------------- a reader's own embedder beside ours
ROOT = Path(__file__).resolve().parents[1]
OWN_EMBEDDER = '''"A reader's embedder, as a module of their own: deterministic, no model."
import zlib
import numpy as np

_R = np.random.default_rng(0).standard_normal((4096, 32))

def embed(texts):
    "(n, 32) float32: a fixed random projection of the counts of hashed lower-cased words (ones for a text without any)."
    rows = [[zlib.crc32(w.encode()) % 4096 for w in t.lower().split()] for t in texts]
    return np.array([_R[r].sum(0) if r else np.ones(32) for r in rows], dtype=np.float32)
'''


@pytest.fixture(scope="module")
def smoke_own(tmp_path_factory):
    "What the smoke run records with one embedder of the reader's, given as a `python:` spec to a module on PYTHONPATH."
    import os, papermill as pm
    from embeval_nb.core import read_records
    root = tmp_path_factory.mktemp("own")
    (root / "own_embedder.py").write_text(OWN_EMBEDDER)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
        mp.setenv("EMBEVAL_RECORD_DIR", str(root)); mp.setenv("EMBEVAL_RECORD_FILE", str(root / "n2o.json"))
        mp.setenv("EMBEVAL_PROGRESS", "0")
        pm.execute_notebook(str(ROOT / "nbs" / "n2o.ipynb"), str(root / "n2o.ipynb"), cwd=str(ROOT), kernel_name="python3",
                            parameters={"scale": "smoke", "extra_embedders": {"mine": "python:own_embedder:embed"}},
                            progress_bar=False)
    return read_records(root / "n2o.json"), root


def test_smoke_with_an_own_embedder(smoke_own, smoke):
    import json
    own, root = smoke_own
    ours = list(smoke["n2o/figure3"])
    assert set(own["n2o/embedders"]) == set(ours) | {"mine"} and own["n2o/embedders"]["mine"]["dim"] == 32
    M = own["n2o/figure3"]
    assert set(M) == set(ours) | {"mine"} and M["mine"]["mine"] == 1.0 and 0 < M["mine"]["tfidf"] < 1
    assert all(M[a][b] == smoke["n2o/figure3"][a][b] for a in ours for b in ours)     # ours as without it
    for key in ("n2o/table4", "n2o/figure5", "n2o/figure6_median", "n2o/sts_spearman"):
        assert set(own[key]) == set(smoke[key]) | {"mine"}, key
    assert {k.split("/")[0] for k in own["n2o/appendix_c"]} == {k.split("/")[0] for k in smoke["n2o/appendix_c"]} | {"mine"}
    assert own["n2o/claims"] == smoke["n2o/claims"]                                    # the claims are about ours
    texts = json.loads((root / "texts" / "n2o.json").read_text())
    assert len(texts) == len(set(texts)) <= own["n2o/texts"] and len(texts) > 2000


def test_own_embedder_name_must_not_be_ours(tmp_path):
    import papermill as pm
    with pytest.raises(pm.PapermillExecutionError, match="are names of ours"):
        pm.execute_notebook(str(ROOT / "nbs" / "n2o.ipynb"), str(tmp_path / "out.ipynb"), cwd=str(ROOT), kernel_name="python3",
                            parameters={"scale": "smoke", "extra_embedders": {"tfidf": "all-MiniLM-L6-v2"}}, progress_bar=False)
