"""Tests for embeval_nb.crossmatch: the null distribution against exact rational arithmetic, the test on the shared
minimum-weight perfect matching (its p-value, ghost, ties broken blind to the labels, distance matrices, bad input),
the MMD permutation test, resampled tests, and a smoke run of the chapter notebook; and for what the chapter reads or
trains elsewhere: the Debian word lists (the DAWG reader against Tesseract's own dawg2wordlist) and GloVe (the
co-occurrence table against GloVe's cooccur loop, seeded training). The matching itself is tested in test_matching.py."""
import math
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from embeval_nb import data as _data
from embeval_nb.crossmatch import (crossmatch_null_logpmf, crossmatch_null_moments, crossmatch_null_pmf, crossmatch_test,
                                   mmd_permutation_test)
from embeval_nb.matching import min_weight_perfect_matching
from test_matching import _nx_min_cost                # networkx's matching: the reference


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
    with pytest.raises(ValueError, match="n must be an integer in 0..18"):
        crossmatch_null_pmf(18, 19)
    with pytest.raises(TypeError, match="N must be an integer"):
        crossmatch_null_pmf(18.5, 9)


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
    with pytest.raises(ValueError, match=r"^Z row \d+ is all zeros: the cosine distance is undefined$"):
        crossmatch_test(np.zeros((2, 3)), ok, metric="cosine")
    with pytest.raises(ValueError, match="levels"):
        crossmatch_test(ok, ok, levels=1)
    with pytest.raises(ValueError, match="method"):
        crossmatch_test(ok, ok, method="greedy")


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
    assert 0 <= rec["crossmatch/languages/mean_a1_min"] <= rec["crossmatch/languages/mean_a1_max"]
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
    assert {"romance", "maltese-italian", "languages-differ", "methods-differ", "methods-differ-aligned",
            "exact-test", "type-i-errors", "low-power"} <= set(verdicts)
    assert not {"same-language-mixes", "custom-routines"} & set(verdicts)   # a check of the test and a demonstration
    assert set(verdicts.values()) <= {"holds", "fails", "undecided", "untested", "untestable"}
    assert verdicts["larger-samples"] == verdicts["bridge-languages"] == "untested"
    assert rec["crossmatch/full/max_N"] > 400                      # the demonstration: N beyond the paper's 400
    same = rec["crossmatch/languages/same_language_check"]          # two halves of one language: (mean, low, high) of A1
    assert set(same) >= {"English", "Maltese"} and all(lo <= e <= hi for e, lo, hi in same.values())
    assert "untestable" not in (verdicts["exact-test"], verdicts["type-i-errors"])   # both tests reach either verdict
    assert rec["crossmatch/languages/n_blocks"] >= 4 and set(rec["crossmatch/critical_a1"]) == {"100", "200"}


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
    order = rng.permutation(len(Z)); labels = (order < N1).astype(int)  # samples interleaved, given by R-style 0/1 labels
    shuffled = crossmatch_test(D[order][:, order], labels, metric="precomputed")
    assert (shuffled.a1, shuffled.n, shuffled.m) == (pts.a1, pts.n, pts.m) and shuffled.p_value == pts.p_value


def test_precomputed_matrix_is_checked():
    D = np.array([[0, 1, 2, 2.0], [1, 0, 3, 1], [2, 3, 0, 1], [2, 1, 1, 0]])
    cases = [(D[:3], "must be a square"), (D - 1.5, "negative"), (D + np.eye(4), "diagonal is not zero"),
             (D + np.triu(np.ones((4, 4)), 1), "not symmetric"), (np.where(D == 3, np.nan, D), "NaN")]
    for bad, message in cases:
        with pytest.raises(ValueError, match=message):
            crossmatch_test(bad, 2, metric="precomputed")
    with pytest.raises(TypeError, match="X is None"):
        crossmatch_test(None, 2, metric="precomputed")
    for labels, message in [(None, "got None"), (np.ones(3), r"\(4,\) vector of 0/1"), (np.array([0, 1, 2, 1]), "0/1"),
                            (1, "at least 2 points"), (2.0, "must be an integer")]:
        with pytest.raises((ValueError, TypeError), match=message):
            crossmatch_test(D, labels, metric="precomputed")
    ok = D + 1e-14 * np.triu(np.ones((4, 4)), 1)                   # symmetric to rounding: accepted, upper triangle used
    assert crossmatch_test(ok, 2, metric="precomputed").n_pairs == 2


def test_a_distance_matrix_passed_as_points_warns():
    rng = np.random.default_rng(46)
    Z = rng.normal(size=(12, 3)); D = np.linalg.norm(Z[:, None] - Z[None], axis=-1)
    with pytest.warns(UserWarning, match=r"the stacked \[X; Y\] .*looks like a distance matrix.*metric='precomputed'"):
        crossmatch_test(D[:6], D[6:])
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        crossmatch_test(*np.split(rng.normal(size=(12, 12)), 2))    # ordinary square point sets do not warn
        crossmatch_test(D, 6, metric="precomputed")


# ---------------------------------------------------------------- extreme magnitudes
@pytest.mark.parametrize("factor", [1e154, 1e160, 1e300, 1e-170, 2.0 ** -1000])
@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cosine"])
def test_crossmatch_on_points_whose_distances_overflow_or_underflow(factor, metric):
    rng = np.random.default_rng(47)
    Z = rng.normal(size=(40, 4))
    r = crossmatch_test(Z[:20] * factor, Z[20:] * factor, metric=metric)
    ref = crossmatch_test(Z[:20], Z[20:], metric=metric)
    assert r.a1 == ref.a1
    np.testing.assert_array_equal(r.pairs, ref.pairs)


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
    cases = [(lambda: crossmatch_test(None, ok), TypeError, "X is None"),
             (lambda: crossmatch_test(ok, None), TypeError, "Y is None"),
             (lambda: crossmatch_test(ok, ok, levels="1000"), TypeError, "levels must be an integer, got '1000'"),
             (lambda: crossmatch_test(ok, ok, levels=1000.0), TypeError, "levels must be an integer"),
             (lambda: crossmatch_null_pmf(None, 2), TypeError, "N must be an integer"),
             (lambda: crossmatch_null_pmf(18, "9"), TypeError, "n must be an integer"),
             (lambda: resampled_crossmatch(ok, ok, size=2.0, reps=1), TypeError, "size must be an integer"),
             (lambda: resampled_crossmatch(ok, ok, size=3, reps=None), TypeError, "reps must be an integer"),
             (lambda: mmd_permutation_test(ok, ok, n_permutations=None), TypeError, "n_permutations must be an integer"),
             (lambda: mmd_permutation_test(ok, ok, bandwidth=-1.0), ValueError, "bandwidth must be a number > 0, got -1")]
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
