"""core: the parallel map on every backend, jit's caching rule, records, the claims table and the paper's numbers.
The shared helpers that moved out of core are tested in files of their own: test_cache.py, test_checks.py,
test_stats.py, test_metrics.py and test_neighbours.py."""
import os, subprocess, sys

import numpy as np
import pytest

from embeval_nb.core import Claims, paper_tables, paper_value, parallel_map, parse_paper_table, read_records, record


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
