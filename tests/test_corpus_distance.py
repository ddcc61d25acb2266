"""Tests for embeval_nb.corpus_distance: every distance against an independent reference (dcor, prdc, mauve-text,
scipy, plain numpy, statsmodels) on seeded input and edge cases, the KSC construction, the KDE classification, bad
input, and a smoke run of the chapter's reproduction notebook."""
import contextlib
import io
import math

import numpy as np
import pandas as pd
import pytest
from scipy.linalg import sqrtm
from scipy.spatial.distance import cdist

from embeval_nb.core import paper_tables
from embeval_nb.corpus_distance import (
    ANGULAR_FLOOR, KDE_GRID, PRDC, average_hausdorff, classifier_distance, classify_distributionality,
    cross_distances, dc_distance, deviation_by_l, energy_distance, fid, irpr, kde_deviation, kde_on_grid,
    known_similarity_corpora, ksc_distances, ksc_sizes, mauve_distance, normal_reference_bandwidth,
    eta_squared, paired_blobs, perturb_group, pr_distance, prdc, relabelled_separations, separation_effect,
    standardize_pooled, trace_sqrt_product)


def angular(X, Y):
    "The authors' document distance: arccos of the clipped cosine similarity over pi, <= 0.005 set to 0."
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    Yn = Y / np.linalg.norm(Y, axis=1, keepdims=True)
    D = np.arccos(np.clip(Xn @ Yn.T, -1, 1)) / np.pi
    D[D <= ANGULAR_FLOOR] = 0.0
    return D


def distances(X, Y, metric):
    return angular(X, Y) if metric == "angular" else cdist(X, Y, metric)


def corpora(seed, n=40, m=30, d=8, shift=0.3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.normal(size=(m, d)) + shift


# ---------------------------------------------------------------- energy
@pytest.mark.parametrize("seed,n,m,d", [(0, 40, 30, 8), (1, 5, 70, 3), (2, 200, 150, 50), (3, 1, 1, 4), (4, 64, 64, 384)])
def test_energy_matches_dcor(seed, n, m, d):
    dcor = pytest.importorskip("dcor")
    X, Y = corpora(seed, n, m, d)
    for working_memory in (1e-4, None):                     # 3 x 3 tiles, and the default budget
        ours = energy_distance(X, Y, metric="euclidean", working_memory=working_memory)
        np.testing.assert_allclose(ours, dcor.energy_distance(X, Y), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cosine", "angular"])
def test_energy_matches_numpy_eq3(metric):
    X, Y = corpora(5, 33, 47, 6)
    ref = 2 * distances(X, Y, metric).mean() - distances(X, X, metric).mean() - distances(Y, Y, metric).mean()
    np.testing.assert_allclose(energy_distance(X, Y, metric=metric, working_memory=1e-4), ref, rtol=1e-10, atol=1e-14)


def test_energy_root_is_the_authors_square_root():
    X, Y = corpora(6)
    e = energy_distance(X, Y, metric="angular")
    assert e > 0 and energy_distance(X, Y, metric="angular", root=True) == pytest.approx(math.sqrt(e), rel=1e-12)
    assert energy_distance(X, X, root=True) < 1e-6


def test_energy_of_a_corpus_with_itself_and_with_duplicates():
    X, _ = corpora(7)
    assert abs(energy_distance(X, X, metric="euclidean")) < 1e-12
    assert abs(energy_distance(X, np.vstack([X, X]), metric="euclidean")) < 1e-12   # same empirical distribution
    assert energy_distance(X, X + 1, metric="euclidean") > 0.1


def test_near_duplicates_are_accurate_at_any_scale():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(20, 16)) * 1e4 + 1e6            # large norms, small differences
    Y = X + rng.normal(size=X.shape) * 1e-3
    c = cross_distances(X, Y, metric="euclidean")
    exact = np.sqrt(((X[:, None] - Y[None]) ** 2).sum(-1))
    np.testing.assert_allclose(c.nearest_x, exact.min(1), rtol=1e-9)
    np.testing.assert_allclose(c.mean, exact.mean(), rtol=1e-10)


def test_blocking_does_not_change_results():
    from embeval_nb.metrics import tiles
    X, Y = corpora(9, 130, 70, 5)
    assert len(tiles(130, 70, working_memory=1e-4)) > 100 and len(tiles(130, 70)) == 1   # many tiles, and one
    for f in (energy_distance, average_hausdorff, irpr):
        for metric in ("euclidean", "angular"):
            np.testing.assert_allclose(f(X, Y, metric=metric, working_memory=1e-4), f(X, Y, metric=metric), rtol=1e-12)
    for metric in ("euclidean", "cosine", "angular"):
        assert prdc(X, Y, 4, metric=metric, working_memory=1e-4) == prdc(X, Y, 4, metric=metric)


# ---------------------------------------------------------------- AHD, IRPR
@pytest.mark.parametrize("metric", ["euclidean", "cosine", "angular"])
def test_ahd_and_irpr_match_numpy(metric):
    X, Y = corpora(10, 25, 60, 7)
    D = distances(X, Y, metric)
    p, r = D.min(1).mean(), D.min(0).mean()
    np.testing.assert_allclose(average_hausdorff(X, Y, metric=metric, working_memory=1e-4), (p + r) / 2, rtol=1e-12)
    np.testing.assert_allclose(irpr(X, Y, metric=metric, working_memory=1e-4), 2 * p * r / (p + r), rtol=1e-12)


def test_ahd_irpr_identical_corpora_are_zero():
    X, _ = corpora(11)
    assert average_hausdorff(X, X) == 0 and irpr(X, X) == 0 and irpr(X, X[::-1], metric="angular") == 0


# ---------------------------------------------------------------- FID
def fid_sqrtm(X, Y):
    S1, S2 = np.cov(X, rowvar=False), np.cov(Y, rowvar=False)
    return ((X.mean(0) - Y.mean(0)) ** 2).sum() + np.trace(S1 + S2 - 2 * sqrtm(S1 @ S2).real)


@pytest.mark.parametrize("seed,n,m,d", [(0, 60, 50, 5), (1, 300, 200, 20), (2, 40, 45, 10)])
def test_fid_matches_scipy_sqrtm_on_full_rank_data(seed, n, m, d):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) @ rng.normal(size=(d, d))
    Y = rng.normal(size=(m, d)) * 1.3 + 0.5
    np.testing.assert_allclose(fid(X, Y), fid_sqrtm(X, Y), rtol=1e-9)


def test_fid_singular_covariances():
    "50 documents in 384 dimensions: rank-49 covariances; the trace is the sum of root eigenvalues of S_X S_Y."
    rng = np.random.default_rng(3)
    X, Y = rng.normal(size=(50, 384)), rng.normal(size=(50, 384)) * 0.9 + 0.1
    S1, S2 = np.cov(X, rowvar=False), np.cov(Y, rowvar=False)
    assert np.linalg.matrix_rank(S1) == 49
    roots = np.sqrt(np.clip(np.linalg.eigvals(S1 @ S2).real, 0, None)).sum()
    ref = ((X.mean(0) - Y.mean(0)) ** 2).sum() + np.trace(S1 + S2) - 2 * roots
    np.testing.assert_allclose(fid(X, Y), ref, rtol=1e-6)


def test_trace_sqrt_product_routes_agree():
    rng = np.random.default_rng(4)
    U, V = rng.normal(size=(30, 6)), rng.normal(size=(25, 6))     # more rows than columns: the d x d route
    small = trace_sqrt_product(U[:5], V[:4])                         # fewer rows: the n x m route
    via_d = trace_sqrt_product(np.vstack([U[:5], np.zeros((10, 6))]), np.vstack([V[:4], np.zeros((10, 6))]))
    np.testing.assert_allclose(small, via_d, rtol=1e-6)    # rank 4 of 6: root of rounding-level eigenvalues
    ev = np.linalg.eigvals((U.T @ U) @ (V.T @ V)).real
    np.testing.assert_allclose(trace_sqrt_product(U, V), np.sqrt(np.clip(ev, 0, None)).sum(), rtol=1e-9)


def test_fid_exact_cases():
    X, _ = corpora(12, 20, 20, 30)
    assert fid(X, X) == 0.0
    c = np.arange(30) / 10
    np.testing.assert_allclose(fid(X, X + c), (c ** 2).sum(), rtol=1e-9)   # a shift moves only the mean term


# ---------------------------------------------------------------- PR, DC
@pytest.mark.parametrize("seed,n,m,d,k", [(0, 50, 40, 4, 1), (1, 100, 80, 16, 2), (2, 60, 90, 8, 5), (3, 120, 120, 32, 10)])
def test_prdc_matches_the_prdc_package(seed, n, m, d, k, capsys):
    prdc_pkg = pytest.importorskip("prdc")
    real, fake = corpora(seed, n, m, d, shift=0.4)
    ref = prdc_pkg.compute_prdc(real, fake, k)
    ours = prdc(real, fake, k, working_memory=1e-4)
    np.testing.assert_allclose(ours, [ref["precision"], ref["recall"], ref["density"], ref["coverage"]], rtol=1e-12)


def prdc_numpy(real, fake, k, metric):
    r_real = np.sort(distances(real, real, metric), 1)[:, k]
    r_fake = np.sort(distances(fake, fake, metric), 1)[:, k]
    D = distances(real, fake, metric)
    return ((D < r_real[:, None]).any(0).mean(), (D < r_fake[None]).any(1).mean(),
            (D < r_real[:, None]).sum(0).mean() / k, (D.min(1) < r_real).mean())


@pytest.mark.parametrize("metric", ["cosine", "angular"])
def test_prdc_on_cosine_and_angular_distances(metric):
    real, fake = corpora(13, 45, 50, 12, shift=0.2)
    for k in (1, 3, 7):
        np.testing.assert_allclose(prdc(real, fake, k, metric=metric, working_memory=1e-4), prdc_numpy(real, fake, k, metric))


def test_prdc_duplicates_have_empty_balls():
    "A point with k exact duplicates has radius 0: by the strict inequality its ball holds nothing."
    real = np.array([[0.0, 0], [0, 0], [5, 0], [0, 5], [5, 5]])
    fake = np.array([[0.0, 0], [5, 0.1]])
    p = prdc(real, fake, 1, metric="euclidean")
    np.testing.assert_allclose(p, prdc_numpy(real, fake, 1, "euclidean"))
    assert p.precision == 0.5            # fake (0, 0) lies only on the two radius-0 balls, which hold nothing
    assert p.coverage == 0.4             # (5, 0) and (5, 5) cover their nearest fake point, the duplicates cannot


def test_pr_and_dc_distances_follow_the_authors_formulas():
    real, fake = corpora(14, 50, 50, 6, shift=0.5)
    p = prdc(real, fake, 3, metric="angular")
    hm = lambda a, b: 2 * a * b / (a + b)
    assert pr_distance(real, fake, 3, metric="angular") == pytest.approx(1 - hm(p.precision, p.recall), abs=1e-15)
    assert dc_distance(real, fake, 3, metric="angular") == pytest.approx(1 - hm(min(p.density, 1), p.coverage), abs=1e-15)
    twins, between = np.vstack([real, real + 1e-3]), real + 5e-4      # each fake point inside two real balls
    assert prdc(twins, between, 1, metric="euclidean").density == 2.0
    assert dc_distance(twins, between, 1, metric="euclidean") == 0.0      # density clipped at 1, coverage 1
    assert pr_distance(real, real + 1000, 2, metric="euclidean") == 1.0


def prdc_brute_force(real, fake, k, metric):
    "PRDC from the package's exact all-pairs distances: radius = k-th smallest distance to the other rows, strict <."
    from embeval_nb.metrics import pairwise_distances
    r_real = np.sort(pairwise_distances(real, metric=metric), 1)[:, k]      # column 0 is the row itself (0)
    r_fake = np.sort(pairwise_distances(fake, metric=metric), 1)[:, k]
    D = pairwise_distances(real, fake, metric=metric)
    return PRDC(float((D < r_real[:, None]).any(0).mean()), float((D < r_fake[None]).any(1).mean()),
                float((D < r_real[:, None]).sum() / (k * len(fake))), float((D.min(1) < r_real).mean()))


def test_prdc_of_shared_points_and_duplicates():
    """The former defect: a fake sample that is a permutation of the real one (every fake point sits on a real point,
    at distance 0) has density 1 as the prdc package computes it; with shared points between the sets and duplicates
    inside a set, every budget gives the brute-force numbers of the exact kernel with the strict inequalities."""
    prdc_pkg = pytest.importorskip("prdc")
    r = np.random.default_rng(0)
    X = r.normal(size=(300, 64))
    Y = X[r.permutation(300)]
    with contextlib.redirect_stdout(io.StringIO()):                       # the package prints the sample sizes
        ref = prdc_pkg.compute_prdc(X, Y, 1)
    assert ref["density"] == 1.0
    assert prdc(X, Y, 1).density == ref["density"]
    assert prdc(X, Y, 1) == (ref["precision"], ref["recall"], ref["density"], ref["coverage"])
    cases = [(X, Y),                                                      # the same points, in another order
             (np.vstack([X, X[:40]]), np.vstack([Y[:150], Y[:30], X[200:250]])),   # duplicates inside each set
             (np.vstack([X[:100], X[:100] * 3.0]), np.vstack([X[50:150], X[:20] * 0.5, r.normal(size=(30, 64))]))]
    for real, fake in cases:                                              # the last: equal directions for cosine
        for metric in ("euclidean", "cosine"):
            for k in (1, 2, 5):
                expected = prdc_brute_force(real, fake, k, metric)
                for working_memory in (1e-4, 0.01, 1.0, None):
                    assert prdc(real, fake, k, metric=metric, working_memory=working_memory) == expected, \
                        (len(real), len(fake), metric, k, working_memory)


# ---------------------------------------------------------------- MAUVE, classifier
def test_mauve_distance_is_the_packages_number():
    mauve = pytest.importorskip("mauve")
    X, Y = corpora(15, 100, 80, 20, shift=0.3)
    for seed in (25, 3):
        ref = mauve.compute_mauve(p_features=X, q_features=Y, seed=seed, verbose=False).mauve
        assert mauve_distance(X, Y, seed=seed) == pytest.approx(1 - ref, abs=1e-12)
    assert mauve_distance(X, Y, num_buckets=4) == pytest.approx(
        1 - mauve.compute_mauve(p_features=X, q_features=Y, seed=25, num_buckets=4, verbose=False).mauve, abs=1e-12)


def test_classifier_distance_matches_a_direct_svm():
    from sklearn.metrics import f1_score
    from sklearn.svm import SVC
    X, Y = corpora(16, 50, 50, 5, shift=0.6)
    rng = np.random.default_rng(7)
    tx = rng.choice(50, 40, replace=False); ty = rng.choice(50, 40, replace=False)
    ex, ey = np.setdiff1d(np.arange(50), tx), np.setdiff1d(np.arange(50), ty)
    svm = SVC(random_state=1).fit(np.vstack([X[tx], Y[ty]]), [0] * 40 + [1] * 40)
    ref = f1_score([0] * 10 + [1] * 10, svm.predict(np.vstack([X[ex], Y[ey]])))
    assert classifier_distance(X, Y, seed=7) == ref
    assert classifier_distance(X, Y + 10) == 1.0


# ---------------------------------------------------------------- KSC
@pytest.mark.parametrize("K,n", [(1, 2), (4, 10), (5, 5 + 1), (15, 50), (7, 100)])
def test_ksc_composition(K, n):
    A, B = np.arange(n + 3), np.arange(1000, 1000 + n + 5)
    ksc = known_similarity_corpora(A, B, K, n, seed=1)
    expected = [math.floor(n * i / K + 0.5) for i in range(K + 1)]
    assert list(ksc_sizes(K, n)) == expected and ksc.K == K
    for i in range(K + 1):
        c = ksc.corpus(i, A, B)
        assert len(c) == n and (c >= 1000).sum() == expected[i] and len(set(c.tolist())) == n   # no repeats
    assert ksc.corpus(0, A, B).max() < 1000 and ksc.corpus(K, A, B).min() >= 1000


def test_ksc_seeding():
    A, B = np.arange(60), np.arange(100, 160)
    a, b = known_similarity_corpora(A, B, 5, 50, seed=3), known_similarity_corpora(A, B, 5, 50, seed=3)
    assert all(np.array_equal(x, y) for x, y in zip(a.from_a + a.from_b, b.from_a + b.from_b))
    c = known_similarity_corpora(A, B, 5, 50, seed=4)
    assert not all(np.array_equal(x, y) for x, y in zip(a.from_b, c.from_b))


def test_ksc_bad_input():
    A = np.arange(50)
    with pytest.raises(ValueError, match="K must be an integer >= 1"): known_similarity_corpora(A, A, 0, 10)
    with pytest.raises(ValueError, match="K \\+ 1 = 16"): known_similarity_corpora(A, A, 15, 15)
    with pytest.raises(ValueError, match="at least n=50"): known_similarity_corpora(A[:40], A, 5, 50)
    with pytest.raises(TypeError, match="K must be an integer, got 2.5"): known_similarity_corpora(A, A, 2.5, 10)
    with pytest.raises(TypeError, match="n must be an integer, got None"): known_similarity_corpora(A, A, 2, None)


def test_ksc_distances_pairs_and_shared_draws():
    rng = np.random.default_rng(17)
    A, B = rng.normal(size=(30, 4)), rng.normal(size=(30, 4)) + 1
    d = ksc_distances(A, B, {"ENERGY": energy_distance, "AHD": average_hausdorff}, K=5, n=12, R=3, seed=2)
    assert len(d) == 2 * 3 * 15 and set(d.l) == {1, 2, 3, 4, 5}
    assert (d.groupby(["metric", "l"]).size().unstack().loc["ENERGY"] == [3 * (6 - l) for l in range(1, 6)]).all()
    ksc = known_similarity_corpora(A, B, 5, 12, seed=[2, 1])        # repetition 1 is drawn from seed [2, 1]
    row = d[(d.metric == "AHD") & (d.repetition == 1) & (d.i == 0) & (d.j == 5)].distance.item()
    assert row == average_hausdorff(ksc.corpus(0, A, B), ksc.corpus(5, A, B))


# ---------------------------------------------------------------- standardisation, KDE, classification
def test_standardize_pooled_and_per_repetition():
    d = pd.DataFrame({"metric": ["a"] * 6 + ["b"] * 6, "repetition": [0, 0, 0, 1, 1, 1] * 2, "l": [1, 2, 3] * 4,
                      "distance": [1.0, 2, 3, 5, 6, 7] + [4.0] * 6})
    z = standardize_pooled(d)
    a = d.distance[:6]
    np.testing.assert_allclose(z.z[:6], (a - a.mean()) / a.std(ddof=0))
    assert (z.z[6:] == 0).all()                                      # a constant metric: z = 0
    zr = standardize_pooled(d, per_repetition=True)
    np.testing.assert_allclose(zr.z[:6], [-1.2247448714, 0, 1.2247448714] * 2)


def test_kde_matches_statsmodels():
    from statsmodels.nonparametric.kde import KDEUnivariate
    rng = np.random.default_rng(18)
    for x in (rng.normal(size=75), rng.gamma(2, size=10), np.r_[np.ones(20), 3.0, -1.0]):
        kde = KDEUnivariate(x).fit()
        assert normal_reference_bandwidth(x) == pytest.approx(kde.bw, rel=1e-12)
        np.testing.assert_allclose(kde_on_grid(x), kde.evaluate(KDE_GRID), rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("value", [0.3, -2.5, 1e-12, 7.0, 1e6])
def test_kde_of_values_equal_up_to_round_off_is_that_of_one_repeated_value(value):
    """A repeated value that picked up a few ulps of round-off (a distance summed in another order) gets the same
    padded density as the exactly repeated value, not a spike of a few ulps' bandwidth."""
    exact = np.full(25, value)
    noisy = exact + np.random.default_rng(3).integers(-3, 4, size=25) * np.spacing(max(abs(value), 1e-300))
    assert np.ptp(noisy) > 0
    np.testing.assert_allclose(kde_on_grid(noisy), kde_on_grid(exact), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("metric", ["cosine", "sqeuclidean"])
def test_energy_from_centroids_equals_the_pairwise_kernels(metric):
    """For the cosine and squared Euclidean distances energy_distance uses the centroid formula; the blocked
    pairwise kernels of the other distances give the same number."""
    from embeval_nb.corpus_distance import _cross, _prepare, _within_mean
    X, Y = corpora(21, 300, 250, 20)
    P, Q = _prepare(X, Y, metric)
    for working_memory in (0.03, 1e-4):                    # 64 x 64 and 3 x 3 tiles
        pairwise = (2 * _cross(P, Q, 0.0, working_memory, nearest=False).mean - _within_mean(P, 0.0, working_memory)
                    - _within_mean(Q, 0.0, working_memory))
        np.testing.assert_allclose(energy_distance(X, Y, metric=metric), pairwise, rtol=1e-10)
    assert energy_distance(X, X, metric=metric) == 0.0


def test_kde_deviation_properties():
    rng = np.random.default_rng(19)
    l = np.repeat([1, 2, 3], [30, 20, 10])
    z1, z2 = rng.normal(size=60), rng.normal(size=60) + 1
    assert kde_deviation(z1, l, z1, l) == 0
    assert kde_deviation(z1, l, z2, l) > 0
    assert kde_deviation(z1, l, z2, l) == pytest.approx(kde_deviation(z2, l, z1, l), rel=1e-12)
    I = deviation_by_l(z1, l, z2, l)
    f = kde_on_grid(z1[l == 2]); g = kde_on_grid(z2[l == 2])
    assert I[2] == pytest.approx(((f - g) ** 2).sum() * (KDE_GRID[1] - KDE_GRID[0]), rel=1e-12)
    np.testing.assert_allclose(kde_deviation(z1, l, z2, l), (I * np.array([30, 20, 10]) / 60).mean())
    np.testing.assert_allclose(kde_deviation(z1, l, z2, l, weighted=False), I.mean() / 3)
    with pytest.raises(ValueError, match="no values at l"): kde_deviation(z1[l < 3], l[l < 3], z2, l)


def test_classify_distributionality():
    rng = np.random.default_rng(20)
    ells = np.repeat(np.arange(1, 6), [25, 20, 15, 10, 5])
    rise = ells + rng.normal(scale=0.3, size=len(ells))                  # AHD-like: increases with l
    hump = -(ells - 3.0) ** 2 + rng.normal(scale=0.3, size=len(ells))    # ENERGY-like: up, then down
    frames = [pd.DataFrame({"metric": name, "repetition": 0, "l": ells, "distance": v})
              for name, v in [("ENERGY", hump), ("AHD", rise), ("LIKE_AHD", 2 * rise + 0.1), ("LIKE_ENERGY", hump + 0.05)]]
    c = classify_distributionality(standardize_pooled(pd.concat(frames)))
    assert list(c["class"]) == ["distributional", "non-distributional", "non-distributional", "distributional"]
    assert c.loc["ENERGY", "to ENERGY"] == 0 and c.loc["AHD", "to AHD"] == 0
    with pytest.raises(ValueError, match="prototype"): classify_distributionality(standardize_pooled(frames[0]))


# ---------------------------------------------------------------- synthetic perturbation
def group_origin(B, moved):
    "The moved point whose len(moved) nearest neighbours (itself included) are exactly the moved points."
    for o in moved:
        if set(np.argsort(((B - B[o]) ** 2).sum(1), kind="stable")[:len(moved)]) == set(moved): return o
    return None


def test_perturb_group_moves_the_nearest_neighbours_together():
    s = paired_blobs(300, 3, seed=4)
    for direction in ("away", "random"):
        Bp = perturb_group(s.B, s.centres, 0.2, 2.5, seed=9, direction=direction)
        moved = np.flatnonzero((Bp != s.B).any(1))
        shift = Bp[moved] - s.B[moved]
        assert len(moved) == 60 and np.allclose(shift, shift[0]) and np.isclose(np.linalg.norm(shift[0]), 2.5)
        o = group_origin(s.B, moved)
        assert o is not None
        if direction == "away":                       # along the origin's offset from its component centre
            v = s.B[o] - s.centres[o]
            assert np.isclose(shift[0] @ v, 2.5 * np.linalg.norm(v))
    assert np.array_equal(perturb_group(s.B, s.centres, 0.1, 1.0, seed=9), perturb_group(s.B, s.centres, 0.1, 1.0, seed=9))


def test_perturb_group_bad_input():
    s = paired_blobs(20, 2, seed=0)
    with pytest.raises(ValueError, match=r"p must be a number in \[0, 1\], got 1.5"): perturb_group(s.B, s.centres, 1.5, 1.0)
    with pytest.raises(TypeError, match="p must be a real number"): perturb_group(s.B, s.centres, None, 1.0)
    with pytest.raises(ValueError, match="delta must be"): perturb_group(s.B, s.centres, 0.1, -1.0)
    with pytest.raises(ValueError, match="centres has shape"): perturb_group(s.B, s.centres[:5], 0.1, 1.0)
    with pytest.raises(ValueError, match="direction"): perturb_group(s.B, s.centres, 0.1, 1.0, direction="up")


# ---------------------------------------------------------------- bad input, every distance
ALL = {"energy": energy_distance, "ahd": average_hausdorff, "irpr": irpr, "fid": lambda X, Y: fid(X, Y),
       "pr": lambda X, Y: pr_distance(X, Y, 2), "dc": lambda X, Y: dc_distance(X, Y, 2),
       "classifier": classifier_distance}


@pytest.mark.parametrize("name", sorted(ALL))
def test_bad_input_names_the_argument(name):
    f = ALL[name]
    X, Y = corpora(21, 10, 10, 3)
    with pytest.raises(ValueError, match="X has 3 columns, Y has 4"): f(X, np.ones((10, 4)))
    with pytest.raises(ValueError, match="Y contains NaN"): f(X, np.where(np.eye(10, 3) > 0, np.nan, Y))
    with pytest.raises(ValueError, match="X needs at least|X must be a 2-D"): f(np.empty((0, 3)), Y)
    with pytest.raises(ValueError, match="X must be a 2-D"): f(X[0], Y)
    with pytest.raises(TypeError, match="X must be a 2-D \\(n, d\\) array of numbers, got list"): f([["a", "b", "c"]] * 10, Y)
    with pytest.raises(TypeError, match="Y is None"): f(X, None)
    with pytest.raises(TypeError, match="X is None"): f(None, Y)


def test_small_corpora():
    X, Y = corpora(22, 3, 3, 4)
    assert energy_distance(X[:1], Y[:1]) > 0 and average_hausdorff(X[:1], Y[:1]) > 0     # one document each: fine
    with pytest.raises(ValueError, match="X needs at least 2 rows"): fid(X[:1], Y)
    with pytest.raises(ValueError, match=r"k must be an integer in 1\.\.2, got 3 \(k nearest neighbours need more than k "
                       r"documents in each corpus; real has 3, fake 3\)"): prdc(X, Y, 3)
    with pytest.raises(ValueError, match=r"k must be an integer in 1\.\.1, got 2 .*real has 3, fake 2\)"): pr_distance(X, Y[:2], 2)
    with pytest.raises(TypeError, match="k must be an integer, got 2.0"): prdc(X, Y, 2.0)
    with pytest.raises(TypeError, match="k must be an integer, got None"): dc_distance(X, Y, None)
    with pytest.raises(ValueError, match="X needs at least 2 rows"): classifier_distance(X[:1], Y)
    with pytest.raises(ValueError, match="all zeros"): energy_distance(np.zeros((2, 4)), Y, metric="cosine")
    with pytest.raises(ValueError, match="working_memory must be a number > 0, got 0"):
        average_hausdorff(X, Y, working_memory=0)
    with pytest.raises(TypeError, match="working_memory must be a real number"): prdc(X, Y, 1, working_memory="1 MiB")
    assert energy_distance(np.zeros((2, 4)), Y, metric="euclidean") > 0


def test_paper_numbers():
    t = paper_tables("corpus_distance")
    assert {"settings", "figure12"} <= set(t)
    assert t["figure12"].loc["IRPR", "closer to"] == "AHD"
    assert (t["figure12"].drop("IRPR")["closer to"] == "ENERGY").all()


# ---------------------------------------------------------------- eta^2 over the separations, against relabelled corpora
def _ksc_design(K=15, R=5):
    "The (repetition, i, j, l) of every pair of R KSC sets of K + 1 corpora, as `ksc_distances` lists them."
    rows = [(r, i, j, j - i) for r in range(R) for i in range(K + 1) for j in range(i + 1, K + 1)]
    return pd.DataFrame(rows, columns=["repetition", "i", "j", "l"])


def _corpus_effect_runs(design, runs, rng, K=15, R=5):
    "(runs, pairs) distances that do not depend on l: each corpus of each set has its own effect, a pair the sum of its two."
    a = rng.normal(size=(runs, R, K + 1))
    r, i, j = (design[c].to_numpy() for c in ("repetition", "i", "j"))
    return a[:, r, i] + a[:, r, j] + 0.5 * rng.normal(size=(runs, len(design)))


def test_eta_squared_and_relabelling_by_hand():
    rng = np.random.default_rng(0)
    x, g = rng.normal(size=40), rng.integers(0, 4, 40)
    between = sum((g == k).sum() * (x[g == k].mean() - x.mean()) ** 2 for k in range(4))
    assert np.isclose(eta_squared(x, g), between / ((x - x.mean()) ** 2).sum())
    design = _ksc_design(K=4, R=3)
    L = relabelled_separations(design, 30, seed=2)
    assert np.array_equal(L, relabelled_separations(design, 30, seed=2)) and not np.array_equal(L, relabelled_separations(design, 30, seed=3))
    for row in L:                                    # each set's pairs keep the design's count at every separation
        for r in range(3):
            assert np.array_equal(np.bincount(row[design.repetition == r], minlength=5), np.bincount(design.l[design.repetition == r], minlength=5))
    frame = design.assign(metric="M", distance=rng.normal(size=len(design)))
    e = separation_effect(frame, n_permutations=30, seed=2)
    null = eta_squared(frame.distance.to_numpy(), L - 1)
    assert np.isclose(e.loc["M", "null"], null.mean()) and np.isclose(e.loc["M", "eta2"], eta_squared(frame.distance, frame.l - 1))
    assert e.loc["M", "p"] == pytest.approx((1 + (null >= e.loc["M", "eta2"] - 1e-12).sum()) / 31)


def test_relabelled_null_is_the_no_effect_expectation_where_pairs_share_corpora():
    """Distances with a random effect per corpus and none of l (KSC pairs share corpora): the relabelled null matches
    eta^2's mean, where the independent-pairs expectation (K - 1)/(N - 1) is far from it (here above: 0.023 against
    about 0.009), and the t interval over 7 runs of eta^2 minus its relabelled null misses 0 at its nominal 5%, where
    against (K - 1)/(N - 1) it would decide most pages by design. The page's K = 15, R = 5 and 7 samples; 300 simulated
    pages, 60 relabellings (one set for every run: for any fixed relabelling the relabelled data have the data's law)."""
    from embeval_nb.stats import mean_interval
    design, rng, pages = _ksc_design(), np.random.default_rng(1), 300
    L = relabelled_separations(design, 60, seed=0) - 1                      # one set of relabellings serves every run
    X = _corpus_effect_runs(design, pages * 7, rng)
    eta = eta_squared(X, design.l.to_numpy() - 1)
    null = np.concatenate([eta_squared(X[s:s + 100, None], L[None]).mean(1) for s in range(0, len(X), 100)])
    naive = 14 / (len(design) - 1)
    se = eta.std() / math.sqrt(len(eta))
    assert abs((eta - null).mean()) < 4 * se and abs((eta - naive).mean()) > 10 * se
    lo, hi = mean_interval((eta - null).reshape(pages, 7).T)
    misses = int(((lo > 0) | (hi < 0)).sum())
    assert abs(misses / pages - 0.05) <= 4 * math.sqrt(0.05 * 0.95 / pages), misses / pages
    lo, hi = mean_interval((eta - naive).reshape(pages, 7).T)
    assert ((lo > 0) | (hi < 0)).mean() > 0.5                                 # the old null decides by design


# ---------------------------------------------------------------- the reproduction notebook, smoke scale
@pytest.fixture(scope="module")
def smoke(run_notebook):
    "What `papermill nbs/corpus_distance.ipynb ... -p scale smoke` recorded."
    pytest.importorskip("mauve")
    return run_notebook("corpus_distance", scale="smoke")


CANDIDATES = ["FID", "MAUVE", "CLASSIFIER", "IRPR"] + [f"{f}_{k}" for f in ("DC", "PR") for k in (1, 2, 3, 5, 10)]


def test_smoke_ksc_and_classification(smoke):
    s = smoke["corpus_distance/setup"]
    assert s["scale"] == "smoke" and s["qqp_pairs"] == 1000 and s["qqp_duplicates"] == 374
    f8 = smoke["corpus_distance/figure8"]
    assert f8["pairs_per_metric"] == s["R"] * s["K"] * (s["K"] + 1) // 2
    cls = smoke["corpus_distance/figure12"]
    assert cls["ENERGY"]["class"] == "distributional" and cls["AHD"]["class"] == "non-distributional"
    assert cls["ENERGY"]["to ENERGY"] == 0 and cls["AHD"]["to AHD"] == 0
    for table in (cls, smoke["corpus_distance/figure12_code"]):
        assert set(table) == set(CANDIDATES) | {"ENERGY", "AHD"}
        for metric, row in table.items():
            assert row["to ENERGY"] >= 0 and row["to AHD"] >= 0
            assert row["class"] == ("distributional" if row["to ENERGY"] < row["to AHD"] else "non-distributional")
    stab = smoke["corpus_distance/stability"]
    for votes in (stab["non_distributional"], stab["non_distributional_code"]):
        assert set(votes) == set(CANDIDATES) and all(0 <= v <= stab["samples"] for v in votes.values())
    for key in ("corpus_distance/encoders", "corpus_distance/corpora"):
        assert set(smoke[key]) == {"code", "text"} and len(smoke[key]["code"]) >= 2


def test_smoke_synthetic_and_components(smoke):
    f2 = smoke["corpus_distance/figure2"]
    assert set(f2["metrics"]) >= {"FID", "MAUVE", "IRPR", "ENERGY", "AHD", "PR_2", "DC_15", "CLASSIFIER"}
    for metric, med in f2["median"].items():
        assert len(med) == len(f2["delta"]) and all(np.isfinite(med))
    f13 = smoke["corpus_distance/figure13"]
    for comp in ("precision", "recall", "density", "coverage"):
        assert all(0 <= v <= 1 for v in f13[comp].values())


def test_smoke_claims(smoke):
    claims = smoke["corpus_distance/claims"]
    assert len(claims) >= 8 and len({c["key"] for c in claims}) == len(claims)
    for c in claims:
        assert c["verdict"] in ("holds", "fails", "undecided", "untestable") and c["statement"] and c["paper"] and c["ours"] and c["test"]
    assert all(key.startswith("corpus_distance/") for key in smoke)


def test_theory_notebook_runs(run_notebook):
    run_notebook("corpus_distance_theory")


# ---------------------------------------------------------------- a reader's own embedder, as a vectors file
@pytest.fixture(scope="module")
def smoke_own(smoke, tmp_path_factory):
    """The smoke run with an embedder of the reader's given as a `.npz` vectors file, made from the texts the plain
    run listed: a fixed random projection of hashed word counts (deterministic, no model)."""
    import json, os, zlib
    import book, papermill as pm
    from embeval_nb.core import read_records
    from embeval_nb.embeddings import save_text_vectors
    root = tmp_path_factory.mktemp("own")
    texts = json.loads((book.records_dir("smoke") / "texts" / "corpus_distance.json").read_text())
    R = np.random.default_rng(0).standard_normal((4096, 32))
    vectors = [R[[zlib.crc32(w.encode()) % 4096 for w in t.lower().split()]].sum(0) if t.split() else np.ones(32) for t in texts]
    save_text_vectors(root / "mine.npz", texts[::-1], np.array(vectors[::-1], dtype=np.float32))   # any order
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EMBEVAL_RECORD_DIR", str(root)); mp.setenv("EMBEVAL_RECORD_FILE", str(root / "records.json"))
        mp.setenv("EMBEVAL_PROGRESS", "0")
        pm.execute_notebook(str(book.ROOT / "nbs" / "corpus_distance.ipynb"), str(root / "out.ipynb"), cwd=str(book.ROOT),
                            parameters={"scale": "smoke", "extra_embedders": {"mine": str(root / "mine.npz")}},
                            kernel_name="python3", progress_bar=False)
    assert json.loads((root / "texts" / "corpus_distance.json").read_text()) == texts
    return read_records(root / "records.json")


def test_smoke_with_an_own_embedder(smoke_own, smoke):
    for pipeline in ("code", "text"):
        encoders = smoke_own["corpus_distance/encoders"][pipeline]
        assert set(encoders) == set(smoke["corpus_distance/encoders"][pipeline]) | {"mine"}
        assert set(encoders["mine"]) == set(CANDIDATES)
        assert set(encoders["mine"].values()) <= {"distributional", "non-distributional"}
    same = [k for k in smoke if k not in ("corpus_distance/encoders", "corpus_distance/seconds")]
    assert [k for k in same if not _close(smoke_own[k], smoke[k])] == []    # everything else as without it


def _close(a, b) -> bool:
    "Whether two records are equal, numbers to 1e-9 relative (a BLAS may round differently from run to run)."
    if isinstance(a, dict): return isinstance(b, dict) and a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list): return isinstance(b, list) and len(a) == len(b) and all(map(_close, a, b))
    if isinstance(a, float) and isinstance(b, (int, float)): return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) or (a != a and b != b)
    return a == b
