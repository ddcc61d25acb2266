"""Paper-scale units: records, versions, states, the runner on a two-worker LocalCluster, verification, and one
committed unit of every chapter recomputed and compared with its record."""
import json, os, subprocess, sys
from pathlib import Path

import numpy as np
import pytest

from embeval_nb import runs, wmd
from embeval_nb.runs import (IncompleteResults, Unit, chapter_module, chapter_units, code_version, compute_unit,
                             read_record, results_dir, run_units, table_results, unit_states, verify_units,
                             write_manifest, write_record)

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"


@pytest.fixture(scope="module")
def small_units():
    "Three cheap real units: bbcsport split 1's BOW test and kNN validation searches, and its weighted-kNN validation."
    units = [u for u in wmd.dataset_units("bbcsport") if u.name.startswith("bbcsport/s1/BOW/")]
    return units[:3]


def test_chapter_module_names_what_is_wrong():
    with pytest.raises(ValueError, match="no chapter module embeval_nb.nope"): chapter_module("nope")
    with pytest.raises(ValueError, match="declares no paper-scale units"): chapter_module("cli")
    with pytest.raises(ValueError, match="module name"): chapter_module("../wmd")


def test_unit_names_are_unique_and_tables_ordered():
    units = wmd.paper_units(("bbcsport",))
    assert len({u.name for u in units}) == len(units)
    tables = [u.table for u in units]
    assert tables == sorted(tables, key=[f"bbcsport/{t}" for t in wmd.PAPER_TABLES].index)   # whole tables in order


def test_code_version_follows_reached_constants_and_is_the_same_in_another_process(monkeypatch):
    v = code_version(wmd.search_unit)
    out = subprocess.run([sys.executable, "-c", "from embeval_nb import wmd, runs; print(runs.code_version(wmd.search_unit))"],
                         capture_output=True, text=True, check=True, env={**os.environ, "EMBEVAL_PROGRESS": "0"})
    assert out.stdout.strip() == v
    monkeypatch.setattr(wmd, "KMAX", 20)                      # a constant the unit reaches: a new version
    assert code_version(wmd.search_unit) != v
    with pytest.raises(TypeError, match="function or class of embeval_nb"): code_version(np.mean)


def test_records_round_trip_states_and_assembly(tmp_path, small_units):
    u = small_units[0]
    assert unit_states([u], tmp_path)[0][1] == "missing"
    with pytest.raises(IncompleteResults, match="0 of 1 units done, 1 missing"):
        table_results("wmd", u.table, root=tmp_path, units=[u])
    assert table_results("wmd", u.table, missing="skip", root=tmp_path, units=[u]) is None
    got = table_results("wmd", u.table, missing="compute", root=tmp_path, units=[u], show_progress=False)
    rec = read_record(u, tmp_path)
    assert got == {u.name: rec["result"]} and unit_states([u], tmp_path)[0][1] == "done"
    assert oct((tmp_path / u.path).stat().st_mode & 0o777) != "0o600"        # the umask's mode, not mkstemp's
    for field in ("code", "inputs"):                                          # other code or inputs: stale
        write_record({**rec, field: "0" * 16}, tmp_path)
        assert unit_states([u], tmp_path)[0][1] == "stale"
        with pytest.raises(IncompleteResults, match="1 stale"): table_results("wmd", u.table, root=tmp_path, units=[u])
    other = small_units[1]
    (tmp_path / other.path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / other.path).write_text(json.dumps(rec))                      # another unit's record at its path
    with pytest.raises(ValueError, match="of another unit"): read_record(other, tmp_path)
    (tmp_path / other.path).write_text("{torn")
    with pytest.raises(ValueError, match=f"{other.name}.json is not valid JSON"): read_record(other, tmp_path)


def test_results_refuse_what_json_cannot_hold():
    with pytest.raises(ValueError, match="cannot hold nan"): runs._plain({"x": [1.0, float("nan")]})
    assert runs._plain({1: np.arange(2), "t": (np.float64(0.5),)}) == {"1": [0, 1], "t": [0.5]}


def test_mismatch_compares_integers_exactly_and_floats_to_1e12():
    m = runs._mismatch
    assert m({"a": [1, 2.0]}, {"a": [1, 2.0 * (1 + 1e-13)]}) is None
    assert "a[1]" in m({"a": [1, 2.0]}, {"a": [1, 2.0 * (1 + 1e-11)]})
    assert "a[0]: 1 != 2" in m({"a": [1]}, {"a": [2]})
    assert "keys" in m({"a": 1}, {"b": 1}) and "items" in m([1], [1, 2])


def test_runner_on_a_two_worker_local_cluster_writes_records_manifest_and_verifies(tmp_path, small_units):
    report = run_units(small_units, workers=2, root=tmp_path, show_progress=False)
    assert sorted(report.finished) == sorted(u.name for u in small_units) and not report.left and not report.failed
    manifest = json.loads((tmp_path / "manifest.json").read_text())["wmd"]
    assert set(manifest) == {u.name for u in small_units}
    assert all(s == "done" for _, s, _ in unit_states(small_units, tmp_path))
    again = run_units(small_units, workers=2, root=tmp_path, show_progress=False)     # nothing missing: nothing runs
    assert again.finished == [] and again.left == []
    assert verify_units(small_units, 2, root=tmp_path) == {n: None for n in verify_units(small_units, 2, root=tmp_path)}
    u = small_units[0]; rec = read_record(u, tmp_path)
    name = next(iter(rec["result"]))
    rec["result"][name]["queries"] += 1; write_record(rec, tmp_path)                  # a tampered record is caught
    assert "queries" in verify_units([u], 1, root=tmp_path)[u.name]


def test_runner_starts_nothing_that_would_end_after_the_budget(tmp_path, small_units):
    report = run_units(small_units, hours=1e-6, workers=2, root=tmp_path, show_progress=False)
    assert report.finished == [] and sorted(report.left) == sorted(u.name for u in small_units)
    with pytest.raises(ValueError, match="hours"): run_units(small_units, hours=0, root=tmp_path)
    with pytest.raises(ValueError, match="workers"): run_units(small_units, workers=0, root=tmp_path)


def test_committed_results_agree_with_their_manifest_and_stay_small():
    if not RESULTS.is_dir(): pytest.skip("no committed results yet")
    files = sorted(p for p in RESULTS.glob("*/**/*.json"))
    assert sum(p.stat().st_size for p in RESULTS.rglob("*") if p.is_file()) < 40e6, "results/ must stay under 40 MB"
    manifest = json.loads((RESULTS / "manifest.json").read_text())
    listed = {(ch, name) for ch, units in manifest.items() for name in units}
    on_disk = {(p.relative_to(RESULTS).parts[0], str(Path(*p.relative_to(RESULTS).parts[1:]).with_suffix(""))) for p in files}
    assert listed == on_disk, ("results/manifest.json is out of date: run `python scripts/paper.py --status` "
                               "after a run, or `python -c 'from embeval_nb.runs import write_manifest; write_manifest()'`")


def _cheapest_committed(chapter: str, table: str | None = None):
    """The committed, current unit of `chapter` (of `table` only, if given) that took the least CPU time (None if there
    is none). A table is named where a unit's recorded time leaves out work that a cold cache redoes (a crossmatch
    language unit embeds its vocabulary, a skip-gram unit trains the model, when no earlier unit left them cached)."""
    manifest = json.loads((RESULTS / "manifest.json").read_text()).get(chapter, {}) if (RESULTS / "manifest.json").is_file() else {}
    by_name = {u.name: u for u in chapter_units(chapter) if table is None or u.table == table}
    for name, entry in sorted(manifest.items(), key=lambda kv: kv[1]["cpu_seconds"]):
        u = by_name.get(name)
        if u is not None and unit_states([u])[0][1] == "done": return u
    return None


@pytest.mark.parametrize("chapter, table", [("wmd", None), ("crossmatch", "power"), ("retrofit", "glove/scores"),
                                            ("corpus_distance", "synthetic")])
def test_one_committed_unit_of_each_chapter_recomputes_to_its_record(chapter, table):
    u = _cheapest_committed(chapter, table)
    if u is None: pytest.skip(f"no current committed record of {chapter} yet")
    assert verify_units([u], 1) == {u.name: None}


def test_a_small_crossmatch_unit_runs_records_and_verifies(tmp_path):
    "A power unit of the smoke scale (ten simulated pairs of ten points): computed, written, current, and recomputed to its record."
    from embeval_nb.crossmatch import scale_units
    u = next(u for u in scale_units("smoke") if u.name == "power/shift/010")
    write_record(compute_unit(u), tmp_path)
    assert unit_states([u], tmp_path)[0][1] == "done"
    assert set(table_results("crossmatch", "power", root=tmp_path, units=[u])[u.name]) == {"crossmatch", "MMD"}
    assert verify_units([u], 1, root=tmp_path) == {u.name: None}


def test_a_small_corpus_distance_unit_runs_records_and_verifies(tmp_path):
    "A KSC set of the smoke scale drawn from both samples' pairs (the components only): computed, written, current, recomputed."
    from embeval_nb.corpus_distance import scale_units
    u = next(u for u in scale_units("smoke") if u.table == "ksc/pool")
    write_record(compute_unit(u), tmp_path)
    assert unit_states([u], tmp_path)[0][1] == "done"
    got = table_results("corpus_distance", "ksc/pool", root=tmp_path, units=[u])[u.name]
    assert len(got["metrics"]) == 20 and all(len(d) == 120 for d in got["distances"])
    assert verify_units([u], 1, root=tmp_path) == {u.name: None}
