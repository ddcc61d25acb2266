"""core: seeding, parallel map on every backend, the crash-safe array cache, records."""
import os, signal, subprocess, sys, textwrap, time

import numpy as np
import pytest

from embeval_nb.core import (cache_key, cached_array, make_rng, parallel_map, read_records, record,
                             save_array_atomic)


def _square(x):
    return x * x


def test_make_rng_repeats_for_a_seed():
    assert np.array_equal(make_rng(7).normal(size=5), make_rng(7).normal(size=5))
    assert not np.array_equal(make_rng(7).normal(size=5), make_rng(8).normal(size=5))


def test_jit_caches_module_code_but_not_main(tmp_path):
    """A kernel from a notebook cell or script (`__main__`) must not be cached: numba keys a cached function by
    its own source, so it would keep running an edited callee's old code."""
    script = tmp_path / "kernel.py"
    script.write_text("from embeval_nb.core import jit\n@jit\ndef plus_one(x):\n    return x + 1\n"
                      "assert plus_one(1) == 2\nprint(type(plus_one._cache).__name__)\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True,
                         env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")})
    assert out.stdout.strip() == "NullCache"
    from embeval_nb import wmd
    module_kernels = [f for f in vars(wmd).values() if type(f).__name__ == "CPUDispatcher"]
    assert module_kernels and all(type(f._cache).__name__ == "FunctionCache" for f in module_kernels)


@pytest.mark.parametrize("n_jobs,backend", [(1, None), (2, None), (2, "threading")])
def test_parallel_map_keeps_order(n_jobs, backend):
    assert parallel_map(_square, range(20), n_jobs=n_jobs, backend=backend) == [i * i for i in range(20)]


def test_parallel_map_on_dask_cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        assert parallel_map(_square, range(10), n_jobs=2, backend="dask") == [i * i for i in range(10)]


def test_cache_key_is_stable_and_distinguishes():
    assert cache_key("a", 1) == cache_key("a", 1) != cache_key("a", 2)


def test_cached_array_computes_once(tmp_path):
    calls = []
    f = lambda: calls.append(1) or np.arange(4.0)
    np.testing.assert_array_equal(cached_array("x", f, directory=tmp_path), np.arange(4.0))
    np.testing.assert_array_equal(cached_array("x", f, directory=tmp_path), np.arange(4.0))
    assert calls == [1]


def test_failed_write_leaves_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "a.npy"
    save_array_atomic(target, np.arange(3))

    def broken_save(f, arr):
        f.write(b"\x93NUMPY partial")
        raise OSError("disk full")

    monkeypatch.setattr(np, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        save_array_atomic(target, np.arange(10))
    monkeypatch.undo()
    np.testing.assert_array_equal(np.load(target), np.arange(3))
    assert [p.name for p in tmp_path.iterdir()] == ["a.npy"]


def test_cache_survives_a_killed_writer(tmp_path):
    """SIGKILL a process in the middle of writing a 400 MB array: the cache then holds either nothing or the
    complete array, never a truncated file that a later run would load."""
    script = textwrap.dedent(f"""
        import numpy as np, sys
        from embeval_nb.core import cached_array
        print("start", flush=True)
        cached_array("big", lambda: np.ones(50_000_000), directory={str(tmp_path)!r})
        print("done", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "start"
    deadline = time.time() + 60
    while time.time() < deadline and not any(p.suffix == ".tmp" for p in tmp_path.iterdir()):
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL); proc.wait()
    final = tmp_path / "big.npy"
    finished = final.exists()
    if finished:  # the writer won the race: the file must be whole
        assert np.load(final).shape == (50_000_000,)
    else:  # killed mid-write: only the temporary file is left
        assert any(p.suffix == ".tmp" for p in tmp_path.iterdir())
    calls = []
    out = cached_array("big", lambda: calls.append(1) or np.ones(50_000_000), directory=tmp_path)
    assert out.shape == (50_000_000,) and out.sum() == 50_000_000
    assert calls == ([] if finished else [1])


def test_record_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEVAL_RECORD_FILE", str(tmp_path / "r.json"))
    record("err", np.float32(0.5)); record("table", {"a": np.arange(2)})
    assert read_records() == {"err": 0.5, "table": {"a": [0, 1]}}


# --- points, metrics, normalisation -------------------------------------------------------------

from embeval_nb.core import (Claims, PairedErrors, as_points, bootstrap_interval, check_metric, proportion_interval,
                             interval_verdict, mcnemar_exact, normalize_rows, combined_verdict)


def test_as_points_converts_and_keeps_values():
    X = as_points([[1, 2], [3, 4]])
    assert X.dtype == np.float64 and X.flags.c_contiguous and X.tolist() == [[1, 2], [3, 4]]
    F = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    assert as_points(F).flags.c_contiguous and np.array_equal(as_points(F), F)
    assert as_points(np.zeros((0, 3))).shape == (0, 3)
    assert as_points(np.ones((2, 2)), dtype=np.float32).dtype == np.float32


@pytest.mark.parametrize("bad,msg", [(None, "Y is None"), (np.ones(3), r"shape \(3,\)"), (np.ones((1, 2, 2)), "2-D"),
                                     ([["a", "b"]], "numeric"), ([[1.0, np.inf]], "row 0"),
                                     ([[0.0, 1.0], [np.nan, 0.0]], "row 1"), (np.ones((1, 2), complex), "numeric")])
def test_as_points_names_the_problem(bad, msg):
    with pytest.raises(ValueError, match=msg):
        as_points(bad, "Y")


def test_as_points_min_rows_and_nonfinite_opt_out():
    with pytest.raises(ValueError, match="at least 2 rows"):
        as_points(np.ones((1, 3)), min_rows=2)
    assert np.isnan(as_points([[np.nan]], finite=False)).all()


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


# --- claims ------------------------------------------------------------------------------------

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


def test_mcnemar_edge_cases():
    a = np.ones(10, bool)
    same = mcnemar_exact(a, a)
    assert isinstance(same, PairedErrors) and same.p_value == 1 and same.difference == 0
    assert same.low == -same.high and same.high == pytest.approx(1 - 0.025 ** (1 / 10))   # Clopper-Pearson, 0 of 10
    all_disagree = mcnemar_exact(a, ~a)
    assert all_disagree.difference == -1 and all_disagree.low == -1 and all_disagree.high < 0
    for x, y in [(a, a[:5]), (a.astype(int), a), (np.ones((2, 2), bool), np.ones((2, 2), bool))]:
        with pytest.raises(ValueError, match="boolean vectors of one length"):
            mcnemar_exact(x, y)
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
    with pytest.raises(ValueError, match="low <= high"):          # an undefined statistic stays an error
        interval_verdict(*bootstrap_interval(lambda u: np.nan, np.ones(5))[1:], above=0)


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


def test_claims_records_and_rejects_unknown_verdicts(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEVAL_RECORD_FILE", str(tmp_path / "r.json"))
    cl = Claims("demo")
    a = np.array([True] * 95 + [False] * 5); b = np.array([True] * 60 + [False] * 40)
    c = cl.paired_errors("a-better", "A beats B", a, b, paper="5 vs 40")
    assert c.verdict == "holds" and "exact McNemar on 100 paired items" in c.test
    assert cl.paired_errors("b-better", "B beats A", a, b, paper="", claim="b_better").verdict == "fails"
    cl.interval("r", "r > 0.5", 0.6, 0.4, 0.8, paper=0.9, above=0.5)
    cl.add("text", "qualitative", paper="yes", ours="no", verdict="fails", test="read off Figure 2")
    with pytest.raises(ValueError, match="verdict must be one of"):
        cl.add("x", "s", paper=1, ours=1, verdict="true", test="")
    recs = read_records()["demo/claims"]
    assert [r["key"] for r in recs] == ["a-better", "b-better", "r", "text"]
    assert recs[2]["verdict"] == "undecided" and recs[2]["paper"] == "0.9"
    assert list(cl.frame().columns) == ["statement", "paper", "ours", "verdict", "test"]
    html = cl.table().to_html()
    assert "white-space: normal" in html and all(c.test in html for c in cl.items.values())


# --- the paper's numbers ----------------------------------------------------------------------

from embeval_nb.core import paper_tables, paper_value, parse_paper_table


def test_parse_paper_table_keeps_cells_as_printed():
    t = parse_paper_table("| language | mean A1 |\n|---|---|\n| French | 23.76 |\n| Maltese | - |")
    assert t.index.name == "language" and t.loc["French", "mean A1"] == "23.76" and t.loc["Maltese"].item() == "-"
    for bad, msg in [("", "header line"), ("a | b", "header line"), ("a | b\nx | 1 | 2", "different number")]:
        with pytest.raises(ValueError, match=msg):
            parse_paper_table(bad)


@pytest.mark.parametrize("cell,value", [("3.9±1.1", 3.9), ("44.1", 44.1), ("4.93e-26", 4.93e-26), ("~0.95", 0.95),
                                        (" 12.5% ", 12.5), ("≈.5", 0.5)])
def test_paper_value(cell, value):
    assert paper_value(cell) == value


def test_paper_value_rejects_text_and_maps_dashes_to_nan():
    assert np.isnan(paper_value("-")) and np.isnan(paper_value(""))
    with pytest.raises(ValueError, match="holds no number"):
        paper_value("n/a")


def test_every_chapter_file_parses():
    from pathlib import Path
    import embeval_nb
    files = sorted((Path(embeval_nb.__file__).parent / "papers").glob("*.md"))
    for f in files:
        tables = paper_tables(f.stem)
        assert tables and all(len(t) for t in tables.values()), f
    with pytest.raises(FileNotFoundError, match="no paper numbers for chapter 'nope'"):
        paper_tables("nope")


@pytest.mark.parametrize("bad", [2.0, "2", True, None, np.float64(2), [2]])
def test_check_int_rejects_what_is_not_an_integer(bad):
    from embeval_nb.core import check_int
    with pytest.raises(TypeError, match=r"^k must be an integer, got "):
        check_int(bad, "k")


def test_check_int_and_n_jobs_ranges():
    from embeval_nb.core import check_int, check_n_jobs
    assert [check_int(v, "k", low=1, high=3) for v in (1, np.int64(3), np.uint8(2))] == [1, 3, 2]
    with pytest.raises(ValueError, match=r"k must be an integer in 1\.\.3, got 4"):
        check_int(4, "k", low=1, high=3)
    with pytest.raises(ValueError, match="size must be an integer <= 10, got 11"):
        check_int(11, "size", high=10)
    assert [check_n_jobs(v) for v in (None, 1, 4, -1, -2)] == [1, 1, 4, -1, -2]
    with pytest.raises(ValueError, match="n_jobs must be a positive number of workers or negative"):
        check_n_jobs(0)
    with pytest.raises(TypeError, match="n_jobs must be an integer"):
        check_n_jobs("2")


def test_power_of_two_scale_is_exact_and_leaves_ordinary_input_alone():
    from embeval_nb.core import power_of_two_scale
    for x in (1e-120, 0.0, 1.0, 3e7, 1e120):
        assert power_of_two_scale(x) == 0
    rng = np.random.default_rng(0)
    for big in (1e-300, 1e-200, 1e154, 1e200, 1e307):
        A = rng.normal(size=(5, 3)) * big
        k = power_of_two_scale(float(np.abs(A).max()))
        B = np.ldexp(A, -k)
        assert 2.0 ** 399 <= np.abs(B).max() < 2.0 ** 400 and np.array_equal(np.ldexp(B, k), A)   # exact both ways
        assert np.isfinite(((B[:, None] - B[None]) ** 2).sum(-1)).all()
    with pytest.raises(ValueError, match="largest must be finite"):
        power_of_two_scale(float("inf"))
