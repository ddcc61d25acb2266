"""Write the chapters' claims and verdicts into README.md from what the book recorded, so the two cannot differ.

    python scripts/readme_claims.py            # after `make book`: rewrite the marked blocks of README.md
    python scripts/readme_claims.py --check    # exit 1 if the README's blocks are not what the records say


Three blocks, each between its markers in README.md. The verdict counts of every chapter (COUNTS_START, COUNTS_END)
come from the claims record book.yml names for the chapter (for wmd the cross-data-set verdicts of `wmd_tables.json`),
with the decided verdicts each chapter's false-discovery readings keep (`embeval_nb.core.verdict_counts`) and a
sentence on what chance alone would do to them (`fdr_summary`).
The wmd block (START, END) is made from the records of the cross-data-set page (`wmd_tables.json`: every claim's
verdict across the data sets and the per-data-set grid) and of each data set's run (`wmd-<dataset>.json`: the
verdict counts), all in the records folder of the book build. The paper-scale block (PAPER_START, PAPER_END) sets the
verdicts of every page the book shows at paper scale (its records in _build/records-paper: a book build runs such a
page once its units' records in results/ are complete, see scripts/book.py) beside those of its book-scale run.
"""
from __future__ import annotations

import argparse, json, sys
from pathlib import Path

import book  # scripts/book.py: the book's registry (book.yml) and where its records are
from embeval_nb.core import CLAIM_VERDICTS, fdr_summary, verdict_counts

ROOT = book.ROOT
START, END = "<!-- wmd-claims:start (scripts/readme_claims.py writes this block) -->", "<!-- wmd-claims:end -->"
COUNTS_START, COUNTS_END = ("<!-- claims-counts:start (scripts/readme_claims.py writes this block) -->",
                             "<!-- claims-counts:end -->")
PAPER_START, PAPER_END = ("<!-- paper-scale:start (scripts/readme_claims.py writes this block) -->",
                          "<!-- paper-scale:end -->")


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


def counts_header() -> list[str]:
    "The two header lines of the counts block's table: chapter, claims, each verdict, the decided verdicts each reading keeps."
    columns = list(verdict_counts([]))
    return ["| chapter | claims | " + " | ".join(columns) + " |", "|---|---|" + "---|" * len(columns)]


def counts_block(records: Path) -> str:
    """The README block of verdict counts: one row per chapter, from that chapter's records, with the decided verdicts
    its false-discovery readings keep; then what chance alone would do to the verdicts (`fdr_summary`)."""
    columns = list(verdict_counts([]))          # CLAIM_VERDICTS, then the two readings
    lines, chapters = [COUNTS_START, *counts_header()], {}
    for part in book.chapters():
        chapter, (stem, key) = part["chapter"], part["claims"]
        path = records / f"{stem}.json"
        if not path.is_file(): raise FileNotFoundError(f"{path} is missing: build the book first (make book)")
        chapters[chapter] = claims = json.loads(path.read_text())[key]
        n = verdict_counts(claims)
        lines.append(f"| {chapter} | {len(claims)} | " + " | ".join(str(n[c]) for c in columns) + " |")
    return "\n".join(lines + ["", fdr_summary(chapters), COUNTS_END])


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


def _claims_of(path: Path, chapter: str) -> dict[str, dict] | None:
    "{key: claim} of the claims a page run recorded in `path` (None if it did not run)."
    return {c["key"]: c for c in json.loads(path.read_text())[f"{chapter}/claims"]} if path.is_file() else None


def paper_block(records: Path, paper_records: Path) -> str:
    """The README block of the pages the book shows at paper scale (their records in `paper_records`), each beside its
    book-scale run (in `records`): how many verdicts change, and each changed claim with the two tests behind it (their
    sample sizes say why)."""
    lines = [PAPER_START]
    for name in book.paper_notebooks():
        chapter = book.reproductions()[name]
        for stem, _, page in book.paper_runs(name):
            now = _claims_of(paper_records / f"{stem}.json", chapter)
            if now is None: continue
            was = _claims_of(records / f"{stem[:-len(book.PAPER)]}.json", chapter) or {}
            changed = [k for k in now if k in was and was[k]["verdict"] != now[k]["verdict"]]
            title = book.page_titles({f"{page}{book.PAPER}"})[f"{page}{book.PAPER}"]
            counts = ", ".join(f"{sum(c['verdict'] == v for c in now.values())} {v}" for v in CLAIM_VERDICTS)
            lines += [f"{title}: {len(changed)} of {len(now)} verdicts change from the book's scale ({counts})"
                      + (":" if changed else "."), ""]
            lines += [f"- {now[k]['statement']}: {was[k]['verdict']} at book scale ({was[k]['test']}), "
                      f"**{now[k]['verdict']}** at paper scale ({now[k]['test']})." for k in changed] + ([""] if changed else [])
    if len(lines) == 1:
        lines.append("No page is shown at paper scale yet: none has all its unit records done and current "
                     "(`python scripts/paper.py --status` says how far they are).")
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
    ap.add_argument("--paper-records", type=Path, default=None,
                    help="records folder of the pages shown at paper scale (default: _build/records-paper)")
    a = ap.parse_args(argv)
    text = a.readme.read_text()
    records = a.records or book.records_dir("book")
    new = rewrite(rewrite(text, block(records)), counts_block(records), COUNTS_START, COUNTS_END)
    new = rewrite(new, paper_block(records, a.paper_records or book.records_dir("paper")), PAPER_START, PAPER_END)
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
