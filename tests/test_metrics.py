"""metrics: every metric of the registry against scipy's cdist (angular from arccos of numpy's cosine similarity), on
duplicates, a point shared by the two sets, one row, float32 and integer input; the exact kernel's bits wherever it
is called (all pairs, any rows and columns, knn at any block size); raw blocks within their proven bounds, cancellation
included; tiles and row chunks cover every pair once within the budget; row normalisation against scikit-learn and
exact under powers of two; exact rescaling; preparation errors that name the argument."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import cdist

from embeval_nb import metrics
from embeval_nb.checks import make_rng
from embeval_nb.metrics import (METRICS, PRECOMPUTED, SQEUCLIDEAN, UNIT_ROWS, Points, _distance, _distance_rows, _raw,
                                _raw_rows, check_metric, metric_code, normalize_rows, pairwise_distances,
                                power_of_two_exponent, prepare, prepare_pair, raw_block, raw_bounds, rescale_exactly,
                                row_chunks, set_working_memory, tiles, unscale, working_memory_bytes)
from embeval_nb.neighbours import knn

POINT_METRICS = ["euclidean", "sqeuclidean", "cityblock", "cosine", "angular"]


# --- moved from test_core.py ------------------------------------------------------------------------

def test_normalize_rows_matches_sklearn():
    from sklearn.preprocessing import normalize
    X = make_rng(0).normal(size=(50, 7)) * make_rng(1).uniform(1e-6, 1e6, (50, 1))
    X[3] = 0
    for norm in ("l1", "l2"):
        np.testing.assert_allclose(normalize_rows(X, norm), normalize(X, norm), rtol=1e-12)
    assert normalize_rows(X, None) is X
    assert normalize_rows(np.array([[1e-300, 0.0]])).tolist() == [[1.0, 0.0]]
    np.testing.assert_allclose(normalize_rows(np.array([[3e300, 4e300], [3e-320, 4e-320]]), "l2"), [[0.6, 0.8]] * 2, rtol=1e-3)
    assert np.isnan(normalize_rows(np.array([[np.nan, 1.0], [np.inf, 1.0]]))).all(1).all()
    with pytest.raises(ValueError, match="norm must be"):
        normalize_rows(X, "max")


def test_check_metric_lists_what_is_allowed():
    assert check_metric("cosine") == "cosine"
    with pytest.raises(ValueError, match="'euclidean', 'sqeuclidean', 'cityblock', 'cosine'"):
        check_metric("l1")
    with pytest.raises(ValueError, match="got None"):
        check_metric(None)


def test_power_of_two_exponent_is_exact_and_leaves_ordinary_input_alone():
    for x in (1e-120, 0.0, 1.0, 3e7, 1e120):
        assert power_of_two_exponent(x) == 0
    rng = np.random.default_rng(0)
    for big in (1e-300, 1e-200, 1e154, 1e200, 1e307):
        A = rng.normal(size=(5, 3)) * big
        k = power_of_two_exponent(float(np.abs(A).max()))
        B = np.ldexp(A, -k)
        assert 2.0 ** 399 <= np.abs(B).max() < 2.0 ** 400 and np.array_equal(np.ldexp(B, k), A)   # exact both ways
        assert np.isfinite(((B[:, None] - B[None]) ** 2).sum(-1)).all()
    with pytest.raises(ValueError, match="largest must be finite"):
        power_of_two_exponent(float("inf"))


# --- test data --------------------------------------------------------------------------------------

def _sets(seed=0, n=23, m=17, d=7):
    "X with duplicates (one a power-of-two multiple, the same direction), Y sharing a row with X."
    rng = make_rng(seed)
    X = rng.normal(size=(n, d)); Y = rng.normal(size=(m, d)) + 0.25
    X[5] = X[2]; X[9] = 4 * X[3]; X[11] = X[2]
    Y[4] = X[7]; Y[10] = Y[1]
    return X, Y


def _cosine_similarity(X, Y):
    "Cosine similarity by numpy, independently of the package."
    X = np.asarray(X, float); Y = np.asarray(Y, float)
    return (X @ Y.T) / np.linalg.norm(X, axis=1)[:, None] / np.linalg.norm(Y, axis=1)[None, :]


def _reference(X, Y, metric):
    "The distances by scipy (angular from arccos of the cosine similarity)."
    X = np.asarray(X, float); Y = np.asarray(Y, float)
    if metric == "angular":
        return np.arccos(np.clip(_cosine_similarity(X, Y), -1, 1)) / np.pi
    return cdist(X, Y, metric)


TOL = {"euclidean": dict(rtol=1e-13, atol=1e-14), "sqeuclidean": dict(rtol=1e-13, atol=1e-14),
       "cityblock": dict(rtol=1e-13, atol=1e-14), "cosine": dict(rtol=1e-12, atol=1e-14),
       "angular": dict(rtol=0, atol=1e-7)}            # arccos of a rounded cosine near 1 is only good to ~1e-8


# --- the registry -----------------------------------------------------------------------------------

def test_registry_codes_are_positions():
    assert METRICS == ("euclidean", "sqeuclidean", "cityblock", "cosine", "angular", "precomputed")
    for code, name in enumerate(METRICS):
        assert metric_code(name) == code == getattr(metrics, name.upper())
    assert UNIT_ROWS == (metrics.COSINE, metrics.ANGULAR)
    with pytest.raises(ValueError, match="^metric must be one of 'euclidean', got 'cosine'$"):
        metric_code("cosine", ("euclidean",))
    for bad in ("Euclidean", "l2", "minkowski", "", 1, ["cosine"]):
        with pytest.raises(ValueError, match="^metric must be one of"):
            check_metric(bad)


# --- all pairs against scipy ------------------------------------------------------------------------

@pytest.mark.parametrize("metric", POINT_METRICS)
def test_pairwise_distances_match_scipy(metric):
    X, Y = _sets()
    D = pairwise_distances(X, Y, metric=metric)
    assert D.shape == (23, 17) and D.dtype == np.float64
    np.testing.assert_allclose(D, _reference(X, Y, metric), **TOL[metric])
    assert D[7, 4] == 0.0                                                      # the shared point: exactly 0
    assert D[2, 3] == D[5, 3] == D[11, 3]                                      # duplicates: the same bits
    DX = pairwise_distances(X, metric=metric)
    np.testing.assert_allclose(DX, _reference(X, X, metric), **TOL[metric])
    assert (np.diag(DX) == 0).all() and (DX == DX.T).all()                    # symmetric to the bit, zero diagonal
    assert DX[2, 5] == DX[2, 11] == DX[5, 11] == 0.0
    if metric in ("cosine", "angular"):
        assert DX[3, 9] == 0.0                                                 # the same direction
    else:
        assert DX[3, 9] > 0
    np.testing.assert_array_equal(DX, pairwise_distances(X, X, metric=metric))
    assert (D >= 0).all() and (metric not in ("cosine", "angular") or (D <= {"cosine": 2, "angular": 1}[metric]).all())


@pytest.mark.parametrize("metric", POINT_METRICS)
def test_pairwise_distances_one_row_float32_and_integers(metric):
    X, Y = _sets(1)
    one = pairwise_distances(X[:1], Y[:1], metric=metric)
    assert one.shape == (1, 1)
    np.testing.assert_allclose(one, _reference(X[:1], Y[:1], metric), **TOL[metric])
    assert pairwise_distances(X[:1], metric=metric).tolist() == [[0.0]]
    X32, Y32 = X.astype(np.float32), Y.astype(np.float32)
    D32 = pairwise_distances(X32, Y32, metric=metric)
    assert D32.dtype == np.float64                                             # float32 input, float64 distances of its values
    np.testing.assert_array_equal(D32, pairwise_distances(X32.astype(np.float64), Y32.astype(np.float64), metric=metric))
    np.testing.assert_allclose(D32, _reference(X32, Y32, metric), **TOL[metric])
    Xi = make_rng(2).integers(-5, 6, size=(12, 4)); Yi = make_rng(3).integers(-5, 6, size=(9, 4))
    Xi[0] = Xi[1] = [1, 2, 0, 0]; Yi[0] = [1, 2, 0, 0]
    Di = pairwise_distances(Xi, Yi, metric=metric)
    np.testing.assert_allclose(Di, _reference(Xi, Yi, metric), **TOL[metric])
    if metric in ("euclidean", "sqeuclidean", "cityblock"):                  # integer sums are exact: scipy's bits
        np.testing.assert_array_equal(Di, cdist(Xi.astype(float), Yi.astype(float), metric))
    assert Di[0, 0] == Di[1, 0] == 0.0


def test_pairwise_distances_precomputed_is_the_matrix():
    X, _ = _sets()
    D = cdist(X, X)
    np.testing.assert_array_equal(pairwise_distances(D, metric="precomputed"), D)
    with pytest.raises(ValueError, match="^metric must be one of"):              # two sets cannot be precomputed
        pairwise_distances(D, D, metric="precomputed")


def test_pairwise_distances_at_extreme_magnitudes():
    X, Y = _sets(4)
    for s, metric in [(2.0 ** 600, "euclidean"), (2.0 ** -600, "euclidean"), (2.0 ** -450, "sqeuclidean"),
                      (2.0 ** 450, "sqeuclidean"), (2.0 ** -300, "sqeuclidean"), (2.0 ** 900, "cityblock"),
                      (2.0 ** -1000, "cosine")]:
        D, ref = pairwise_distances(X * s, Y * s, metric=metric), pairwise_distances(X, Y, metric=metric)
        degree = {"sqeuclidean": 2, "cosine": 0}.get(metric, 1)
        np.testing.assert_array_equal(D, ref * s ** degree)                   # exactly the scaled distances
    D = pairwise_distances(X * 1e200, Y * 1e200, metric="sqeuclidean")
    assert D[7, 4] == 0 and np.isinf(D[D != 0]).all()                       # beyond the largest double: inf


# --- the exact kernel: the same bits wherever it is called ------------------------------------------

@pytest.mark.parametrize("metric", POINT_METRICS)
def test_the_exact_kernel_gives_the_same_bits_everywhere(metric):
    rng = make_rng(5)
    X, Y = _sets(5, n=31, m=26, d=9)                                            # odd d: the kernels' odd last dimension
    P, Q = prepare_pair(X, Y, metric)
    D = pairwise_distances(X, Y, metric=metric)
    for _ in range(4):                                                          # any rows and columns, any order, any count
        rows = rng.choice(31, rng.integers(1, 31), replace=rng.random() < 0.5)
        cols = rng.choice(26, rng.integers(1, 26), replace=rng.random() < 0.5)
        np.testing.assert_array_equal(_distance_rows(P.X, rows, Q.X, cols, P.code), D[np.ix_(rows, cols)])
    for a, b in [(0, 0), (7, 4), (30, 25), (2, 10)]:
        assert _distance(P.X, a, Q.X, b, P.code) == D[a, b] == _distance(Q.X, b, P.X, a, P.code)
    for wm in (None, 1e-5, 0.0004, 0.003):
        for k in (1, 5, 26):
            dist, idx = knn(X, Y, k, metric=metric, working_memory=wm)
            np.testing.assert_array_equal(dist, np.take_along_axis(D, idx, 1))
        DX = pairwise_distances(X, metric=metric)
        dist, idx = knn(X, k=6, metric=metric, working_memory=wm)
        np.testing.assert_array_equal(dist, np.take_along_axis(DX, idx, 1))


def test_the_kernels_raw_value_is_the_ordered_sum():
    "_raw sums (x_t - y_t)^2 (|x_t - y_t| for cityblock) in order t = 0, 1, ...: a Python loop gives the same bits."
    rng = make_rng(6)
    X = rng.normal(size=(9, 13)) * rng.uniform(0.1, 10, 13); Y = rng.normal(size=(6, 13))
    for code in (metrics.EUCLIDEAN, metrics.SQEUCLIDEAN, metrics.CITYBLOCK):
        R = _raw_rows(X, np.arange(9), Y, np.arange(6), code)
        for a in range(9):
            for b in range(6):
                s = 0.0
                for t in range(13):
                    u = float(X[a, t]) - float(Y[b, t])
                    s += abs(u) if code == metrics.CITYBLOCK else u * u
                assert R[a, b] == s == _raw(X[a], Y[b], code)


# --- raw blocks within their bounds -----------------------------------------------------------------

def _cancelling(seed=7, d=11):
    "Rows of large norm that differ by every relative amount from 1e-13 to 1: the Gram identity cancels."
    rng = make_rng(seed)
    base = rng.normal(size=d) * 1e4
    rel = np.r_[0.0, np.logspace(-13, 0, 27)]
    A = base + rel[:, None] * rng.normal(size=(len(rel), d)) * 1e4
    B = np.vstack([base + rel[::3, None] * rng.normal(size=(len(rel[::3]), d)) * 1e4, rng.normal(size=(5, d)), A[3:5]])
    return A, B


@pytest.mark.parametrize("metric", POINT_METRICS)
def test_raw_block_is_within_raw_bounds_of_the_exact_kernel(metric):
    for X, Y in (_sets(8, n=40, m=35), _cancelling()):
        P, Q = prepare_pair(X, Y, metric)
        EP, EQ = raw_bounds(P), raw_bounds(Q)
        assert EP.shape == (len(X),) and (EP >= 0).all()
        exact = _raw_rows(P.X, np.arange(len(X)), Q.X, np.arange(len(Y)), P.code)
        S = raw_block(P, Q, 0, len(X), 0, len(Y))
        assert S.shape == exact.shape
        gap = np.abs(S - exact)
        assert (gap <= EP[:, None] + EQ[None, :]).all(), gap.max()
        t = P.sq[:, None] + Q.sq[None, :]
        small = exact < 1e-5 * t                                                # cancelling pairs: recomputed exactly
        np.testing.assert_array_equal(S[small], exact[small])
        for r0, r1, c0, c1 in tiles(len(X), len(Y), working_memory=200 / 2 ** 20):   # blocks of any shape and place
            B = raw_block(P, Q, r0, r1, c0, c1)
            assert (np.abs(B - exact[r0:r1, c0:c1]) <= EP[r0:r1, None] + EQ[None, c0:c1]).all()
            np.testing.assert_array_equal(B[small[r0:r1, c0:c1]], exact[r0:r1, c0:c1][small[r0:r1, c0:c1]])
            if metric == "cityblock":                                           # no Gram identity: exact blocks
                np.testing.assert_array_equal(B, exact[r0:r1, c0:c1])


def test_raw_block_cancellation_case_by_itself():
    """Two nearly equal rows of norm 1e8: |x|^2 + |y|^2 - 2 x.y loses every digit, the block must not."""
    x = np.array([[1e8, 3e8, -2e8]]); y = x + np.array([[1e-4, 0.0, -2e-4]])
    for metric in ("euclidean", "sqeuclidean"):
        P, Q = prepare_pair(x, y, metric)
        S = raw_block(P, Q, 0, 1, 0, 1)
        true = float(((y - x) ** 2).sum())                                      # y - x is exact (Sterbenz)
        assert S[0, 0] == _raw(P.X[0], Q.X[0], P.code) == pytest.approx(true, rel=1e-15)
        gram = P.sq[0] + Q.sq[0] - 2 * float(P.X[0] @ Q.X[0])
        assert abs(gram - true) >= 0.5 * true                                   # the identity itself has no digit left


def test_raw_bounds_formula_and_exact_blocks():
    X, _ = _sets(9)
    d = X.shape[1]
    for metric in ("euclidean", "sqeuclidean", "cosine", "angular"):
        P = prepare(X, metric)
        np.testing.assert_array_equal(raw_bounds(P), 64.0 * (d + 2) * 2.0 ** -52 * P.sq + (d + 2) * 2.0 ** -1070)
        np.testing.assert_allclose(P.sq, (P.X ** 2).sum(1), rtol=1e-14)
    P = prepare(X, "cityblock")
    assert (raw_bounds(P) == 0).all()
    np.testing.assert_array_equal(raw_block(P, P, 0, 23, 0, 23), _raw_rows(P.X, np.arange(23), P.X, np.arange(23), P.code))
    D = cdist(X, X)
    P = prepare(D, "precomputed")
    assert (raw_bounds(P) == 0).all()
    np.testing.assert_array_equal(raw_block(P, P, 2, 9, 4, 20), D[2:9, 4:20])


# --- tiles and row chunks ---------------------------------------------------------------------------

@pytest.mark.parametrize("n_rows,n_cols", [(1, 1), (7, 3), (3, 7), (40, 40), (97, 13), (0, 5), (5, 0)])
@pytest.mark.parametrize("wm", [1e-9, 64 / 2 ** 20, 500 / 2 ** 20, 0.01, 64])
def test_tiles_cover_every_pair_once_within_the_budget(n_rows, n_cols, wm):
    budget = working_memory_bytes(wm)
    cover = np.zeros((n_rows, n_cols), int)
    for r0, r1, c0, c1 in tiles(n_rows, n_cols, working_memory=wm):
        assert 0 <= r0 < r1 <= n_rows and 0 <= c0 < c1 <= n_cols
        assert (r1 - r0) * (c1 - c0) * 8 <= budget
        cover[r0:r1, c0:c1] += 1
    assert (cover == 1).all()
    if n_rows == n_cols:
        cover = np.zeros((n_rows, n_cols), int)
        for r0, r1, c0, c1 in tiles(n_rows, n_cols, working_memory=wm, symmetric=True):
            assert c0 >= r0 and (r1 - r0) * (c1 - c0) * 8 <= budget
            cover[r0:r1, c0:c1] += 1
        upper = np.triu(np.ones((n_rows, n_cols), bool))
        assert (cover[upper] == 1).all() and (cover <= 1).all()              # each pair i <= j once


@pytest.mark.parametrize("n_rows,n_cols,itemsize", [(10, 1000, 4), (10, 1000, 8), (1, 1, 8), (1000, 1, 8), (0, 4, 8),
                                                    (33, 10 ** 7, 8)])
@pytest.mark.parametrize("wm", [1e-9, 0.001, 0.03, 64])
def test_row_chunks_cover_every_row_once_within_the_budget(n_rows, n_cols, itemsize, wm):
    budget = working_memory_bytes(wm)
    chunks = row_chunks(n_rows, n_cols, working_memory=wm, itemsize=itemsize)
    assert [r for r0, r1 in chunks for r in range(r0, r1)] == list(range(n_rows))
    for r0, r1 in chunks:
        assert r1 > r0 and ((r1 - r0) * n_cols * itemsize <= budget or r1 - r0 == 1)   # at least one row each
    if len(chunks) > 1:                                                        # and as many rows as fit
        assert (chunks[0][1] - chunks[0][0] + 1) * n_cols * itemsize > budget


def test_working_memory_setting_and_environment(monkeypatch):
    monkeypatch.setitem(metrics._WORKING_MEMORY, "mib", None)
    monkeypatch.delenv("EMBEVAL_WORKING_MEMORY", raising=False)
    assert working_memory_bytes() == 64 * 2 ** 20
    monkeypatch.setenv("EMBEVAL_WORKING_MEMORY", "0.5")
    assert working_memory_bytes() == 2 ** 19
    set_working_memory(2)
    assert working_memory_bytes() == 2 * 2 ** 20 and working_memory_bytes(1) == 2 ** 20
    set_working_memory(None)
    assert working_memory_bytes() == 2 ** 19
    assert working_memory_bytes(1e-12) == 8                                    # never below one float64
    for bad, error in [(0, ValueError), (-1, ValueError), (float("nan"), ValueError), (True, TypeError), ("1", TypeError)]:
        with pytest.raises(error, match="^working_memory must be"):
            set_working_memory(bad)
        with pytest.raises(error, match="^working_memory must be"):
            working_memory_bytes(bad)


# --- unit rows --------------------------------------------------------------------------------------

@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_normalize_rows_against_sklearn_on_awkward_rows(norm):
    from sklearn.preprocessing import normalize
    rng = make_rng(10)
    X = rng.normal(size=(40, 6)); X[0] = 0; X[1] = [0, 0, 5, 0, 0, 0]; X[2] = -X[3]; X[4] = 1e-5
    X[5:10] *= rng.uniform(1e-100, 1e100, (5, 1))
    out = normalize_rows(X, norm)
    np.testing.assert_allclose(out, normalize(X, norm=norm), rtol=1e-13, atol=1e-300)
    norms = np.abs(out).sum(1) if norm == "l1" else np.sqrt((out ** 2).sum(1))
    np.testing.assert_allclose(norms[1:], 1, rtol=1e-14)
    assert (out[0] == 0).all() and out[1].tolist() == [0, 0, 1, 0, 0, 0]
    np.testing.assert_array_equal(out[2], -out[3])
    Xs = sp.csr_matrix(X * (rng.random(X.shape) < 0.5))
    np.testing.assert_allclose(normalize_rows(Xs, norm).toarray(), normalize(Xs, norm=norm).toarray(), rtol=1e-13)


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_normalize_rows_is_exact_under_powers_of_two_and_row_position(norm):
    rng = make_rng(11)
    X = np.sign(rng.normal(size=(30, 5))) * (np.abs(rng.normal(size=(30, 5))) + 0.01)   # no entry near 0: no subnormals
    out = normalize_rows(X, norm)
    k = rng.integers(-1000, 1000, 30)
    np.testing.assert_array_equal(normalize_rows(np.ldexp(X, k[:, None]), norm), out)     # each row its own power
    for e in (-1000, -600, 1, 600, 1018):
        np.testing.assert_array_equal(normalize_rows(np.ldexp(X, e), norm), out)
    perm = rng.permutation(30)
    np.testing.assert_array_equal(normalize_rows(X[perm], norm), out[perm])
    np.testing.assert_array_equal(normalize_rows(X[7:8], norm), out[7:8])                 # alone or among others


def test_normalize_rows_types_and_sparse_bits():
    rng = make_rng(12)
    X = rng.normal(size=(15, 8))
    X32 = X.astype(np.float32)
    out32 = normalize_rows(X32)
    assert out32.dtype == np.float32                                          # normalised in float64, returned as float32
    np.testing.assert_array_equal(out32, normalize_rows(X32.astype(np.float64)).astype(np.float32))
    Xi = rng.integers(-3, 4, (6, 4)); Xi[0] = 0
    assert normalize_rows(Xi).dtype == np.float64
    np.testing.assert_array_equal(normalize_rows(Xi), normalize_rows(Xi.astype(float)))
    M = X * (rng.random(X.shape) < 0.4); M[3] = 0; M[1, 0] = 0
    S = sp.coo_matrix(M)
    S = sp.coo_matrix((np.r_[S.data, 0.0, 1.5, -1.5], (np.r_[S.row, 0, 1, 1], np.r_[S.col, 2, 0, 0])), shape=M.shape)
    out = normalize_rows(S)                                                   # duplicates summed, explicit zeros dropped
    assert out.format == "csr" and out.dtype == np.float64 and out.has_canonical_format
    assert (out.data != 0).all()
    np.testing.assert_array_equal(out.toarray(), normalize_rows(S.toarray()))  # the same bits as dense
    assert S.data[-1] == -1.5                                                  # the input is left alone
    assert normalize_rows(np.zeros((0, 3))).shape == (0, 3)
    with pytest.raises(ValueError, match="^norm must be one of"):
        normalize_rows(X, "L2")
    with pytest.raises(TypeError, match="^X must be a 2-D"):
        normalize_rows([["a"]])


# --- exact rescaling --------------------------------------------------------------------------------

def test_rescale_exactly_with_several_arrays():
    rng = make_rng(13)
    A = rng.normal(size=(4, 3)) * 1e250; B = rng.normal(size=5) * 1e200; C = np.zeros((0, 2))
    A2, B2, C2, k = rescale_exactly(A, B, C)
    assert k == power_of_two_exponent(float(np.abs(A).max())) and k > 0
    assert 2.0 ** 399 <= np.abs(A2).max() < 2.0 ** 400
    np.testing.assert_array_equal(np.ldexp(A2, k), A); np.testing.assert_array_equal(np.ldexp(B2, k), B)
    assert C2.shape == (0, 2)
    A3, B3, k3 = rescale_exactly(A, B, near_one=True)
    assert k3 == math.frexp(float(np.abs(A).max()))[1] and 0.5 <= np.abs(A3).max() < 1
    np.testing.assert_array_equal(np.ldexp(A3, k3), A); np.testing.assert_array_equal(np.ldexp(B3, k3), B)
    tiny = rng.normal(size=(3, 3)) * 1e-280
    T2, k4 = rescale_exactly(tiny)
    assert k4 < 0 and 2.0 ** 399 <= np.abs(T2).max() < 2.0 ** 400 and np.array_equal(np.ldexp(T2, k4), tiny)
    T3, k5 = rescale_exactly(tiny, near_one=True)
    assert 0.5 <= np.abs(T3).max() < 1 and np.array_equal(np.ldexp(T3, k5), tiny)


def test_rescale_exactly_leaves_ordinary_input_alone():
    A = np.array([[1e-100, 1e100]]); B = sp.csr_matrix(np.eye(2) * 3)
    for near_one in (False, True):
        out = rescale_exactly(A, B, near_one=near_one)
        assert out[0] is A and out[1] is B and out[2] == 0
    assert rescale_exactly() == (0,)
    assert rescale_exactly(np.zeros((2, 2)))[1] == 0 and rescale_exactly(np.empty(0))[1] == 0


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_rescale_exactly_sparse_matrices(fmt):
    M = sp.random(6, 5, density=0.4, random_state=3, format=fmt) * 1e-300
    D = np.ones((2, 2)) * 1e-310
    M2, D2, k = rescale_exactly(M, D)
    assert k == power_of_two_exponent(float(np.abs(M.toarray()).max())) and k < 0
    assert sp.issparse(M2) and M2.format == fmt
    np.testing.assert_array_equal(np.ldexp(M2.toarray(), k), M.toarray())
    np.testing.assert_array_equal(np.ldexp(D2, k), D)
    assert M.toarray().max() < 1e-290                                         # the input is not scaled in place
    M3, k3 = rescale_exactly(M, near_one=True)
    assert 0.5 <= abs(M3).max() < 1 and np.array_equal(np.ldexp(M3.toarray(), k3), M.toarray())


def test_unscale():
    d = np.array([0.0, 1.0, 3.5])
    assert unscale(d, 0, metrics.EUCLIDEAN) is d
    np.testing.assert_array_equal(unscale(d, 10, metrics.EUCLIDEAN), d * 2.0 ** 10)
    np.testing.assert_array_equal(unscale(d, 10, SQEUCLIDEAN), d * 2.0 ** 20)
    np.testing.assert_array_equal(unscale(d, -10, metrics.CITYBLOCK), d * 2.0 ** -10)
    with np.errstate(over="raise"):
        assert unscale(np.array([1.0]), 700, SQEUCLIDEAN)[0] == np.inf      # inf beyond the largest double, no warning


# --- preparation ------------------------------------------------------------------------------------

@pytest.mark.parametrize("metric", POINT_METRICS)
def test_prepare_gives_what_the_kernels_need(metric):
    X, Y = _sets(14)
    for scale in (1.0, 1e-200, 1e250):
        P = prepare(X * scale, metric)
        assert isinstance(P, Points) and P.X.dtype == np.float64 and P.X.flags.c_contiguous and P.code == metric_code(metric)
        if metric in ("cosine", "angular"):
            assert P.shift == 0
            np.testing.assert_array_equal(P.X, normalize_rows(X * scale))
        else:
            assert P.shift == power_of_two_exponent(float(np.abs(X * scale).max()))
            np.testing.assert_array_equal(np.ldexp(P.X, P.shift), X * scale)
        np.testing.assert_allclose(P.sq, (P.X ** 2).sum(1), rtol=1e-14)
        Pa, Qa = prepare_pair(X * scale, Y * 1e-3 * scale, metric)
        assert Pa.shift == Qa.shift and Pa.code == Qa.code
        if metric not in ("cosine", "angular"):
            np.testing.assert_array_equal(np.ldexp(Qa.X, Qa.shift), Y * 1e-3 * scale)


def test_prepare_errors_name_the_argument():
    X, Y = _sets(15)
    Z = X.copy(); Z[6] = 0
    for metric in ("cosine", "angular"):
        with pytest.raises(ValueError, match=f"^docs row 6 is all zeros: the {metric} distance is undefined$"):
            prepare(Z, metric, name="docs")
        with pytest.raises(ValueError, match=f"^corpus row 6 is all zeros: the {metric} distance is undefined$"):
            prepare_pair(X, Z, metric, names=("queries", "corpus"))
    for metric in ("euclidean", "cityblock"):
        prepare(Z, metric)                                                    # a zero row is a point like any other
    with pytest.raises(ValueError, match="^queries has 7 columns, corpus has 6: one embedder for both$"):
        prepare_pair(X, Y[:, :6], names=("queries", "corpus"), why="one embedder for both")
    with pytest.raises(ValueError, match=r"^corpus contains NaN or infinite values \(first in row 2\)"):
        prepare_pair(X, np.where(np.arange(17)[:, None] == 2, np.nan, Y), names=("queries", "corpus"))
    with pytest.raises(TypeError, match="^docs is None"):
        prepare(None, name="docs")
    with pytest.raises(ValueError, match="^docs needs at least 2 rows, got 1"):
        prepare(X[:1], name="docs", min_rows=2)
    with pytest.raises(ValueError, match="^metric must be one of 'euclidean', 'sqeuclidean', 'cityblock', 'cosine', 'angular', got 'precomputed'$"):
        prepare_pair(X, Y, "precomputed")
    with pytest.raises(ValueError, match="^metric must be one of 'cosine', got 'euclidean'$"):
        prepare_pair(X, Y, "euclidean", allowed=("cosine", "precomputed"))


@pytest.mark.parametrize("bad,msg", [
    (np.ones((3, 4)), r"^with metric='precomputed' D must be a square \(N, N\) distance matrix, got shape \(3, 4\)$"),
    (np.array([[0.0, -1.0], [-1.0, 0.0]]), r"^D is not a distance matrix: D\[0, 1\] = -1\.0 is negative$"),
    (np.array([[0.0, 1.0], [1.0, 0.5]]), r"^D is not a distance matrix: its diagonal is not zero \(D\[1, 1\] = 0\.5\)$"),
    (np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.5, 0.0]]), r"^D is not a distance matrix: it is not symmetric \(D\[1, 2\] = 3\.0, D\[2, 1\] = 3\.5\)$"),
    (np.array([[0.0, np.nan], [np.nan, 0.0]]), r"^D contains NaN or infinite values \(first in row 0\)$")])
def test_prepare_checks_a_precomputed_matrix(bad, msg):
    with pytest.raises(ValueError, match=msg):
        prepare(bad, "precomputed", name="D")


def test_prepare_precomputed_tolerates_rounding_and_mirrors_the_upper_triangle():
    X, _ = _sets(16)
    D = cdist(X, X); D[np.diag_indices(23)] = 1e-15; D[4, 1] *= 1 + 1e-13
    P = prepare(D, "precomputed")
    assert (np.diag(P.X) == 0).all() and (P.X == P.X.T).all() and P.X[4, 1] == D[1, 4]
    assert P.code == PRECOMPUTED and (P.sq == 0).all() and P.shift == 0
