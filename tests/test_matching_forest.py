"""Tests for the blossom kernel's forest kept across augmentations (only the two trees an augmentation joins are
dissolved), its duals moved through one running total and its dual-step events on heaps: against networkx on
seeded random graphs with many tied integer weights, graphs of many small blossoms, nearest-neighbour graphs of
points, the duals it returns checked as an optimality certificate, and the heap against sorting."""
import networkx as nx
import numpy as np
import pytest
from numba.typed import List

from embeval_nb.matching import _heap_pop, _heap_push, _max_weight_matching


def _nx_best(n, edges, maxcard):
    "Cardinality and weight of networkx's maximum-weight (maximum-cardinality if maxcard) matching."
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_weighted_edges_from(edges)
    M = nx.max_weight_matching(G, maxcardinality=maxcard)
    return len(M), sum(G[a][b]["weight"] for a, b in M)


def _ours(n, e, maxcard, njump=0):
    "Our matching of the edges e (rows i, j, w): (cardinality, weight), mate, doubled duals, blossom parents."
    mate, dual, bparent = _max_weight_matching(n, e[:, 0].copy(), e[:, 1].copy(), e[:, 2].copy(), maxcard, njump)
    assert all(mate[mate[v]] == v for v in range(n) if mate[v] >= 0)
    wt = {(a, b): x for a, b, x in e.tolist()}
    pairs = [(v, int(mate[v])) for v in range(n) if mate[v] > v]
    return (len(pairs), sum(wt[p] for p in pairs)), mate, dual, bparent


def _random_graph(seed):
    "A random graph of 4-89 vertices with even weights from a small range (many ties) or a wide one."
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 90))
    p = rng.uniform(0.04, 0.5)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < p] or [(0, 1)]
    w = 2 * rng.integers(1, [3, 6, 20, 1000][seed % 4], size=len(pairs))
    return n, np.array([(i, j, x) for (i, j), x in zip(pairs, w)], dtype=np.int64)


def _blossom_chain(seed, cycles=12):
    "Odd cycles (3, 5 or 7 vertices) with one pendant vertex each, joined in a ring by cheap edges: many blossoms."
    rng = np.random.default_rng(seed)
    edges, n = [], 0
    firsts = []
    for _ in range(cycles):
        L = int(rng.choice([3, 5, 7]))
        cyc = list(range(n, n + L))
        edges += [(cyc[t], cyc[(t + 1) % L], int(rng.integers(5, 8))) for t in range(L)]
        edges.append((cyc[0], n + L, int(rng.integers(1, 4))))          # the pendant vertex
        firsts.append(cyc[int(rng.integers(1, L))]); n += L + 1
    edges += [(firsts[t], firsts[(t + 1) % cycles], int(rng.integers(1, 6))) for t in range(cycles)]
    e = np.array([(min(a, b), max(a, b), 2 * x) for a, b, x in edges], dtype=np.int64)
    return n, e


@pytest.mark.parametrize("seed", range(450))
def test_forest_kept_across_augmentations_matches_networkx(seed):
    """Random graphs, perfect matching or not, many ties: the same cardinality and weight as networkx, in both
    modes (trees dissolved and kept across many augmentations, blossoms inside dissolved trees, stale heap entries)."""
    n, e = _random_graph(seed)
    for maxcard in (False, True):
        assert _ours(n, e, maxcard)[0] == _nx_best(n, e.tolist(), maxcard)


def _other_random_graph(seed):
    "A random graph of 4-69 vertices, density 0.05-0.6, doubled weights from 1..2, 1..5, 1..19 or 1..999."
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 70)); p = rng.uniform(0.05, 0.6)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < p] or [(0, 1)]
    w = 2 * rng.integers(1, [3, 6, 20, 1000][seed % 4], size=len(pairs))
    return n, np.array([(i, j, x) for (i, j), x in zip(pairs, w)], dtype=np.int64)


@pytest.mark.parametrize("seed", [19, 39, 579] + list(range(40)))
def test_expanded_t_blossom_leaves_free_children_as_events(seed):
    """Graphs (seeds 19, 39 and 579 among them) where a T-blossom is expanded and leaves a child free whose edges to
    S-vertices had been dropped from the heap while the child was inside the T-blossom: they must be put back."""
    n, e = _other_random_graph(seed)
    for maxcard in (False, True):
        assert _ours(n, e, maxcard)[0] == _nx_best(n, e.tolist(), maxcard)


@pytest.mark.parametrize("seed", range(30))
def test_many_small_blossoms_match_networkx(seed):
    """Rings of odd cycles with pendant vertices: blossoms form in many trees at once and are dissolved with them."""
    n, e = _blossom_chain(seed, cycles=6 + seed % 10)
    for maxcard in (False, True):
        assert _ours(n, e, maxcard)[0] == _nx_best(n, e.tolist(), maxcard)


def _with_a_perfect_matching(n, e, rng):
    "The graph e on n vertices (one more if n is odd) with the edges of a random perfect matching added."
    n += n % 2
    order = rng.permutation(n)
    have = {(a, b) for a, b, _ in e.tolist()}
    extra = [(min(a, b), max(a, b)) for a, b in order.reshape(-1, 2)]
    extra = [(a, b, 2 * int(rng.integers(1, 20))) for a, b in extra if (a, b) not in have]
    return n, np.vstack([e, np.array(extra, dtype=np.int64).reshape(-1, 3)])


def _certificate_holds(n, e, mate, dual, bparent):
    "Doubled duals feasible on every edge (with the z of the blossoms holding both ends), matched edges tight, z >= 0."
    def around(v):
        out, b = [], bparent[v]
        while b != -1:
            out.append(b); b = bparent[b]
        return out
    for i, j, w in e.tolist():
        z = sum(dual[b] for b in set(around(i)) & set(around(j)))
        slack = dual[i] + dual[j] - 2 * w + 2 * z
        if slack < 0 or (mate[i] == j and slack != 0):
            return False
    return all(dual[b] >= 0 for b in range(n, 2 * n) if (bparent[:n] == b).any() or (bparent[n:] == b).any())


@pytest.mark.parametrize("seed", range(40))
def test_jump_start_duals_certify_the_perfect_matching(seed):
    """Jump start on graphs that have a perfect matching: networkx's weight, and the duals returned (stored against
    the running total during the search, given back as they are) are feasible with every matched edge tight."""
    n, e = _random_graph(1000 + seed) if seed % 3 else _blossom_chain(1000 + seed)
    n, e = _with_a_perfect_matching(n, e, np.random.default_rng(seed))
    best = _nx_best(n, e.tolist(), True)
    assert 2 * best[0] == n
    got, mate, dual, bparent = _ours(n, e, True, n)
    assert got == best and _certificate_holds(n, e, mate, dual, bparent)


@pytest.mark.parametrize("seed", range(6))
def test_nearest_neighbour_graphs_of_points(seed):
    """The k-nearest graph of 160 random points with rounded distances (ties from the coarse rounding): the
    maximum-weight perfect matching of w = 2 (C - q) equals networkx's, from the jump start as in a solve."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(160, 3))
    D = np.linalg.norm(Z[:, None] - Z[None], axis=-1)
    q = np.rint(D / D.max() * 50).astype(np.int64)
    nb = np.argsort(D, axis=1)[:, 1:7]
    pairs = sorted({(min(i, j), max(i, j)) for i in range(160) for j in nb[i]})
    e = np.array([(i, j, 2 * (51 - q[i, j])) for i, j in pairs], dtype=np.int64)
    best = _nx_best(160, e.tolist(), True)
    for njump in (0, 160) if 2 * best[0] == 160 else (0,):
        assert _ours(160, e, True, njump)[0] == best


def test_heap_pops_in_key_order():
    """The binary heap, grown from capacity 1, gives back random keys (with ties) in sorted order."""
    rng = np.random.default_rng(0)
    heap = List([np.empty(1, np.int64) for _ in range(6)]); size = np.zeros(3, np.int64)
    keys = rng.integers(0, 50, size=500)
    for t, key in enumerate(keys):
        _heap_push(heap, size, 2, key, t)
    out = []
    while size[2] > 0:
        out.append(int(heap[4][0])); assert keys[heap[5][0]] == heap[4][0]
        _heap_pop(heap, size, 2)
    assert out == sorted(keys.tolist()) and size.tolist() == [0, 0, 0]
