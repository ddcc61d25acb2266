"""stats: percentile intervals against numpy's percentiles (and linear interpolation by hand where replicates are
infinite), the bootstrap's repeatability, resample counts and stratified means against direct loops, the resamples a
level needs, the exact McNemar test against scipy and Newcombe's interval against his published Table III and
Fagerland et al.'s worked example, Clopper-Pearson intervals against the binomial tails they invert, t and sign-flip
intervals against scipy and against the sign-flip test inverted by brute force, every branch of the verdict rules, and
the coverage of every interval the chapters use, simulated (or summed exactly) at their numbers of units and levels;
the p-value of each interval's verdict against scipy (percentileofscore, ttest_1samp, the exact sign-flip
permutation_test, brentq on Newcombe's level) and against the verdict at random levels, and the false-discovery
procedures against statsmodels' multipletests."""
import contextlib
import math
import warnings

import numpy as np
import pytest

from embeval_nb.checks import make_rng
from embeval_nb.stats import (VERDICTS, PairedErrors, ResampleWarning, StratifiedBootstrap, _newcombe_paired, _paired_phi,
                              bonferroni_level, bootstrap_interval, bootstrap_intervals, bootstrap_replicates,
                              combined_p_values, combined_verdict, fdr_rejections, interval_verdict, mcnemar_exact,
                              mean_interval, mean_p_values, paired_p_values, percentile_interval, percentile_p_values,
                              permutation_p_value, permutation_test, proportion_interval, proportion_p_values,
                              resample_counts, resamples_needed)

# Most tests below use few replicates on purpose; the tests of resamples_needed check the warning itself.
pytestmark = pytest.mark.filterwarnings("ignore::embeval_nb.stats.ResampleWarning")


# --- moved from test_core.py ------------------------------------------------------------------------

def test_mcnemar_exact_matches_statsmodels():
    from statsmodels.stats.contingency_tables import mcnemar
    rng = make_rng(5)
    for _ in range(20):
        a = rng.random(300) < rng.uniform(0.6, 0.95)
        b = np.where(rng.random(300) < 0.8, a, rng.random(300) < 0.8)
        r = mcnemar_exact(a, b)
        table = [[(a & b).sum(), (a & ~b).sum()], [(~a & b).sum(), (~a & ~b).sum()]]
        assert r.p_value == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-9)
        assert r.errors_a == (~a).sum() and r.errors_b == (~b).sum()
        assert r.difference == pytest.approx(((~a).sum() - (~b).sum()) / 300)
        assert r.low <= r.difference <= r.high


def test_mcnemar_interval_covers_at_the_stated_level():
    # simulate two classifiers whose true error difference is 0.03 and count how often the interval covers it
    rng, covered, trials = make_rng(11), 0, 400
    for _ in range(trials):
        u = rng.random(500)
        a, b = u >= 0.10, u >= 0.13          # A wrong on 10%, B wrong on 13%, nested: difference -0.03
        flip = rng.random(500) < 0.05        # plus independent noise on both
        a, b = a ^ flip, b ^ (rng.random(500) < 0.05)
        r = mcnemar_exact(a, b)
        truth = (0.10 + 0.05 - 2 * 0.10 * 0.05) - (0.13 + 0.05 - 2 * 0.13 * 0.05)
        covered += r.low <= truth <= r.high
    assert covered / trials >= 0.93          # Clopper-Pearson is conservative: at least the nominal 95% up to noise


@pytest.mark.parametrize("only_a, only_b, n", [(0.30, 0.01, 1000), (0.03, 0.0, 500), (0.38, 0.005, 1000)])
def test_mcnemar_interval_covers_when_the_disagreements_are_lopsided(only_a, only_b, n):
    """An interval conditional on the number of disagreements covers about 60% here; Newcombe's keeps the level."""
    rng, covered, trials = make_rng(12), 0, 600
    truth = (1 - (1 - only_a) * 0.95) - (1 - (1 - only_b) * 0.95)
    for _ in range(trials):
        u, both = rng.random(n), rng.random(n) < 0.05
        a, b = ~((u < only_a) | both), ~(((u >= only_a) & (u < only_a + only_b)) | both)
        r = mcnemar_exact(a, b)
        covered += r.low <= truth <= r.high
    assert covered / trials >= 0.925


def test_mcnemar_interval_agrees_with_the_unconditional_normal_interval_on_large_samples():
    "With 20,000 items the score interval and the Wald interval of the paired difference agree to a few 1e-4."
    rng = make_rng(13)
    u = rng.random(20000)
    a, b = ~(u < 0.25), ~((u >= 0.25) & (u < 0.27))
    r = mcnemar_exact(a, b)
    p01, p10 = r.only_a_wrong / r.n_items, r.only_b_wrong / r.n_items
    half = 1.959964 * np.sqrt((p01 + p10 - (p01 - p10) ** 2) / r.n_items)
    assert abs(r.low - (r.difference - half)) < 3e-4 and abs(r.high - (r.difference + half)) < 3e-4


def test_mcnemar_edge_cases():
    a = np.ones(10, bool)
    same = mcnemar_exact(a, a)
    assert isinstance(same, PairedErrors) and same.p_value == 1 and same.difference == 0
    assert same.low == -same.high and same.high == pytest.approx(1 - 0.025 ** (1 / 10))   # Clopper-Pearson, 0 of 10
    all_disagree = mcnemar_exact(a, ~a)
    assert all_disagree.difference == -1 and all_disagree.low == -1 and all_disagree.high < 0
    for x, y in [(a, a[:5]), (np.ones((2, 2), bool), np.ones((2, 2), bool))]:
        with pytest.raises(ValueError, match="boolean vectors of one length, got shapes"):
            mcnemar_exact(x, y)
    with pytest.raises(TypeError, match="boolean vectors of one length, got dtypes int64 and bool"):
        mcnemar_exact(a.astype(np.int64), a)
    with pytest.raises(ValueError, match="no items"):
        mcnemar_exact(np.ones(0, bool), np.ones(0, bool))


def test_bootstrap_interval_paired_and_unpaired():
    rng = make_rng(2)
    x = rng.normal(0, 1, 300); y = x + rng.normal(0.2, 0.1, 300)
    est, lo, hi = bootstrap_interval(lambda u, v: np.mean(v - u), x, y)
    assert est == pytest.approx(np.mean(y - x)) and lo < 0.2 < hi and hi - lo < 0.05
    _, ulo, uhi = bootstrap_interval(lambda u, v: v.mean() - u.mean(), x, y, paired=False)
    assert uhi - ulo > 5 * (hi - lo)          # ignoring the pairing throws the shared noise back in
    with pytest.raises(ValueError, match="one length"):
        bootstrap_interval(np.mean, x, y[:10])
    with pytest.raises(ValueError, match="non-empty"):
        bootstrap_interval(np.mean, np.array([]))


def test_proportion_interval_is_scipys_exact_interval():
    from scipy.stats import binomtest
    for k, n in [(0, 1), (1, 1), (0, 50), (3, 50), (50, 50), (17, 2189), (1000, 2000), (np.int64(7), np.int64(40))]:
        for level in (0.95, 0.9):
            ci = binomtest(int(k), int(n)).proportion_ci(level, method="exact")
            assert np.allclose(proportion_interval(k, n, level=level), (ci.low, ci.high), rtol=1e-9, atol=0)   # scipy finds the roots numerically
    for k, n, err, match in [(5, 4, ValueError, "k must be"), (-1, 4, ValueError, "k must be"), (0, 0, ValueError, "n must be"),
                             (1.0, 4, TypeError, "k must be an integer"), (1, "4", TypeError, "n must be an integer")]:
        with pytest.raises(err, match=match):
            proportion_interval(k, n)


def test_bootstrap_interval_with_infinite_resamples():
    "A ratio whose denominator is 0 in some resamples is infinite there: the interval ends at inf, never at nan."
    b = np.array([True] * 38 + [False] * 2); a = np.array([True] * 30 + [False] * 10)    # b wrong twice in 40
    ratio = lambda u, v: np.mean(~u) / np.mean(~v) if np.mean(~v) > 0 else np.inf
    est, lo, hi = bootstrap_interval(ratio, a, b)
    assert est == 5.0 and np.isfinite(lo) and 1 < lo < 5 and hi == np.inf
    assert interval_verdict(lo, hi, above=1) == "holds" and interval_verdict(lo, hi, above=1, below=10) == "undecided"
    assert interval_verdict(-np.inf, -1.0, below=0) == "holds" and interval_verdict(-np.inf, np.inf, above=0) == "undecided"
    _, lo, hi = bootstrap_interval(lambda u: np.inf if u.mean() > 0.5 else u.mean(), np.array([1.0] * 39 + [0.0]))
    assert lo == hi == np.inf
    with pytest.raises(ValueError, match="2000 of 2000 bootstrap replicates are NaN"):   # an undefined statistic is an error
        bootstrap_interval(lambda u: np.nan, np.ones(5))
    undefined_sometimes = lambda u: np.nan if u.min() == u.max() else u.mean()        # no 0 drawn in about 36% of resamples
    with pytest.raises(ValueError, match=r"\d+ of 2000 bootstrap replicates are NaN"):
        bootstrap_interval(undefined_sometimes, np.array([1.0] * 39 + [0.0]))


@pytest.mark.parametrize("low,high,kw,expected", [
    (0.1, 0.2, dict(above=0), "holds"), (-0.2, -0.1, dict(above=0), "fails"), (-0.1, 0.1, dict(above=0), "undecided"),
    (0.0, 0.1, dict(above=0), "undecided"), (-0.1, 0.0, dict(above=0), "fails"),
    (0.2, 0.3, dict(above=-0.5, below=0.5), "holds"), (0.4, 0.6, dict(above=-0.5, below=0.5), "undecided"),
    (0.6, 0.7, dict(above=-0.5, below=0.5), "fails")])
def test_interval_verdict(low, high, kw, expected):
    assert interval_verdict(low, high, **kw) == expected


@pytest.mark.parametrize("verdicts,scope,expected", [
    (["holds", "holds"], "every", "holds"), (["holds", "undecided"], "every", "undecided"),
    (["undecided", "fails", "holds"], "every", "fails"), ([], "every", "undecided"),
    (["fails", "undecided"], "some", "undecided"), (["fails", "fails"], "some", "fails"),
    (["fails", "holds"], "some", "holds"), ([], "some", "undecided"), (("holds" for _ in range(3)), "every", "holds")])
def test_combined_verdict(verdicts, scope, expected):
    assert combined_verdict(verdicts, scope=scope) == expected


def test_combined_verdict_rejects_unknown_words():
    with pytest.raises(ValueError, match="'true'"):
        combined_verdict(["holds", "true"])
    with pytest.raises(ValueError, match="scope"):
        combined_verdict(["holds"], scope="all")


def test_interval_verdict_rejects_reversed_or_nan():
    for lo, hi in [(1, 0), (np.nan, 1)]:
        with pytest.raises(ValueError, match="low <= high"):
            interval_verdict(lo, hi, above=0)


# --- percentile_interval ----------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 10, 1999, 2000])
@pytest.mark.parametrize("level", [0.95, 0.9, 0.5, 0.999])
def test_percentile_interval_is_numpys_linear_percentile(n, level):
    r = make_rng(n).standard_t(3, n)
    r[: n // 4] = r[0]                                                          # ties
    ref = np.percentile(r, [50 * (1 - level), 50 * (1 + level)])
    lo, hi = percentile_interval(r, level=level)
    assert type(lo) is float and type(hi) is float
    np.testing.assert_allclose([lo, hi], ref, rtol=1e-14, atol=1e-300)
    assert lo <= hi
    assert percentile_interval(make_rng(0).permutation(r), level=level) == (lo, hi)   # order does not matter
    assert percentile_interval(r.reshape(1, -1), level=level) == (lo, hi)            # any shape is flattened


def _lerp_percentile(r, q):
    """The linear-interpolation percentile by hand, with the limits of a + (b - a) t for infinite ends: a finite value
    and +inf interpolate to +inf (t > 0), -inf and a finite value to -inf (t < 1), and -inf and +inf to the lower
    (the notebook's rule between two infinities)."""
    r = np.sort(np.asarray(r, float)); pos = q * (len(r) - 1)
    i = int(math.floor(pos)); t = pos - i
    if t == 0 or r[i] == r[min(i + 1, len(r) - 1)]:
        return float(r[i])
    a, b = r[i], r[i + 1]
    if a == -np.inf:
        return -np.inf
    if b == np.inf:
        return np.inf
    return float(a + (b - a) * t)


@pytest.mark.parametrize("replicates", [
    [1.0, 2.0, np.inf, np.inf], [-np.inf, -np.inf, 0.0, 1.0], [-np.inf, np.inf], [np.inf] * 5, [-np.inf] * 3 + [2.0],
    [-np.inf, 1.0], list(range(30)) + [np.inf] * 2, [0.0] * 1949 + [np.inf] * 51], ids=lambda r: repr(r[:6]))
def test_percentile_interval_with_infinities_that_numpy_handles(replicates):
    lo, hi = percentile_interval(replicates)
    np.testing.assert_allclose([lo, hi], [_lerp_percentile(replicates, 0.025), _lerp_percentile(replicates, 0.975)],
                               rtol=1e-14)
    assert lo <= hi


@pytest.mark.parametrize("replicates", [[1.0, np.inf], [0.0, 1.0, np.inf], list(range(40)) + [np.inf] * 2,
                                        [0.0] * 50 + [np.inf] * 1950],
                         ids=["one-and-inf", "three", "40-and-2-inf", "2000-mostly-inf"])
def test_percentile_interval_between_a_finite_and_an_infinite_replicate(replicates):
    """Between a finite replicate and +inf the linear interpolation a + (b - a) t is +inf for any t > 0. numpy's
    formula gives NaN there when t >= 1/2 (it computes b - (b - a)(1 - t) = inf - inf), and taking the lower replicate
    then puts a finite end where the interval is unbounded: high below low for [1, inf], whose interval
    interval_verdict then rejects."""
    lo, hi = percentile_interval(replicates)
    assert lo <= hi
    np.testing.assert_allclose([lo, hi], [_lerp_percentile(replicates, 0.025), _lerp_percentile(replicates, 0.975)],
                               rtol=1e-14)


def test_percentile_interval_errors():
    with pytest.raises(ValueError, match="no bootstrap replicates"):
        percentile_interval([])
    with pytest.raises(ValueError, match="^3 of 5 bootstrap replicates are NaN"):
        percentile_interval([np.nan, 1, np.nan, 2, np.nan])
    for bad in (0, 1, 1.5, -0.1):
        with pytest.raises(ValueError, match=r"^level must be a number in \(0, 1\)"):
            percentile_interval([1.0, 2.0], level=bad)
    with pytest.raises(TypeError, match="^level must be a real number"):
        percentile_interval([1.0, 2.0], level="0.95")


# --- bootstrap_interval and resample_counts ---------------------------------------------------------

def test_bootstrap_interval_is_the_loop_it_describes():
    """Paired: one index vector per replicate, drawn with rng.integers(0, n, n) from make_rng(seed); unpaired: one per
    sample, in order. The interval is percentile_interval of the replicates."""
    x = make_rng(1).normal(size=37); y = make_rng(2).normal(size=37); z = make_rng(3).normal(size=23)
    stat = lambda u, v: np.median(u) - np.mean(v)
    rng = np.random.default_rng(5); reps = []
    for _ in range(300):
        i = rng.integers(0, 37, 37); reps.append(stat(x[i], y[i]))
    assert bootstrap_interval(stat, x, y, n_boot=300, seed=5) == (stat(x, y), *percentile_interval(reps))
    rng = np.random.default_rng(6); reps = []
    for _ in range(300):
        reps.append(stat(x[rng.integers(0, 37, 37)], z[rng.integers(0, 23, 23)]))
    assert bootstrap_interval(stat, x, z, n_boot=300, seed=6, paired=False, level=0.8) == \
        (stat(x, z), *percentile_interval(reps, level=0.8))


def test_bootstrap_interval_repeats_for_a_seed():
    x = make_rng(0).exponential(size=60)
    a = bootstrap_interval(np.mean, x, n_boot=400, seed=11)
    assert a == bootstrap_interval(np.mean, x, n_boot=400, seed=11) == bootstrap_interval(np.mean, x, n_boot=400, seed=np.int64(11))
    assert a != bootstrap_interval(np.mean, x, n_boot=400, seed=12)
    assert a == bootstrap_interval(np.mean, x, n_boot=400, seed=np.random.default_rng(11))
    assert a[0] == x.mean() and a[1] < a[0] < a[2]
    for bad, error in [(0, ValueError), (2.0, TypeError), (True, TypeError)]:
        with pytest.raises(error, match="^n_boot must be an integer"):
            bootstrap_interval(np.mean, x, n_boot=bad)
    with pytest.raises(ValueError, match="^seed must be an integer >= 0"):
        bootstrap_interval(np.mean, x, seed=-1)
    with pytest.raises(ValueError, match="non-empty"):
        bootstrap_interval(np.mean)


def test_bootstrap_interval_covers_a_known_mean():
    """Samples of 60 from an exponential of mean 2: the 90% interval of the mean covers 2 in about 90% of 150 trials
    (the percentile bootstrap undercovers a little on skewed data; well inside 80-97%)."""
    rng = make_rng(123); covered = 0
    for t in range(150):
        x = rng.exponential(2.0, 60)
        _, lo, hi = bootstrap_interval(np.mean, x, n_boot=300, level=0.9, seed=t)
        covered += lo <= 2.0 <= hi
    assert 0.80 <= covered / 150 <= 0.97


def test_resample_counts_are_the_paired_resamples():
    c = resample_counts(13, 40, seed=4)
    assert c.shape == (40, 13) and c.dtype == np.int64 and (c.sum(1) == 13).all() and (c >= 0).all()
    rng = np.random.default_rng(4)
    for row in c:                                                               # the same draws as bootstrap_interval's
        np.testing.assert_array_equal(row, np.bincount(rng.integers(0, 13, 13), minlength=13))
    x = make_rng(9).normal(size=13)
    np.testing.assert_allclose(percentile_interval(c @ x / 13), bootstrap_interval(np.mean, x, n_boot=40, seed=4)[1:],
                               rtol=1e-13)
    assert (resample_counts(1, 5) == 1).all()
    np.testing.assert_array_equal(resample_counts(13, 40, seed=4), c)
    for args, error in [((0, 5), ValueError), ((5, 0), ValueError), ((5.0, 5), TypeError), ((5, True), TypeError)]:
        with pytest.raises(error, match="^n(_boot)? must be an integer"):
            resample_counts(*args)


# --- StratifiedBootstrap ----------------------------------------------------------------------------

def test_stratified_bootstrap_weights_and_means_against_a_loop():
    sizes = {"small": 7, "big": 40, "one": 1}
    sb = StratifiedBootstrap(sizes, 25, seed=3)
    assert sb.strata == ["small", "big", "one"] and sb.n_boot == 25
    for s, n in sizes.items():
        w = sb.weights[s]
        assert w.shape == (26, n) and w.dtype == np.float32
        assert (w[0] == 1).all() and (w.sum(1) == n).all() and (w == np.round(w)).all() and (w >= 0).all()
    rng = make_rng(0)
    values = {s: rng.normal(size=n) for s, n in sizes.items()}
    m = sb.means(values)
    assert m.shape == (3, 26)
    for a, s in enumerate(sb.strata):
        for r in range(26):
            w = sb.weights[s][r].astype(np.float64); v = values[s].astype(np.float32).astype(np.float64)
            assert m[a, r] == pytest.approx((w * v).sum() / w.sum(), rel=1e-5, abs=1e-6)
    np.testing.assert_allclose(m[:, 0], [values[s].mean() for s in sb.strata], rtol=1e-5)


def test_stratified_bootstrap_positions_select_items():
    sb = StratifiedBootstrap({"a": 10, "b": 5}, 30, seed=1)
    v = {"a": np.arange(4, dtype=float), "b": np.ones(5)}
    pos = {"a": np.array([9, 0, 3, 3]), "b": np.arange(5)}
    m = sb.means(v, pos)
    for r in range(31):
        w = sb.weights["a"][r, pos["a"]].astype(np.float64)
        if w.sum() == 0:
            assert np.isnan(m[0, r])                                           # no item drawn: no mean
            continue
        assert m[0, r] == pytest.approx((w * v["a"]).sum() / w.sum(), rel=1e-6, abs=1e-7)
    assert (m[1] == 1).all()
    with pytest.raises(ValueError, match=r"values\['a'\] has shape \(3,\), expected \(4,\)"):
        sb.means({"a": np.ones(3), "b": np.ones(5)}, pos)


def test_stratified_bootstrap_repeats_and_checks():
    a, b = StratifiedBootstrap({"x": 9}, 20, seed=7), StratifiedBootstrap({"x": 9}, 20, seed=7)
    np.testing.assert_array_equal(a.weights["x"], b.weights["x"])
    assert not np.array_equal(a.weights["x"], StratifiedBootstrap({"x": 9}, 20, seed=8).weights["x"])
    with pytest.raises(ValueError, match=r"^sizes\['x'\] must be an integer >= 1, got 0"):
        StratifiedBootstrap({"x": 0}, 5)
    with pytest.raises(TypeError, match=r"^sizes\['x'\] must be an integer"):
        StratifiedBootstrap({"x": 2.0}, 5)
    with pytest.raises(ValueError, match="^n_boot must be an integer >= 1"):
        StratifiedBootstrap({"x": 2}, 0)


# --- mcnemar_exact ----------------------------------------------------------------------------------

def _two_sided_binomial(k, n):
    "The exact two-sided binomial p-value at 1/2 by hand: the total probability of outcomes no likelier than k."
    pk = math.comb(n, k)
    return min(1.0, sum(math.comb(n, i) for i in range(n + 1) if math.comb(n, i) <= pk) / 2 ** n)


def _newcombe_by_hand(wrong_a, wrong_b):
    """Newcombe (1998) method 10 from statsmodels' Wilson intervals and the phi coefficient of the error indicators
    (numpy's), with Newcombe's continuity correction: the phi's numerator N (n11 n00 - n01 n10) loses N^2 / 2, not
    below 0, when it is positive."""
    from statsmodels.stats.proportion import proportion_confint
    N, ea, eb = len(wrong_a), wrong_a.mean(), wrong_b.mean()
    la, ua = proportion_confint(wrong_a.sum(), N, method="wilson"); lb, ub = proportion_confint(wrong_b.sum(), N, method="wilson")
    phi = np.corrcoef(wrong_a, wrong_b)[0, 1] if wrong_a.std() > 0 and wrong_b.std() > 0 else 0.0
    D = N * np.mean(wrong_a & wrong_b) - N * ea * eb                         # n11 n00 - n01 n10, over N
    if D > 0:
        phi *= max(D - 0.5, 0) / D
    d = ea - eb
    return (max(d - np.sqrt((ea - la) ** 2 - 2 * phi * (ea - la) * (ub - eb) + (ub - eb) ** 2), -1),
            min(d + np.sqrt((ua - ea) ** 2 - 2 * phi * (ua - ea) * (eb - lb) + (eb - lb) ** 2), 1))


def test_mcnemar_exact_against_binomtest_and_by_hand():
    from scipy.stats import binomtest
    rng = make_rng(8)
    for N in (1, 2, 7, 30, 250):
        for _ in range(6):
            a = rng.random(N) < rng.uniform(0.3, 0.95); b = rng.random(N) < rng.uniform(0.3, 0.95)
            r = mcnemar_exact(a, b)
            n01, n10 = int((~a & b).sum()), int((a & ~b).sum())
            assert (r.n_items, r.only_a_wrong, r.only_b_wrong) == (N, n01, n10)
            assert (r.errors_a, r.errors_b) == (int((~a).sum()), int((~b).sum()))
            assert r.difference == (n01 - n10) / N
            if n01 + n10 == 0:
                assert r.p_value == 1.0 and r.low == -r.high
                continue
            assert r.p_value == pytest.approx(binomtest(n01, n01 + n10, 0.5).pvalue, rel=1e-12)
            assert r.p_value == pytest.approx(_two_sided_binomial(n01, n01 + n10), rel=1e-9)
            low, high = _newcombe_by_hand(~a, ~b)
            assert r.low == pytest.approx(low, rel=1e-8, abs=1e-12) and r.high == pytest.approx(high, rel=1e-8, abs=1e-12)
            assert -1 <= r.low <= r.difference <= r.high <= 1


def test_mcnemar_exact_is_antisymmetric_and_levels_nest():
    rng = make_rng(3)
    a = rng.random(200) < 0.8; b = rng.random(200) < 0.7
    ab, ba = mcnemar_exact(a, b), mcnemar_exact(b, a)
    assert ba.difference == -ab.difference and ba.p_value == ab.p_value
    assert ba.low == pytest.approx(-ab.high, rel=1e-12) and ba.high == pytest.approx(-ab.low, rel=1e-12)
    narrow, wide = mcnemar_exact(a, b, level=0.8), mcnemar_exact(a, b, level=0.99)
    assert wide.low < ab.low < narrow.low <= narrow.high < ab.high < wide.high
    for bad in (0, 1, 95):
        with pytest.raises(ValueError, match="^level must be a number"):
            mcnemar_exact(a, b, level=bad)
    with pytest.raises(TypeError, match="boolean vectors"):
        mcnemar_exact(list(a), b.astype(np.int8))


# --- proportion_interval ----------------------------------------------------------------------------

def _clopper_pearson_by_root(k, n, level):
    """The interval the notebook names (Clopper-Pearson), from its definition: the p at which each one-sided binomial
    tail of k in n equals (1 - level) / 2, found by bisection on the binomial distribution."""
    from scipy.optimize import brentq
    from scipy.stats import binom
    a = (1 - level) / 2
    low = 0.0 if k == 0 else brentq(lambda p: binom.sf(k - 1, n, p) - a, 1e-300, 1 - 1e-16, xtol=1e-300, rtol=1e-15)
    high = 1.0 if k == n else brentq(lambda p: binom.cdf(k, n, p) - a, 1e-300, 1 - 1e-16, xtol=1e-300, rtol=1e-15)
    return low, high


@pytest.mark.parametrize("k,n", [(0, 1), (1, 1), (0, 10), (1, 10), (5, 10), (9, 10), (10, 10), (0, 1000), (3, 1000),
                                 (500, 1000), (999, 1000)])
@pytest.mark.parametrize("level", [0.95, 0.8, 0.999])
def test_proportion_interval_inverts_the_binomial_tails(k, n, level):
    lo, hi = proportion_interval(k, n, level=level)
    rlo, rhi = _clopper_pearson_by_root(k, n, level)
    assert lo == pytest.approx(rlo, rel=1e-9, abs=1e-15) and hi == pytest.approx(rhi, rel=1e-9, abs=1e-15)
    assert 0 <= lo <= k / n <= hi <= 1 and type(lo) is float and type(hi) is float
    if k == 0:
        assert lo == 0.0 and hi == pytest.approx(1 - ((1 - level) / 2) ** (1 / n), rel=1e-12)   # the closed form
    if k == n:
        assert hi == 1.0 and lo == pytest.approx(((1 - level) / 2) ** (1 / n), rel=1e-12)


def test_proportion_interval_is_symmetric_in_successes_and_failures():
    for k, n in [(0, 5), (2, 5), (17, 40), (1, 2000)]:
        lo, hi = proportion_interval(k, n)
        flo, fhi = proportion_interval(n - k, n)
        assert lo == pytest.approx(1 - fhi, rel=1e-12, abs=1e-15) and hi == pytest.approx(1 - flo, rel=1e-12, abs=1e-15)
    with pytest.raises(ValueError, match=r"^level must be a number in \(0, 1\)"):
        proportion_interval(1, 4, level=1.0)
    with pytest.raises(TypeError, match="^k must be an integer"):
        proportion_interval(True, 4)


# --- verdicts ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("low,high,kw,expected", [
    # claimed region (above, inf): inside, outside, straddling, touching
    (0.5, 0.7, dict(above=0.1), "holds"), (-0.5, -0.1, dict(above=0.1), "fails"), (0.0, 0.2, dict(above=0.1), "undecided"),
    (0.1, 0.2, dict(above=0.1), "undecided"), (0.0, 0.1, dict(above=0.1), "fails"), (0.1, 0.1, dict(above=0.1), "fails"),
    # claimed region (-inf, below)
    (-3.0, -2.0, dict(below=-1), "holds"), (-1.0, 0.0, dict(below=-1), "fails"), (-2.0, -1.0, dict(below=-1), "undecided"),
    (-1.5, 2.0, dict(below=-1), "undecided"),
    # a bounded region
    (1.0, 2.0, dict(above=0, below=3), "holds"), (-1.0, 0.0, dict(above=0, below=3), "fails"),
    (3.0, 4.0, dict(above=0, below=3), "fails"), (2.0, 4.0, dict(above=0, below=3), "undecided"),
    (-1.0, 4.0, dict(above=0, below=3), "undecided"), (0.0, 3.0, dict(above=0, below=3), "undecided"),
    (1.5, 1.5, dict(above=0, below=3), "holds"),
    # infinite ends of the interval
    (1.0, np.inf, dict(above=0), "holds"), (1.0, np.inf, dict(above=0, below=5), "undecided"),
    (-np.inf, -1.0, dict(below=0), "holds"), (-np.inf, -1.0, dict(above=0), "fails"),
    (-np.inf, np.inf, dict(), "holds"), (-np.inf, np.inf, dict(above=0), "undecided"),
    (np.inf, np.inf, dict(above=0), "holds"), (np.inf, np.inf, dict(below=0), "fails"),
    (-np.inf, -np.inf, dict(above=0), "fails"),
    # no region at all: every interval lies in it
    (-5.0, 5.0, dict(), "holds")])
def test_interval_verdict_every_branch(low, high, kw, expected):
    assert interval_verdict(low, high, **kw) == expected in VERDICTS


def test_interval_verdict_agrees_with_the_rule_on_random_intervals():
    """'holds' iff every point of [low, high] is in the open region (above, below), 'fails' iff none is, else
    'undecided' -- checked on a grid where the points of the interval can be listed."""
    rng = make_rng(4)
    grid = np.arange(-6, 7) / 2
    for _ in range(500):
        low, high = np.sort(rng.choice(grid, 2))
        above, below = np.sort(rng.choice(np.r_[grid, -np.inf, np.inf], 2))
        if above == below:
            continue                                                            # an empty claimed region: no claim
        pts = np.arange(low, high + 0.125, 0.125)                              # the interval's points on a finer grid
        inside = (pts > above) & (pts < below)
        expected = "holds" if inside.all() else "fails" if not inside.any() else "undecided"
        assert interval_verdict(low, high, above=above, below=below) == expected, (low, high, above, below)


@pytest.mark.parametrize("verdicts", [[v] for v in VERDICTS] + [[a, b] for a in VERDICTS for b in VERDICTS]
                         + [["holds", "holds", "undecided"], ["fails", "fails", "fails"], []], ids=str)
def test_combined_verdict_every_combination(verdicts):
    every = "fails" if "fails" in verdicts else "holds" if verdicts and set(verdicts) == {"holds"} else "undecided"
    some = "holds" if "holds" in verdicts else "fails" if verdicts and set(verdicts) == {"fails"} else "undecided"
    assert combined_verdict(verdicts) == combined_verdict(verdicts, scope="every") == every
    assert combined_verdict(iter(verdicts), scope="some") == some
    assert combined_verdict(verdicts[::-1]) == every                           # order does not matter


def test_combined_verdict_errors():
    for bad in (["Holds"], [None], ["holds", True]):
        with pytest.raises(ValueError, match="^verdicts must be in"):
            combined_verdict(bad)
    for scope in ("any", None, "Every"):
        with pytest.raises(ValueError, match="^scope must be one of 'every', 'some'"):
            combined_verdict(["holds"], scope=scope)


# --- permutation_p_value -----------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(5))
def test_permutation_p_value_counts_the_observed_arrangement(seed):
    "(1 + #{null >= observed}) / (1 + B), counted by hand; ties with the observed value count against it."
    rng = np.random.default_rng(seed)
    null = np.round(rng.normal(size=rng.integers(1, 300)), 1)
    observed = float(rng.choice(null)) if seed % 2 else float(np.round(rng.normal(), 1))
    by_hand = (1 + sum(1 for v in null if v >= observed)) / (1 + len(null))
    assert permutation_p_value(observed, null) == by_hand
    assert 0 < permutation_p_value(observed, null) <= 1


@pytest.mark.parametrize("seed", range(3))
def test_permutation_test_is_the_plain_loop(seed):
    "The statistic on the data, then on splits of the pooled rows drawn as a plain loop with the same generator."
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(7, 3)), rng.normal(size=(5, 3)) + 0.5
    stat = lambda A, B: float(np.linalg.norm(A.mean(0) - B.mean(0)))
    Z, gen = np.vstack([X, Y]), np.random.default_rng(seed)
    null = []
    for _ in range(50):
        i = gen.permutation(12); null.append(stat(Z[i[:7]], Z[i[7:]]))
    observed = stat(X, Y)
    assert permutation_test(stat, X, Y, n_permutations=50, seed=seed) == (observed, permutation_p_value(observed, null))


def test_permutation_test_separated_sets_and_bad_arguments():
    X = np.arange(10.0)[:, None]
    s, p = permutation_test(lambda A, B: float(B.mean() - A.mean()), X, X + 100, n_permutations=199)
    assert s == 100.0 and p == 1 / 200                        # no split of the pooled rows is as far apart
    with pytest.raises(ValueError, match="n_permutations"):
        permutation_test(lambda A, B: 0.0, X, X, n_permutations=0)
    with pytest.raises(ValueError, match="same d"):
        permutation_test(lambda A, B: 0.0, X, np.ones((3, 2)))
    with pytest.raises(ValueError, match="same d"):
        permutation_test(lambda A, B: 0.0, np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="NaN"):
        permutation_test(lambda A, B: float("nan"), X, X)


def test_permutation_p_value_errors():
    with pytest.raises(ValueError, match="null is empty"):
        permutation_p_value(0.0, [])
    with pytest.raises(ValueError, match="NaN"):
        permutation_p_value(0.0, [1.0, np.nan])
    with pytest.raises(ValueError, match="NaN"):
        permutation_p_value(np.nan, [1.0])


# --- Newcombe's interval: the published numbers, the cells, the edges ---------------------------------------------

def _paired(n11, n01, n10, n00):
    "correct_a, correct_b for n11 items both classifiers get wrong, n01 only A, n10 only B and n00 neither."
    counts = [n11, n01, n10, n00]
    return np.repeat([False, False, True, True], counts), np.repeat([False, True, False, True], counts)


# Newcombe (1998), Statistics in Medicine 17:2635-2650, Table III, the method-10 rows (z = 1.96), as (e, f, g, h):
# e both positive, f only the first, g only the second, h neither; the interval is for (f - g) / N. With an error
# as the positive and A as the first, (e, f, g, h) = (n11, n01, n10, n00) and (f - g) / N = e_a - e_b.
NEWCOMBE_TABLE_III = {
    (36, 12, 2, 0): (0.0569, 0.3404), (20, 12, 2, 16): (0.0562, 0.3292), (18, 12, 2, 18): (0.0562, 0.3290),
    (36, 14, 0, 0): (0.1528, 0.4167), (35, 14, 0, 1): (0.1461, 0.4175), (18, 14, 0, 18): (0.1441, 0.3963),
    (2, 97, 1, 0): (0.8721, 0.9854), (1, 97, 1, 1): (0.8736, 0.9850), (0, 29, 1, 0): (0.6666, 0.9882),
    (2, 98, 0, 0): (0.9178, 0.9945), (1, 98, 0, 1): (0.9171, 0.9916), (0, 30, 0, 0): (0.8395, 1.0),
    (54, 0, 0, 0): (-0.0664, 0.0664), (53, 0, 0, 1): (-0.0729, 0.0729), (30, 0, 0, 24): (-0.0358, 0.0358),
    (29, 0, 0, 25): (-0.0354, 0.0354), (28, 0, 0, 26): (-0.0352, 0.0352), (27, 0, 0, 27): (-0.0351, 0.0351),
}


@pytest.mark.parametrize("cells", NEWCOMBE_TABLE_III, ids=str)
def test_newcombe_interval_is_his_table_iii(cells):
    """Every method-10 row of the table to its 4 printed decimals (one row, (1, 97, 1, 1), prints 0.8736 where the
    formula gives 0.87367 with z = 1.96 as with 1.959964, with or without the correction: 7e-5 off, not a wrong phi).
    The rows the uncorrected phi gets wrong are those with D = n11 n00 - n01 n10 > 0: (20, 12, 2, 16) gave
    [0.0618, 0.3242], and (27, 0, 0, 27), which the plain phi = 1 collapses to [0, 0]."""
    tolerance = 1e-4 if cells == (1, 97, 1, 1) else 5e-5 + 1e-12
    low, high = _newcombe_paired(*cells, 0.95)
    assert abs(low - NEWCOMBE_TABLE_III[cells][0]) <= tolerance and abs(high - NEWCOMBE_TABLE_III[cells][1]) <= tolerance
    r = mcnemar_exact(*_paired(*cells))
    assert r.difference == (cells[1] - cells[2]) / sum(cells)
    if cells[1] + cells[2]:                        # the classifiers disagree somewhere: mcnemar_exact is method 10
        assert (r.low, r.high) == (low, high)
    else:                                          # they never do: the Clopper-Pearson bound on the discordance rate
        u = 1 - 0.025 ** (1 / sum(cells))
        assert r.low == pytest.approx(-u, rel=1e-12) and r.high == pytest.approx(u, rel=1e-12)


def test_newcombe_interval_is_fagerland_lydersen_laakes_worked_example():
    """Fagerland, Lydersen & Laake, Statistical Analysis of Contingency Tables (2017), chapter 8, the Newcombe
    square-and-add interval for Cavo et al.'s (2012) table (59, 6, 16, 80): -0.0621 [-0.1186, -0.0046], as R's
    contingencytables prints it in its tests (and biostatUZH's confIntPairedProportion, with the same corrected
    phi). The uncorrected phi gave [-0.1174, -0.0059]. The table's rows are the first measurement (A), its columns the
    second (B), a positive being an error: 59 items both get wrong, 6 only A, 16 only B, 80 neither."""
    r = mcnemar_exact(*_paired(59, 6, 16, 80))
    assert (r.n_items, r.errors_a, r.errors_b, r.only_a_wrong, r.only_b_wrong) == (161, 65, 75, 6, 16)
    assert (round(r.difference, 4), round(r.low, 4), round(r.high, 4)) == (-0.0621, -0.1186, -0.0046)
    ba = mcnemar_exact(*_paired(59, 6, 16, 80)[::-1])                          # B against A: the mirror image
    assert (ba.only_a_wrong, ba.only_b_wrong) == (16, 6) and ba == mcnemar_exact(*_paired(59, 16, 6, 80))
    assert ba.low == pytest.approx(-r.high, rel=1e-12) and ba.high == pytest.approx(-r.low, rel=1e-12)
    # Swapping both-wrong with both-right is counting right answers instead of errors and A for B at once: the same
    # interval. Moving items between a concordant and a discordant cell is not.
    flipped = mcnemar_exact(*_paired(80, 6, 16, 59))
    assert flipped.difference == r.difference and (flipped.low, flipped.high) == pytest.approx((r.low, r.high), rel=1e-12)
    assert (round(mcnemar_exact(*_paired(6, 59, 16, 80)).low, 4)) != -0.1186


@pytest.mark.parametrize("cells,phi", [
    ((20, 12, 2, 16), 271 / math.sqrt(32 * 18 * 22 * 28)),    # D = 296 > N/2 = 25: D - N/2
    ((1, 0, 0, 1), 0.0), ((2, 1, 1, 2), 0.0),                 # 0 < D <= N/2: 0, not the plain phi (1 and 1/3)
    ((36, 12, 2, 0), -24 / math.sqrt(48 * 2 * 38 * 12)),      # D < 0: the plain phi
    ((0, 3, 4, 0), -1.0),                                     # all discordant: D = -n01 n10, phi = -1
    ((0, 3, 0, 0), 0.0), ((5, 0, 0, 0), 0.0), ((0, 0, 0, 1), 0.0)])   # an empty margin: 0
def test_paired_phi_every_branch(cells, phi):
    assert _paired_phi(*cells) == pytest.approx(phi, rel=1e-12, abs=0)


def test_newcombe_interval_edge_cases():
    z2 = 1.959963984540054 ** 2
    # one item: A wrong, B right. Wilson's bounds of 1/1 and 0/1 are 1/(1 + z^2) and z^2/(1 + z^2), phi 0 (empty margins)
    r = mcnemar_exact(np.array([False]), np.array([True]))
    assert (r.n_items, r.difference, r.p_value) == (1, 1.0, 1.0)
    assert r.low == pytest.approx(1 - math.sqrt(2) * z2 / (1 + z2), rel=1e-12) and r.high == 1.0
    for a in (np.array([True]), np.array([False])):                             # one item, no disagreement
        r = mcnemar_exact(a, a)
        assert (r.difference, r.p_value) == (0.0, 1.0) and r.high == pytest.approx(0.975, rel=1e-12) and r.low == -r.high
    # every item discordant, 3 only A and 4 only B: phi = -1, so each end adds the two Wilson half-lengths
    r = mcnemar_exact(*_paired(0, 3, 4, 0))
    (la, ua), (lb, ub) = (proportion_confint_wilson(k, 7) for k in (3, 4))
    assert r.low == pytest.approx(-1 / 7 - (3 / 7 - la) - (ub - 4 / 7), rel=1e-12)
    assert r.high == pytest.approx(-1 / 7 + (ua - 3 / 7) + (4 / 7 - lb), rel=1e-12)
    # every item wrong for A only: the difference is 1 and the interval reaches it
    r = mcnemar_exact(np.zeros(20, bool), np.ones(20, bool))
    assert r.difference == 1.0 and r.high == 1.0 and 0.7 < r.low < 1 and r.p_value == pytest.approx(2 * 0.5 ** 20)
    for cells in [(0, 5, 0, 0), (0, 0, 5, 0), (3, 2, 0, 0), (0, 2, 0, 3), (0, 1, 1, 0)]:   # zero cells and margins
        r = mcnemar_exact(*_paired(*cells))
        assert -1 <= r.low <= r.difference <= r.high <= 1 and r.high - r.low > 0.1


def proportion_confint_wilson(k, n):
    from statsmodels.stats.proportion import proportion_confint
    return proportion_confint(k, n, method="wilson")


# --- how many resamples -----------------------------------------------------------------------------------------

@contextlib.contextmanager
def _error_on(category):
    "A context in which warnings of `category` are errors."
    with warnings.catch_warnings():
        warnings.simplefilter("error", category)
        yield


@pytest.mark.parametrize("level,beyond,expected", [(0.95, 25, 1000), (0.9, 25, 500), (1 - 0.05 / 14, 25, 14000),
                                                   (1 - 0.05 / 35, 25, 35000), (0.95, 1, 40), (0.99, 10, 2000), (0.5, 3, 12)])
def test_resamples_needed_leaves_beyond_replicates_past_each_end(level, beyond, expected):
    "The smallest B with B (1 - level) / 2 >= beyond; with B distinct replicates at least `beyond` lie past each end."
    B = resamples_needed(level, beyond=beyond)
    assert B == expected and type(B) is int
    r = make_rng(B).permutation(B).astype(float)
    lo, hi = percentile_interval(r, level=level)
    assert (r < lo).sum() >= beyond and (r > hi).sum() >= beyond
    if beyond == 25:                                                            # the warning's threshold
        with _error_on(ResampleWarning):
            percentile_interval(r, level=level)
        with pytest.warns(ResampleWarning):                                     # one fewer: too few
            percentile_interval(r[1:], level=level)


def test_percentile_and_bootstrap_intervals_warn_when_resamples_are_too_few():
    x = make_rng(0).normal(size=30)
    with pytest.warns(ResampleWarning, match=r"^2000 bootstrap replicates leave 1.43 beyond each end of a 99.86% "
                                              r"interval, fewer than 25.*resamples_needed\(0.998571\) = 35000$"):
        bootstrap_interval(np.mean, x, n_boot=2000, level=bonferroni_level(35))
    with pytest.warns(ResampleWarning, match="^999 bootstrap replicates"):
        percentile_interval(np.arange(999.))
    with pytest.warns(ResampleWarning) as caught:                                # pointed at the caller, once
        bootstrap_interval(np.mean, x, n_boot=100)
    assert len(caught) == 1 and caught[0].filename == __file__
    with _error_on(ResampleWarning):                                             # enough: silent
        bootstrap_interval(np.mean, x, n_boot=1000)
        percentile_interval(np.arange(14000.), level=bonferroni_level(14))
    for bad, error in [(0, ValueError), (2.5, TypeError)]:
        with pytest.raises(error, match="^beyond must be an integer"):
            resamples_needed(0.95, beyond=bad)
    with pytest.raises(ValueError, match=r"^level must be a number in \(0, 1\)"):
        resamples_needed(1.0)
    with pytest.raises(ValueError, match=r"^level must be a number in \(0, 1\)"):   # checked before the warning
        bootstrap_interval(np.mean, x, level=1.5)


# --- StratifiedBootstrap: a resample without the chosen items ------------------------------------------------------

def test_stratified_bootstrap_resample_without_the_chosen_items_has_no_mean():
    "The issue's case: one chosen item of three is drawn by none of 3 draws in about (2/3)^3 = 30% of the resamples."
    sb = StratifiedBootstrap({"a": 3}, n_boot=400)
    m = sb.means({"a": np.array([5.])}, {"a": np.array([0])})[0]
    missing = sb.weights["a"][:, 0] == 0
    assert missing.sum() == 109 and not missing[0]
    assert np.isnan(m[missing]).all() and (m[~missing] == 5).all()
    with pytest.raises(ValueError, match="109 of 401 bootstrap replicates are NaN"):   # a caller cannot miss them
        percentile_interval(m)
    np.testing.assert_allclose(sb.means({"a": np.arange(3.)})[0], sb.weights["a"] @ np.arange(3.) / 3, rtol=1e-6)   # all items: never NaN


def test_stratified_bootstrap_means_check_positions_and_strata():
    sb = StratifiedBootstrap({"a": 4, "b": 2}, 10)
    v = {"a": np.ones(2), "b": np.ones(2)}
    for pos, error, match in [({"a": [0, 4], "b": [0, 1]}, ValueError, r"positions\['a'\]\[1\] = 4 is out of range for 4 rows"),
                              ({"a": [], "b": [0, 1]}, ValueError, r"positions\['a'\] is empty"),
                              ({"a": [0.0, 1.0], "b": [0, 1]}, TypeError, r"positions\['a'\] must hold integer"),
                              ({"a": [0, 1]}, ValueError, r"positions has no entry for stratum 'b'")]:
        with pytest.raises(error, match=match):
            sb.means(v, pos)
    with pytest.raises(ValueError, match=r"values has no entry for stratum 'b'"):
        sb.means({"a": np.ones(4)})


# --- mean_interval -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [2, 3, 7, 30])
@pytest.mark.parametrize("level", [0.8, 0.95, 1 - 0.05 / 35])
def test_t_interval_is_scipys(n, level):
    from scipy.stats import t
    X = make_rng(n).normal(2.0, 3.0, size=(n, 4))
    lo, hi = mean_interval(X, level=level)
    ref = t.interval(level, n - 1, loc=X.mean(0), scale=X.std(0, ddof=1) / math.sqrt(n))
    np.testing.assert_allclose(lo, ref[0], rtol=1e-12); np.testing.assert_allclose(hi, ref[1], rtol=1e-12)
    one = mean_interval(X[:, 1], level=level)
    assert type(one[0]) is float and one == pytest.approx((lo[1], hi[1]), rel=1e-14)
    assert mean_interval(list(X[:, 1]), level=level) == one


def _signflip_by_inversion(x, level, grid):
    """The values of `grid` the equal-tailed sign-flip test of the centre does not reject: theta is kept when the sum
    of x - theta is neither among the k largest nor the k smallest of its 2^n sign flips, k = floor((1 - level) 2^(n-1))."""
    n = len(x)
    signs = 1 - 2 * ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1)       # (2^n, n) every sign pattern
    k = math.floor((1 - level) * 2 ** (n - 1) + 1e-9)
    flips = (x[None, :] - grid[:, None]) @ signs.T                           # (grid, 2^n); column 0: no sign flipped
    observed = flips[:, :1]                                                   # computed alike, so it never outranks itself
    return grid[((flips > observed).sum(1) >= k) & ((flips < observed).sum(1) >= k)]


@pytest.mark.parametrize("n,level", [(6, 0.9), (6, 0.95), (8, 0.95), (8, 0.99), (10, 1 - 0.05 / 14), (5, 0.8)])
def test_signflip_interval_inverts_the_sign_flip_test(n, level):
    x = make_rng(n).standard_t(3, n)
    grid = np.linspace(x.min() - 1, x.max() + 1, 20001); step = grid[1] - grid[0]
    kept = _signflip_by_inversion(x, level, grid)
    lo, hi = mean_interval(x, level=level, method="signflip")
    assert abs(kept.min() - lo) <= step and abs(kept.max() - hi) <= step
    assert kept.size == np.count_nonzero((grid > lo) & (grid < hi))           # one interval, no holes
    from itertools import combinations
    means = np.sort([x[list(c)].mean() for r in range(1, n + 1) for c in combinations(range(n), r)])
    k = math.floor((1 - level) * 2 ** (n - 1) + 1e-9)
    assert (lo, hi) == pytest.approx((means[k - 1], means[-k]), rel=1e-12)


def test_signflip_interval_is_unbounded_below_its_smallest_level_and_blocks_columns():
    x = make_rng(0).normal(size=(9, 5))
    lo, hi = mean_interval(x, level=1 - 0.05 / 14, method="signflip")         # 9 units: k = floor(0.91) = 0
    assert (lo == -np.inf).all() and (hi == np.inf).all()
    assert mean_interval(x[:, 0], level=1 - 2 ** -8, method="signflip")[0] > -np.inf   # 1 - 2^(1-n): the first finite
    assert mean_interval(x[:, 0], level=1 - 2 ** -8 + 1e-6, method="signflip") == (-np.inf, np.inf)
    assert interval_verdict(*mean_interval(x[:, 0], level=0.999, method="signflip"), above=0) == "undecided"
    X = make_rng(1).normal(size=(20, 5))                                      # 2^20 means a column: blocks of 4 columns
    lo, hi = mean_interval(X, method="signflip")
    for j in (0, 4):
        assert (lo[j], hi[j]) == mean_interval(X[:, j], method="signflip")
    assert mean_interval(np.ones(1), method="signflip") == (-np.inf, np.inf)


def test_mean_interval_errors():
    for values, error, match in [([], ValueError, "non-empty"), (np.ones((3, 0)), ValueError, "non-empty"),
                                 (np.ones((2, 2, 2)), ValueError, r"got shape \(2, 2, 2\)"), ([1.0, np.nan], ValueError, "1 NaN or infinite"),
                                 (["a", "b"], TypeError, "array of numbers"), ([1.0], ValueError, "at least 2 units")]:
        with pytest.raises(error, match=match):
            mean_interval(values)
    with pytest.raises(ValueError, match="^method must be one of 't', 'signflip'"):
        mean_interval([1.0, 2.0], method="bootstrap")
    with pytest.raises(ValueError, match=r"^level must be a number in \(0, 1\)"):
        mean_interval([1.0, 2.0], level=95)
    with pytest.raises(ValueError, match="takes at most 20, got 21; use method='t'"):
        mean_interval(np.ones(21), method="signflip")


# --- coverage of every interval the chapters use ------------------------------------------------------------------
# Each test counts how often an interval misses the truth over simulated samples and compares the miss rate with the
# nominal (or a known) one within four binomial standard errors of the simulation itself. The numbers of units and
# levels are the chapters': 7 disjoint samples (corpus_distance's KSC claims) at 95% and at the Bonferroni level of 14
# conditions, 20 perturbations (its synthetic claims) and 20-50 units of small claims, a few hundred test documents
# (wmd), and 1 - 0.05/35.

B14, B35 = 1 - 0.05 / 14, 1 - 0.05 / 35


def _within(misses, trials, p, k=4.0):
    "Whether a miss count is within k binomial standard errors of the miss rate p."
    return abs(misses / trials - p) <= k * math.sqrt(p * (1 - p) / trials)


def _percentile_misses(n, level, n_boot, trials, draw, truth, seed):
    """How often the percentile interval of the bootstrap means of n units misses `truth`, over `trials` samples drawn
    by `draw(rng, (n, t))`. The means of every sample come from one set of `resample_counts` (the resamples of
    `bootstrap_interval`; each sample's interval is valid on any fixed set, so one serves all), in blocks of 500
    samples; the ends are numpy's linear quantiles of each column, which are `percentile_interval`'s (checked on each
    block's first column)."""
    rng, misses, q = make_rng(seed), 0, [(1 - level) / 2, (1 + level) / 2]
    counts = resample_counts(n, n_boot, seed=seed) / n
    for start in range(0, trials, 500):
        X = draw(rng, (n, min(500, trials - start)))
        R = counts @ X                                                         # (n_boot, t) replicates
        lo, hi = np.quantile(R, q, axis=0)
        assert percentile_interval(R[:, 0], level=level) == pytest.approx((lo[0], hi[0]), rel=1e-12, abs=1e-15)
        misses += int(((lo > truth) | (hi < truth)).sum())
    return misses


def _normal_percentile_misses(n, level):
    "The large-resample miss rate of the percentile interval of a mean of n normal units: P(|T_{n-1}| > z sqrt((n-1)/n))."
    from scipy.stats import norm, t
    return 2 * t.sf(norm.ppf((1 + level) / 2) * math.sqrt((n - 1) / n), n - 1)


@pytest.mark.parametrize("n,level,trials,undercovers", [
    (7, 0.95, 2000, True), (7, B14, 2000, True), (20, 0.95, 2000, None), (20, B14, 2000, None), (50, 0.95, 2000, None)])
def test_percentile_bootstrap_coverage_on_few_normal_units(n, level, trials, undercovers):
    """The percentile interval of a mean is nearly the normal interval with the 1/n variance, and misses as often as
    that interval does, P(|T_{n-1}| > z sqrt((n-1)/n)): 2.4 times the nominal 5% with 7 units, 10 times the nominal
    0.36% at the Bonferroni level of 14 conditions (12 times by simulation), 1.4 and 2.9 times with 20 units. With
    `resamples_needed(level)` resamples, so the shortfall is the method's, not the resamples'."""
    misses = _percentile_misses(n, level, resamples_needed(level), trials, lambda rng, s: rng.normal(size=s), 0.0, seed=n)
    expected = _normal_percentile_misses(n, level)
    assert _within(misses, trials, expected), (misses / trials, expected)
    if undercovers:
        assert misses / trials > (1 - level) + 4 * math.sqrt(level * (1 - level) / trials)


def test_percentile_bootstrap_covers_with_a_few_hundred_documents():
    """300 test documents, each wrong with probability 0.105 (wmd's units): the 95% interval of the error rate misses
    about 6% of the time, a little above its level, as percentile intervals of a skewed mean do at this size. No
    mean of 300 documents equals 0.105, so no interval end ties with the truth (at 0.1 = 30/300 the count of misses
    turns on how the last bit of each mean rounds, which differs between machines)."""
    draw = lambda rng, s: (rng.random(s) < 0.105).astype(float)
    misses = _percentile_misses(300, 0.95, 1000, 2000, draw, 0.105, seed=3)
    assert 0.04 <= misses / 2000 <= 0.07, misses


def test_stratified_bootstrap_coverage():
    """A mean over three data sets of 20, 30 and 200 items, resampled within each: the 95% percentile interval of the
    mean of the three strata's means misses near its nominal rate (a little more with 20 and 30 items a stratum)."""
    sizes, trials, misses, rng = {"a": 20, "b": 30, "c": 200}, 1000, 0, make_rng(4)
    for block in range(trials // 250):
        sb = StratifiedBootstrap(sizes, 1000, seed=[4, block])
        for _ in range(250):
            reps = sb.means({s: rng.exponential(1.0, n) for s, n in sizes.items()}).mean(0)
            lo, hi = percentile_interval(reps[1:])
            misses += not lo <= 1.0 <= hi
    assert _within(misses, trials, 0.05) or 0.05 < misses / trials < 0.08, misses / trials


@pytest.mark.parametrize("n", [5, 6, 7, 8, 9, 10])
def test_t_interval_coverage_on_few_normal_units(n):
    "Student's interval over n = 5..10 normal units misses at its nominal rate at 95% and at the Bonferroni levels."
    X, trials = make_rng(n).normal(size=(n, 100_000)), 100_000
    for level in (0.95, B14, B35):
        lo, hi = mean_interval(X, level=level)
        misses = int(((lo > 0) | (hi < 0)).sum())
        assert _within(misses, trials, 1 - level), (level, misses / trials)


@pytest.mark.parametrize("n,law", [(n, "normal") for n in range(5, 11)] + [(7, "laplace"), (10, "laplace")])
def test_signflip_interval_coverage_is_exact_on_symmetric_units(n, law):
    """Misses at exactly 2k / 2^n <= 1 - level for normal and for heavy-tailed (Laplace) units, and is unbounded where
    k = 0 (below 6 units at 95%, below 10 at 1 - 0.05/14, and to 10 units at 1 - 0.05/35)."""
    rng, trials = make_rng([n, len(law)]), 10_000 if n < 9 else 5_000
    X = rng.normal(size=(n, trials)) if law == "normal" else rng.laplace(size=(n, trials))
    for level in (0.95, B14, B35):
        k = math.floor((1 - level) * 2 ** (n - 1) + 1e-9)
        lo, hi = mean_interval(X, level=level, method="signflip")
        if k == 0:
            assert (lo == -np.inf).all() and (hi == np.inf).all()
            continue
        misses = int(((lo > 0) | (hi < 0)).sum())
        assert 2 * k / 2 ** n <= 1 - level and _within(misses, trials, 2 * k / 2 ** n), (level, misses / trials)
    assert (n >= 6) == np.isfinite(mean_interval(X[:, 0], method="signflip")[0])
    assert (n >= 10) == np.isfinite(mean_interval(X[:, 0], level=B14, method="signflip")[0])


@pytest.mark.parametrize("n", [7, 20, 50, 300, 500])
def test_clopper_pearson_coverage_is_at_least_the_level(n):
    """Computed exactly rather than simulated: for every p on a grid, the chance that the interval of k ~ Bin(n, p)
    covers p, summed over k, is at least the level (7 samples' votes in corpus_distance at 1 - 0.05/14, 200-500
    repeated tests in crossmatch, a few hundred test documents in wmd). Exact intervals are conservative, most so with
    few trials: with 7 at 1 - 0.05/14 the coverage averages 99.95% over p."""
    from scipy.stats import binom
    p = np.linspace(1e-4, 1 - 1e-4, 2001)
    pmf = binom.pmf(np.arange(n + 1)[:, None], n, p[None, :])              # (k, p)
    for level in (0.95, B14, B35):
        ends = np.array([proportion_interval(k, n, level=level) for k in range(n + 1)])
        covered = (ends[:, :1] <= p) & (p <= ends[:, 1:])
        coverage = (pmf * covered).sum(0)
        assert coverage.min() >= level - 1e-9, (level, coverage.min())
        assert (ends[:, 1] - ends[:, 0] < 1).all()                              # never the whole of [0, 1]


@pytest.mark.parametrize("N,cells", [(40, (0.0, 0.1, 0.1, 0.8)), (300, (0.05, 0.03, 0.06, 0.86))])
def test_mcnemar_interval_coverage(N, cells):
    """Newcombe's interval (with the Clopper-Pearson bound where no item is discordant), 1000 paired samples of N items
    (a small claim's 40, a few hundred test documents): misses at most at its nominal 5%, within the simulation's error
    (the lopsided cases are the tests above)."""
    rng, trials, misses = make_rng(N), 1000, 0
    truth = cells[1] - cells[2]
    for counts in rng.multinomial(N, cells, size=trials):
        r = mcnemar_exact(*_paired(*counts))
        misses += not r.low <= truth <= r.high
    assert misses / trials <= 0.05 + 4 * math.sqrt(0.05 * 0.95 / trials), misses / trials


# The levels of corpus_distance's claims over its 7 disjoint samples: 1 - 0.05/m for m conditions (2 to 16 metrics),
# split q ways where a claim is about the smallest of q means (rise-then-fall: 13 metrics x 2; others-lowest-at-K:
# 9 metrics x 14 separations); 35 KSC sets drawn from all samples' pairs (small-corpora-no-saturation, 6 conditions).
PAGE_LEVELS = [1 - 0.05 / m for m in (1, 2, 3, 6, 9, 16, 26, 126)]


@pytest.mark.parametrize("n", [7, 35])
def test_t_interval_coverage_at_the_pages_levels(n):
    "Student's interval over 7 and over 35 normal units misses at its nominal rate at every level corpus_distance uses."
    X, trials = make_rng([n, 1]).normal(size=(n, 50_000)), 50_000
    for level in PAGE_LEVELS:
        lo, hi = mean_interval(X, level=level)
        misses = int(((lo > 0) | (hi < 0)).sum())
        assert _within(misses, trials, 1 - level), (level, misses / trials)


@pytest.mark.parametrize("q", [2, 14])
def test_interval_of_the_smallest_of_q_means_covers(q):
    """The interval Claims.mean gives the smallest of q means (each mean's t interval at the level split q ways, the
    smallest low end to the smallest high end) covers the smallest true mean at least at its level, with 7 units whose
    q quantities are correlated, where the means are equal (the hardest case) and where one is far below the rest."""
    rng, trials, level = make_rng([q, 2]), 20_000, 1 - 0.05 / 9
    for theta in (np.zeros(q), np.r_[-1.0, np.zeros(q - 1)]):
        shared = rng.normal(size=(7, 1, trials))
        X = theta[None, :, None] + 0.6 * shared + 0.8 * rng.normal(size=(7, q, trials))
        lo, hi = mean_interval(X.reshape(7, -1), level=1 - (1 - level) / q)
        lo, hi = lo.reshape(q, trials).min(0), hi.reshape(q, trials).min(0)
        misses = int(((lo > theta.min()) | (hi < theta.min())).sum())
        assert misses / trials <= (1 - level) + 4 * math.sqrt(level * (1 - level) / trials), (theta, misses / trials)


# --- the p-value of a verdict: each interval method inverted, against an independent computation -------------------

REGIONS = [dict(above=0.0), dict(below=0.0), dict(above=-0.3, below=0.3), dict(above=0.2), dict(below=-0.1, above=-0.8)]


def _decides(verdict_at, p_holds, p_fails, alphas):
    """For each α: the verdict at level 1 - α holds exactly when α > p_holds and fails exactly when α >= p_fails
    (α at a p-value itself is a tie, and the random α below never hit one)."""
    for alpha in alphas:
        v = verdict_at(alpha)
        assert (v == "holds") == (alpha > p_holds), (alpha, v, p_holds, p_fails)
        assert (v == "fails") == (alpha >= p_fails), (alpha, v, p_holds, p_fails)


def _alphas(rng, *ps):
    "Random levels and levels just either side of the p-values (where the verdict changes)."
    near = [p * f for p in ps if 1e-6 < p < 1 for f in (1 - 1e-6, 1 + 1e-6) if p * f < 1]
    return [*rng.uniform(1e-4, 0.6, 40), *near]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("region", REGIONS, ids=str)
def test_percentile_p_values_invert_the_percentile_interval(seed, region):
    """The verdict of `percentile_interval(r, level=1 - α)` changes exactly at the p-values; p_holds is twice the
    share of replicates beyond the boundary (scipy's percentileofscore), up to the interpolation between two of them."""
    from scipy.stats import percentileofscore
    rng = make_rng(seed)
    for r in (rng.normal(rng.uniform(-0.5, 0.5), 0.3, 3001),                    # continuous replicates
              np.round(rng.normal(rng.uniform(-0.5, 0.5), 0.3, 2000) * 20) / 20):  # ties, some on the boundary
        p_holds, p_fails = percentile_p_values(r, **region)
        assert min(p_holds, p_fails) == 1.0 or max(p_holds, p_fails) == 1.0      # at most one verdict is ever reached
        _decides(lambda a: interval_verdict(*percentile_interval(r, level=1 - a), **region), p_holds, p_fails,
                 _alphas(rng, p_holds, p_fails))
        if list(region) == ["above"]:
            share = percentileofscore(r, region["above"], kind="weak") / 100          # replicates <= the boundary
            assert abs(p_holds - min(1.0, 2 * share)) <= 2 / (len(r) - 1) + 1e-12


def test_percentile_p_values_with_infinite_and_single_replicates():
    r = np.r_[np.full(10, -np.inf), np.linspace(-1, 3, 980), np.full(10, np.inf)]
    for region in REGIONS:
        p_holds, p_fails = percentile_p_values(r, **region)
        _decides(lambda a: interval_verdict(*percentile_interval(r, level=1 - a), **region), p_holds, p_fails,
                 _alphas(make_rng(0), p_holds, p_fails))
    assert percentile_p_values([0.5], above=0) == (0.0, 1.0) and percentile_p_values([-0.5], above=0) == (1.0, 0.0)
    with pytest.raises(ValueError, match="NaN"): percentile_p_values([0.1, np.nan], above=0)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("region", REGIONS, ids=str)
def test_mean_p_values_are_scipys_one_sample_t_test(seed, region):
    "For one boundary the p-value of the t interval's verdict is scipy's two-sided one-sample t test at that boundary."
    from scipy.stats import ttest_1samp
    rng = make_rng(seed)
    x = rng.normal(rng.uniform(-0.6, 0.6), 0.5, rng.integers(3, 40))
    p_holds, p_fails = mean_p_values(x, **region)
    _decides(lambda a: interval_verdict(*mean_interval(x, level=1 - a), **region), p_holds, p_fails, _alphas(rng, p_holds, p_fails))
    ends = [m for m in region.values()]
    if len(ends) == 1:
        assert math.isclose(min(p_holds, p_fails), ttest_1samp(x, ends[0]).pvalue, rel_tol=1e-9)
    else:                                   # two ends: holds needs both, fails either one
        p = {m: ttest_1samp(x, m).pvalue for m in ends}       # fails: beyond the end the mean lies beyond
        lo, hi = region["above"], region["below"]
        expect = max(p.values()) if lo < x.mean() < hi else p[hi] if x.mean() >= hi else p[lo]
        assert math.isclose(min(p_holds, p_fails), expect, rel_tol=1e-9)


@pytest.mark.parametrize("n", [4, 7, 10])
@pytest.mark.parametrize("region", REGIONS, ids=str)
def test_mean_p_values_are_the_sign_flip_test_enumerated(n, region):
    """The sign-flip p-value is twice scipy's exact one-sided sign-flip test (every one of the 2^n flips) of the
    boundary, and the sign-flip interval's verdict changes exactly there."""
    from scipy.stats import permutation_test
    rng = make_rng(n)
    x = rng.normal(rng.uniform(-0.5, 0.5), 0.4, n)
    p_holds, p_fails = mean_p_values(x, method="signflip", **region)
    _decides(lambda a: interval_verdict(*mean_interval(x, level=1 - a, method="signflip"), **region), p_holds, p_fails,
             _alphas(rng, p_holds, p_fails))
    one_sided = lambda m, alternative: permutation_test((x - m,), np.mean, permutation_type="samples", n_resamples=np.inf,
                                                        alternative=alternative).pvalue
    if "above" in region and len(region) == 1:
        m = region["above"]
        assert math.isclose(p_holds, min(1.0, 2 * one_sided(m, "greater")), rel_tol=1e-12)
        assert math.isclose(p_fails, min(1.0, 2 * one_sided(m, "less")), rel_tol=1e-12)


def test_mean_p_values_of_columns_and_of_their_smallest_mean():
    "Per column the p-values are each column's own; for the smallest mean, the q column intervals at α / q combined."
    rng = make_rng(11)
    X = rng.normal([0.6, 0.9, 0.4], 0.5, (15, 3))
    p_holds, p_fails = mean_p_values(X, above=0.1)
    for j in range(3): assert (p_holds[j], p_fails[j]) == mean_p_values(X[:, j], above=0.1)
    ph, pf = mean_p_values(X, above=0.1, columns="smallest")
    def verdict_at(a):
        lo, hi = mean_interval(X, level=1 - a / 3)
        return interval_verdict(lo.min(), hi.min(), above=0.1)
    _decides(verdict_at, ph, pf, _alphas(rng, ph, pf))
    with pytest.raises(ValueError, match="columns must be one of"): mean_p_values(X, above=0, columns="all")


def _paired_tables(rng):
    "Random (correct_a, correct_b) pairs, lopsided and balanced, with and without disagreements."
    for _ in range(6):
        n = int(rng.integers(30, 600))
        a = rng.random(n) < rng.uniform(0.5, 0.95)
        b = np.where(rng.random(n) < rng.uniform(0.7, 0.98), a, ~a)
        yield a, b
    yield np.ones(200, bool), np.ones(200, bool)
    a = np.r_[np.ones(150, bool), np.zeros(50, bool)]; yield a, a.copy()


@pytest.mark.parametrize("region", [dict(below=0.0), dict(above=0.0), dict(above=-0.02, below=0.02), dict(below=-0.05)],
                         ids=str)
def test_paired_p_values_invert_mcnemar_exacts_interval(region):
    """The verdict of `mcnemar_exact(a, b, level=1 - α)`'s interval changes exactly at the p-values (up to the
    bisection's precision); for one boundary the p-value is also found by scipy's brentq on the level at which the
    public interval's end reaches the boundary."""
    from scipy.optimize import brentq
    rng = make_rng(3)
    for a, b in _paired_tables(rng):
        p_holds, p_fails = paired_p_values(a, b, **region)
        verdict_at = lambda al: (lambda r: interval_verdict(r.low, r.high, **region))(mcnemar_exact(a, b, level=1 - al))
        _decides(verdict_at, p_holds, p_fails, [al for al in _alphas(rng) if min(abs(al - p_holds), abs(al - p_fails)) > 1e-9])
        for p in (p_holds, p_fails):
            if 1e-9 < p < 1:
                assert verdict_at(p * (1 - 1e-7)) == "undecided" != verdict_at(min(p * (1 + 1e-7), 0.999999))
        if len(region) == 1 and mcnemar_exact(a, b).only_a_wrong + mcnemar_exact(a, b).only_b_wrong:
            (side, m), = region.items()
            r = mcnemar_exact(a, b, level=1e-12)                          # the interval at level ~0: the point estimate
            end = "low" if r.difference > m else "high"                   # the end that crosses m as the level grows
            reach = lambda al: getattr(mcnemar_exact(a, b, level=1 - al), end) - m
            if reach(1e-15) * reach(1 - 1e-12) < 0:
                root = brentq(reach, 1e-15, 1 - 1e-12, xtol=1e-15, rtol=1e-12)
                assert math.isclose(min(p_holds, p_fails), root, rel_tol=1e-6, abs_tol=1e-12), (root, p_holds, p_fails)


@pytest.mark.parametrize("scope", ["every", "some", "most"])
@pytest.mark.parametrize("k", [1, 2, 3, 6])
def test_combined_p_values_are_combined_verdicts_at_the_bonferroni_level(scope, k):
    "The combined verdict of k percentile intervals, each at 1 - α/k, changes exactly at the combined p-values."
    rng = make_rng(10 * k + len(scope))
    reps = [rng.normal(rng.uniform(-0.4, 0.6), 0.25, 1500) for _ in range(k)]
    pairs = [percentile_p_values(r, above=0.0) for r in reps]
    p_holds, p_fails = combined_p_values(pairs, scope=scope)
    verdict_at = lambda a: combined_verdict([interval_verdict(*percentile_interval(r, level=1 - a / k), above=0.0)
                                             for r in reps], scope=scope)
    _decides(verdict_at, p_holds, p_fails, _alphas(rng, p_holds, p_fails))


def test_bootstrap_replicates_are_bootstrap_intervals_resamples():
    x, y = make_rng(4).normal(size=(2, 50))
    stats = {"diff": lambda a, b: a.mean() - b.mean(), "a": lambda a, b: a.mean()}
    drawn, intervals = bootstrap_replicates(stats, x, y, n_boot=1000, seed=2), bootstrap_intervals(stats, x, y, n_boot=1000, seed=2)
    for name, (est, r) in drawn.items():
        assert r.shape == (1000,) and (est, *percentile_interval(r)) == intervals[name]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("method", ["bh", "by"])
def test_fdr_rejections_are_statsmodels_multipletests(seed, method):
    from statsmodels.stats.multitest import multipletests
    rng = make_rng(seed)
    T = int(rng.integers(1, 60))
    p = np.r_[rng.uniform(0, 1, T // 2) ** 4, rng.uniform(0, 1, T - T // 2)]
    p[rng.integers(0, T, 3)] = p[0]                                  # ties
    for q in (0.05, 0.1, 0.2):
        ours = fdr_rejections(p, q=q, method=method)
        theirs = multipletests(p, alpha=q, method=f"fdr_{method}")[0]
        assert (ours == theirs).all(), (q, p[ours != theirs])


def test_fdr_rejections_errors():
    with pytest.raises(ValueError, match="method must be one of"): fdr_rejections([0.1], method="holm")
    with pytest.raises(ValueError, match="q must be"): fdr_rejections([0.1], q=0)
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"): fdr_rejections([1.5])


@pytest.mark.parametrize("k,n", [(0, 7), (3, 7), (7, 7), (12, 40), (33, 40), (250, 1000)])
@pytest.mark.parametrize("region", [dict(above=0.5), dict(below=0.05), dict(above=0.2, below=0.4)], ids=str)
def test_proportion_p_values_invert_the_clopper_pearson_interval(k, n, region):
    "The verdict of `proportion_interval(k, n, level=1 - α)` changes at the p-values: twice scipy's one-sided binomtest."
    from scipy.stats import binomtest
    p_holds, p_fails = proportion_p_values(k, n, **region)
    _decides(lambda a: interval_verdict(*proportion_interval(k, n, level=1 - a), **region), p_holds, p_fails,
             _alphas(make_rng(k), p_holds, p_fails))
    if list(region) == ["above"]:
        m = region["above"]
        assert math.isclose(p_holds, min(1.0, 2 * binomtest(k, n, m, alternative="greater").pvalue), rel_tol=1e-9)
        assert math.isclose(p_fails, min(1.0, 2 * binomtest(k, n, m, alternative="less").pvalue), rel_tol=1e-9)
