"""The inputs that break numerical code, on every public function that takes vectors, in every module.

Each function below is called on a pair of small point sets that share a point and hold a duplicate. The classes:
- exact power-of-two rescaling (2**-1000, 2**1000): the result is the unscaled one scaled by 2**(k * degree), bit for
  bit, where `degree` is how the output scales (0 invariant, 1 a distance, 2 a squared distance);
- decimal extremes (1e-300, 1e200): finite inputs never over- or underflow: the result is finite and agrees with the
  scaled one to rounding (an output that is itself beyond the double range is inf, or 0 below it);
- NaN and infinity in the input: a ValueError that says so;
- wrong types (None, text, complex numbers), shapes (a vector, a 3-D array) and empty input: a TypeError or ValueError
  naming the argument, never a crash inside numba or scipy and never a NaN;
- one point: a result without NaN, or a ValueError.
The keyword arguments (k, working_memory, n_jobs, seed, metric, ...) are checked out of range at the end.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from embeval_nb import corpus_distance as cd
from embeval_nb import crossmatch as cm
from embeval_nb import matching, metrics, n2o, neighbours, retrofit, wmd
from embeval_nb.embeddings import WordVectors, average_word_vectors, vocab_index

RNG = np.random.default_rng(20261125)
A = RNG.normal(size=(14, 6))
B = RNG.normal(size=(11, 6)) + 0.3
A[2] = A[1]                      # a duplicate inside a set
B[0] = A[0]                      # a point shared by the two sets
A2 = RNG.normal(size=(14, 4))    # a second embedding of the same 14 items
WORDS = [f"w{i}" for i in range(14)]
LEXICON = {"w0": ["w1", "w2"], "w1": ["w0", "w3"], "w4": ["w5"], "w5": ["w4", "w6", "w7"], "w9": ["w10"]}
PAIRS = [("w0", "w1"), ("w2", "w5"), ("w3", "w9"), ("w4", "w12"), ("w7", "w8"), ("w10", "w13")]
SCORES = [8.0, 3.0, 5.5, 1.0, 7.0, 2.5]
DOCS = sp.csr_matrix(np.abs(RNG.normal(size=(5, 14))) * (RNG.random((5, 14)) < 0.5) + np.eye(5, 14))
DOCS2 = sp.csr_matrix(np.abs(RNG.normal(size=(4, 14))) * (RNG.random((4, 14)) < 0.5) + np.eye(4, 14, 3))


def out(*parts):
    "A result as (array, degree) parts."
    return [(np.asarray(p, dtype=np.float64), d) for p, d in parts]


# name -> (function of the two point sets returning out(...), what empty input does, does one point work)
CASES = {
    "metrics.pairwise_distances/euclidean": lambda X, Y: out((metrics.pairwise_distances(X, Y), 1)),
    "metrics.pairwise_distances/sqeuclidean": lambda X, Y: out((metrics.pairwise_distances(X, Y, metric="sqeuclidean"), 2)),
    "metrics.pairwise_distances/cityblock": lambda X, Y: out((metrics.pairwise_distances(X, Y, metric="cityblock"), 1)),
    "metrics.pairwise_distances/cosine": lambda X, Y: out((metrics.pairwise_distances(X, Y, metric="cosine"), 0)),
    "metrics.pairwise_distances/angular": lambda X, Y: out((metrics.pairwise_distances(X, Y, metric="angular"), 0)),
    "metrics.normalize_rows": lambda X, Y: out((metrics.normalize_rows(X), 0), (metrics.normalize_rows(Y, "l1"), 0)),
    "neighbours.knn": lambda X, Y: out(*zip(neighbours.knn(X, Y, 3), (1, 0))),
    "neighbours.knn/within": lambda X, Y: out(*zip(neighbours.knn(X, k=4, metric="cityblock"), (1, 0))),
    "neighbours.knn/cosine": lambda X, Y: out(*zip(neighbours.knn(X, Y, 2, metric="cosine"), (0, 0))),
    "neighbours.ball_counts": lambda X, Y: out(*((c, 0) for c in neighbours.ball_counts(
        X, Y, neighbours.knn(X, k=2)[0][:, -1], neighbours.knn(Y, k=2)[0][:, -1]))),
    "neighbours.cosine_knn": lambda X, Y: out(*zip(neighbours.cosine_knn(X, [0, 3, 5], 4), (0, 0))),
    "matching.min_weight_perfect_matching": lambda X, Y: (lambda m: out((m.pairs, 0), (m.cost, 0), (m.levels_per_unit, -1)))(
        matching.min_weight_perfect_matching(np.vstack([X, Y]))),
    "matching.min_weight_perfect_matching/cosine": lambda X, Y: out(
        (matching.min_weight_perfect_matching(np.vstack([X, Y]), metric="cosine", method="sparse").pairs, 0)),
    "corpus_distance.energy_distance/euclidean": lambda X, Y: out((cd.energy_distance(X, Y, metric="euclidean"), 1)),
    "corpus_distance.energy_distance/sqeuclidean": lambda X, Y: out((cd.energy_distance(X, Y, metric="sqeuclidean"), 2)),
    "corpus_distance.energy_distance/cosine": lambda X, Y: out((cd.energy_distance(X, Y), 0)),
    "corpus_distance.energy_distance/angular": lambda X, Y: out((cd.energy_distance(X, Y, metric="angular", root=True), 0)),
    "corpus_distance.cross_distances": lambda X, Y: (lambda c: out((c.mean, 1), (c.nearest_x, 1), (c.nearest_y, 1)))(
        cd.cross_distances(X, Y, metric="euclidean")),
    "corpus_distance.average_hausdorff": lambda X, Y: out((cd.average_hausdorff(X, Y), 0),
                                                          (cd.average_hausdorff(X, Y, metric="euclidean"), 1)),
    "corpus_distance.irpr": lambda X, Y: out((cd.irpr(X, Y, metric="sqeuclidean"), 2)),
    "corpus_distance.fid": lambda X, Y: out((cd.fid(X, Y), 2)),
    "corpus_distance.trace_sqrt_product": lambda X, Y: out((cd.trace_sqrt_product(X, Y), 2)),
    "corpus_distance.prdc": lambda X, Y: out((cd.prdc(X, Y, 2), 0), (cd.prdc(X, Y, 3, metric="cosine"), 0)),
    "corpus_distance.pr_distance": lambda X, Y: out((cd.pr_distance(X, Y, 2), 0), (cd.dc_distance(X, Y, 2), 0)),
    "corpus_distance.classifier_distance": lambda X, Y: out((cd.classifier_distance(X, Y), 0)),
    "corpus_distance.mauve_distance": lambda X, Y: out((cd.mauve_distance(X, Y), 0)),
    "n2o.n2o": lambda X, Y: out((n2o.n2o(X, A2, [0, 1, 5], 3), 0), (n2o.n2o_matrix({"a": X, "b": A2}, [2, 4], 2).to_numpy(), 0)),
    "n2o.paraphrase_ranks": lambda X, Y: out((n2o.paraphrase_ranks(X, Y[:3], Y[3:6]), 0)),
    "retrofit.retrofit": lambda X, Y: out((retrofit.retrofit(X, WORDS, LEXICON), 1),
                                          (retrofit.retrofit(X, WORDS, LEXICON, method="jacobi"), 1)),
    "retrofit.retrofit_fixed_point": lambda X, Y: out((retrofit.retrofit_fixed_point(X, WORDS, LEXICON, solver="lu"), 1)),
    "retrofit.evaluate_similarity": lambda X, Y: (lambda r: out((r.predicted, 0), (r.pearson, 0), (r.rmse, 0)))(
        retrofit.evaluate_similarity(X, WORDS, PAIRS, SCORES, score_range=(0, 10))),
    "retrofit.similarity_metrics": lambda X, Y: (lambda m: out(*((m[k], 1 if k in ("rmse", "mae") else 0) for k in m)))(
        retrofit.similarity_metrics(X[:, 0], Y[:11, 1].tolist() + X[11:, 2].tolist())),
    "retrofit.bootstrap_similarity": lambda X, Y: (lambda r: out((r[..., :3], 0), (r[..., 3:], 1)))(
        retrofit.bootstrap_similarity(X[:, 0], [X[:, 1], X[:, 2]], n_boot=20)),
    "retrofit.mse_decomposition": lambda X, Y: out(*((v, 2) for v in retrofit.mse_decomposition(X[:, 0], X[:, 3]).values())),
    "retrofit.recalibrate": lambda X, Y: out((retrofit.recalibrate(X[:, 0], X[:, 1], np.arange(14) < 9), 1)),
    "wmd.wmd": lambda X, Y: out((wmd.wmd(DOCS[0], DOCS[1], X), 1), (wmd.wmd(DOCS[0], DOCS[2], X, metric="cityblock"), 1)),
    "wmd.wmd_pairwise": lambda X, Y: out((wmd.wmd_pairwise(DOCS, DOCS2, X), 1)),
    "wmd.wmd_paired": lambda X, Y: out((wmd.wmd_paired(DOCS[:4], DOCS2, X, metric="sqeuclidean"), 2)),
    "wmd.wmd_knn": lambda X, Y: out(*zip(wmd.wmd_knn(DOCS, DOCS2, X, 2), (1, 0))),
    "wmd.travel_distances": lambda X, Y: out(*zip(wmd.travel_distances(DOCS[0], DOCS[3], X), (1, 0))),
    "wmd.emd2": lambda X, Y: out((wmd.emd2(np.ones(5), np.arange(1.0, 5.0), metrics.pairwise_distances(X[:5], Y[:4])), 1)),
    "wmd.pca_embeddings": lambda X, Y: out((np.abs(wmd.pca_embeddings(X, DOCS, 3)), 1)),
    "wmd.bow_distances": lambda X, Y: out((wmd.bow_distances(np.abs(X), np.abs(Y[:, :6]), norm="l1"), 0),
                                          (wmd.bow_distances(np.abs(X), np.abs(Y), norm=None, metric="euclidean"), 1)),
    "wmd.wmd_tokens": lambda X, Y: out((wmd.wmd_tokens(["w0", "w3", "w3"], ["w1", "w9"], WordVectors(WORDS, X), normalize=False), 1),
                                       (wmd.wmd_tokens(["w0", "w3"], ["w1", "w9"], WordVectors(WORDS, X)), 0)),
    "crossmatch.crossmatch_test": lambda X, Y: (lambda r: out((r.a1, 0), (r.p_value, 0), (r.pairs, 0)))(cm.crossmatch_test(X, Y)),
    "crossmatch.mmd_permutation_test": lambda X, Y: (lambda r: out((r.statistic, 0), (r.p_value, 0), (r.bandwidth, 1)))(
        cm.mmd_permutation_test(X, Y, n_permutations=20)),
    "crossmatch.resampled_crossmatch": lambda X, Y: out((cm.resampled_crossmatch(X, Y, size=5, reps=2).a1, 0)),
}
THIRD_PARTY = {"corpus_distance.mauve_distance", "corpus_distance.classifier_distance"}   # compared to rounding, not bits
BITS_NOT_EXACT = {"retrofit.retrofit_fixed_point", "retrofit.recalibrate"}   # LAPACK solves: scaled by 2**k to rounding, not bit for bit
SLOW = {"corpus_distance.mauve_distance"}
NAN_PROPAGATES = {"metrics.normalize_rows"}             # documented: a NaN row gives a NaN row (tested below)
# functions of score vectors (columns of the point sets), called with the bad vector in first place
VECTORS = {
    "retrofit.similarity_metrics": lambda v: retrofit.similarity_metrics(v, A[:, 1]),
    "retrofit.bootstrap_similarity": lambda v: retrofit.bootstrap_similarity(v, [A[:, 1]], n_boot=5),
    "retrofit.mse_decomposition": lambda v: retrofit.mse_decomposition(v, A[:, 1]),
    "retrofit.recalibrate": lambda v: retrofit.recalibrate(v, A[:, 1], np.arange(14) < 9),
}
# cases whose CASES entry transforms X before the call: the bad matrix goes straight to the function here
DIRECT = {
    "matching.min_weight_perfect_matching": lambda X: matching.min_weight_perfect_matching(X),
    "matching.min_weight_perfect_matching/cosine": lambda X: matching.min_weight_perfect_matching(X, metric="cosine"),
    "wmd.emd2": lambda M: wmd.emd2(np.ones(5), np.arange(1.0, 5.0), M),
    "wmd.bow_distances": lambda X: wmd.bow_distances(X, np.abs(B)),
}
CORRELATIONS_OF_ONE_PAIR = {"retrofit.similarity_metrics", "retrofit.bootstrap_similarity"}   # documented nan


def run(name, X, Y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)        # mauve and faiss warn about few points per bucket
        return CASES[name](X, Y)


BASE = {}


def base(name):
    if name not in BASE: BASE[name] = run(name, A, B)
    return BASE[name]


def scaled(value, degree, s):
    "value * s**degree in floating point (inf beyond the largest double), exactly 0 where value is 0."
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        factor = np.float64(s) ** abs(degree)
        return np.where(value == 0, 0.0, value * factor if degree >= 0 else value / factor)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("k", [-1000, 1000])
def test_power_of_two_rescaling_is_exact(name, k):
    "Inputs scaled by 2**k give the result scaled by 2**(k * degree): bit for bit where only our arithmetic is involved."
    if name in SLOW and k > 0: pytest.skip("one direction is enough for the slow third-party metric")
    s = 2.0 ** k
    got = run(name, A * s, B * s)
    for (g, degree), (b0, _) in zip(got, base(name)):
        with np.errstate(over="ignore"): want = np.ldexp(b0, k * degree) if degree else b0
        if name in THIRD_PARTY | BITS_NOT_EXACT:
            np.testing.assert_allclose(g, want, rtol=1e-9, atol=0, err_msg=name)
        else:
            np.testing.assert_array_equal(g, want, err_msg=name)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("s", [1e-300, 1e200])
def test_extreme_magnitudes_neither_overflow_nor_underflow(name, s):
    "Finite inputs near 1e-300 or 1e200 give finite results equal to the scaled ones to rounding."
    if name in SLOW and s > 1: pytest.skip("one direction is enough for the slow third-party metric")
    got = run(name, A * s, B * s)
    for (g, degree), (b0, _) in zip(got, base(name)):
        want = scaled(b0, degree, s)
        representable = np.isfinite(want)
        assert not np.isnan(g).any(), name
        np.testing.assert_allclose(g[representable], want[representable], rtol=1e-9, atol=1e-300, err_msg=name)
        assert np.isinf(g[~representable]).all(), name              # beyond the largest double: inf, as numpy says


@pytest.mark.parametrize("name", sorted(set(CASES) - SLOW - NAN_PROPAGATES))
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_and_infinity_are_named(name, bad):
    X = A.copy(); X[0, 0] = X[3, 2] = bad        # in the first column too, for the functions of score vectors
    with pytest.raises(ValueError, match=r"(?i)nan|infinite|finite"):
        run(name, X, B)


def test_normalize_rows_keeps_nan_rows_nan():
    X = A.copy(); X[3, 2] = np.nan
    Y = metrics.normalize_rows(X)
    assert np.isnan(Y[3]).all() and np.isfinite(np.delete(Y, 3, 0)).all()


def call_with(name, X):
    "The function of case `name` called with X as its first matrix, untouched."
    return DIRECT[name](X) if name in DIRECT else run(name, X, B)


def assert_named(info, name):
    "The error is ours: raised with a message, not from inside numba or numpy."
    assert not type(info.value).__module__.startswith("numba"), (name, info.value)
    assert str(info.value), name
    assert "object has no attribute" not in str(info.value) and "not subscriptable" not in str(info.value), (name, info.value)


@pytest.mark.parametrize("name", sorted(set(CASES) - SLOW - set(VECTORS)))
def test_wrong_types_and_shapes_name_the_problem(name):
    for X, error in [(None, TypeError), ([["a", "b"], ["c", "d"]], TypeError), (A.astype(complex), TypeError),
                     (A[:, 0].copy(), (ValueError, TypeError)), (A[None], (ValueError, TypeError))]:
        with pytest.raises(error) as info:
            call_with(name, X)
        assert_named(info, name)


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_wrong_score_vectors_name_the_problem(name):
    for v, error in [(None, TypeError), (["a"] * 14, TypeError), (A[:, 0].astype(complex), TypeError),
                     (A, ValueError), (A[:5, 0], ValueError), (A[:0, 0], ValueError)]:
        with pytest.raises(error) as info:
            VECTORS[name](v)
        assert_named(info, name)


EMPTY_OK = {"metrics.pairwise_distances/euclidean", "metrics.pairwise_distances/sqeuclidean",
            "metrics.pairwise_distances/cityblock", "metrics.pairwise_distances/cosine",
            "metrics.pairwise_distances/angular", "metrics.normalize_rows"}


@pytest.mark.parametrize("name", sorted(set(CASES) - SLOW))
def test_empty_input_is_an_error_or_an_empty_result(name):
    if name in EMPTY_OK:
        assert all(g.size == 0 or g.shape[0] == len(B) for g, _ in run(name, A[:0], B))
        return
    with pytest.raises((ValueError, TypeError)) as info:
        call_with(name, A[:0])
    assert_named(info, name)


@pytest.mark.parametrize("name", sorted(set(CASES) - SLOW))
def test_one_point_gives_numbers_or_a_clear_error(name):
    try:
        got = run(name, A[:1], B[:1])
    except (ValueError, TypeError) as e:
        assert str(e) and not type(e).__module__.startswith("numba"), (name, e)
        return
    if name in CORRELATIONS_OF_ONE_PAIR:          # the correlations of one pair are nan, the errors are numbers
        got = got[1:] if name == "retrofit.bootstrap_similarity" else got[3:]
    for g, _ in got: assert not np.isnan(g).any(), name


def test_shared_points_get_the_same_distance_everywhere():
    "The distance of a pair is the same number in every function, so comparisons on a boundary come out one way."
    d_pair = metrics.pairwise_distances(A[:1], B[:1])[0, 0]
    assert d_pair == 0.0
    for metric in ("euclidean", "sqeuclidean", "cityblock", "cosine", "angular"):
        D = metrics.pairwise_distances(A, B, metric=metric)
        dist, idx = neighbours.knn(A, B, len(B), metric=metric, working_memory=1e-4)
        np.testing.assert_array_equal(np.take_along_axis(D, idx, 1), dist)       # knn's distances are the matrix's bits
        within = metrics.pairwise_distances(A, metric=metric)
        np.testing.assert_array_equal(within[0, 1:], metrics.pairwise_distances(A[:1], A[1:], metric=metric)[0])
    # B[0] is A[0]: its distances to A equal A[0]'s distances to A, bit for bit, in any block layout
    for wm in (1e-5, 1e-3, None):
        c = cd.cross_distances(A, B, metric="euclidean", working_memory=wm)
        assert c.nearest_y[0] == 0.0 and c.nearest_x[0] == 0.0


# ---------------------------------------------------------------- keyword arguments out of range
BAD_COUNTS = [None, float("nan"), float("inf"), 2.5, True, "3", 0, -1, 10 ** 9]
BAD_BUDGETS = [0, -1.0, float("nan"), float("inf"), "64"]
BAD_JOBS = [0, 1.5, "2"]
BAD_SEEDS = [-1, 1.5, "x", [0, -2]]

KEYWORDS = {  # function -> {argument: (bad values, call with that argument)}
    "knn": {"k": (BAD_COUNTS, lambda v: neighbours.knn(A, B, v)),
            "working_memory": (BAD_BUDGETS, lambda v: neighbours.knn(A, B, 2, working_memory=v)),
            "metric": (["l2", None, 3], lambda v: neighbours.knn(A, B, 2, metric=v))},
    "cosine_knn": {"k": (BAD_COUNTS, lambda v: neighbours.cosine_knn(A, [0, 1], v)),
                   "working_memory": (BAD_BUDGETS, lambda v: neighbours.cosine_knn(A, [0, 1], 2, working_memory=v)),
                   "queries": ([None, [0.5], [99], [1, 1], [], "0"], lambda v: neighbours.cosine_knn(A, v, 2)),
                   "exclude_self": (["no", None], lambda v: neighbours.cosine_knn(A, [0], 2, exclude_self=v))},
    "ball_counts": {"radius_x": ([np.ones(3), np.full(14, np.nan)], lambda v: neighbours.ball_counts(A, B, v))},
    "prdc": {"k": (BAD_COUNTS, lambda v: cd.prdc(A, B, v)),
             "working_memory": (BAD_BUDGETS, lambda v: cd.prdc(A, B, 2, working_memory=v)),
             "metric": (["cityblock", "l2"], lambda v: cd.prdc(A, B, 2, metric=v))},
    "energy_distance": {"working_memory": (BAD_BUDGETS, lambda v: cd.energy_distance(A, B, metric="euclidean", working_memory=v)),
                        "root": (["yes", None], lambda v: cd.energy_distance(A, B, root=v))},
    "average_hausdorff": {"working_memory": (BAD_BUDGETS, lambda v: cd.average_hausdorff(A, B, working_memory=v))},
    "classifier_distance": {"test_size": ([0, 1, -0.1, float("nan"), "0.2"], lambda v: cd.classifier_distance(A, B, test_size=v)),
                            "seed": (BAD_SEEDS, lambda v: cd.classifier_distance(A, B, seed=v))},
    "ksc_distances": {"R": (BAD_COUNTS[:-1], lambda v: cd.ksc_distances(A, B, {"E": cd.energy_distance}, K=2, n=4, R=v)),
                      "K": (BAD_COUNTS, lambda v: cd.ksc_distances(A, B, {"E": cd.energy_distance}, K=v, n=4, R=1)),
                      "n_jobs": (BAD_JOBS, lambda v: cd.ksc_distances(A, B, {"E": cd.energy_distance}, K=2, n=4, R=1, n_jobs=v))},
    "perturb_group": {"p": ([-0.1, 1.5, float("nan"), None], lambda v: cd.perturb_group(B, B, v, 1.0)),
                      "delta": ([-1.0, float("inf"), None], lambda v: cd.perturb_group(B, B, 0.2, v)),
                      "direction": (["up"], lambda v: cd.perturb_group(B, B, 0.2, 1.0, direction=v))},
    "paired_blobs": {"m": (BAD_COUNTS[:-1], lambda v: cd.paired_blobs(v)), "jitter_var": ([-1.0, float("nan")], lambda v: cd.paired_blobs(10, jitter_var=v))},
    "n2o": {"k": (BAD_COUNTS, lambda v: n2o.n2o(A, A2, [0, 1], v))},
    "neighbour_overlap": {"k": (BAD_COUNTS[1:], lambda v: n2o.neighbour_overlap([[1, 2]], [[2, 3]], v))},
    "chance_n2o": {"k": (BAD_COUNTS, lambda v: n2o.chance_n2o(100, v)), "n": ([1.5, 1, None], lambda v: n2o.chance_n2o(v, 2))},
    "paraphrase_ranks": {"working_memory": (BAD_BUDGETS, lambda v: n2o.paraphrase_ranks(A, B[:2], B[2:4], working_memory=v)),
                         "exclude": ([[0.5, 1.0], [99, 0], [0]], lambda v: n2o.paraphrase_ranks(A, B[:2], B[2:4], exclude=v))},
    "min_weight_perfect_matching": {
        "k": (BAD_COUNTS[:-1], lambda v: matching.min_weight_perfect_matching(A, k=v)),
        "levels": ([1, 2.0, None, 2 ** 50], lambda v: matching.min_weight_perfect_matching(A, levels=v)),
        "method": (["fast", None], lambda v: matching.min_weight_perfect_matching(A, method=v)),
        "metric": (["cityblock", "angular"], lambda v: matching.min_weight_perfect_matching(A, metric=v))},
    "crossmatch_test": {"seed": (BAD_SEEDS, lambda v: cm.crossmatch_test(A, B, seed=v))},
    "mmd_permutation_test": {"n_permutations": (BAD_COUNTS[:-1], lambda v: cm.mmd_permutation_test(A, B, n_permutations=v)),
                             "bandwidth": ([0, -1.0, float("nan"), float("inf"), "1"], lambda v: cm.mmd_permutation_test(A, B, bandwidth=v))},
    "resampled_crossmatch": {"size": (BAD_COUNTS, lambda v: cm.resampled_crossmatch(A, B, size=v, reps=1)),
                             "reps": (BAD_COUNTS[:-1], lambda v: cm.resampled_crossmatch(A, B, size=3, reps=v))},
    "retrofit": {"n_iter": ([None, float("nan"), 2.5, True, "3", -1], lambda v: retrofit.retrofit(A, WORDS, LEXICON, n_iter=v)),
                 "alpha": ([0, -1.0, float("nan"), float("inf"), None], lambda v: retrofit.retrofit(A, WORDS, LEXICON, alpha=v)),
                 "order": ([[0.5], [99], [0, 0, 1], "0"], lambda v: retrofit.retrofit(A, WORDS, LEXICON, order=v)),
                 "vocab": ([{w: i + 1 for i, w in enumerate(WORDS)}, {w: 0 for w in WORDS}, {w: float(i) for i, w in enumerate(WORDS)},
                            WORDS[:-1] + ["w0"], None, "w0 w1"], lambda v: retrofit.retrofit(A, v, LEXICON)),
                 "method": (["gauss"], lambda v: retrofit.retrofit(A, WORDS, LEXICON, method=v))},
    "retrofit_fixed_point": {"rtol": ([0, 1, float("nan"), None], lambda v: retrofit.retrofit_fixed_point(A, WORDS, LEXICON, rtol=v)),
                             "solver": (["qr"], lambda v: retrofit.retrofit_fixed_point(A, WORDS, LEXICON, solver=v)),
                             "vocab": ([{w: i + 1 for i, w in enumerate(WORDS)}], lambda v: retrofit.retrofit_fixed_point(A, v, LEXICON))},
    "evaluate_similarity": {
        "score_range": ([(10, 0), (0, float("nan")), "wordsim", 5], lambda v: retrofit.evaluate_similarity(A, WORDS, PAIRS, SCORES, score_range=v)),
        "vocab": ([{w: i + 1 for i, w in enumerate(WORDS)}, {w: 0 for w in WORDS}], lambda v: retrofit.evaluate_similarity(A, v, PAIRS, SCORES, score_range=(0, 10))),
        "missing": (["ignore"], lambda v: retrofit.evaluate_similarity(A, WORDS, PAIRS, SCORES, score_range=(0, 10), missing=v))},
    "bootstrap_similarity": {"n_boot": (BAD_COUNTS[:-1], lambda v: retrofit.bootstrap_similarity(A[:, 0], A[:, 1], n_boot=v)),
                             "seed": (BAD_SEEDS, lambda v: retrofit.bootstrap_similarity(A[:, 0], A[:, 1], n_boot=5, seed=v))},
    "wmd_knn": {"k": (BAD_COUNTS, lambda v: wmd.wmd_knn(DOCS, DOCS2, A, v)),
                "n_jobs": (BAD_JOBS, lambda v: wmd.wmd_knn(DOCS, DOCS2, A, 2, n_jobs=v)),
                "chunk_size": ([0, 2.0], lambda v: wmd.wmd_knn(DOCS, DOCS2, A, 2, chunk_size=v)),
                "metric": (["cosine", "l1"], lambda v: wmd.wmd_knn(DOCS, DOCS2, A, 2, metric=v))},
    "wmd_pairwise": {"n_jobs": (BAD_JOBS, lambda v: wmd.wmd_pairwise(DOCS, DOCS2, A, n_jobs=v))},
    "bow_distances": {"metric": (["l1", "cosine"], lambda v: wmd.bow_distances(DOCS, DOCS2, metric=v)),
                      "norm": (["max", 1], lambda v: wmd.bow_distances(DOCS, DOCS2, norm=v))},
    "knn_predict": {"k": (BAD_COUNTS, lambda v: wmd.knn_predict([[0, 1, 2]], [0, 1, 1], v))},
    "wknn_predict": {"gamma": ([0, -1.0, float("nan"), None], lambda v: wmd.wknn_predict([[0, 1]], [[0.1, 0.2]], [0, 1], v))},
    "drop_duplicates": {"seed": ([-1, 1.5, "x"], lambda v: wmd.drop_duplicates(DOCS, [], seed=v)),
                        "keep": (["middle"], lambda v: wmd.drop_duplicates(DOCS, [], keep=v))},
    "pca_embeddings": {"dim": ([0, 7, 2.0, None], lambda v: wmd.pca_embeddings(A, DOCS, v))},
    "pairwise_distances": {"metric": (["l2", "minkowski", None], lambda v: metrics.pairwise_distances(A, B, metric=v))},
    "normalize_rows": {"norm": (["max", 2], lambda v: metrics.normalize_rows(A, v))},
    "vocab_index": {"vocab": ([{"a": 0, "b": 0}, {"a": 3}, {"a": -1}, {"a": 0.0}, {1: 0}, ["a", "a"], "ab", None],
                              lambda v: vocab_index(v, 2 if isinstance(v, dict) else None))},
    "average_word_vectors": {"wv": ([A, None, {"w0": 0}], lambda v: average_word_vectors(v, [["w0"]]))},
}


@pytest.mark.parametrize("function,argument", [(f, a) for f, args in KEYWORDS.items() for a in args])
def test_arguments_out_of_range_are_named(function, argument):
    "Every bad value of every keyword argument is a TypeError or ValueError whose message names the argument."
    bad_values, call = KEYWORDS[function][argument]
    for value in bad_values:
        with pytest.raises((TypeError, ValueError)) as info:
            call(value)
        message = str(info.value)
        assert not type(info.value).__module__.startswith(("numba", "numpy", "scipy")), (function, argument, value, message)
        assert argument.split("_")[0] in message or argument in message, (function, argument, value, message)
