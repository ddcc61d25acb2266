"""Write the chapters' claims and verdicts into README.md from what the book recorded, so the two cannot differ.

    python scripts/readme_claims.py            # after `make book`: rewrite the marked blocks of README.md
    python scripts/readme_claims.py --check    # exit 1 if the README's blocks are not what the records say

    python scripts/readme_claims.py --paper-run my-records/records.json
                                               # also keep what the README shows of a wmd run at scale="paper"

Three blocks, each between its markers in README.md. The verdict counts of every chapter (COUNTS_START, COUNTS_END)
come from the claims record book.yml names for the chapter (for wmd the cross-data-set verdicts of `wmd_tables.json`).
The wmd block (START, END) is made from the records of the cross-data-set page (`wmd_tables.json`: every claim's
verdict across the data sets and the per-data-set grid) and of each data set's run (`wmd-<dataset>.json`: the
verdict counts), all in the records folder of the book build. The paper-scale block (PAPER_START, PAPER_END) sets
each wmd run at scale="paper" kept in `results/wmd-<dataset>-paper.json` (a summary of its records, written by
--paper-run: such a run takes hours, so it is not part of the book build) beside the book's run of that data set.
"""
from __future__ import annotations

import argparse, json, sys
from pathlib import Path

import book  # scripts/book.py: the book's registry (book.yml) and where its records are
from embeval_nb.core import CLAIM_VERDICTS

ROOT = book.ROOT
START, END = "<!-- wmd-claims:start (scripts/readme_claims.py writes this block) -->", "<!-- wmd-claims:end -->"
COUNTS_START, COUNTS_END = ("<!-- claims-counts:start (scripts/readme_claims.py writes this block) -->",
                             "<!-- claims-counts:end -->")
PAPER_START, PAPER_END = ("<!-- wmd-paper-scale:start (scripts/readme_claims.py writes this block) -->",
                          "<!-- wmd-paper-scale:end -->")
RESULTS = ROOT / "results"     # summaries of the runs too long for the book build


def block(records: Path) -> str:
    "The README block: the verdict counts per data set, then every claim with its verdict across the data sets."
    tables = records / "wmd_tables.json"
    if not tables.is_file(): raise FileNotFoundError(f"{tables} is missing: build the book first (make book)")
    rec = json.loads(tables.read_text())
    claims, grid, present = rec["wmd/tables/claims"], rec["wmd/tables/grid"], rec["wmd/tables/datasets"]["present"]
    scales = {}
    per_set = []
    for d in present:
        run = _run(d, records)
        scales[d] = run["wmd/setup"]["scale"]
        n = {v: sum(c["verdict"] == v for c in run["wmd/claims"]) for v in CLAIM_VERDICTS}
        per_set.append(f"{d} {n['holds']} / {n['fails']} / {n['undecided']}" + (f" / {n['untested']}" if n["untested"] else "")
                       + (f" (+{n['untestable']} untestable)" if n["untestable"] else ""))
    total = {v: sum(c["verdict"] == v for c in claims) for v in CLAIM_VERDICTS}
    lines = [START, "| data set | splits | training docs | test docs | BOW (L1/L1) error % (paper) | WMD error % (paper) | minutes |",
             "|---|---|---|---|---|---|---|"]
    for d in present:
        lines.append(run_row(d, records))
    lines += ["", "Error: ours (the paper's, 300-d word2vec) [exact 95% interval over the test documents]."]
    lines += ["",
             f"Claims and verdicts as the book shows them ({', '.join(sorted(set(scales.values())))} scale, "
             f"{len(present)} data sets). Per data set, holds / fails / undecided (/ untested): {'; '.join(per_set)}. "
             f"Across the data sets {total['holds']} of the {len(claims)} claims tested hold, {total['fails']} fail, "
             f"{total['undecided']} are undecided, {total['untested']} cannot be tested here and {total['untestable']} "
             "have a test that cannot reach one of the verdicts it might report (a claim about the "
             "average over data sets by a pooled bootstrap resampling within each data set, a claim about every data "
             "set by one test over all data sets and rivals at the Bonferroni-corrected level; each data set's page "
             "decides only the claims about that data set):",
             "",
             "| claim | across the data sets | " + " | ".join(present) + " |",
             "|---|---|" + "---|" * len(present)]
    for c in claims:
        cells = [grid[c["key"]].get(d, "-") for d in present]
        lines.append(f"| {c['statement']} | **{c['verdict']}** | " + " | ".join(cells) + " |")
    lines.append(END)
    return "\n".join(lines)


def counts_block(records: Path) -> str:
    "The README block of verdict counts: one row per chapter, from that chapter's records."
    lines = [COUNTS_START, "| chapter | claims | holds | fails | undecided | untested | untestable |",
             "|---|---|---|---|---|---|---|"]
    for part in book.chapters():
        chapter, (stem, key) = part["chapter"], part["claims"]
        path = records / f"{stem}.json"
        if not path.is_file(): raise FileNotFoundError(f"{path} is missing: build the book first (make book)")
        claims = json.loads(path.read_text())[key]
        n = [sum(c["verdict"] == v for c in claims) for v in CLAIM_VERDICTS]
        lines.append(f"| {chapter} | {len(claims)} | " + " | ".join(map(str, n)) + " |")
    return "\n".join(lines + [COUNTS_END])


def _run(d: str, records: Path) -> dict:
    "The records of data set `d`'s run."
    for p in sorted(records.glob("wmd*.json")):
        rec = json.loads(p.read_text())
        if rec.get("wmd/setup", {}).get("dataset") == d: return rec
    raise FileNotFoundError(f"no record of a wmd run on {d} in {records}")


def run_row(d: str, records: Path) -> str:
    "One line of the README's table of runs: sizes, the two headline errors with the paper's and their intervals, minutes."
    from embeval_nb.core import paper_tables
    rec, paper = _run(d, records), paper_tables("wmd")["table2"]
    s = rec["wmd/setup"]
    cell = lambda row: (f'{rec["wmd/table2"][row]["mean"]:.1f} ({paper.loc[row, d]}) '
                        f'[{rec["wmd/table2"][row]["interval"][0]:.1f}, {rec["wmd/table2"][row]["interval"][1]:.1f}]')
    return (f'| {d} | {s["splits_run"]} of {s["splits_available"]} | {s["n_train"][0]} of {s["train_total"][0]} | '
            f'{s["n_test"][0]} of {s["test_total"][0]} | {cell("BOW (L1/L1)")} | {cell("WMD")} | '
            f'{rec["wmd/timings"]["total"] / 60:.1f} |')


def paper_summary(rec: dict) -> dict:
    "What the README keeps of the records `rec` of a wmd run at scale='paper': its setup, Table 2, its claims and its minutes."
    setup = rec["wmd/setup"]
    if setup["scale"] != "paper": raise ValueError(f"the records are of a run at scale={setup['scale']!r}, not 'paper'")
    keep = lambda d, keys: {k: d[k] for k in keys}
    return {"setup": keep(setup, ("dataset", "scale", "seed", "splits_run", "splits_available", "n_train", "train_total",
                                  "n_test", "test_total", "n_validation", "n_test_ablation")),
            "table2": {row: keep(v, ("mean", "interval", "n_errors", "n_test")) for row, v in rec["wmd/table2"].items()},
            "claims": [keep(c, ("key", "statement", "verdict", "test")) for c in rec["wmd/claims"]],
            "minutes": {part: seconds / 60 for part, seconds in rec["wmd/timings"].items()},
            "searches": {"minutes": rec["wmd/searches"]["seconds"] / 60, "read_back": rec["wmd/searches"]["read_back"]}}


def _error_cell(row: dict) -> str:
    "An error in % with its 95% interval."
    return f'{row["mean"]:.1f} [{row["interval"][0]:.1f}, {row["interval"][1]:.1f}]'


def _sittings(run: dict) -> str:
    "How the run was made, if in several sittings: how many searches the last one read back, and how long it took."
    n = run["searches"]["read_back"]
    if n == 0: return f", the whole page {run['minutes']['total']:.0f} minutes"
    return (f", as they ran (the page was run in several sittings: the last read {n} searches back from the cache "
            f"and took {run['minutes']['total']:.0f} minutes)")


def paper_block(records: Path, results: Path = RESULTS) -> str:
    "The README block of the paper-scale runs in `results`, each beside the book's run of its data set (if `records` has one)."
    from embeval_nb.core import paper_tables
    paper = paper_tables("wmd")["table2"]
    lines = [PAPER_START]
    for path in sorted(results.glob("wmd-*-paper.json")):
        run = json.loads(path.read_text()); s = run["setup"]; d = s["dataset"]
        try: book_run = _run(d, records)
        except FileNotFoundError: book_run = None
        book_rows = book_run["wmd/table2"] if book_run else {}
        book_claims = {c["key"]: c["verdict"] for c in book_run["wmd/claims"]} if book_run else {}
        n_book = book_run["wmd/setup"]["n_test"][0] if book_run else "-"
        lines += [f"{d} at scale=\"paper\": all {s['n_train'][0]} of {s['train_total'][0]} training and "
                  f"{s['n_test'][0]} of {s['test_total'][0]} test documents, every validation document and the appendix "
                  f"ablations on all test documents. Its WMD searches took {run['searches']['minutes']:.0f} minutes "
                  f"on this machine with two workers{_sittings(run)}. Errors in % [exact 95% interval over the test "
                  f"documents]; the book's run classifies {n_book} test documents.", "",
                  f"| Table 2 row | book scale ({n_book} test docs) | paper scale ({s['n_test'][0]} test docs) | paper |",
                  "|---|---|---|---|"]
        rows = [r for r in paper.index if r in run["table2"]] + [r for r in run["table2"] if r not in paper.index]
        for row in rows:
            v = run["table2"][row]
            lines.append(f"| {row} | {_error_cell(book_rows[row]) if row in book_rows else '-'} | {_error_cell(v)} | "
                         f"{paper.loc[row, d] if row in paper.index else '-'} |")
        changed = [c for c in run["claims"] if c["key"] in book_claims and book_claims[c["key"]] != c["verdict"]]
        lines += ["", f"{d}'s claims at both scales: {len(changed)} of {len(run['claims'])} verdicts change with "
                  f"{s['n_test'][0]} test documents instead of {n_book}.", "",
                  "| claim | book scale | paper scale |", "|---|---|---|"]
        for c in run["claims"]:
            was = book_claims.get(c["key"], "-"); now = f"**{c['verdict']}**" if was not in ("-", c["verdict"]) else c["verdict"]
            lines.append(f"| {c['statement']} | {was} | {now} |")
        lines.append("")
    return "\n".join(lines + [PAPER_END])


def rewrite(text: str, new_block: str, start: str = START, end: str = END) -> str:
    "README text with its block between `start` and `end` replaced by `new_block`."
    if start not in text or end not in text:
        raise ValueError(f"README.md has no block between {start!r} and {end!r}")
    head, rest = text.split(start, 1)
    return head + new_block + rest.split(end, 1)[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only check that README.md says what the records say")
    ap.add_argument("--records", type=Path, default=None, help="records folder (default: _build/records)")
    ap.add_argument("--readme", type=Path, default=ROOT / "README.md")
    ap.add_argument("--results", type=Path, default=RESULTS, help="folder of the paper-scale summaries (default: results)")
    ap.add_argument("--paper-run", type=Path, default=None,
                    help="records file of a wmd run at scale='paper': keep its summary in the results folder first")
    a = ap.parse_args(argv)
    if a.paper_run is not None:
        summary = paper_summary(json.loads(a.paper_run.read_text()))
        out = a.results / f"wmd-{summary['setup']['dataset']}-paper.json"; out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
        print(f"{out}: summary of the paper-scale run written")
    text = a.readme.read_text()
    records = a.records or book.records_dir("book")
    new = rewrite(rewrite(text, block(records)), counts_block(records), COUNTS_START, COUNTS_END)
    new = rewrite(new, paper_block(records, a.results), PAPER_START, PAPER_END)
    if a.check:
        if new != text:
            print(f"{a.readme}: the claims blocks differ from the book's records; run scripts/readme_claims.py",
                  file=sys.stderr)
            return 1
        print(f"{a.readme}: the claims blocks match the records")
        return 0
    a.readme.write_text(new)
    print(f"{a.readme}: claims blocks written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
