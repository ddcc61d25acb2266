"""Tests for embeval_nb.matching: the blossom kernel and its jump start against networkx, the BLAS-filtered all-pairs
passes (largest distance, k-nearest tables, certificate) against the pair-by-pair loops, the optimality certificate,
the minimum-weight perfect matching against networkx on every metric, distance levels and their rounding, prepared
inputs, power-of-two scaling, precomputed distance matrices, and bad input."""
import warnings

import networkx as nx
import numpy as np
import pytest

import embeval_nb.matching as mm
from embeval_nb import metrics
from embeval_nb.matching import (_check_duals, _check_duals_blocked, _complete_edges, _feasible_start, _graph, _knn_edges,
                                 _knn_table, _knn_table_blocked, _match_tight_edges, _max_distance, _max_distance_blocked,
                                 _max_weight_matching, _new_state, _prepare, _solve, min_weight_perfect_matching)
from embeval_nb.metrics import COSINE, EUCLIDEAN, PRECOMPUTED, SQEUCLIDEAN, normalize_rows, pairwise_distances, prepare


NOQ = np.zeros((0, 0), np.int64)     # kernels' "no precomputed distance matrix"
POINT_METRICS = ["euclidean", "sqeuclidean", "cosine"]


def _rows_per_block(monkeypatch, rows, P):
    "Make the blocked passes take `rows` rows of the prepared points P per block (through the working-memory budget)."
    monkeypatch.setitem(metrics._WORKING_MEMORY, "mib", rows * len(P.X) * 8 / 2 ** 20)
    blocks = mm._blocks(P)
    assert blocks[0] == (0, min(rows, len(P.X))) and blocks[-1][1] == len(P.X)


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
    P = prepare(Z, "euclidean")
    assert P.shift == 0 and np.array_equal(P.X, Z)
    scale = 2 ** 30 / _max_distance(Z, EUCLIDEAN)
    C = 2 ** 30 + 1
    ei, ej, q = _knn_edges(P, scale, 10, NOQ)
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
def _blocked_inputs(metric, factor, n=301, d=6, seed=0):
    "Prepared points of `metric` with duplicates and other ties, scaled by `factor` before preparation."
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, d))
    Z[5] = Z[9] = Z[2]                                   # duplicates: tied distances
    Z[20:40] = np.round(Z[20:40])                        # more ties
    return _prepare(Z * factor, metric)


@pytest.mark.parametrize("metric", POINT_METRICS)
@pytest.mark.parametrize("factor", [1.0, 1e-170, 1e200])
def test_blocked_max_distance_and_neighbours_equal_the_loops(monkeypatch, metric, factor):
    """The BLAS-filtered passes return exactly what the pair-by-pair loops return, blocks of 7 rows and of all rows."""
    P = _blocked_inputs(metric, factor)
    assert P.code == metrics.metric_code(metric)
    dmax = _max_distance(P.X, P.code)
    for rows in (7, len(P.X)):
        _rows_per_block(monkeypatch, rows, P)
        assert _max_distance_blocked(P) == dmax
        scale = 2 ** 30 / dmax
        for k in (1, 10, len(P.X) - 1):
            a, b = _knn_table(P.X, P.code, scale, k, NOQ), _knn_table_blocked(P, scale, k, NOQ)
            np.testing.assert_array_equal(a[0], b[0])
            np.testing.assert_array_equal(a[1], b[1])


@pytest.mark.parametrize("metric", POINT_METRICS)
@pytest.mark.parametrize("n", [300, 301])
def test_blocked_certificate_counts_the_same_violations(monkeypatch, metric, n):
    """_check_duals_blocked finds the same violated pairs as _check_duals, for finished, perturbed and negative
    blossom duals, ghost included for odd n."""
    seed = POINT_METRICS.index(metric)                   # the seeds of the metric codes 0, 1, 2 before cosine became 3
    rng = np.random.default_rng(n + seed)
    P = _blocked_inputs(metric, 1.0, n=n, seed=seed)
    _rows_per_block(monkeypatch, 13, P)
    scale = 2 ** 30 / _max_distance(P.X, P.code)
    C = 2 ** 30 + 1
    nvert = n + n % 2
    ei, ej, q = _knn_edges(P, scale, 5, NOQ)
    mate, dual, bparent = _solve(P.X, P.code, scale, C, ei, ej, q, nvert)
    blossoms = np.flatnonzero(bparent[:nvert] >= 0)
    assert len(blossoms) > 0
    cases = [dual, dual.copy(), dual.copy()]
    cases[1][:nvert] -= rng.integers(0, 2 ** 26, size=nvert)
    cases[2][np.unique(bparent[blossoms])] = -rng.integers(0, 2 ** 24, size=len(np.unique(bparent[blossoms])))
    for dv in cases:
        cap = n * n
        a = np.empty(cap, np.int64), np.empty(cap, np.int64)
        b = np.empty(cap, np.int64), np.empty(cap, np.int64)
        na = _check_duals(P.X, P.code, scale, C, nvert, dv, bparent, cap, *a, NOQ)
        nb = _check_duals_blocked(P, scale, C, nvert, dv, bparent, cap, *b, NOQ)
        assert na == nb
        assert set(zip(a[0][:na].tolist(), a[1][:na].tolist())) == set(zip(b[0][:nb].tolist(), b[1][:nb].tolist()))
    assert na > 0


@pytest.mark.parametrize("metric", POINT_METRICS)
@pytest.mark.parametrize("factor", [1.0, 1e-170, 1e200])
def test_single_precision_screen_is_exact_at_the_boundary(monkeypatch, metric, factor):
    """Duals that make a random pairing tight (every other pair's slack 4 q_ij - 2 q_i - 2 q_j, with ties), each
    moved by -1, 0 or +1: the single-precision screen of _check_duals_blocked finds exactly the pairs of _check_duals,
    those with slack -1 included, at any scale of the points."""
    n = 240
    rng = np.random.default_rng(POINT_METRICS.index(metric))
    P = _blocked_inputs(metric, factor, n=n, seed=3)
    _rows_per_block(monkeypatch, 17, P)
    scale = 2 ** 30 / _max_distance(P.X, P.code)
    C = 2 ** 30 + 1
    pair = rng.permutation(n).reshape(-1, 2)
    dv = np.zeros(2 * n, np.int64)
    for a, b in pair:
        q = mm._level(P.X, a, b, P.code, scale, NOQ)
        dv[a] = dv[b] = 2 * (C - q)
    dv[:n] += rng.integers(-1, 2, size=n)
    bparent = np.full(2 * n, -1, np.int64)
    cap = n * n
    a = np.empty(cap, np.int64), np.empty(cap, np.int64)
    b = np.empty(cap, np.int64), np.empty(cap, np.int64)
    na = _check_duals(P.X, P.code, scale, C, n, dv, bparent, cap, *a, NOQ)
    nb = _check_duals_blocked(P, scale, C, n, dv, bparent, cap, *b, NOQ)
    assert na == nb > 0
    assert set(zip(a[0][:na].tolist(), a[1][:na].tolist())) == set(zip(b[0][:nb].tolist(), b[1][:nb].tolist()))
    slack = lambda i, j: dv[i] + dv[j] - 4 * (C - mm._level(P.X, i, j, P.code, scale, NOQ))
    assert any(slack(i, j) == -1 for i, j in zip(a[0][:na], a[1][:na]))


# ---------------------------------------------------------------- distance levels: the exact kernel, rounded
@pytest.mark.parametrize("metric", POINT_METRICS)
def test_levels_are_the_exact_kernels_distances_rounded(metric):
    """_complete_edges and _max_distance read the shared exact kernel: the same bits as pairwise_distances (cosine as
    0.5 |u - v|^2 of the canonical unit rows), and the levels are those distances times per_unit, rounded."""
    Z = np.random.default_rng(12).normal(size=(40, 5))
    P = prepare(Z, metric)
    if metric == "cosine":
        np.testing.assert_array_equal(P.X, normalize_rows(Z))
    D = pairwise_distances(Z, metric=metric)
    np.testing.assert_array_equal(mm._distance_matrix(P.X, P.code), D)
    assert _max_distance(P.X, P.code) == D.max()
    per_unit = 2 ** 30 / D.max()
    ei, ej, q = _complete_edges(P.X, P.code, per_unit, NOQ)
    np.testing.assert_array_equal(q, np.rint(D[ei, ej] * per_unit).astype(np.int64))
    Q = mm._rounded(D, per_unit)                               # the dense route reads the same levels from Q
    np.testing.assert_array_equal(_complete_edges(P.X, P.code, per_unit, Q)[2], q)


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
        ei, ej, q = _complete_edges(Z, EUCLIDEAN, mt.levels_per_unit, NOQ)
        G = nx.Graph()
        G.add_weighted_edges_from(zip(ei.tolist(), ej.tolist(), q.tolist()))
        ref = sum(G[a][b]["weight"] for a, b in nx.min_weight_matching(G))
        assert mt.cost == ref


@pytest.mark.parametrize("metric", ["sqeuclidean", "cosine"])
def test_other_metrics_match_networkx(metric):
    rng = np.random.default_rng(11)
    Z = rng.normal(size=(30, 4))
    mt = min_weight_perfect_matching(Z, metric=metric)
    if metric == "cosine":                                      # independent of the kernel: 1 - u.v
        U = Z / np.linalg.norm(Z, axis=1, keepdims=True)
        D = np.maximum(1 - U @ U.T, 0)
    else:
        D = ((Z[:, None] - Z[None]) ** 2).sum(-1)
    assert abs(D[mt.pairs[:, 0], mt.pairs[:, 1]].sum() - _nx_min_cost(D)) < 1e-6


@pytest.mark.parametrize("N,metric", [(301, "euclidean"), (240, "cosine"), (260, "sqeuclidean")])
def test_on_the_fly_distances_give_the_same_matching(monkeypatch, N, metric):
    """Above _DENSE_MAX the kernels recompute distances instead of reading the matrix: same certified cost."""
    Z = np.random.default_rng(N).normal(size=(N, 6))
    stored = min_weight_perfect_matching(Z, metric=metric)
    monkeypatch.setattr(mm, "_DENSE_MAX", 10)
    recomputed = min_weight_perfect_matching(Z, metric=metric)
    assert recomputed.certified and recomputed.cost == stored.cost
    assert recomputed.levels_per_unit == stored.levels_per_unit


def test_certificate_detects_a_non_optimal_dual():
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(30, 3))
    scale = 2 ** 20 / _max_distance(Z, EUCLIDEAN)
    ei, ej, q = _complete_edges(Z, EUCLIDEAN, scale, NOQ)
    C = 2 ** 20 + 1
    mate, dual, bparent = _max_weight_matching(30, ei, ej, 2 * (C - q), True, 30)
    vi, vj = np.empty(10, np.int64), np.empty(10, np.int64)
    assert _check_duals(Z, EUCLIDEAN, scale, C, 30, dual, bparent, 10, vi, vj, NOQ) == 0
    dual = dual.copy()
    dual[0] -= 10 ** 9                                           # break feasibility at vertex 0
    assert _check_duals(Z, EUCLIDEAN, scale, C, 30, dual, bparent, 10, vi, vj, NOQ) > 0 and 0 in vi[:1]


@pytest.mark.parametrize("seed", range(4))
def test_certificate_sweep_matches_naive_blossom_walk(seed):
    """The interval sweep of _check_duals counts the same violations as walking the blossom tree per pair."""
    rng = np.random.default_rng(seed)
    Z = np.vstack([rng.normal(size=(30, 3)), 0.3 * rng.normal(size=(31, 3)) + 2])   # odd: ghost vertex 61
    n, nvert = 61, 62
    scale = 2 ** 20 / _max_distance(Z, EUCLIDEAN)
    C = 2 ** 20 + 1
    ei, ej, q = _complete_edges(Z, EUCLIDEAN, scale, NOQ)
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
    assert naive > 0 and _check_duals(Z, EUCLIDEAN, scale, C, nvert, dual, bparent, 5000, vi, vj, NOQ) == naive


def test_sparse_route_repairs_a_graph_without_perfect_matching():
    """Two far clusters of odd size: the kNN graph has no perfect matching, one pair must cross."""
    rng = np.random.default_rng(5)
    Z = np.vstack([rng.normal(size=(151, 2)), rng.normal(size=(151, 2)) + 1000])
    mt = min_weight_perfect_matching(Z, method="sparse", k=3)
    dense = min_weight_perfect_matching(Z, method="dense")
    assert mt.certified and mt.rounds > 1 and mt.cost == dense.cost


# ---------------------------------------------------------------- preparation of the input
def test_prepare_gives_the_kernels_points():
    """_prepare: points as given (or divided by a power of two), canonical unit rows for cosine, a checked distance
    matrix for 'precomputed', the new metric codes; a zero row has no cosine distance."""
    rng = np.random.default_rng(50)
    Z = rng.normal(size=(9, 4))
    for metric, code in [("euclidean", EUCLIDEAN), ("sqeuclidean", SQEUCLIDEAN), ("cosine", COSINE)]:
        P = _prepare(Z, metric)
        assert (P.code, P.shift) == (code, 0)
        np.testing.assert_array_equal(P.X, normalize_rows(Z) if metric == "cosine" else Z)
    assert (COSINE, PRECOMPUTED) == (3, 5)
    P = _prepare(np.ldexp(Z, 600), "euclidean")
    assert P.shift > 0 and np.array_equal(np.ldexp(P.X, P.shift), np.ldexp(Z, 600))
    P = _prepare(np.ldexp(Z, 600), "cosine")                       # unit rows need no shift
    assert P.shift == 0 and np.array_equal(P.X, normalize_rows(Z))
    D = pairwise_distances(Z)
    P = _prepare(D, "precomputed")
    assert P.code == PRECOMPUTED and P.shift == 0 and np.array_equal(P.X, D)
    Z[1] = 0
    with pytest.raises(ValueError, match=r"^Z row 1 is all zeros: the cosine distance is undefined$"):
        min_weight_perfect_matching(Z, metric="cosine")
    with pytest.raises(ValueError, match="metric must be one of 'euclidean', 'sqeuclidean', 'cosine', 'precomputed'"):
        min_weight_perfect_matching(Z, metric="cityblock")


def test_bad_input():
    ok = np.ones((4, 3))
    with pytest.raises(ValueError, match="levels"):
        min_weight_perfect_matching(ok, levels=1)
    with pytest.raises(ValueError, match="method"):
        min_weight_perfect_matching(ok, method="greedy")
    with pytest.raises(ValueError, match="at least 2 rows"):
        min_weight_perfect_matching(np.ones((1, 3)))
    for metric in ("euclidean", "cosine"):                         # checked as points before anything reads them
        with pytest.raises(ValueError, match=r"Z must be a 2-D \(n, d\) array, got shape \(4,\)"):
            min_weight_perfect_matching(np.ones(4), metric=metric)
        with pytest.raises(TypeError, match="Z must be a 2-D"):
            min_weight_perfect_matching([["a", "b"], ["c", "d"]], metric=metric)


def test_argument_errors_name_the_argument():
    ok = np.random.default_rng(49).normal(size=(6, 3))
    cases = [(lambda: min_weight_perfect_matching(ok, levels="1000"), TypeError, "levels must be an integer, got '1000'"),
             (lambda: min_weight_perfect_matching(ok, levels=1000.0), TypeError, "levels must be an integer"),
             (lambda: min_weight_perfect_matching(ok, levels=None), TypeError, "levels must be an integer"),
             (lambda: min_weight_perfect_matching(ok, k=2.5), TypeError, "k must be an integer"),
             (lambda: min_weight_perfect_matching(ok, k=0), ValueError, "k must be an integer >= 1"),
             (lambda: min_weight_perfect_matching(ok, max_rounds=0), ValueError, "max_rounds must be an integer >= 1"),
             (lambda: min_weight_perfect_matching(None, metric="cosine"), TypeError, "Z is None"),
             (lambda: min_weight_perfect_matching(None, metric="precomputed"), TypeError, "Z is None"),
             (lambda: min_weight_perfect_matching(None), TypeError, "Z is None")]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()


# ---------------------------------------------------------------- a distance matrix instead of points
@pytest.mark.parametrize("N1,N2,metric", [(20, 20, "euclidean"), (31, 24, "euclidean"), (60, 45, "sqeuclidean"),
                                         (160, 150, "euclidean")])
def test_precomputed_distances_give_the_points_matching(N1, N2, metric):
    from scipy.spatial.distance import cdist
    rng = np.random.default_rng(N1 + N2)
    X, Y = rng.normal(size=(N1, 6)), rng.normal(size=(N2, 6)) + 0.4
    Z = np.vstack([X, Y]); D = cdist(Z, Z, metric)
    mp, mz = min_weight_perfect_matching(D, metric="precomputed"), min_weight_perfect_matching(Z, metric=metric)
    np.testing.assert_array_equal(mp.pairs, mz.pairs)
    assert mp.unmatched == mz.unmatched
    assert mp.certified and abs(mp.cost - mz.cost) <= len(Z)      # rounding of distances computed two ways


def test_precomputed_matrix_is_checked():
    D = np.array([[0, 1, 2, 2.0], [1, 0, 3, 1], [2, 3, 0, 1], [2, 1, 1, 0]])
    cases = [(D[:3], ValueError, "must be a square"), (D - 1.5, ValueError, "negative"),
             (D + np.eye(4), ValueError, "diagonal is not zero"),
             (D + np.triu(np.ones((4, 4)), 1), ValueError, "not symmetric"),
             (np.where(D == 3, np.nan, D), ValueError, "NaN"), (None, TypeError, "Z is None")]
    for bad, error, message in cases:
        with pytest.raises(error, match=message):
            min_weight_perfect_matching(bad, metric="precomputed")
    ok = D + 1e-14 * np.triu(np.ones((4, 4)), 1)                   # symmetric to rounding: accepted, upper triangle used
    mt = min_weight_perfect_matching(ok, metric="precomputed")
    assert mt.certified and len(mt.pairs) == 2


def test_a_distance_matrix_passed_as_points_warns():
    rng = np.random.default_rng(46)
    Z = rng.normal(size=(12, 3)); D = np.linalg.norm(Z[:, None] - Z[None], axis=-1)
    with pytest.warns(UserWarning, match="looks like a distance matrix.*metric='precomputed'"):
        min_weight_perfect_matching(D)
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
    with np.errstate(over="ignore", under="ignore", divide="ignore"):     # levels_per_unit may leave the float range
        want = np.float64(ref.levels_per_unit)
        for _ in range(p): want = want / np.float64(factor)
        np.testing.assert_allclose(got.levels_per_unit, want, rtol=1e-9)


def test_power_of_two_scaling_changes_no_rounded_distance():
    Z = np.random.default_rng(48).normal(size=(30, 5))
    ref = min_weight_perfect_matching(Z)
    for k in (-990, -600, 560, 1000):                              # entries stay normal numbers: exact scaling
        got = min_weight_perfect_matching(np.ldexp(Z, k))
        assert got.cost == ref.cost and np.array_equal(got.pairs, ref.pairs)
        assert got.levels_per_unit == np.ldexp(ref.levels_per_unit, -k)
    D = np.linalg.norm(Z[:, None] - Z[None], axis=-1)
    for k in (-990, 1000):                                        # tiny or huge distance matrices
        got = min_weight_perfect_matching(np.ldexp(D, k), metric="precomputed")
        assert got.certified and np.array_equal(got.pairs, ref.pairs)
