"""Smoke runs of the wmd chapter's notebooks through papermill, asserting on the numbers they record.

The runs go through the shared `run_notebook` fixture with the parameters of the smoke book build, so the
book test reuses them instead of running the notebooks again."""
import numpy as np
import pytest

from embeval_nb.core import paper_tables, paper_value

TABLE2_ROWS = ["BOW (L1/L1)", "TF-IDF (L1/L1)", "WMD", "WMD-TF-IDF", "BOW (None/L2)", "BOW (None/L1)",
               "TF-IDF (None/L2)", "TF-IDF (None/L1)", "BOW (L1/L2)", "BOW (L2/L1)", "BOW (L2/L2)",
               "TF-IDF (L1/L2)", "TF-IDF (L2/L1)", "TF-IDF (L2/L2)"]


@pytest.fixture(scope="session")
def smoke(run_notebook):
    "What `papermill nbs/wmd.ipynb ... -p dataset reuters -p scale smoke` recorded."
    return run_notebook("wmd", scale="smoke", dataset="reuters")


def test_smoke_setup(smoke):
    s = smoke["wmd/setup"]
    assert (s["dataset"], s["scale"], s["splits_run"]) == ("reuters", "smoke", 1)
    assert s["n_train"] == [100] and s["n_test"] == [50] and s["test_total"] == [2189]


def test_table1_duplicates(smoke):
    t1 = smoke["wmd/table1"]
    assert t1["documents"] == 7674 and t1["training"] == 5485 and t1["test"] == 2189 and t1["classes"] == 8
    # reuters has duplicates; a group of g identical documents has g(g-1)/2 pairs
    assert t1["duplicate samples"] > 0
    assert t1["duplicate samples"] / 2 <= t1["duplicate pairs"] <= t1["duplicate samples"] ** 2 / 2
    assert t1["pairs across train/test"] <= t1["duplicate pairs"]
    assert t1["pairs with different labels"] <= t1["duplicate pairs"]


def test_table2_rows_and_errors(smoke):
    t2 = smoke["wmd/table2"]
    assert set(t2) == set(TABLE2_ROWS)
    for row, v in t2.items():
        assert len(v["errors"]) == 1 and 0 <= v["mean"] <= 100 and v["std"] == 0
        assert np.isclose(v["mean"] / 2, round(v["mean"] / 2))       # 50 test documents: multiples of 2 %
        assert 1 <= v["hyper"][0] <= 19
    # even on 100 training documents, normalised BOW beats unnormalised TF-IDF
    assert t2["BOW (L1/L1)"]["mean"] < t2["TF-IDF (None/L1)"]["mean"]


def test_clean_and_weighted_tables(smoke):
    assert set(smoke["wmd/table3"]) == {"BOW (L1/L1)", "TF-IDF (L1/L1)", "WMD", "WMD-TF-IDF"}
    assert smoke["wmd/clean"]["dropped"] > 0 and smoke["wmd/clean"]["n_test"][0] <= 50
    assert set(smoke["wmd/table6"]) == {"BOW (L1/L1/wkNN)", "TF-IDF (L1/L1/wkNN)", "WMD (wkNN)", "WMD-TF-IDF (wkNN)"}
    for v in smoke["wmd/table6"].values():
        assert 0 <= v["mean"] <= 100 and 0.005 <= v["hyper"][0] <= 0.1


def test_low_dim_and_cost_ablation(smoke):
    assert smoke["wmd/table8"]["WMD"] == smoke["wmd/table2"]["WMD"]
    assert 0 <= smoke["wmd/table8"]["WMD (5 dim)"]["mean"] <= 100
    assert set(smoke["wmd/table9"]) == {"WMD (L2/L2)", "WMD (L2/L1)", "WMD (L1/L2)", "WMD (L1/L1)"}
    assert smoke["wmd/table9"]["WMD (L2/L2)"] == smoke["wmd/table2"]["WMD"]


def test_figures(smoke):
    for name in ("50-d", "5-d PCA"):
        f4 = smoke["wmd/figure4"][name]
        assert 0 <= f4["mass at 0"] <= 1 and 0 <= f4["moved mass within half the median"] <= 1
    rho = smoke["wmd/figure5"]["pearson"]
    assert -1 <= rho["5-d PCA"] <= 1 and 0.5 < rho["50-d"] <= 1   # WMD resembles BOW (L1/L1) in 50-d
    assert smoke["wmd/figure5"]["pairs"] == 12 * 30


def test_every_record_key_is_in_the_chapter(smoke):
    assert smoke and all(key.startswith("wmd/") for key in smoke)


def test_claims_recorded(smoke):
    "The 21 claims, each with the paper's number, ours, a verdict and the test that reached it."
    claims = smoke["wmd/claims"]
    assert len(claims) == 21 and len({c["key"] for c in claims}) == 21
    for c in claims:
        assert c["verdict"] in ("holds", "fails", "undecided") and c["statement"] and c["paper"] and c["ours"]
        assert c["test"].startswith(("exact McNemar", "paired bootstrap")) and "95% interval" in c["test"]
    by_key = {c["key"]: c for c in claims}
    wmd, bow = smoke["wmd/table2"]["WMD"]["mean"], smoke["wmd/table2"]["BOW (L1/L1)"]["mean"]
    assert by_key["wmd-vs-bow"]["ours"] == f"{wmd:.2f} vs {bow:.2f} % error"     # the recorded errors, paired
    assert "on 50 paired items" in by_key["wmd-vs-bow"]["test"]                   # the 50 smoke test documents


def test_tables_notebook_assembles_the_records(smoke, run_notebook):
    "wmd_tables (as the smoke book runs it) reads wmd-reuters.json and names the six data sets not run."
    rec = run_notebook("wmd_tables", scale="smoke")
    assert rec["wmd/tables/datasets"]["present"] == ["reuters"] and len(rec["wmd/tables/datasets"]["missing"]) == 6
    ours = smoke["wmd/table2"]
    assert rec["wmd/tables/table2_means"]["reuters"]["WMD"] == ours["WMD"]["mean"]
    assert rec["wmd/tables/table2_rel"]["ours"]["BOW (L1/L1)"] == 1.0
    assert np.isclose(rec["wmd/tables/table2_rel"]["ours"]["WMD"], ours["WMD"]["mean"] / ours["BOW (L1/L1)"]["mean"])
    assert np.isclose(rec["wmd/tables/table2_rel"]["paper_same_datasets"]["WMD"], 4.0 / 5.7)
    assert rec["wmd/tables/table3_means"]["reuters"]["WMD"] == smoke["wmd/table3"]["WMD"]["mean"]


def test_tables_notebook_without_any_records(run_notebook):
    rec = run_notebook("wmd_tables", scale="smoke", records_dir="no-such-records-folder")
    assert rec["wmd/tables/datasets"]["present"] == [] and len(rec["wmd/tables/datasets"]["missing"]) == 7


def test_theory_notebook_runs(run_notebook):
    run_notebook("wmd_theory")



def test_paper_numbers():
    "The paper's tables as the chapter reads them: every row of ours has the paper's number beside it."
    t = paper_tables("wmd")
    assert sorted(t) == ["table1", "table2", "table3", "table6", "table8", "table9"]
    assert list(t["table2"].index) == TABLE2_ROWS and list(t["table2"].columns)[-1] == "rel"
    assert paper_value(t["table2"].loc["WMD", "reuters"]) == 4.0 and paper_value(t["table2"].loc["WMD", "bbcsport"]) == 5.1
    assert t["table1"].loc["documents", "reuters"] == "7674" and paper_value(t["table9"].loc["WMD (L1/L1)", "reuters"]) == 4.2
    for name in ("table2", "table3", "table6", "table8", "table9"):
        assert t[name].drop(columns="rel", errors="ignore").map(paper_value).notna().all().all()
