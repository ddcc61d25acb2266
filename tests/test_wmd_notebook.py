"""Smoke runs of the wmd chapter's notebooks through papermill, asserting on the numbers they record; the book
build's handling of the chapter's per-data-set pages; the README block of claims made from the records.

The runs go through the shared `run_notebook` fixture with the parameters of the smoke book build, so the
book test reuses them instead of running the notebooks again."""
import json, shutil

import numpy as np
import pytest

import book  # scripts/book.py (tests/conftest.py puts scripts/ on the path)
import readme_claims
from embeval_nb.core import paper_tables, paper_value

TABLE2_ROWS = ["BOW (L1/L1)", "TF-IDF (L1/L1)", "WMD", "WMD-TF-IDF", "BOW (None/L2)", "BOW (None/L1)",
               "TF-IDF (None/L2)", "TF-IDF (None/L1)", "BOW (L1/L2)", "BOW (L2/L1)", "BOW (L2/L2)",
               "TF-IDF (L1/L2)", "TF-IDF (L2/L1)", "TF-IDF (L2/L2)"]
CLAIMS = ["bow-l1l1-best", "tfidf-l1l1-best", "tfidf-vs-bow", "unnormalised-tfidf-worse", "clean-bow-l1l1-best",
          "clean-tfidf-l1l1-best", "clean-tfidf-vs-bow", "travel-concentrated", "rho-full-d", "rho-5d-not-similar",
          "rho-5d-weaker"]      # the claims about single data sets, as decided on reuters (the pooled page adds the rest)
ACROSS = CLAIMS + ["bow-beats-wmd", "normalising-helps", "clean-normalising-helps", "normalisation-beats-ot",
                   "mismatched-norms-worse", "tfidf-beats-wmd", "ot-gain-genuine", "ot-gain-small",
                   "original-gain-reproduced", "wmd-tfidf-best", "clean-gap-narrows", "all-words-no-gain", "wknn-beats-knn",
                   "wknn-gain-vs-wmd-gain", "wknn-relative-unchanged", "5d-worse", "5d-worse-than-bow",
                   "cost-hardly-matters", "unnormalised-cost-worse", "rho-rises-with-dim", "split-spread-doubles",
                   "duplicates-mislead", "embeddings-normalised", "ot-costly", "vocabulary-denoises"]


@pytest.fixture(scope="session")
def smoke(run_notebook):
    "What `papermill nbs/wmd.ipynb ... -p dataset reuters -p scale smoke` recorded."
    return run_notebook("wmd", scale="smoke", dataset="reuters")


@pytest.fixture(scope="session")
def smoke_runs(run_notebook, smoke):
    "Every data set of the smoke book build's sweep, run (reuters first)."
    return {v: run_notebook("wmd", scale="smoke", dataset=v) for v in book.sweeps("smoke")["wmd"][1]}


@pytest.fixture(scope="session")
def tables(run_notebook, smoke_runs):
    "wmd_tables as the smoke book runs it, after every data set of its sweep."
    return run_notebook("wmd_tables", scale="smoke")


def wrong(row_record) -> np.ndarray:
    return np.array([c == "0" for c in row_record["correct"]])


def test_smoke_setup(smoke):
    s = smoke["wmd/setup"]
    assert (s["dataset"], s["scale"], s["splits_run"]) == ("reuters", "smoke", 1)
    assert s["n_train"] == [100] and s["train_total"] == [5485] and s["n_test"] == [50] and s["test_total"] == [2189]
    assert s["n_test_ablation"] == [50]


def test_table1_duplicates(smoke):
    t1 = smoke["wmd/table1"]
    assert t1["documents"] == 7674 and t1["training"] == 5485 and t1["test"] == 2189 and t1["classes"] == 8
    # reuters has duplicates; a group of g identical documents has g(g-1)/2 pairs
    assert t1["duplicate samples"] > 0
    assert t1["duplicate samples"] / 2 <= t1["duplicate pairs"] <= t1["duplicate samples"] ** 2 / 2
    assert t1["pairs across train/test"] <= t1["duplicate pairs"]
    assert t1["pairs with different labels"] <= t1["duplicate pairs"]


def test_table2_rows_errors_and_intervals(smoke):
    from scipy.stats import binomtest
    t2 = smoke["wmd/table2"]
    assert set(t2) == set(TABLE2_ROWS)
    for row, v in t2.items():
        assert len(v["errors"]) == 1 and 0 <= v["mean"] <= 100 and v["std"] == 0
        assert np.isclose(v["mean"] / 2, round(v["mean"] / 2))       # 50 test documents: multiples of 2 %
        assert 1 <= v["hyper"][0] <= 19
        assert v["n_test"] == 50 == len(v["correct"]) and v["n_errors"] == wrong(v).sum()
        assert np.isclose(100 * v["n_errors"] / 50, v["mean"])
        ci = binomtest(v["n_errors"], 50).proportion_ci(0.95, method="exact")   # Clopper-Pearson
        assert np.allclose(v["interval"], [100 * ci.low, 100 * ci.high])
        assert v["interval"][0] <= v["mean"] <= v["interval"][1]
    # even on 100 training documents, normalised BOW beats unnormalised TF-IDF
    assert t2["BOW (L1/L1)"]["mean"] < t2["TF-IDF (None/L1)"]["mean"]


def test_bow_subsample_effect(smoke):
    "BOW (L1/L1) of Table 2 on the page's test subsample, rerun on every test document of the split (same training documents)."
    b, t2 = smoke["wmd/bow_subsample"], smoke["wmd/table2"]["BOW (L1/L1)"]
    assert (b["page"]["error"], b["page"]["k"]) == (t2["errors"][0], t2["hyper"][0])
    assert [c["n_test"] for c in b["cells"].values()] == [50, 2189]      # smoke: test subsampled, validation whole
    assert b["cells"]["all 2189 test documents, all 20 validation documents"]["error"] == b["full"]["error"]
    assert 0 <= b["tail"] <= 1 and b["random_std"] > 0

def test_clean_tables(smoke):
    t7, t3 = smoke["wmd/table7"], smoke["wmd/table3"]
    assert set(t7) == set(TABLE2_ROWS) and list(t3) == ["BOW (L1/L1)", "TF-IDF (L1/L1)", "WMD", "WMD-TF-IDF"]
    assert all(t3[r] == t7[r] for r in t3)                          # Table 3 is the first four rows of Table 7
    clean = smoke["wmd/clean"]
    assert clean["dropped"] > 0 and clean["n_test"][0] <= 50 and len(clean["positions"]) == clean["n_test"][0]
    assert len(set(clean["positions"])) == len(clean["positions"]) and max(clean["positions"]) < 50
    assert all(v["n_test"] == clean["n_test"][0] for v in t7.values())


def test_all_words_tables(smoke):
    for key in ("wmd/table4", "wmd/table5"):
        assert set(smoke[key]) == {"BOW (L1/L1)", "TF-IDF (L1/L1)"}
    assert smoke["wmd/table4"]["BOW (L1/L1)"]["n_test"] == 50
    assert smoke["wmd/table5"]["BOW (L1/L1)"]["n_test"] == smoke["wmd/clean"]["n_test"][0]


def test_weighted_table(smoke):
    assert set(smoke["wmd/table6"]) == {"BOW (L1/L1/wkNN)", "TF-IDF (L1/L1/wkNN)", "WMD (wkNN)", "WMD-TF-IDF (wkNN)"}
    for v in smoke["wmd/table6"].values():
        assert 0 <= v["mean"] <= 100 and 0.005 <= v["hyper"][0] <= 0.1


def test_low_dim_and_cost_ablation(smoke):
    assert smoke["wmd/table8"]["WMD"] == smoke["wmd/table2"]["WMD"]     # the ablation documents are the 50 test documents
    assert 0 <= smoke["wmd/table8"]["WMD (5 dim)"]["mean"] <= 100
    assert set(smoke["wmd/table9"]) == {"WMD (L2/L2)", "WMD (L2/L1)", "WMD (L1/L2)", "WMD (L1/L1)", "WMD (None/L2)",
                                        "WMD (None/L1)"}
    assert smoke["wmd/table9"]["WMD (L2/L2)"] == smoke["wmd/table2"]["WMD"]
    assert smoke["wmd/ablation_setup"]["positions"] == list(range(50))


def test_figures(smoke):
    for name in ("50-d", "5-d PCA"):
        f4 = smoke["wmd/figure4"][name]
        assert 0 <= f4["mass at 0"] <= 1 and f4["moved distance, coefficient of variation"] >= 0
        assert len(smoke["wmd/figure4_documents"][name]) == 20 and len(smoke["wmd/figure4_documents"][name][0]) == 4
    rho = smoke["wmd/figure5"]["pearson"]
    assert -1 <= rho["5-d PCA"] <= 1 and 0.5 < rho["50-d"] <= 1   # WMD resembles BOW (L1/L1) in 50-d
    assert smoke["wmd/figure5"]["pairs"] == 30 and set(rho) == {"5-d PCA", "10-d PCA", "20-d PCA", "50-d"}
    assert all(len(v) == 30 for v in smoke["wmd/figure5"]["distances"].values())


def test_every_record_key_is_in_the_chapter(smoke):
    assert smoke and all(key.startswith("wmd/") for key in smoke)


def test_claims_recorded(smoke):
    "Every claim about a single data set, each with the paper's number, ours, a verdict, the test that reached it and its unit."
    claims = smoke["wmd/claims"]
    assert sorted(c["key"] for c in claims) == sorted(CLAIMS)
    for c in claims:
        assert c["verdict"] in ("holds", "fails", "undecided", "untestable") and c["statement"] and c["paper"] and c["ours"] and c["unit"]
        assert c["test"].startswith("bootstrap over") and ("95% interval" in c["test"] or "Bonferroni level" in c["test"])
        assert c["statement"].startswith("On Reuters")
    by_key = {c["key"]: c for c in claims}
    t2 = smoke["wmd/table2"]
    assert float(by_key["tfidf-vs-bow"]["ours"]) == pytest.approx(
        (t2["TF-IDF (L1/L1)"]["n_errors"] - t2["BOW (L1/L1)"]["n_errors"]) / 50, abs=1e-3)   # the recorded errors, paired
    assert "bootstrap over 50 units (test document)" in by_key["tfidf-vs-bow"]["test"]      # the 50 smoke test documents
    assert "Bonferroni level 99%" in by_key["bow-l1l1-best"]["test"]                         # five rivals together at 95%


def test_five_fold_smoke_run_has_appendix_b(smoke_runs):
    five = {d: r for d, r in smoke_runs.items() if r["wmd/setup"]["splits_available"] == 5}
    for d, r in five.items():
        b = r["wmd/appendixB"]
        assert set(b) >= {"BOW (L1/L1)", "TF-IDF (L1/L1)"}
        for v in b.values():
            assert len(v["errors"]) == 5 and np.allclose(v["errors"], 100 * np.array(v["n_errors"]) / np.array(v["n_test"]))
        assert "split-spread-doubles" in {c["key"] for c in r["wmd/claims"]}
        fit = r["wmd/appendixB_crossfit"]
        assert fit["method"] in b and fit["worst"] != fit["best"] and len(set(map(len, fit["test"]))) == 1
    for d, r in smoke_runs.items():
        if d not in five: assert "wmd/appendixB" not in r


def test_theory_notebook_records_the_obama_example(run_notebook):
    from embeval_nb.embeddings import load_glove
    rec = run_notebook("wmd_theory")["wmd/obama"]
    wv = load_glove()
    v = dict(zip(["obama", "president", "band"], wv.lookup(["obama", "president", "band"], normalize=True)[0].astype(float)))
    assert np.isclose(rec["obama - president"], np.linalg.norm(v["obama"] - v["president"]))
    assert np.isclose(rec["2 WMD(obama greets, band greets)"], rec["obama - band"])
    assert rec["2 WMD(obama greets, band greets)"] < rec["2 WMD(obama greets, president speaks)"]   # the paper's point


# --- the cross-data-set page ---------------------------------------------------------------------------------

def test_tables_notebook_assembles_the_records(smoke, smoke_runs, tables):
    present = tables["wmd/tables/datasets"]["present"]
    assert sorted(present) == sorted(smoke_runs) and len(tables["wmd/tables/datasets"]["missing"]) == 7 - len(present)
    ours = smoke["wmd/table2"]
    assert tables["wmd/tables/table2_means"]["reuters"]["WMD"] == ours["WMD"]["mean"]
    assert tables["wmd/tables/table2_rel"]["ours"]["BOW (L1/L1)"] == 1.0
    expect = np.mean([r["wmd/table2"]["WMD"]["mean"] / r["wmd/table2"]["BOW (L1/L1)"]["mean"] for r in smoke_runs.values()])
    assert np.isclose(tables["wmd/tables/table2_rel"]["ours"]["WMD"], expect)
    paper = paper_tables("wmd")["table2"]
    expect_paper = np.mean([paper_value(paper.loc["WMD", d]) / paper_value(paper.loc["BOW (L1/L1)", d]) for d in present])
    assert np.isclose(tables["wmd/tables/table2_rel"]["paper_same_datasets"]["WMD"], expect_paper)
    assert tables["wmd/tables/table7_means"]["reuters"]["WMD"] == smoke["wmd/table7"]["WMD"]["mean"]
    for key in ("table4", "table5", "table6", "table8", "table9"):
        assert tables[f"wmd/tables/{key}_means"]["reuters"]


def test_claims_across_data_sets_match_the_grid(smoke_runs, tables):
    grid, across = tables["wmd/tables/grid"], {c["key"]: c for c in tables["wmd/tables/claims"]}
    assert set(across) == set(grid) == set(ACROSS)
    for key, row in grid.items():                       # the grid shows each data set's own verdict, or "-"
        for d, v in row.items():
            own = {c["key"]: c["verdict"] for c in smoke_runs[d]["wmd/claims"]}
            assert v == own.get(key, "-"), (key, d)
    for c in across.values():
        assert c["verdict"] in ("holds", "fails", "undecided", "untested", "untestable") and c["unit"]
        if c["verdict"] == "untested":
            assert c["test"].startswith("not tested here: ") and c["statement"].endswith("[not tested here]")
        else:
            assert c["test"].startswith("bootstrap over") and c["statement"].endswith("]")
            if "conditions" in c["test"]: assert "Bonferroni level" in c["test"]
    # every data set: one condition per data set and rival, all of them corrected together
    n = len(smoke_runs)
    assert f"every of {5 * n} conditions" in across["bow-l1l1-best"]["test"]
    assert across["bow-l1l1-best"]["statement"].endswith("[on every data set run]")
    # the pooled statistic at the observed documents is the paper's rel. computed from the recorded errors
    rel = tables["wmd/tables/table2_rel"]["ours"]
    assert float(across["normalisation-beats-ot"]["ours"]) == pytest.approx(rel["BOW (None/L1)"] - 1 / rel["WMD"], abs=5e-3)
    # "five out of eight datasets": one condition per data set, holding on more than half of them
    assert across["tfidf-beats-wmd"]["statement"].endswith("[on most data sets run]")
    assert f"most of {n} conditions" in across["tfidf-beats-wmd"]["test"]
    margin = tables["wmd/tables/margin"]
    assert margin["yardstick"] == "smallest" and margin["margin"] == pytest.approx(min(margin["genuine gains"].values()))
    assert f"{margin['margin']:.3f}" in across["cost-hardly-matters"]["statement"]
    loo = tables["wmd/tables/leave_one_out"]                  # each pooled claim again with each data set left out
    assert set(loo["verdicts"]) <= set(across) and all(set(v) == {"all", *smoke_runs} for v in loo["verdicts"].values())
    assert all(loo["verdicts"][k]["all"] == across[k]["verdict"] for k in loo["verdicts"])
    text = tables["wmd/tables/conclusions"]
    f = [c["verdict"] for c in across.values()]
    tested = len(f) - f.count("untested") - f.count("untestable")
    assert f"{f.count('holds')} of the {tested} claims tested hold, {f.count('fails')} fail" in text


def test_tables_notebook_without_any_records(run_notebook):
    rec = run_notebook("wmd_tables", scale="smoke", records_dir="no-such-records-folder")
    assert rec["wmd/tables/datasets"]["present"] == [] and len(rec["wmd/tables/datasets"]["missing"]) == 7


def _records_with_every_chapter(tmp_path):
    "The smoke wmd records, plus a claims record for each other chapter (two holds, one untested, one untestable)."
    records = tmp_path / "records"; shutil.copytree(book.records_dir("smoke"), records, dirs_exist_ok=True)
    claims = [{"key": k, "verdict": v} for k, v in (("a", "holds"), ("b", "holds"), ("c", "untested"), ("d", "untestable"))]
    for part in book.chapters():
        (stem, key) = part["claims"]
        if part["chapter"] != "wmd": (records / f"{stem}.json").write_text(json.dumps({key: claims}))
    return records


def test_readme_counts_block_counts_every_verdict(tables, tmp_path):
    records = _records_with_every_chapter(tmp_path)
    block = readme_claims.counts_block(records)
    assert "| crossmatch | 4 | 2 | 0 | 0 | 1 | 1 |" in block and "| retrofit | 4 | 2 | 0 | 0 | 1 | 1 |" in block
    wmd = [c["verdict"] for c in tables["wmd/tables/claims"]]
    assert f"| wmd | {len(wmd)} | {wmd.count('holds')} | {wmd.count('fails')} |" in block
    (records / "n2o.json").unlink()
    with pytest.raises(FileNotFoundError, match="n2o.json is missing"):
        readme_claims.counts_block(records)


def test_readme_counts_block_reads_each_chapter_for_false_discoveries(tmp_path):
    """Each chapter's row counts its verdicts, then the decided verdicts that its false-discovery readings keep
    (Benjamini-Hochberg, Benjamini-Yekutieli); the sentence after the table is `fdr_summary` of every chapter's
    claims, its numbers computed from them; a decided claim without a p-value is counted as not read."""
    from embeval_nb.core import fdr_summary
    records = tmp_path / "records"; records.mkdir()
    claims = [dict(key="a", verdict="holds", p=0.001), dict(key="b", verdict="fails", p=0.02),
              dict(key="c", verdict="undecided", p=0.4), dict(key="d", verdict="untested", p=None),
              dict(key="e", verdict="holds", p=None)]
    for part in book.chapters():
        stem, key = part["claims"]
        (records / f"{stem}.json").write_text(json.dumps({key: claims}))
    block = readme_claims.counts_block(records)
    lines = block.splitlines()
    assert lines[1:3] == readme_claims.counts_header()
    assert lines[1].endswith("| untestable | kept at FDR 5% (BH) | kept at FDR 5% (BY) |")
    # BH keeps 0.001 and 0.02 (<= 0.05 * 2 / 3); BY keeps 0.001 only (0.02 > 0.05 * 2 / 3 / (1 + 1/2 + 1/3))
    for part in book.chapters():
        assert f"| {part['chapter']} | 5 | 2 | 1 | 1 | 1 | 0 | 2 | 1 |" in lines
    n = len(book.chapters())
    sentence = fdr_summary({part["chapter"]: claims for part in book.chapters()})
    assert sentence in block and sentence.startswith(f"Each of the {4 * n} claims tested")
    assert f"at most {0.05 * 4 * n:.1f} (5% of {4 * n}) of the {3 * n} decided verdicts wrong" in sentence
    assert f"{2 * n} of the {3 * n} decided verdicts are kept by Benjamini-Hochberg" in sentence
    assert f"and {n} by Benjamini-Yekutieli" in sentence and f"{n} decided verdicts come from tests stated without" in sentence


def test_readme_counts_block_header_is_the_scripts():
    "README.md's counts block has the columns the script writes, so a build rewrites the block in place."
    text = (book.ROOT / "README.md").read_text()
    block = text.split(readme_claims.COUNTS_START)[1].split(readme_claims.COUNTS_END)[0]
    assert block.splitlines()[1:3] == readme_claims.counts_header()


def _readme(tmp_path):
    "A README with the three blocks, stale."
    text = ("intro\n" + readme_claims.START + "\nSTALE-BLOCK\n" + readme_claims.END + "\nmiddle\n"
            + readme_claims.COUNTS_START + "\nSTALE\n" + readme_claims.COUNTS_END + "\nmore\n"
            + readme_claims.PAPER_START + "\nSTALE-PAPER\n" + readme_claims.PAPER_END + "\nrest\n")
    readme = tmp_path / "README.md"; readme.write_text(text)
    return readme


def test_readme_block_is_made_from_the_records(tables, tmp_path):
    records, readme = _records_with_every_chapter(tmp_path), _readme(tmp_path)
    args = ["--records", str(records), "--readme", str(readme), "--paper-records", str(tmp_path / "no-paper-records")]
    assert readme_claims.main(args + ["--check"]) == 1
    assert readme_claims.main(args) == 0
    new = readme.read_text()
    assert new.startswith("intro\n") and new.endswith("\nrest\n") and "STALE" not in new and "\nmiddle\n" in new
    assert readme_claims.main(args + ["--check"]) == 0
    for c in tables["wmd/tables/claims"]:
        assert f"| {c['statement']} | **{c['verdict']}** |" in new
    assert "No page is shown at paper scale yet" in new


def test_readme_sets_the_paper_scale_pages_beside_their_book_runs(tables, tmp_path):
    """The paper-scale block counts the verdicts of each page the book showed at paper scale and names each one that
    changed from its book-scale run, in bold, with the two tests behind it."""
    records, readme, paper = _records_with_every_chapter(tmp_path), _readme(tmp_path), tmp_path / "paper"
    paper.mkdir()
    book_run = json.loads((records / "wmd-reuters.json").read_text())
    run = json.loads(json.dumps(book_run))
    flip = run["wmd/claims"][0]; flip["verdict"] = "fails" if flip["verdict"] != "fails" else "holds"; flip["test"] = "a bigger test"
    (paper / "wmd-reuters-paper.json").write_text(json.dumps(run))
    args = ["--records", str(records), "--readme", str(readme), "--paper-records", str(paper)]
    assert readme_claims.main(args) == 0 and readme_claims.main(args + ["--check"]) == 0
    block = readme.read_text().split(readme_claims.PAPER_START)[1].split(readme_claims.PAPER_END)[0]
    was = book_run["wmd/claims"][0]
    assert block.count("verdicts change from the book's scale") == 1
    assert f"WMD on Reuters (R8) at paper scale: 1 of {len(run['wmd/claims'])} verdicts change" in block
    assert f"- {flip['statement']}: {was['verdict']} at book scale ({was['test']}), **{flip['verdict']}** at paper scale (a bigger test)." in block


# --- the book build's per-data-set pages ---------------------------------------------------------------------

def test_pages_show_the_parameters_they_ran_with():
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# Title\n\ntext"},
                    {"cell_type": "code", "metadata": {"tags": ["parameters"]},
                     "source": 'dataset = "reuters"   # which data set\nscale = "book"\nseed = 0'},
                    {"cell_type": "code", "metadata": {"tags": ["injected-parameters"]},
                     "source": '# Parameters\ndataset = "20news"\nscale = "smoke"\n'}]}
    out = book.retitle(book.hide_injected_parameters(json.loads(json.dumps(nb))), "WMD on 20 Newsgroups")
    assert out["cells"][1]["source"] == 'dataset = "20news"   # which data set\nscale = "smoke"\nseed = 0'
    assert "remove-cell" in out["cells"][2]["metadata"]["tags"]
    assert out["cells"][0]["source"] == "# WMD on 20 Newsgroups\n\ntext"


def test_further_sweep_pages_get_their_own_figure_labels():
    "Sphinx wants each label once in the book: a further run's figure names and references gain its suffix."
    fig = lambda name: {"mystnb": {"figure": {"caption": "c", "name": name}}}
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "{numref}`fig-a` and `fig-ab`, `fig-other`, fig-a"},
                    {"cell_type": "code", "metadata": fig("fig-a"), "source": "plot()  # `fig-a` in code stays"},
                    {"cell_type": "code", "metadata": fig("fig-ab"), "source": ""}]}
    out = book.relabel(json.loads(json.dumps(nb)), "-20news")
    assert out["cells"][0]["source"] == "{numref}`fig-a-20news` and `fig-ab-20news`, `fig-other`, fig-a"
    assert [c["metadata"].get("mystnb", {}).get("figure", {}).get("name") for c in out["cells"]] == [None, "fig-a-20news", "fig-ab-20news"]
    assert out["cells"][1]["source"] == nb["cells"][1]["source"]
    plain = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "`x`"}]}
    assert book.relabel(json.loads(json.dumps(plain)), "-s") == plain


def test_paper_numbers():
    "The paper's tables as the chapter reads them: every row of ours has the paper's number beside it."
    t = paper_tables("wmd")
    assert sorted(t) == ["account", "figure5", "obama", "table1", "table2", "table3", "table4", "table5", "table6", "table7",
                         "table8", "table9"]
    assert list(t["table2"].index) == TABLE2_ROWS and list(t["table7"].index) == TABLE2_ROWS
    assert list(t["table2"].columns)[-1] == "rel"
    assert paper_value(t["table2"].loc["WMD", "reuters"]) == 4.0 and paper_value(t["table2"].loc["WMD", "bbcsport"]) == 5.1
    assert t["table1"].loc["documents", "reuters"] == "7674" and paper_value(t["table9"].loc["WMD (L1/L1)", "reuters"]) == 4.2
    assert (t["table7"].loc[list(t["table3"].index)] == t["table3"]).all().all()    # Table 3 = the top of Table 7
    assert paper_value(t["figure5"].loc["full-d", "reuters"]) == 0.979 and paper_value(t["obama"].loc["obama - band", "paper"]) == 1.342
    for name in ("table2", "table3", "table4", "table5", "table6", "table7", "table8", "table9", "figure5"):
        assert t[name].drop(columns="rel", errors="ignore").map(paper_value).notna().all().all()


def test_readme_has_the_blocks():
    text = (book.ROOT / "README.md").read_text()
    for marker in (readme_claims.START, readme_claims.END, readme_claims.COUNTS_START, readme_claims.COUNTS_END,
                   readme_claims.PAPER_START, readme_claims.PAPER_END):
        assert text.count(marker) == 1
