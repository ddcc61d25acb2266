"""core: the parallel map on every backend, jit's caching rule, records (several processes and threads recording into
one file at once lose nothing, the file follows the umask), the claims table, the p-value each method gives its
verdict (below 0.05 exactly when it decides, and the stats page's inversion of its interval), the false-discovery
reading of a chapter's claims, and the paper's numbers.
The shared helpers that moved out of core are tested in files of their own: test_cache.py, test_checks.py,
test_stats.py, test_metrics.py and test_neighbours.py."""
import os, subprocess, sys, textwrap
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from embeval_nb.core import Claims, paper_tables, paper_value, parallel_map, parse_paper_table, read_records, record
from test_cache import modes_under, run_at_once                # several processes at once; modes under a umask


def _square(x):
    return x * x


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

_FIRST_CALL = ("import numpy as np\nfrom embeval_nb.retrofit import retrofit\n"
               "for _ in range(2): retrofit(np.eye(3), ['a', 'b', 'c'], {'a': ['b']})\n")


@pytest.mark.parametrize("progress", ["1", "0"])
def test_a_kernel_compile_is_announced_once_and_never_from_the_cache(tmp_path, progress):
    "A cache miss prints one line on stderr (unless progress output is off); a cache hit prints nothing."
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "EMBEVAL_PROGRESS": progress}
    run = lambda: subprocess.run([sys.executable, "-c", _FIRST_CALL], env=env, capture_output=True, text=True, check=True)
    first, second = run(), run()
    assert first.stderr.count("compiling numba kernels") == (progress == "1"), first.stderr
    assert "compiling" not in second.stderr, second.stderr



@pytest.mark.parametrize("n_jobs,backend", [(1, None), (2, None), (2, "threading")])
def test_parallel_map_keeps_order(n_jobs, backend):
    assert parallel_map(_square, range(20), n_jobs=n_jobs, backend=backend) == [i * i for i in range(20)]


def test_parallel_map_on_dask_cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        assert parallel_map(_square, range(10), n_jobs=2, backend="dask") == [i * i for i in range(10)]


# --- records and claims ---------------------------------------------------------------------------

def test_record_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEVAL_RECORD_FILE", str(tmp_path / "r.json"))
    record("err", np.float32(0.5)); record("table", {"a": np.arange(2)})
    assert read_records() == {"err": 0.5, "table": {"a": [0, 1]}}


_RECORDING = textwrap.dedent("""
    import os
    from embeval_nb.core import record
    def work(i, path, n):
        os.environ["EMBEVAL_RECORD_FILE"] = path
        for k in range(int(n)): record(f"p{i}/{k}", [int(i), k])
""")


def test_processes_recording_into_one_file_at_once_lose_nothing(tmp_path):
    """Three processes record 100 numbers each into one file at once while this one reads it without a lock: every
    read is a whole file holding all that the read before it held, and at the end all 300 records are there."""
    path, seen = tmp_path / "r.json", {}
    with ThreadPoolExecutor(1) as pool:
        writers = pool.submit(run_at_once, _RECORDING, 3, path, 100)
        while not writers.done():
            now = read_records(path)
            assert now.items() >= seen.items(), "a record disappeared"
            seen = now
        writers.result()
    assert read_records(path) == {f"p{i}/{k}": [i, k] for i in range(3) for k in range(100)}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r.json.lock"]     # no temporary file is left


def test_threads_recording_into_one_file_at_once_lose_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEVAL_RECORD_FILE", str(tmp_path / "r.json"))
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda k: record(f"t/{k}", k), range(80)))
    assert read_records() == {f"t/{k}": k for k in range(80)}


_BY_HAND = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    import platformdirs
    platformdirs.user_data_path = lambda app: Path(sys.argv[1]) / app      # the user's data folder, here a scratch one
    for k in ("EMBEVAL_RECORD_FILE", "EMBEVAL_RECORD_DIR"): os.environ.pop(k, None)
    from embeval_nb.core import Claims, read_records, record, record_file
    record(f"by-hand/{sys.argv[2]}", 1)
    Claims("by-hand").add(sys.argv[2], "a claim", paper="-", ours="-", verdict="holds", test="t", unit="u",
                        on_alternative="holds", on_counterexample="fails")
    print(record_file().name, sorted(read_records()))
""")


def test_runs_by_hand_each_record_into_a_file_of_their_own_and_say_where(tmp_path):
    """Without `$EMBEVAL_RECORD_FILE` or `$EMBEVAL_RECORD_DIR` (a page or `Claims` run by hand), each process writes its
    own file `run-<date>-<time>-<pid>.json` in the user's records folder, says so once on stderr, and two runs never
    put their keys into one file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EMBEVAL_RECORD")}
    runs = [subprocess.run([sys.executable, "-c", _BY_HAND, str(tmp_path), name], capture_output=True, text=True,
                           env=env, check=True) for name in ("first", "second")]
    folder = tmp_path / "embeval" / "records"
    files = sorted(p.name for p in folder.glob("run-*.json"))
    assert len(files) == 2 and all(f.endswith(".json") for f in files), sorted(p.name for p in folder.iterdir())
    for run, name in zip(runs, ("first", "second")):
        file, keys = run.stdout.split(" ", 1)
        assert file in files and keys.strip() == str(["by-hand/claims", f"by-hand/{name}"])
        assert run.stderr == f"embeval: this run's records go to {folder / file} (set EMBEVAL_RECORD_DIR to choose the folder)\n"


def test_a_named_record_folder_is_shared_by_the_runs_that_name_it(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("EMBEVAL_RECORD_FILE", raising=False); monkeypatch.setenv("EMBEVAL_RECORD_DIR", str(tmp_path))
    record("a", 1); record("b", 2)
    assert read_records(tmp_path / "records.json") == {"a": 1, "b": 2} and capsys.readouterr().err == ""


@pytest.mark.parametrize("umask", [0o022, 0o077], ids=oct)
def test_the_record_file_follows_the_umask(tmp_path, umask):
    script = ("import json, os, sys; os.environ['EMBEVAL_RECORD_FILE'] = f'{sys.argv[1]}/r.json'\n"
              "from embeval_nb.core import record, record_file; record('x', 1)\n"
              "print(json.dumps({'records': str(record_file()), 'lock': str(record_file()) + '.lock'}))")
    assert modes_under(umask, script, tmp_path) == {"records": 0o666 & ~umask, "lock": 0o666 & ~umask}


def test_a_scratch_set_of_claims_records_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEVAL_RECORD_FILE", str(tmp_path / "r.json"))
    scratch = Claims("demo", recorded=False)
    c = scratch.interval("r", "r > 0.5", 0.6, 0.55, 0.8, paper=0.9, above=0.5, unit="query", counterexample=(0.1, 0.3))
    assert c.verdict == "holds" and list(scratch.items) == ["r"] and "demo/claims" not in read_records()


def test_claims_records_and_rejects_unknown_verdicts(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEVAL_RECORD_FILE", str(tmp_path / "r.json"))
    cl = Claims("demo")
    a = np.array([True] * 95 + [False] * 5); b = np.array([True] * 60 + [False] * 40)
    c = cl.paired_errors("a-better", "A beats B", a, b, paper="5 vs 40", counterexample=(b, a))
    assert c.verdict == "holds" and "100 paired items" in c.test and "Newcombe 95% interval" in c.test
    assert cl.paired_errors("b-better", "B beats A", a, b, paper="", claim="b_better", counterexample=(a, b)).verdict == "fails"
    cl.interval("r", "r > 0.5", 0.6, 0.4, 0.8, paper=0.9, above=0.5, unit="query", counterexample=(0.1, 0.3),
                alternative=(0.7, 0.9))
    cl.add("text", "qualitative", paper="yes", ours="no", verdict="fails", test="read off Figure 2", unit="figure",
           on_alternative="holds", on_counterexample="fails")
    with pytest.raises(ValueError, match="verdict must be one of"):
        cl.add("x", "s", paper=1, ours=1, verdict="true", test="", unit="u", on_alternative="holds", on_counterexample="fails")
    recs = read_records()["demo/claims"]
    assert [r["key"] for r in recs] == ["a-better", "b-better", "r", "text"]
    assert recs[2]["verdict"] == "undecided" and recs[2]["paper"] == "0.9"
    assert list(cl.frame().columns) == ["statement", "paper", "ours", "verdict", "test", "unit", "p"]
    assert "<th>p</th>" not in cl.table().to_html() and recs[3]["p"] is None and 0 < recs[0]["p"] < 0.05
    assert recs[0]["unit"] == "test item" and recs[2]["unit"] == "query"
    html = cl.table().to_html()
    assert "white-space: normal" in html and all(c.test in html for c in cl.items.values())


# --- the paper's numbers ----------------------------------------------------------------------

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


# --- the rules a claim follows ---------------------------------------------------------------

def _claims(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEVAL_RECORD_FILE", str(tmp_path / "r.json"))
    return Claims("demo")


def test_a_statistic_bounded_to_the_claimed_side_is_refused(tmp_path, monkeypatch):
    "Last point minus the largest point is never positive: 'it falls' could not fail, on any data."
    cl, rng = _claims(tmp_path, monkeypatch), np.random.default_rng(0)
    for data in (rng.normal(size=(30, 8)), np.cumsum(rng.normal(size=(30, 8)), 1), -np.cumsum(rng.random((30, 8)), 1)):
        with pytest.raises(ValueError, match="could not fail"):
            cl.bootstrap("fall", "falls at the end", lambda T: T.mean(0)[-1] - T.mean(0).max(), data,
                         counterexample=np.cumsum(rng.random((30, 8)), 1), paper="-", unit="run", below=0)
    assert "fall" not in cl.items



# --- a claim's test must be able to come out otherwise ------------------------------------------------

def test_a_test_without_power_is_untestable(tmp_path, monkeypatch):
    """Seven units at the Bonferroni level over 14 metrics: the Clopper-Pearson interval of a share is [0.405, 1]
    at 7 of 7 and [0, 0.595] at 0 of 7, so "share > 1/2" can neither hold nor fail: the claim is untestable, kept
    with what its test read, and counted apart from the undecided ones."""
    from embeval_nb.core import CLAIM_VERDICTS
    from embeval_nb.stats import VERDICTS, bonferroni_level, interval_verdict, proportion_interval
    cl = _claims(tmp_path, monkeypatch)
    cp = lambda k, n, m: interval_verdict(*proportion_interval(k, n, level=bonferroni_level(m)), above=0.5)
    c = cl.add("share", "share > 1/2", paper="-", ours="6/7", verdict=cp(6, 7, 14), test="Clopper-Pearson", unit="sample",
               on_alternative=cp(7, 7, 14), on_counterexample=cp(0, 7, 14))
    assert c.verdict == "untestable" and "reads undecided here" in c.test and "cannot reach 'holds' or 'fails'" in c.test
    c = cl.add("share", "share > 1/2", paper="-", ours="6/7", verdict=cp(6, 7, 1), test="Clopper-Pearson", unit="sample",
               on_alternative=cp(7, 7, 1), on_counterexample=cp(0, 7, 1))
    assert c.verdict == "undecided" and "untestable" not in c.test   # at 95% seven of seven decide: a real 'undecided'
    assert "untestable" in CLAIM_VERDICTS and [v for v in CLAIM_VERDICTS if v != "untestable"] == list(VERDICTS)


@pytest.mark.filterwarnings("ignore::embeval_nb.stats.ResampleWarning")   # few resamples, for speed
def test_the_same_bootstrap_runs_on_the_alternative_and_the_counterexample(tmp_path, monkeypatch):
    "The alternative and the counterexample are tested with the claim's own resamples, level and scope."
    cl, rng = _claims(tmp_path, monkeypatch), np.random.default_rng(5)
    x = rng.normal(0.05, 1, 20)
    ok = cl.bootstrap("m", "mean > 0", np.mean, x, counterexample=x - 3, alternative=x + 3, paper="-", unit="run",
                      above=0, n_boot=1000)
    assert ok.verdict == "undecided" and "untestable" not in ok.test and "power" not in ok.test
    weak = cl.bootstrap("m", "mean > 0", np.mean, x, counterexample=x - 3, alternative=x + 0.1, paper="-", unit="run",
                        above=0, n_boot=1000)
    assert weak.verdict == "untestable" and "'undecided' on its alternative" in weak.test and "'fails'" not in weak.test
    near = cl.bootstrap("m", "mean > 0", np.mean, x, counterexample=x - 0.2, alternative=x + 3, paper="-", unit="run",
                        above=0, n_boot=1000)
    assert near.verdict == "untestable" and "cannot reach 'fails'" in near.test
    stats = {f"c{j}": (lambda X, j=j: X[:, j].mean()) for j in range(14)}     # 14 conditions of 7 units: Bonferroni
    X = rng.normal(1, 1, (7, 14))
    c = cl.bootstrap("all", "every mean > 0", stats, X, counterexample=X - X.mean(0) - 0.3, alternative=X + 2, paper="-",
                     unit="sample", above=0, n_boot=1000)
    assert c.verdict == "untestable" and "cannot reach 'fails'" in c.test   # 'every': fails needs a decided condition


def test_without_an_alternative_the_row_says_so(tmp_path, monkeypatch):
    "A claim that holds shows by itself that its test can hold; any other says that its power to hold is not shown."
    cl, rng = _claims(tmp_path, monkeypatch), np.random.default_rng(6)
    x = rng.normal(1, 1, 50)
    assert "power" not in cl.bootstrap("m", "mean > 0", np.mean, x, counterexample=-x, paper="-", unit="run", above=0,
                                       n_boot=1000).test
    c = cl.bootstrap("m", "mean < 0", np.mean, x, counterexample=x + 3, paper="-", unit="run", below=0, n_boot=1000)
    assert c.verdict == "fails" and c.test.endswith("no alternative stated, so its power to hold is not shown")


@pytest.mark.parametrize("plain, corrected, expected", [
    (["holds", "holds"], ["undecided", "undecided"], "holds"),      # every condition at 95%: no correction to hold
    (["holds", "fails"], ["holds", "undecided"], "undecided"),      # one fails at 95% only: chance among many
    (["holds", "fails"], ["undecided", "fails"], "fails"),          # one fails at the corrected level
    (["holds", "undecided"], ["undecided", "undecided"], "undecided"), ([], [], "undecided")])
def test_every_condition_is_an_intersection_union_test(plain, corrected, expected):
    from embeval_nb.core import every_verdict
    assert every_verdict(plain, corrected) == expected


def test_every_verdict_needs_one_reading_per_condition():
    from embeval_nb.core import every_verdict
    with pytest.raises(ValueError, match="one verdict per condition, got 2 and 1"):
        every_verdict(["holds", "holds"], ["holds"])

@pytest.mark.filterwarnings("ignore::embeval_nb.stats.ResampleWarning")   # few resamples, for speed
def test_a_test_that_holds_on_its_counterexample_is_refused(tmp_path, monkeypatch):
    "Where the claim is false its own test must not read 'holds': every method refuses it, before recording."
    cl = _claims(tmp_path, monkeypatch)
    with pytest.raises(ValueError, match="its own test reads 'holds'"):
        cl.add("a", "a", paper="-", ours="-", verdict="holds", test="t", unit="u", on_alternative="holds",
               on_counterexample="holds")
    with pytest.raises(ValueError, match="its own test reads 'holds'"):
        cl.interval("b", "b > 0", 0.3, 0.1, 0.5, paper="-", unit="u", above=0, counterexample=(0.05, 0.2))
    biased = np.random.default_rng(7).normal(0.3, 0.01, 500)        # replicates far from a biased estimate
    with pytest.raises(ValueError, match="its own test reads 'holds'"):
        cl.replicated("c", "c > -0.1", 0.1, biased, counterexample=-0.2, paper="-", unit="word", above=-0.1)
    a = np.array([True] * 95 + [False] * 5); b = np.array([True] * 60 + [False] * 40)
    with pytest.raises(ValueError, match="its own test reads 'holds'"):
        cl.paired_errors("d", "A beats B", a, b, paper="-", counterexample=(a, b))
    with pytest.raises(ValueError, match="on_counterexample must be one of"):
        cl.add("e", "e", paper="-", ours="-", verdict="holds", test="t", unit="u", on_alternative="holds",
               on_counterexample="untested")
    assert not cl.items


@pytest.mark.parametrize("scope, expected", [("every", "fails"), ("some", "holds"), ("most", "holds")])
def test_conditions_are_combined_at_the_bonferroni_level(tmp_path, monkeypatch, scope, expected):
    cl, rng = _claims(tmp_path, monkeypatch), np.random.default_rng(1)
    x = np.c_[rng.normal(1, 1, 400), rng.normal(-1, 1, 400), rng.normal(0.5, 1, 400)]
    stats = {f"c{j}": (lambda X, j=j: X[:, j].mean()) for j in range(3)}
    c = cl.bootstrap("pos", "every column has a positive mean", stats, x, counterexample=-np.abs(x), paper="-",
                     unit="row", above=0, scope=scope)
    assert c.verdict == expected and "Bonferroni level 98.3%" in c.test and c.test.count("[") == 3


@pytest.mark.parametrize("means, expected", [((1, 1, -1), "holds"), ((1, -1, -1), "fails"), ((1, 1, -1, -1), "fails"),
                                             ((1, 1, 0, -1), "undecided")])
def test_most_holds_when_more_than_half_hold_and_fails_when_half_fail(tmp_path, monkeypatch, means, expected):
    """scope='most', the reading of a paper's 'tend to': a claim over several conditions, each at the Bonferroni level,
    holds when more than half of them hold and fails when half or more fail, in `mean` as in `combined_verdict`."""
    cl, rng = _claims(tmp_path, monkeypatch), np.random.default_rng(5)
    x = np.stack([rng.normal(m, 0.3, 12) for m in means], axis=1)
    values = {f"c{j}": (lambda X, j=j: X[:, j]) for j in range(len(means))}
    c = cl.mean("tend", "most columns have a positive mean", values, x, counterexample=x - 5, alternative=x + 5,
                paper="-", unit="row", above=0, scope="most")
    assert c.verdict == expected and f"most of {len(means)} conditions" in c.test


def test_a_claim_takes_the_resamples_its_level_needs(tmp_path, monkeypatch):
    "Without n_boot a bootstrapped claim draws 2000 resamples, or resamples_needed(level) if more (3000 at 1 - 0.05/3): no ResampleWarning."
    import warnings
    from embeval_nb.stats import ResampleWarning
    cl, x = _claims(tmp_path, monkeypatch), np.random.default_rng(3).normal(1, 1, (30, 3))
    stats = {f"c{j}": (lambda X, j=j: X[:, j].mean()) for j in range(3)}
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResampleWarning)
        cl.bootstrap("pos", "every column positive", stats, x, counterexample=-x, paper="-", unit="row", above=0)
    with pytest.warns(ResampleWarning):
        cl.bootstrap("pos", "every column positive", stats, x, counterexample=-x, paper="-", unit="row", above=0, n_boot=2000)


@pytest.mark.parametrize("method", ["t", "signflip"])
def test_a_claim_about_a_mean_takes_mean_intervals_interval(tmp_path, monkeypatch, method):
    "Claims.mean decides each condition by mean_interval of the per-unit values at the Bonferroni level."
    from embeval_nb.stats import bonferroni_level, mean_interval
    cl, x = _claims(tmp_path, monkeypatch), np.random.default_rng(4).normal(0.5, 1, (12, 3))
    c = cl.mean("pos", "every column positive", {f"c{j}": (lambda X, j=j: X[:, j]) for j in range(3)}, x,
                counterexample=-np.abs(x), paper="-", unit="row", above=0, method=method)
    lo, hi = mean_interval(x, level=bonferroni_level(3), method=method)
    verdicts = ["holds" if l > 0 else "fails" if h < 0 else "undecided" for l, h in zip(lo, hi)]
    assert all(f"c{j} {x[:, j].mean():.3g} [{lo[j]:.3g}, {hi[j]:.3g}]" in c.test for j in range(3))
    assert c.verdict == ("fails" if "fails" in verdicts else "holds" if set(verdicts) == {"holds"} else "undecided")
    with pytest.raises(ValueError, match="NaN or infinite"):
        cl.mean("nan", "positive", lambda X: np.r_[X[1:, 0], np.nan], x, counterexample=-x, paper="-", unit="row", above=0)


def test_bonferroni_widens_each_interval():
    "At level 1 - 0.05/m the interval of a mean is wider than at 95%, by the ratio of the normal quantiles."
    from embeval_nb.stats import bonferroni_level, bootstrap_interval
    x = np.random.default_rng(2).normal(size=2000)
    _, lo, hi = bootstrap_interval(np.mean, x, n_boot=4000)
    _, lo6, hi6 = bootstrap_interval(np.mean, x, n_boot=6000, level=bonferroni_level(6))
    assert abs((hi6 - lo6) / (hi - lo) - 2.638 / 1.960) < 0.08


def test_every_claim_names_its_unit_and_region(tmp_path, monkeypatch):
    cl = _claims(tmp_path, monkeypatch)
    with pytest.raises(TypeError, match="unit"):
        cl.interval("r", "r > 0.5", 0.6, 0.55, 0.7, paper=0.9, above=0.5, counterexample=(0.1, 0.2))
    with pytest.raises(ValueError, match="above < below"):
        cl.interval("r", "r > 0.5", 0.6, 0.55, 0.7, paper=0.9, above=0.5, below=0.5, unit="q", counterexample=(0.1, 0.2))
    with pytest.raises(ValueError, match="why must say"):
        cl.untested("u", "u", paper="-", why="")
    assert cl.untested("u", "u", paper="0.3", why="no model").verdict == "untested"


def test_paper_account_checks_the_claims_against_the_account(tmp_path, monkeypatch):
    from embeval_nb.core import paper_account
    monkeypatch.setattr("embeval_nb.core.paper_tables", lambda chapter: {"account": parse_paper_table(
        "item | paper says | status | where | claims\nTable 1 | sizes | reproduced | 1. Data | -\n"
        "Figure 2 | x rises | substitute | 2. The rise (Figure 2) | rises\nTable 9 | recipe | not here | - data missing | -")})
    cl = _claims(tmp_path, monkeypatch)
    cl.interval("rises", "x rises", 0.3, 0.1, 0.5, paper="-", above=0, unit="run", counterexample=(-0.5, -0.1))
    html = paper_account("demo", cl).to_html()
    assert 'href="#the-rise-figure-2"' in html and "rises (holds)" in html and "- data missing" in html
    cl.untested("other", "other", paper="-", why="no model")
    with pytest.raises(ValueError, match=r"claims \['other'\] are decided on the page but listed under no item"):
        paper_account("demo", cl)
    with pytest.raises(ValueError, match=r"claims \['rises'\] are listed but not decided"):
        paper_account("demo", Claims("demo2"))
    monkeypatch.setattr("embeval_nb.core.paper_tables", lambda chapter: {"account": parse_paper_table(
        "item | paper says | status | where | claims\nTable 1 | sizes | done | 1. Data | -")})
    with pytest.raises(ValueError, match="status must be one of"):
        paper_account("demo")


# --- the p-value of each verdict and the false-discovery reading -------------------------------------------------

def _data(rng, shift, n=40):
    "n units whose mean is about `shift`, and the counterexample and alternative of 'the mean is above 0'."
    x = rng.normal(shift, 1, n)
    return x, x - 3, x + 3


def test_every_method_gives_its_verdict_the_p_value_of_its_interval(tmp_path, monkeypatch):
    """Each method's claim carries p = min(p_holds, p_fails) of the interval that decided it, computed as the stats
    page's inversion of that interval (the same replicates, values or items), and p < 0.05 exactly when it decides."""
    from embeval_nb.stats import (bootstrap_replicates, combined_p_values, mean_p_values, paired_p_values,
                                  percentile_p_values)
    cl, rng = _claims(tmp_path, monkeypatch), np.random.default_rng(7)
    decided = lambda c: c.verdict in ("holds", "fails")
    for i, shift in enumerate([0.9, 0.35, 0.2, 0.0, -0.3, -0.8]):
        x, cx, alt = _data(rng, shift)
        c = cl.bootstrap(f"b{i}", "mean above 0", np.mean, x, counterexample=cx, alternative=alt, paper="-", unit="u",
                         above=0, n_boot=1000)
        (_, r), = bootstrap_replicates({"": np.mean}, x, n_boot=1000).values()
        assert c.p == min(percentile_p_values(r, above=0)) and (c.p < 0.05) == decided(c)
        X = np.c_[x, x + rng.normal(0, 0.5, len(x))]
        stats = {"a": lambda X: X[:, 0].mean(), "b": lambda X: X[:, 1].mean()}
        for scope in ("every", "some"):
            c = cl.bootstrap(f"bb{i}{scope}", "both above 0", stats, X, counterexample=X - 3, alternative=X + 3,
                             paper="-", unit="u", above=0, scope=scope, n_boot=2000)
            drawn = bootstrap_replicates(stats, X, n_boot=2000)
            assert c.p == min(combined_p_values([percentile_p_values(r, above=0) for _, r in drawn.values()], scope=scope))
            assert (c.p < 0.05) == decided(c)
        for method in ("t", "signflip"):
            y = x[:12]
            c = cl.mean(f"m{i}{method}", "mean above 0", lambda X: X, y, counterexample=y - 3, alternative=y + 3,
                        paper="-", unit="u", above=0, method=method)
            assert c.p == min(mean_p_values(y, above=0, method=method)) and (c.p < 0.05) == decided(c)
        c = cl.mean(f"q{i}", "both means above 0", lambda X: X, X, counterexample=X - 3, alternative=X + 3, paper="-",
                    unit="u", above=0)
        assert c.p == min(mean_p_values(X, above=0, columns="smallest")) and (c.p < 0.05) == decided(c)
        reps = np.mean(x[np.random.default_rng(i).integers(0, len(x), (2000, len(x)))], axis=1)
        c = cl.replicated(f"r{i}", "mean above 0", x.mean(), reps, counterexample=x.mean() - 3,
                          alternative=x.mean() + 3, paper="-", unit="u", above=0)
        assert c.p == min(percentile_p_values(reps, above=0)) and (c.p < 0.05) == decided(c)
        a = rng.random(300) < 0.8
        b = np.where(rng.random(300) < 0.85, a, rng.random(300) < 0.8 - shift / 4)
        c = cl.paired_errors(f"e{i}", "A errs less", a, b, paper="-", counterexample=(np.zeros(300, bool), np.ones(300, bool)),
                             alternative=(np.ones(300, bool), np.zeros(300, bool)))
        assert c.p == min(paired_p_values(a, b, below=0.0)) and (c.p < 0.05) == decided(c)
    assert {"holds", "fails", "undecided"} <= {c.verdict for c in cl.items.values()}
    assert all(r["p"] == cl.items[r["key"]].p for r in read_records()["demo/claims"])


def test_claims_without_a_test_of_their_own_have_no_p_value(tmp_path, monkeypatch):
    cl = _claims(tmp_path, monkeypatch)
    assert cl.untested("u", "u", paper="-", why="no model").p is None
    assert cl.add("h", "h", paper="-", ours="-", verdict="holds", test="exact", unit="none", on_alternative=None,
                  on_counterexample="fails").p is None
    assert cl.add("g", "g", paper="-", ours="-", verdict="fails", test="exact", unit="none", on_alternative="holds",
                  on_counterexample="fails", p=0.001).p == 0.001
    weak = cl.add("w", "w", paper="-", ours="-", verdict="holds", test="t", unit="u", on_alternative="holds",
                  on_counterexample="undecided", p=0.01)
    assert weak.verdict == "untestable" and weak.p is None
    assert cl.interval("i", "i", 0.3, 0.1, 0.5, paper="-", unit="u", above=0, counterexample=(-0.5, -0.1), p=0.002).p == 0.002
    with pytest.raises(ValueError, match="p must be"):
        cl.add("x", "x", paper="-", ours="-", verdict="holds", test="t", unit="u", on_alternative=None,
               on_counterexample="fails", p=1.5)


def test_the_fdr_reading_of_a_chapter(tmp_path, monkeypatch):
    """The family is the chapter's tested claims with a p-value; the decided ones that Benjamini-Hochberg (or
    Benjamini-Yekutieli) rejects survive, as statsmodels' multipletests rejects them; a decided claim without a
    p-value is named as not read; a record from before claims had p-values counts as without one."""
    from statsmodels.stats.multitest import multipletests
    from embeval_nb.core import fdr_reading, fdr_summary, verdict_counts
    rng = np.random.default_rng(3)
    p = np.r_[rng.uniform(0, 0.05, 12) ** 2, rng.uniform(0, 0.05, 6), rng.uniform(0.05, 1, 10)]
    recs = [dict(key=f"c{i}", verdict=("holds", "fails")[i % 2] if v < 0.05 else "undecided", p=float(v))
            for i, v in enumerate(p)]
    recs += [dict(key="t", verdict="untested", p=None), dict(key="w", verdict="untestable", p=None),
             dict(key="hand", verdict="holds", p=None), dict(key="old", verdict="fails")]
    for method in ("bh", "by"):
        r = fdr_reading(recs, method=method)
        keep = multipletests(p, alpha=0.05, method=f"fdr_{method}")[0]
        assert r.survive == tuple(f"c{i}" for i in np.flatnonzero(keep))
        assert (r.tested, r.decided, r.read, r.unread) == (30, 20, 28, ("hand", "old"))
    assert len(fdr_reading(recs, method="by").survive) < len(fdr_reading(recs).survive) < 18
    counts = verdict_counts(recs)
    assert counts["holds"] == 10 and counts["fails"] == 10 and counts["untestable"] == 1
    assert counts["kept at FDR 5% (BH)"] == len(fdr_reading(recs).survive)
    text = fdr_summary({"one": recs, "two": recs[:5]})
    assert text.startswith("Each of the 35 claims tested") and "at most 1.8 (5% of 35) of the 25 decided verdicts" in text
    kept = len(fdr_reading(recs).survive) + len(fdr_reading(recs[:5]).survive)    # each chapter read on its own
    assert f"{kept} of the 25 decided verdicts are kept by Benjamini-Hochberg" in text
    assert "2 decided verdicts come from tests stated without a p-value" in text


def test_the_fdr_reading_of_a_claims_helper(tmp_path, monkeypatch):
    "fdr_reading takes a Claims as it takes its records; with nothing tested it keeps nothing."
    from embeval_nb.core import fdr_reading
    cl, rng = _claims(tmp_path, monkeypatch), np.random.default_rng(2)
    for i, shift in enumerate([1.0, 0.8, 0.05]):
        x, cx, alt = _data(rng, shift)
        cl.mean(f"m{i}", "mean above 0", lambda X: X, x, counterexample=cx, alternative=alt, paper="-", unit="u", above=0)
    assert fdr_reading(cl) == fdr_reading(read_records()["demo/claims"]) and fdr_reading(cl).survive == ("m0", "m1")
    assert fdr_reading([]).survive == () and fdr_reading([dict(key="u", verdict="untested")]).tested == 0


@pytest.mark.parametrize("seed", range(4))
def test_every_p_values_are_every_verdicts_reading(seed):
    """every_verdict of k Clopper-Pearson intervals (each at 1 - α for holds, 1 - α/k for fails) changes exactly at
    every_p_values of their p-values."""
    from embeval_nb.core import every_p_values, every_verdict
    from embeval_nb.stats import interval_verdict, proportion_interval, proportion_p_values
    rng = np.random.default_rng(seed)
    n, k = 12, int(rng.integers(1, 5))
    votes, sides = rng.integers(0, n + 1, k), [dict(above=0.5) if rng.random() < 0.5 else dict(below=0.5) for _ in range(k)]
    p_holds, p_fails = every_p_values([proportion_p_values(int(v), n, **s) for v, s in zip(votes, sides)])
    at = lambda a, level: [interval_verdict(*proportion_interval(int(v), n, level=level), **s) for v, s in zip(votes, sides)]
    for a in [*rng.uniform(1e-4, 0.6, 40), *(p * f for p in (p_holds, p_fails) if 0 < p < 1 for f in (0.999999, 1.000001))]:
        v = every_verdict(at(a, 1 - a), at(a, 1 - a / k))
        assert (v == "holds") == (a > p_holds) and (v == "fails") == (a >= p_fails), (a, v, p_holds, p_fails)
