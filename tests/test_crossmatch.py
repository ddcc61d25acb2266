"""Tests for embeval_nb.crossmatch: the null distribution against exact rational arithmetic, the blossom
matching against networkx, the optimality certificate, bad input, and a smoke run of the chapter notebook; and for
what the chapter reads or trains elsewhere: the Debian word lists (the DAWG reader against Tesseract's own
dawg2wordlist) and GloVe (the co-occurrence table against GloVe's cooccur loop, seeded training)."""
import math
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from embeval_nb import data as _data
from embeval_nb.crossmatch import (_check_duals, _complete_edges, _feasible_start, _graph, _knn_edges, _knn_table,
                                   _knn_table_blocked, _match_tight_edges, _max_distance, _max_distance_blocked,
                                   _max_weight_matching, _new_state, _prepare, crossmatch_null_logpmf,
                                   crossmatch_null_moments, crossmatch_null_pmf, crossmatch_test,
                                   min_weight_perfect_matching, mmd_permutation_test)


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


@pytest.mark.parametrize("seed", range(30))
def test_jump_start_with_lowered_single_duals_matches_networkx(seed):
    """Jump start (heaviest-edge duals, tight pairs, then each single dual lowered by its least slack) on complete
    graphs of even order: the same maximum weight as networkx, duals feasible and matched edges tight after the start."""
    rng = np.random.default_rng(100 + seed)
    n = 2 * int(rng.integers(1, 16))
    ei, ej = np.triu_indices(n, 1)
    w = rng.integers(0, [5, 50, 10 ** 6][seed % 3], size=len(ei)) * (2 if seed % 2 else 1)
    e = np.c_[ei, ej, w].astype(np.int64)
    g = _graph(n, e[:, 0].copy(), e[:, 1].copy(), e[:, 2].copy())
    s = _new_state(g)
    _feasible_start(g, s, n, np.empty(0, np.int64))
    matched = _match_tight_edges(g, s, np.empty(0, np.int64))
    slack = s.dualvar[g.ei] + s.dualvar[g.ej] - 2 * g.w
    assert (slack >= 0).all()
    mate = s.mate[:n]
    assert matched == (mate >= 0).sum() // 2 and all(slack[mate[v] >> 1] == 0 for v in range(n) if mate[v] >= 0)
    got = _max_weight_matching(n, e[:, 0].copy(), e[:, 1].copy(), e[:, 2].copy(), True, n)[0]
    assert (got >= 0).all() and (got[got] == np.arange(n)).all()
    wt = {(a, b): x for a, b, x in e.tolist()}
    assert (n // 2, sum(wt[(v, int(got[v]))] for v in range(n) if got[v] > v)) == _nx_weight(n, e.tolist(), True)


def test_lowered_single_duals_match_more_than_mutual_neighbours():
    """On a nearest-neighbour graph of random points, lowering single duals matches many more vertices before the
    first stage than the mutual nearest neighbours alone."""
    Z = np.random.default_rng(7).normal(size=(2000, 20))
    scale = 2 ** 30 / _max_distance(Z, 0)
    C = 2 ** 30 + 1
    ei, ej, q = _knn_edges(Z, 0, scale, 10, NOQ)
    g = _graph(2000, ei, ej, 2 * (C - q))
    s = _new_state(g)
    _feasible_start(g, s, 2000, np.empty(0, np.int64))
    nn = np.full(2000, -1)
    best = np.full(2000, -1)
    for a, b, x in zip(ei, ej, q):                      # nearest neighbour of each vertex, ties to the first edge
        for u, v in ((a, b), (b, a)):
            if best[u] == -1 or x < best[u]:
                best[u], nn[u] = x, v
    mutual = int((nn[nn] == np.arange(2000)).sum() // 2)
    assert _match_tight_edges(g, s, np.empty(0, np.int64)) > 1.5 * mutual


# ---------------------------------------------------------------- all-pairs passes through matrix products
def _blocked_inputs(code, factor, n=301, d=6, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, d))
    Z[5] = Z[9] = Z[2]                                   # duplicates: tied distances
    Z[20:40] = np.round(Z[20:40])                        # more ties
    Z, _ = _prepare(Z * factor, code)
    return Z


@pytest.mark.parametrize("code", [0, 1, 2])
@pytest.mark.parametrize("factor", [1.0, 1e-170, 1e200])
def test_blocked_max_distance_and_neighbours_equal_the_loops(monkeypatch, code, factor):
    """The BLAS-filtered passes return exactly what the pair-by-pair loops return, blocks of 7 rows and of all rows."""
    import embeval_nb.crossmatch as cm
    Z = _blocked_inputs(code, factor)
    dmax = _max_distance(Z, code)
    for block in (7 * len(Z), 2 ** 23):
        monkeypatch.setattr(cm, "_BLOCK", block)
        assert _max_distance_blocked(Z, code) == dmax
        scale = 2 ** 30 / dmax
        for k in (1, 10, len(Z) - 1):
            a, b = _knn_table(Z, code, scale, k, NOQ), _knn_table_blocked(Z, code, scale, k, NOQ)
            np.testing.assert_array_equal(a[0], b[0])
            np.testing.assert_array_equal(a[1], b[1])


@pytest.mark.parametrize("code", [0, 1, 2])
@pytest.mark.parametrize("n", [300, 301])
def test_blocked_certificate_counts_the_same_violations(monkeypatch, code, n):
    """_check_duals_blocked finds the same violated pairs as _check_duals, for finished, perturbed and negative
    blossom duals, ghost included for odd n."""
    import embeval_nb.crossmatch as cm
    monkeypatch.setattr(cm, "_BLOCK", 13 * n)
    rng = np.random.default_rng(n + code)
    Z = _blocked_inputs(code, 1.0, n=n, seed=code)
    scale = 2 ** 30 / _max_distance(Z, code)
    C = 2 ** 30 + 1
    nvert = n + n % 2
    ei, ej, q = _knn_edges(Z, code, scale, 5, NOQ)
    mate, dual, bparent = cm._solve(Z, code, scale, C, ei, ej, q, nvert)
    blossoms = np.flatnonzero(bparent[:nvert] >= 0)
    assert len(blossoms) > 0
    cases = [dual, dual.copy(), dual.copy()]
    cases[1][:nvert] -= rng.integers(0, 2 ** 26, size=nvert)
    cases[2][np.unique(bparent[blossoms])] = -rng.integers(0, 2 ** 24, size=len(np.unique(bparent[blossoms])))
    for dv in cases:
        cap = n * n
        a = np.empty(cap, np.int64), np.empty(cap, np.int64)
        b = np.empty(cap, np.int64), np.empty(cap, np.int64)
        na = _check_duals(Z, code, scale, C, nvert, dv, bparent, cap, *a, NOQ)
        nb = cm._check_duals_blocked(Z, code, scale, C, nvert, dv, bparent, cap, *b, NOQ)
        assert na == nb
        assert set(zip(a[0][:na].tolist(), a[1][:na].tolist())) == set(zip(b[0][:nb].tolist(), b[1][:nb].tolist()))
    assert na > 0


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


@pytest.mark.parametrize("N,metric", [(301, "euclidean"), (240, "cosine"), (260, "sqeuclidean")])
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
    for name in _data.DEBIAN_WORD_LISTS:                         # Tables 1-2 read these Debian word lists
        _need_debian(name)
    rec = run_notebook("crossmatch", scale="smoke")
    assert rec["crossmatch/scale"] == "smoke"
    assert 0 < rec["crossmatch/languages/mean_a1_min"] <= rec["crossmatch/languages/mean_a1_max"]
    assert rec["crossmatch/models/max_mean_p"] < 0.05
    assert 0.0 <= rec["crossmatch/calibration/rejection_rate_05"] <= 0.15
    assert rec["crossmatch/power/n_points"] > 0
    assert rec["crossmatch/full/max_N"] > 340                      # beyond the R package's exact limit
    assert all(v < -5 for v in rec["crossmatch/full/log10_p"].values())
    assert rec["crossmatch/languages/missing"] == []
    assert rec["crossmatch/n_per_sample"] == 100 and rec["crossmatch/drop_identical"] is True
    t1, t2 = rec["crossmatch/languages/table1"], rec["crossmatch/languages/table2"]
    assert len(t1) == len(t2) == 8 and all(0 <= v < 50.25 for v in list(t1.values()) + list(t2.values()))
    assert t1["English-Maltese"] == t2["Maltese-English"]
    o1, o2 = rec["crossmatch/languages/table1_one_source"], rec["crossmatch/languages/table2_one_source"]
    assert set(o1) == set(t1) and set(o2) == set(t2) and o1["English-Maltese"] == o2["Maltese-English"]
    assert o1 != t1                                                # a different draw of the words
    readings = rec["crossmatch/languages/readings"]
    assert set(readings) == {"100", "200"} and len(readings["100"]) == 15
    assert np.mean([readings["200"][k] / max(readings["100"][k], 0.1) for k in readings["100"]]) > 1.2   # twice the pairs
    assert readings["100"]["English-Swahili"] == t1["English-Swahili"]
    ident = rec["crossmatch/languages/identical_strings"]
    assert len(ident) == 18 and all(isinstance(v, int) and v >= 0 for v in ident.values()) and sum(ident.values()) > 0
    assert set(rec["crossmatch/languages/identical_effect"]) == {"100", "200"}
    assert rec["crossmatch/languages/closer_reading"] in (100, 200)
    assert rec["crossmatch/models/reading_from_p"] == 100       # the paper's p-values need N = 200
    gap = rec["crossmatch/models/log10_gap_by_reading"]
    assert gap["100"] < gap["200"]
    assert set(rec["crossmatch/languages/control"]) >= {"English-English (Tesseract)", "English-Maltese"}
    assert rec["crossmatch/languages/sources"]["Maltese"].startswith("Debian tesseract-ocr-mlt")
    first, last = rec["crossmatch/models/glove_losses"]
    assert last < first
    assert {"skip-gram - GloVe", "GloVe - GloVe 6B"} <= set(rec["crossmatch/models/table3_mean_p"])
    verdicts = {c["key"]: c["verdict"] for c in rec["crossmatch/claims"]}
    assert {"romance", "maltese-italian", "languages-differ", "methods-differ"} <= set(verdicts)
    assert set(verdicts.values()) <= {"holds", "fails", "undecided"}


# ---------------------------------------------------------------- ties: the matching must not see the labels
def _rejections(draw, runs, seed):
    rng = np.random.default_rng(seed)
    return sum(crossmatch_test(draw(rng), draw(rng), seed=rng).p_value <= 0.05 for _ in range(runs))


@pytest.mark.parametrize("kind", ["ternary", "pool of 30 in 5-d", "60 + 60 from a pool of 30 in 5-d", "pool of 8 in 2-d, odd N"])
def test_exact_under_the_null_with_heavy_ties(kind):
    """Two samples from one distribution on a few distinct points: at level 0.05 the test rejects at most about 5%
    of the time (matched in the stacked order [X; Y] instead, the first and third reject in about 100% and 78% of runs)."""
    from scipy.stats import binom
    pool30 = np.random.default_rng(40).normal(size=(30, 5))
    pool8 = np.random.default_rng(41).normal(size=(8, 2))
    draw = {"ternary": lambda rng: rng.integers(0, 3, size=(30, 1)).astype(float),
            "pool of 30 in 5-d": lambda rng: pool30[rng.integers(0, 30, size=30)],
            "60 + 60 from a pool of 30 in 5-d": lambda rng: pool30[rng.integers(0, 30, size=60)],
            "pool of 8 in 2-d, odd N": lambda rng: pool8[rng.integers(0, 8, size=int(rng.integers(25, 32)))]}[kind]
    runs = 300
    bound = binom.ppf(0.999, runs, 0.05)           # 26 of 300: exceeded with chance 0.001 by an exact level-0.05 test
    assert _rejections(draw, runs, seed=42) <= bound


def test_random_order_changes_nothing_when_the_optimum_is_unique():
    rng = np.random.default_rng(43)
    for N1, N2, d in [(30, 30, 3), (41, 36, 8), (150, 120, 20)]:
        X, Y = rng.normal(size=(N1, d)), rng.normal(size=(N2, d)) + 0.3
        stacked = min_weight_perfect_matching(np.vstack([X, Y]))
        results = [crossmatch_test(X, Y, seed=s) for s in (0, 1, 2)]
        for r in results:
            np.testing.assert_array_equal(r.pairs, stacked.pairs)
            assert r.dropped == stacked.unmatched and r.a1 == results[0].a1 and r.p_value == results[0].p_value


def test_seed_makes_ties_reproducible():
    rng = np.random.default_rng(44)
    X, Y = rng.integers(0, 3, size=(30, 1)) * 1.0, rng.integers(0, 3, size=(30, 1)) * 1.0
    a = [crossmatch_test(X, Y, seed=7) for _ in range(2)]
    assert np.array_equal(a[0].pairs, a[1].pairs) and a[0].a1 == a[1].a1
    D = np.abs(np.vstack([X, Y]) - np.vstack([X, Y]).T)
    for r in a + [crossmatch_test(X, Y, seed=s) for s in range(5)]:   # every order gives an optimal matching
        assert abs(D[r.pairs[:, 0], r.pairs[:, 1]].sum() - _nx_min_cost(D)) < 1e-9


def test_resampled_crossmatch_draws_the_same_rows_and_orders_from_its_seed():
    rng = np.random.default_rng(45)
    X, Y = rng.integers(0, 4, size=(60, 2)) * 1.0, rng.integers(0, 4, size=(50, 2)) * 1.0
    from embeval_nb.crossmatch import resampled_crossmatch
    out = resampled_crossmatch(X, Y, size=12, reps=4, seed=[3, 9])
    draws = np.random.default_rng([3, 9]); orders = draws.spawn(4)
    for r in range(4):
        ref = crossmatch_test(X[draws.choice(60, 12, replace=False)], Y[draws.choice(50, 12, replace=False)], seed=orders[r])
        assert (out.a1[r], out.p_value[r]) == (ref.a1, ref.p_value)


# ---------------------------------------------------------------- a distance matrix, as R's crossmatch takes
@pytest.mark.parametrize("N1,N2,metric", [(20, 20, "euclidean"), (31, 24, "euclidean"), (60, 45, "sqeuclidean"),
                                         (160, 150, "euclidean")])
def test_precomputed_distances_give_the_points_result(N1, N2, metric):
    from scipy.spatial.distance import cdist
    rng = np.random.default_rng(N1 + N2)
    X, Y = rng.normal(size=(N1, 6)), rng.normal(size=(N2, 6)) + 0.4
    Z = np.vstack([X, Y]); D = cdist(Z, Z, metric)
    pts = crossmatch_test(X, Y, metric=metric)
    pre = crossmatch_test(D, N1, metric="precomputed")
    assert (pre.a1, pre.n, pre.m, pre.dropped, pre.n_pairs) == (pts.a1, pts.n, pts.m, pts.dropped, pts.n_pairs)
    np.testing.assert_array_equal(pre.pairs, pts.pairs)
    assert pre.p_value == pts.p_value
    mp, mz = min_weight_perfect_matching(D, metric="precomputed"), min_weight_perfect_matching(Z, metric=metric)
    np.testing.assert_array_equal(mp.pairs, mz.pairs)
    assert mp.certified and abs(mp.cost - mz.cost) <= len(Z)      # rounding of distances computed two ways
    order = rng.permutation(len(Z)); labels = (order < N1).astype(int)  # samples interleaved, given by R-style 0/1 labels
    shuffled = crossmatch_test(D[order][:, order], labels, metric="precomputed")
    assert (shuffled.a1, shuffled.n, shuffled.m) == (pts.a1, pts.n, pts.m) and shuffled.p_value == pts.p_value


def test_precomputed_matrix_is_checked():
    D = np.array([[0, 1, 2, 2.0], [1, 0, 3, 1], [2, 3, 0, 1], [2, 1, 1, 0]])
    cases = [(D[:3], "must be a square"), (D - 1.5, "negative"), (D + np.eye(4), "diagonal is not zero"),
             (D + np.triu(np.ones((4, 4)), 1), "not symmetric"), (np.where(D == 3, np.nan, D), "NaN"), (None, "X is None")]
    for bad, message in cases:
        with pytest.raises(ValueError, match=message):
            crossmatch_test(bad, 2, metric="precomputed")
    for labels, message in [(None, "got None"), (np.ones(3), r"\(4,\) vector of 0/1"), (np.array([0, 1, 2, 1]), "0/1"),
                            (1, "at least 2 points"), (2.0, "must be an integer")]:
        with pytest.raises((ValueError, TypeError), match=message):
            crossmatch_test(D, labels, metric="precomputed")
    ok = D + 1e-14 * np.triu(np.ones((4, 4)), 1)                   # symmetric to rounding: accepted, upper triangle used
    assert crossmatch_test(ok, 2, metric="precomputed").n_pairs == 2


def test_a_distance_matrix_passed_as_points_warns():
    rng = np.random.default_rng(46)
    Z = rng.normal(size=(12, 3)); D = np.linalg.norm(Z[:, None] - Z[None], axis=-1)
    with pytest.warns(UserWarning, match="looks like a distance matrix.*metric='precomputed'"):
        min_weight_perfect_matching(D)
    with pytest.warns(UserWarning, match=r"the stacked \[X; Y\] .*looks like a distance matrix"):
        crossmatch_test(D[:6], D[6:])
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        min_weight_perfect_matching(rng.normal(size=(12, 12)))     # ordinary square point sets do not warn
        min_weight_perfect_matching(D, metric="precomputed")


# ---------------------------------------------------------------- extreme magnitudes
@pytest.mark.parametrize("factor", [1e154, 1e160, 1e300, 1e-170, 2.0 ** -1000])
@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cosine"])
def test_points_whose_distances_overflow_or_underflow(factor, metric):
    rng = np.random.default_rng(47)
    Z = rng.normal(size=(40, 4))
    ref = min_weight_perfect_matching(Z, metric=metric)
    got = min_weight_perfect_matching(Z * factor, metric=metric)
    assert got.certified and got.cost >= 0
    np.testing.assert_array_equal(got.pairs, ref.pairs)
    assert abs(got.cost - ref.cost) <= 40                         # each rounded distance moves by at most one level
    p = 2 if metric == "sqeuclidean" else 1 if metric == "euclidean" else 0
    with np.errstate(over="ignore", under="ignore", divide="ignore"):     # the scale itself may leave the float range
        want = np.float64(ref.scale)
        for _ in range(p): want = want / np.float64(factor)
        np.testing.assert_allclose(got.scale, want, rtol=1e-9)
    r = crossmatch_test(Z[:20] * factor, Z[20:] * factor, metric=metric)
    assert r.a1 == crossmatch_test(Z[:20], Z[20:], metric=metric).a1


def test_power_of_two_scaling_changes_no_rounded_distance():
    Z = np.random.default_rng(48).normal(size=(30, 5))
    ref = min_weight_perfect_matching(Z)
    for k in (-990, -600, 560, 1000):                              # entries stay normal numbers: exact scaling
        got = min_weight_perfect_matching(np.ldexp(Z, k))
        assert got.cost == ref.cost and np.array_equal(got.pairs, ref.pairs) and got.scale == np.ldexp(ref.scale, -k)
    D = np.linalg.norm(Z[:, None] - Z[None], axis=-1)
    for k in (-990, 1000):                                        # tiny or huge distance matrices
        got = min_weight_perfect_matching(np.ldexp(D, k), metric="precomputed")
        assert got.certified and np.array_equal(got.pairs, ref.pairs)


# ---------------------------------------------------------------- the null distribution at any N
@pytest.mark.parametrize("N", [2 ** 16 + 2, 2 ** 17, 10 ** 6, 2 ** 40, 2 ** 62, 2 ** 70])
@pytest.mark.parametrize("n", [2, 3, 9, 40])
def test_pmf_at_huge_N_matches_exact_rationals(N, n):
    I = N // 2
    exact = []
    for a1 in range(n + 1):
        a2, r = divmod(n - a1, 2); a0 = I - a1 - a2
        exact.append(Fraction(0) if r or a0 < 0 else
                     Fraction(2 ** a1 * math.prod(range(a0 + 1, I + 1)),       # I! / a0!
                              math.comb(N, n) * math.factorial(a1) * math.factorial(a2)))
    assert sum(exact) == 1
    np.testing.assert_allclose(crossmatch_null_pmf(N, n), [float(x) for x in exact], rtol=1e-12, atol=0)


def test_pmf_both_routes_agree_and_large_designs_stay_normalised():
    from embeval_nb.crossmatch import _GAMMALN_MAX_N, _logpmf_by_ratios
    for N, n in [(1000, 500), (_GAMMALN_MAX_N, 12345), (_GAMMALN_MAX_N, _GAMMALN_MAX_N // 2)]:
        np.testing.assert_allclose(np.exp(_logpmf_by_ratios(N, n)), crossmatch_null_pmf(N, n), rtol=1e-8, atol=1e-300)
    for N, n in [(10 ** 6, 5 * 10 ** 5), (2 * 10 ** 6, 1234)]:
        p = crossmatch_null_pmf(N, n); a = np.arange(n + 1); E, V = crossmatch_null_moments(N, n)
        assert abs(p.sum() - 1) < 1e-12
        np.testing.assert_allclose([(a * p).sum(), ((a - E) ** 2 * p).sum()], [E, V], rtol=1e-8)


# ---------------------------------------------------------------- arguments
def test_argument_errors_name_the_argument():
    from embeval_nb.crossmatch import resampled_crossmatch
    ok = np.random.default_rng(49).normal(size=(6, 3))
    cases = [(lambda: min_weight_perfect_matching(ok, levels="1000"), TypeError, "levels must be an integer, got '1000'"),
             (lambda: min_weight_perfect_matching(ok, levels=1000.0), TypeError, "levels must be an integer"),
             (lambda: min_weight_perfect_matching(ok, levels=None), TypeError, "levels must be an integer"),
             (lambda: min_weight_perfect_matching(ok, k=2.5), TypeError, "k must be an integer"),
             (lambda: min_weight_perfect_matching(ok, k=0), ValueError, "k must be an integer >= 1"),
             (lambda: min_weight_perfect_matching(ok, max_rounds=0), ValueError, "max_rounds must be an integer >= 1"),
             (lambda: min_weight_perfect_matching(None), ValueError, "Z is None"),
             (lambda: crossmatch_test(ok, None), ValueError, "Y is None"),
             (lambda: crossmatch_test(ok, ok, levels="1000"), TypeError, "levels must be an integer"),
             (lambda: crossmatch_null_pmf(None, 2), ValueError, "N and n must be integers"),
             (lambda: crossmatch_null_pmf(18, "9"), ValueError, "N and n must be integers"),
             (lambda: resampled_crossmatch(ok, ok, size=2.0, reps=1), TypeError, "size must be an integer"),
             (lambda: resampled_crossmatch(ok, ok, size=3, reps=None), TypeError, "reps must be an integer"),
             (lambda: mmd_permutation_test(ok, ok, n_permutations=None), TypeError, "n_permutations must be an integer"),
             (lambda: mmd_permutation_test(ok, ok, bandwidth=-1.0), ValueError, "bandwidth must be a positive number")]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()


# ---------------------------------------------------------------- Debian word lists (Tables 1-2: Maltese, Swahili)
def _need_debian(name):
    "Skip unless the Debian package of the registered word list `name` is installed."
    wl = _data.DEBIAN_WORD_LISTS[name]
    if not sorted(Path("/").glob(wl.pattern.lstrip("/"))):
        pytest.skip(f"Debian package {wl.package} not installed (apt-get install {wl.package})")


def _squish(words):
    "A squished DAWG (as a trie, not minimised) of `words` over their characters, and its unicharset (id 0 = space)."
    chars = [" "] + sorted({c for w in words for c in w})
    cid = {c: i for i, c in enumerate(chars)}
    trie = {}
    for w in words:
        node = trie
        for c in w: node = node.setdefault(c, {})
        node[None] = True                                       # end of word
    bits = int(np.ceil(np.log2(len(chars))))
    edges, first, order = [], {}, [trie]
    while order:                                                # nodes breadth first, the edges of a node contiguous
        node = order.pop(0)
        first[id(node)] = len(edges)
        kids = sorted(k for k in node if k is not None)
        edges.extend([None] * len(kids))
        order.extend(node[k] for k in kids if any(x is not None for x in node[k]))
    def fill(node):
        kids = sorted(k for k in node if k is not None)
        for j, k in enumerate(kids):
            child = node[k]
            has_kids = any(x is not None for x in child)
            flags = (4 if None in child else 0) | (1 if j == len(kids) - 1 else 0)
            edges[first[id(node)] + j] = cid[k] | flags << bits | (first[id(child)] if has_kids else 0) << (bits + 3)
            if has_kids: fill(child)
    fill(trie)
    blob = np.array([42], "<i2").tobytes() + np.array([len(chars), len(edges)], "<i4").tobytes() + np.array(edges, "<u8").tobytes()
    return blob, chars


@pytest.mark.parametrize("seed", range(5))
def test_squished_dawg_reader_on_random_word_sets(seed):
    rng = np.random.default_rng(seed)
    alphabet = list("abcħġżé'-") if seed % 2 else list("ab")
    words = sorted({"".join(rng.choice(alphabet, size=int(rng.integers(1, 9)))) for _ in range(int(rng.integers(1, 400)))})
    blob, chars = _squish(words)
    got = _data.read_squished_dawg(blob, chars)
    assert sorted(got) == words and len(got) == len(words)


def test_squished_dawg_reader_rejects_other_files():
    with pytest.raises(ValueError, match="magic number"):
        _data.read_squished_dawg(np.array([7], "<i2").tobytes() + bytes(8), [])


@pytest.mark.parametrize("name", ["tesseract-mlt", "tesseract-eng"])
def test_tessdata_word_list_equals_dawg2wordlist(name, tmp_path):
    """Our reader against Tesseract's own tools (combine_tessdata, dawg2wordlist from the tesseract-ocr package)."""
    _need_debian(name)
    if not (shutil.which("combine_tessdata") and shutil.which("dawg2wordlist")):
        pytest.skip("Debian package tesseract-ocr not installed (apt-get install tesseract-ocr)")
    path = _data.debian_file(name)
    subprocess.run(["combine_tessdata", "-u", str(path), str(tmp_path / "x.")], check=True, capture_output=True)
    subprocess.run(["dawg2wordlist", str(tmp_path / "x.lstm-unicharset"), str(tmp_path / "x.lstm-word-dawg"),
                    str(tmp_path / "words.txt")], check=True, capture_output=True)
    ref = (tmp_path / "words.txt").read_text("utf-8").split("\n")[:-1]
    assert _data.debian_word_list(name) == ref and len(ref) > 100_000


def test_hunspell_swahili_list():
    _need_debian("hunspell-sw")
    words = _data.debian_word_list("hunspell-sw")
    lines = Path("/usr/share/hunspell/sw_TZ.dic").read_text("latin-1").splitlines()
    assert len(words) == int(lines[0]) == len(lines) - 1
    assert "kitabu" in words and not any("/" in w for w in words)


def test_missing_or_changed_debian_file(monkeypatch):
    wl = _data.DEBIAN_WORD_LISTS["hunspell-sw"]
    monkeypatch.setitem(_data.DEBIAN_WORD_LISTS, "hunspell-sw", _data.DebianWordList(wl.package, "/nonexistent/sw_TZ.dic",
                                                                                     wl.sha256, wl.format))
    with pytest.raises(FileNotFoundError, match=r"apt-get install hunspell-sw"):
        _data.debian_word_list("hunspell-sw")
    monkeypatch.undo()
    _need_debian("hunspell-sw")
    monkeypatch.setitem(_data.DEBIAN_WORD_LISTS, "hunspell-sw", _data.DebianWordList(wl.package, wl.pattern, "0" * 64, wl.format))
    with pytest.raises(ValueError, match="checksum mismatch"):
        _data.debian_word_list("hunspell-sw")
    with pytest.raises(ValueError, match="unknown Debian word list"):
        _data.debian_word_list("hunspell-xx")


# ---------------------------------------------------------------- GloVe on the corpus (Table 3)
def _naive_cooccurrence(sentences, words, window):
    "GloVe's cooccur, literally: per line, out-of-vocabulary tokens skipped, each left context at distance k adds 1/k both ways."
    index = {w: i for i, w in enumerate(words)}
    X = np.zeros((len(words), len(words)))
    for s in sentences:
        ids = [index[w] for w in s if w in index]
        for j, w2 in enumerate(ids):
            for k in range(max(0, j - window), j):
                X[ids[k], w2] += 1.0 / (j - k)
                X[w2, ids[k]] += 1.0 / (j - k)
    return X


@pytest.mark.parametrize("window,min_count,max_vocab", [(1, 1, None), (3, 2, None), (5, 1, 7), (10, 3, 4)])
def test_glove_cooccurrence_matches_the_naive_loop(window, min_count, max_vocab):
    from collections import Counter
    from embeval_nb.embeddings import glove_cooccurrence
    rng = np.random.default_rng(window)
    vocab = [f"w{i}" for i in range(12)]
    sentences = [list(rng.choice(vocab, size=int(rng.integers(0, 15)), p=np.arange(12, 0, -1) / 78)) for _ in range(40)]
    words, X = glove_cooccurrence(sentences, window=window, min_count=min_count, max_vocab=max_vocab)
    counts = Counter(w for s in sentences for w in s)
    expected = sorted((w for w in counts if counts[w] >= min_count), key=lambda w: (-counts[w], w))[:max_vocab]
    assert words == expected
    np.testing.assert_allclose(X.toarray(), _naive_cooccurrence(sentences, words, window), rtol=1e-12)
    np.testing.assert_array_equal(X.toarray(), X.toarray().T)


def test_train_glove_is_seeded_and_fits():
    from embeval_nb.embeddings import glove_cooccurrence, train_glove
    rng = np.random.default_rng(3)
    topics = [[f"a{i}" for i in range(6)], [f"b{i}" for i in range(6)]]
    sentences = [list(rng.choice(topics[t % 2], size=8)) for t in range(200)]
    g = train_glove(sentences, vector_size=6, min_count=1, epochs=200, x_max=10, seed=4)
    assert np.array_equal(g.vectors, train_glove(sentences, vector_size=6, min_count=1, epochs=200, x_max=10, seed=4).vectors)
    assert g.words == glove_cooccurrence(sentences, min_count=1)[0] and g.vectors.dtype == np.float32
    assert np.all(np.diff(g.losses) <= 1e-9 * g.losses[0]) and g.losses[-1] < 0.05 * g.losses[0]
    U = g.vectors / np.linalg.norm(g.vectors, axis=1, keepdims=True)
    same = np.array([[w[0] == v[0] for v in g.words] for w in g.words])
    C = U @ U.T
    assert C[same & ~np.eye(len(C), dtype=bool)].mean() > C[~same].mean() + 0.5      # words of one topic end up together
    with pytest.raises(ValueError, match="window"):
        train_glove(sentences, window=0)
