"""Smoke runs of the wmd chapter's notebooks through papermill, asserting on the numbers they record.

The runs go through the shared `run_notebook` fixture with the parameters of the smoke book build, so the
book test reuses them instead of running the notebooks again."""
import json
import re
from pathlib import Path

import numpy as np
import pytest

NBS = Path(__file__).resolve().parents[1] / "nbs"
TABLE2_ROWS = ["BOW (L1/L1)", "TF-IDF (L1/L1)", "WMD", "WMD-TF-IDF", "BOW (None/L2)", "BOW (None/L1)",
               "TF-IDF (None/L2)", "TF-IDF (None/L1)", "BOW (L1/L2)", "BOW (L2/L1)", "BOW (L2/L2)",
               "TF-IDF (L1/L2)", "TF-IDF (L2/L1)", "TF-IDF (L2/L2)"]


@pytest.fixture(scope="session")
def smoke(run_notebook):
    "What `papermill nbs/wmd.ipynb ... -p dataset reuters -p scale smoke` recorded."
    return run_notebook("wmd", scale="smoke", dataset="reuters")


def test_smoke_setup(smoke):
    s = smoke["setup"]
    assert (s["dataset"], s["scale"], s["splits_run"]) == ("reuters", "smoke", 1)
    assert s["n_train"] == [100] and s["n_test"] == [50] and s["test_total"] == [2189]


def test_table1_duplicates(smoke):
    t1 = smoke["table1"]
    assert t1["documents"] == 7674 and t1["training"] == 5485 and t1["test"] == 2189 and t1["classes"] == 8
    # reuters has duplicates; a group of g identical documents has g(g-1)/2 pairs
    assert t1["duplicate samples"] > 0
    assert t1["duplicate samples"] / 2 <= t1["duplicate pairs"] <= t1["duplicate samples"] ** 2 / 2
    assert t1["pairs across train/test"] <= t1["duplicate pairs"]
    assert t1["pairs with different labels"] <= t1["duplicate pairs"]


def test_table2_rows_and_errors(smoke):
    t2 = smoke["table2"]
    assert set(t2) == set(TABLE2_ROWS)
    for row, v in t2.items():
        assert len(v["errors"]) == 1 and 0 <= v["mean"] <= 100 and v["std"] == 0
        assert np.isclose(v["mean"] / 2, round(v["mean"] / 2))       # 50 test documents: multiples of 2 %
        assert 1 <= v["hyper"][0] <= 19
    # even on 100 training documents, normalised BOW beats unnormalised TF-IDF
    assert t2["BOW (L1/L1)"]["mean"] < t2["TF-IDF (None/L1)"]["mean"]


def test_clean_and_weighted_tables(smoke):
    assert set(smoke["table3"]) == {"BOW (L1/L1)", "TF-IDF (L1/L1)", "WMD", "WMD-TF-IDF"}
    assert smoke["clean"]["dropped"] > 0 and smoke["clean"]["n_test"][0] <= 50
    assert set(smoke["table6"]) == {"BOW (L1/L1/wkNN)", "TF-IDF (L1/L1/wkNN)", "WMD (wkNN)", "WMD-TF-IDF (wkNN)"}
    for v in smoke["table6"].values():
        assert 0 <= v["mean"] <= 100 and 0.005 <= v["hyper"][0] <= 0.1


def test_low_dim_and_cost_ablation(smoke):
    assert smoke["table8"]["WMD"] == smoke["table2"]["WMD"]
    assert 0 <= smoke["table8"]["WMD (5 dim)"]["mean"] <= 100
    assert set(smoke["table9"]) == {"WMD (L2/L2)", "WMD (L2/L1)", "WMD (L1/L2)", "WMD (L1/L1)"}
    assert smoke["table9"]["WMD (L2/L2)"] == smoke["table2"]["WMD"]


def test_figures(smoke):
    for name in ("50-d", "5-d PCA"):
        f4 = smoke["figure4"][name]
        assert 0 <= f4["mass at 0"] <= 1 and 0 <= f4["moved mass within half the median"] <= 1
    rho = smoke["figure5"]["pearson"]
    assert -1 <= rho["5-d PCA"] <= 1 and 0.5 < rho["50-d"] <= 1   # WMD resembles BOW (L1/L1) in 50-d
    assert smoke["figure5"]["pairs"] == 12 * 30


def test_claims_recorded(smoke):
    claims = smoke["claims"]
    assert len(claims) >= 15 and all(isinstance(h, bool) for _, h in claims)


def test_tables_notebook_assembles_the_records(smoke, run_notebook):
    "wmd_tables (as the smoke book runs it) reads wmd-reuters.json and names the six data sets not run."
    rec = run_notebook("wmd_tables", scale="smoke")
    assert rec["datasets"]["present"] == ["reuters"] and len(rec["datasets"]["missing"]) == 6
    ours = smoke["table2"]
    assert rec["table2_means"]["reuters"]["WMD"] == ours["WMD"]["mean"]
    assert rec["table2_rel"]["ours"]["BOW (L1/L1)"] == 1.0
    assert np.isclose(rec["table2_rel"]["ours"]["WMD"], ours["WMD"]["mean"] / ours["BOW (L1/L1)"]["mean"])
    assert np.isclose(rec["table2_rel"]["paper_same_datasets"]["WMD"], 4.0 / 5.7)
    assert rec["table3_means"]["reuters"]["WMD"] == smoke["table3"]["WMD"]["mean"]


def test_tables_notebook_without_any_records(run_notebook):
    rec = run_notebook("wmd_tables", scale="smoke", records_dir="no-such-records-folder")
    assert rec["datasets"]["present"] == [] and len(rec["datasets"]["missing"]) == 7


def test_theory_notebook_runs(run_notebook):
    run_notebook("wmd_theory")


def test_paper_numbers_transcribed_identically():
    "wmd.ipynb and wmd_tables.ipynb carry the same transcription of the paper's Tables 2 and 3."
    def tables(name):
        src = "".join("".join(c["source"]) for c in json.loads((NBS / name).read_text())["cells"])
        return {t: re.search(rf'"{t}": """(.*?)"""', src, re.S).group(1) for t in ("table2", "table3")}
    assert tables("wmd.ipynb") == tables("wmd_tables.ipynb")
