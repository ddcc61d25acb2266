"""Tests for embeval_nb.crossmatch: the null distribution against exact rational arithmetic, the blossom
matching against networkx, the optimality certificate, bad input, and a smoke run of the chapter notebook."""
import math
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest

from embeval_nb.crossmatch import (_check_duals, _complete_edges, _max_distance, _max_weight_matching,
                                   crossmatch_null_logpmf, crossmatch_null_moments, crossmatch_null_pmf,
                                   crossmatch_test, min_weight_perfect_matching, mmd_permutation_test)


NOQ = np.zeros((0, 0), np.int64)     # kernels' "no precomputed distance matrix"


def exact_pmf(N, n):
    I = N // 2
    out = []
    for a1 in range(n + 1):
        a2, r = divmod(n - a1, 2)
        a0 = I - a1 - a2
        out.append(Fraction(0) if r or a0 < 0 else
                   Fraction(2 ** a1 * math.factorial(I),
                            math.comb(N, n) * math.factorial(a0) * math.factorial(a1) * math.factorial(a2)))
    return out


# ---------------------------------------------------------------- null distribution
def test_pmf_reference_values_n18():
    cdf = np.cumsum(crossmatch_null_pmf(18, 9))
    np.testing.assert_allclose(cdf[[1, 3, 5, 7]], [0.0259, 0.3023, 0.7999, 0.9895], atol=5e-5)


@pytest.mark.parametrize("N,n", [(2, 1), (4, 2), (10, 3), (18, 9), (30, 12), (40, 40), (40, 0), (64, 31), (200, 100)])
def test_pmf_matches_exact_rationals(N, n):
    exact = exact_pmf(N, n)
    assert sum(exact) == 1
    np.testing.assert_allclose(crossmatch_null_pmf(N, n), [float(x) for x in exact], rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("N,n", [(4, 2), (18, 9), (50, 7), (400, 200), (5000, 2500), (10000, 123)])
def test_pmf_moments_match_closed_forms(N, n):
    p = crossmatch_null_pmf(N, n)
    a = np.arange(n + 1)
    E, V = crossmatch_null_moments(N, n)
    assert abs(p.sum() - 1) < 1e-10
    np.testing.assert_allclose((a * p).sum(), E, rtol=1e-10)
    np.testing.assert_allclose(((a - E) ** 2 * p).sum(), V, rtol=1e-8)


def test_pmf_large_N_has_no_overflow():
    lp = crossmatch_null_logpmf(20000, 10000)
    assert np.isfinite(lp[0]) and lp[0] < -1000          # P(A1 = 0) is far below the smallest double
    assert abs(np.exp(lp).sum() - 1) < 1e-10


def test_pmf_bad_input():
    with pytest.raises(ValueError, match="even"):
        crossmatch_null_pmf(17, 9)
    with pytest.raises(ValueError, match="0 <= n"):
        crossmatch_null_pmf(18, 19)
    with pytest.raises(ValueError, match="integers"):
        crossmatch_null_pmf(18.5, 9)


# ---------------------------------------------------------------- blossom kernel
def _nx_weight(n, edges, maxcard):
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_weighted_edges_from(edges)
    M = nx.max_weight_matching(G, maxcardinality=maxcard)
    return len(M), sum(G[a][b]["weight"] for a, b in M)


@pytest.mark.parametrize("seed", range(40))
def test_blossom_kernel_matches_networkx_on_random_graphs(seed):
    """Van Rantwijk's algorithm as ported (no jump start) on sparse random graphs, perfect matching or not."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 30))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < rng.uniform(0.1, 0.9)]
    if not pairs:
        pairs = [(0, 1)]
    w = rng.integers(-5 if seed % 4 == 0 else 1, 20 if seed % 2 else 1000, size=len(pairs))
    edges = [(i, j, int(x)) for (i, j), x in zip(pairs, w)]
    e = np.array(edges, dtype=np.int64)
    for maxcard in (False, True):
        mate = _max_weight_matching(n, e[:, 0].copy(), e[:, 1].copy(), e[:, 2].copy(), maxcard)[0]
        assert all(mate[mate[v]] == v for v in range(n) if mate[v] >= 0)
        wt = {(min(i, j), max(i, j)): x for i, j, x in edges}
        ours = [(v, int(mate[v])) for v in range(n) if mate[v] > v]
        assert all(p in wt for p in ours)
        assert (len(ours), sum(wt[p] for p in ours)) == _nx_weight(n, edges, maxcard)


# ---------------------------------------------------------------- matching vs networkx
def _nx_min_cost(D, ghost=False):
    N = len(D)
    G = nx.Graph()
    G.add_weighted_edges_from((a, b, D[a, b]) for a in range(N) for b in range(a + 1, N))
    if ghost:
        G.add_weighted_edges_from((a, N, 0.0) for a in range(N))
    return sum(D[a, b] for a, b in nx.min_weight_matching(G) if max(a, b) < N)


@pytest.mark.parametrize("N,d,method,seed", [(4, 2, "dense", 0), (7, 3, "dense", 1), (10, 2, "sparse", 2),
                                             (25, 5, "dense", 3), (51, 3, "sparse", 4), (60, 10, "dense", 5),
                                             (101, 2, "sparse", 6), (150, 50, "auto", 7), (200, 50, "sparse", 8),
                                             (200, 3, "dense", 9)])
def test_total_cost_equals_networkx(N, d, method, seed):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(N, d)) * rng.uniform(0.5, 3, size=d)
    mt = min_weight_perfect_matching(Z, method=method)
    D = np.linalg.norm(Z[:, None] - Z[None], axis=-1)
    assert mt.certified and mt.pairs.shape == (N // 2, 2)
    used = np.concatenate([mt.pairs.ravel(), [mt.unmatched] if N % 2 else []]).astype(int)
    assert sorted(used) == list(range(N))                       # every point exactly once (or the ghost's partner)
    tol = N * D.max() / 2 ** 30 + 1e-9
    assert abs(D[mt.pairs[:, 0], mt.pairs[:, 1]].sum() - _nx_min_cost(D, ghost=N % 2 == 1)) < tol


@pytest.mark.parametrize("seed", range(3))
def test_integer_rounding_like_R_is_exact(seed):
    """With R's 100000 levels (many ties) our rounded cost equals networkx's on the same integers exactly."""
    rng = np.random.default_rng(seed)
    Z = rng.integers(0, 4, size=(40, 2)).astype(float)          # lattice points: duplicates and ties everywhere
    for method in ("dense", "sparse"):
        mt = min_weight_perfect_matching(Z, levels=100000, method=method)
        ei, ej, q = _complete_edges(Z, 0, mt.scale, NOQ)
        G = nx.Graph()
        G.add_weighted_edges_from(zip(ei.tolist(), ej.tolist(), q.tolist()))
        ref = sum(G[a][b]["weight"] for a, b in nx.min_weight_matching(G))
        assert mt.cost == ref


@pytest.mark.parametrize("metric", ["sqeuclidean", "cosine"])
def test_other_metrics_match_networkx(metric):
    rng = np.random.default_rng(11)
    Z = rng.normal(size=(30, 4))
    mt = min_weight_perfect_matching(Z, metric=metric)
    if metric == "cosine":
        U = Z / np.linalg.norm(Z, axis=1, keepdims=True)
        D = np.maximum(1 - U @ U.T, 0)
    else:
        D = ((Z[:, None] - Z[None]) ** 2).sum(-1)
    assert abs(D[mt.pairs[:, 0], mt.pairs[:, 1]].sum() - _nx_min_cost(D)) < 1e-6


@pytest.mark.parametrize("N,metric", [(301, "euclidean"), (240, "cosine")])
def test_on_the_fly_distances_give_the_same_matching(monkeypatch, N, metric):
    """Above _DENSE_MAX the kernels recompute distances instead of reading the matrix: same certified cost."""
    import embeval_nb.crossmatch as cm
    Z = np.random.default_rng(N).normal(size=(N, 6))
    stored = min_weight_perfect_matching(Z, metric=metric)
    monkeypatch.setattr(cm, "_DENSE_MAX", 10)
    recomputed = min_weight_perfect_matching(Z, metric=metric)
    assert recomputed.certified and recomputed.cost == stored.cost and recomputed.scale == stored.scale


def test_certificate_detects_a_non_optimal_dual():
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(30, 3))
    scale = 2 ** 20 / _max_distance(Z, 0)
    ei, ej, q = _complete_edges(Z, 0, scale, NOQ)
    C = 2 ** 20 + 1
    mate, dual, bparent = _max_weight_matching(30, ei, ej, 2 * (C - q), True, 30)
    vi, vj = np.empty(10, np.int64), np.empty(10, np.int64)
    assert _check_duals(Z, 0, scale, C, 30, dual, bparent, 10, vi, vj, NOQ) == 0
    dual = dual.copy()
    dual[0] -= 10 ** 9                                           # break feasibility at vertex 0
    assert _check_duals(Z, 0, scale, C, 30, dual, bparent, 10, vi, vj, NOQ) > 0 and 0 in vi[:1]


@pytest.mark.parametrize("seed", range(4))
def test_certificate_sweep_matches_naive_blossom_walk(seed):
    """The interval sweep of _check_duals counts the same violations as walking the blossom tree per pair."""
    rng = np.random.default_rng(seed)
    Z = np.vstack([rng.normal(size=(30, 3)), 0.3 * rng.normal(size=(31, 3)) + 2])   # odd: ghost vertex 61
    n, nvert = 61, 62
    scale = 2 ** 20 / _max_distance(Z, 0)
    C = 2 ** 20 + 1
    ei, ej, q = _complete_edges(Z, 0, scale, NOQ)
    ei, ej, q = np.r_[ei, np.arange(n)], np.r_[ej, np.full(n, n)], np.r_[q, np.zeros(n, np.int64)]
    mate, dual, bparent = _max_weight_matching(nvert, ei, ej, 2 * (C - q), True, n)
    assert (bparent[:nvert] >= 0).sum() > 0                                   # there are blossoms to walk
    dual = dual.copy()
    dual[:nvert] -= rng.integers(0, 2 ** 19, size=nvert)                      # make some pairs infeasible

    def chain(v):
        out = []
        while bparent[v] != -1:
            v = bparent[v]
            out.append(v)
        return set(out)
    qd = {(a, b): c for a, b, c in zip(ei.tolist(), ej.tolist(), q.tolist())}
    naive = sum(dual[i] + dual[j] - 4 * (C - qd[(i, j)]) + 2 * sum(dual[b] for b in chain(i) & chain(j)) < 0
                for i in range(n) for j in range(i + 1, nvert))
    vi, vj = np.empty(5000, np.int64), np.empty(5000, np.int64)
    assert naive > 0 and _check_duals(Z, 0, scale, C, nvert, dual, bparent, 5000, vi, vj, NOQ) == naive


def test_sparse_route_repairs_a_graph_without_perfect_matching():
    """Two far clusters of odd size: the kNN graph has no perfect matching, one pair must cross."""
    rng = np.random.default_rng(5)
    Z = np.vstack([rng.normal(size=(151, 2)), rng.normal(size=(151, 2)) + 1000])
    mt = min_weight_perfect_matching(Z, method="sparse", k=3)
    dense = min_weight_perfect_matching(Z, method="dense")
    assert mt.certified and mt.rounds > 1 and mt.cost == dense.cost


# ---------------------------------------------------------------- the test
def test_crossmatch_p_value_is_the_pmf_tail():
    rng = np.random.default_rng(2)
    X, Y = rng.normal(size=(30, 4)), rng.normal(size=(34, 4)) + 0.3
    r = crossmatch_test(X, Y)
    p = crossmatch_null_pmf(64, 30)
    assert r.n == 30 and r.m == 34 and r.n_pairs == 32 and r.dropped == -1
    assert r.a1 == int(((r.pairs[:, 0] < 30) != (r.pairs[:, 1] < 30)).sum())
    np.testing.assert_allclose(r.p_value, p[:r.a1 + 1].sum(), rtol=1e-10)
    E, V = crossmatch_null_moments(64, 30)
    assert (r.expected, r.variance) == (E, V)
    np.testing.assert_allclose(r.p_value_normal, 0.5 * math.erfc(-(r.a1 - E) / math.sqrt(2 * V)), rtol=1e-10)


def test_identical_and_separated_samples():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(100, 8))
    same = crossmatch_test(X, X.copy())
    assert same.a1 == 100 and same.p_value > 0.999
    apart = crossmatch_test(X, X + 50)
    assert apart.a1 == 0 and apart.p_value < 1e-25 and apart.log_p_value < math.log(1e-25)


def test_odd_N_drops_the_ghosts_partner():
    rng = np.random.default_rng(6)
    X, Y = rng.normal(size=(20, 3)), rng.normal(size=(15, 3))
    r = crossmatch_test(X, Y)
    assert r.dropped >= 0 and r.n_pairs == 17 and r.n + r.m == 34
    assert (r.n == 19) == (r.dropped < 20)
    assert r.dropped not in r.pairs
    np.testing.assert_allclose(r.p_value, crossmatch_null_pmf(34, r.n)[:r.a1 + 1].sum(), rtol=1e-10)


def test_duplicate_points_are_allowed():
    rng = np.random.default_rng(8)
    base = rng.normal(size=(10, 3))
    X = base[rng.integers(0, 10, size=30)]                      # many exact duplicates, across samples too
    Y = base[rng.integers(0, 10, size=30)]
    r = crossmatch_test(X, Y)
    D = np.linalg.norm(np.vstack([X, Y])[:, None] - np.vstack([X, Y])[None], axis=-1)
    assert abs(D[r.pairs[:, 0], r.pairs[:, 1]].sum() - _nx_min_cost(D)) < 1e-9
    assert 0 <= r.a1 <= 30


def test_all_points_equal():
    r = crossmatch_test(np.zeros((3, 2)), np.zeros((5, 2)))
    assert r.n_pairs == 4 and 0 <= r.a1 <= 3


def test_bad_input():
    ok = np.ones((4, 3))
    with pytest.raises(ValueError, match="3 columns, Y has 5"):
        crossmatch_test(ok, np.ones((4, 5)))
    with pytest.raises(ValueError, match="at least 2 points"):
        crossmatch_test(np.ones((1, 3)), ok)
    with pytest.raises(ValueError, match="X contains NaN"):
        crossmatch_test(np.array([[np.nan, 0, 0], [1, 1, 1]]), ok)
    with pytest.raises(ValueError, match="Y contains NaN or infinite"):
        crossmatch_test(ok, np.array([[np.inf, 0, 0], [1, 1, 1]]))
    with pytest.raises(ValueError, match="2-D"):
        crossmatch_test(np.ones(4), ok)
    with pytest.raises(ValueError, match="metric must be one of"):
        crossmatch_test(ok, ok, metric="manhattan")
    with pytest.raises(ValueError, match="non-zero rows"):
        crossmatch_test(np.zeros((2, 3)), ok, metric="cosine")
    with pytest.raises(ValueError, match="levels"):
        min_weight_perfect_matching(ok, levels=1)
    with pytest.raises(ValueError, match="method"):
        min_weight_perfect_matching(ok, method="greedy")
    with pytest.raises(ValueError, match="at least 2 rows"):
        min_weight_perfect_matching(np.ones((1, 3)))


def test_mmd_permutation_test():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(50, 5))
    r = mmd_permutation_test(X, X + 1.5, n_permutations=99, seed=1)
    assert r.p_value == 0.01 and r.statistic > 0 and r.n_permutations == 99
    assert mmd_permutation_test(X[:25], X[25:], n_permutations=99, seed=1).p_value > 0.01
    assert mmd_permutation_test(X[:25], X[25:], seed=2) == mmd_permutation_test(X[:25], X[25:], seed=2)
    with pytest.raises(ValueError, match="columns"):
        mmd_permutation_test(X, X[:, :3])


# ---------------------------------------------------------------- the chapter notebook
def test_notebook_smoke(run_notebook):
    rec = run_notebook("crossmatch", scale="smoke")
    assert rec["crossmatch/scale"] == "smoke"
    assert 0 < rec["crossmatch/languages/mean_a1_min"] <= rec["crossmatch/languages/mean_a1_max"]
    assert rec["crossmatch/models/max_mean_p"] < 0.05
    assert 0.0 <= rec["crossmatch/calibration/rejection_rate_05"] <= 0.15
    assert rec["crossmatch/power/n_points"] > 0
    assert rec["crossmatch/full/max_N"] > 340                      # beyond the R package's exact limit
    assert all(v < -5 for v in rec["crossmatch/full/log10_p"].values())
    assert rec["crossmatch/languages/missing"] == ["Maltese", "Swahili"]
