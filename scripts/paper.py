"""Run the chapters' paper-scale units and keep their records under results/ (see the book's page on runs).

    python scripts/paper.py --chapter wmd --hours 2.5          # run what is missing or stale, stop within 2.5 hours
    python scripts/paper.py --status                           # per chapter and table: done, missing, stale, CPU h left
    python scripts/paper.py --chapter wmd --verify 5           # recompute 5 random done units, compare with their records
    python scripts/paper.py --chapter wmd --only 'reuters/*'   # only the units whose table or name matches
    python scripts/paper.py --chapter wmd --scheduler tcp://host:8786   # as tasks on a dask.distributed cluster

Each record is written atomically as its unit finishes, so a run stopped at any moment keeps what it finished;
commit results/ and the next run goes on from there. `make paper CH=wmd HOURS=2.5` calls this script.
"""
from __future__ import annotations

import argparse, fnmatch, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def paper_chapters() -> list[str]:
    "The chapters of book.yml whose modules declare paper-scale units, in the book's order."
    from book import chapters
    from embeval_nb.runs import chapter_module
    out = []
    for ch in chapters():
        try: chapter_module(ch["chapter"]); out.append(ch["chapter"])
        except ValueError: pass
    return out


def selected_units(chapters: list[str], only: list[str]) -> list:
    "Every unit of `chapters` whose table or name matches one of the `only` patterns (all of them if none)."
    from embeval_nb.runs import chapter_units
    units = [u for ch in chapters for u in chapter_units(ch)]
    if only: units = [u for u in units if any(fnmatch.fnmatch(u.table, p) or fnmatch.fnmatch(u.name, p) for p in only)]
    return units


def parser() -> argparse.ArgumentParser:
    "The command line of this script (`make paper CH=... HOURS=...` calls it)."
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], epilog=__doc__.split("\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chapter", action="append", default=[], help="a chapter of book.yml (repeatable; default: every chapter with units)")
    ap.add_argument("--only", action="append", default=[], help="glob on a unit's table or name, e.g. 'reuters/table2' (repeatable)")
    ap.add_argument("--hours", type=float, default=None, help="time budget: no unit is started that would end after it")
    ap.add_argument("--workers", type=int, default=2, help="local worker processes (default 2)")
    ap.add_argument("--scheduler", default=None, help="address of a dask.distributed scheduler to run the units on")
    ap.add_argument("--results", default=None, help="results folder (default: results/ of this checkout)")
    ap.add_argument("--status", action="store_true", help="list units done, missing and stale per table, and the CPU hours left")
    ap.add_argument("--verify", type=int, default=None, metavar="N", help="recompute N random done units and compare them with their records")
    ap.add_argument("--force", action="store_true", help="run done units again too")
    return ap


def main(argv=None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    from embeval_nb.runs import run_units, status, verify_units, write_manifest

    known = paper_chapters()
    if bad := [c for c in args.chapter if c not in known]:
        ap.error(f"--chapter {bad[0]!r}: the chapters with paper-scale units are {', '.join(known) or 'none'}")
    if args.hours is not None and not args.hours > 0: ap.error(f"--hours must be above 0, got {args.hours}")
    if args.workers < 1: ap.error(f"--workers must be at least 1, got {args.workers}")
    if args.verify is not None and args.verify < 1: ap.error(f"--verify must be at least 1, got {args.verify}")
    units = selected_units(args.chapter or known, args.only)
    if not units: ap.error(f"no unit matches --only {args.only}")

    if args.status:
        import pandas as pd
        frame = status(units, args.results)
        with pd.option_context("display.max_rows", None, "display.width", 200):
            print(frame.round(2).to_string())
            totals = frame.groupby(level="chapter").sum(numeric_only=True).round(2)
            print("\n" + totals.to_string())
        return 0
    if args.verify is not None:
        outcome = verify_units(units, args.verify, seed=int(time.time()), root=args.results)
        for name, problem in outcome.items(): print(f"{'ok' if problem is None else 'DIFFERS'}  {name}" + (f": {problem}" if problem else ""))
        return 0 if all(p is None for p in outcome.values()) else 1
    report = run_units(units, hours=args.hours, workers=args.workers, scheduler=args.scheduler, root=args.results, force=args.force)
    write_manifest(args.results)
    print(f"{len(report.finished)} units finished ({report.cpu_seconds / 3600:.2f} CPU h) in {report.wall_seconds / 3600:.2f} h; "
          f"{len(report.left)} left" + (f"; {len(report.failed)} failed:" if report.failed else ""))
    for name, error in report.failed.items(): print(f"  {name}: {error}")
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
