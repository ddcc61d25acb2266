"""Write the files that follow from book.yml, so that a new page or chapter needs no list edited by hand.

    python scripts/sync_book.py            # rewrite _toc.yml and the API page's module sections
    python scripts/sync_book.py --check    # exit 1, naming the files, if either is not what book.yml says

Two files are generated and committed:
- `_toc.yml` at the top level, beside `_config.yml`: the Jupyter Book toc of the whole book at book scale (every
  page, every run of a sweep), the same toc the build writes into its staging folder (`book.toc`);
- the module sections of the API page (`nbs/api.ipynb`): one section per notebook of book.yml that exports a
  module (`#| default_exp <module>`), in reading order, foundation modules under their part's caption and chapter
  modules under "Chapters". The cells above the first section (the page's title and its rendering code) are kept.
`make new-chapter` runs it; the test suite checks that both are in sync.
"""
from __future__ import annotations

import argparse, json, sys
from pathlib import Path

import book  # scripts/book.py: the registry

COMMAND = "python scripts/sync_book.py"
TOC_HEADER = ("# Generated from book.yml by scripts/sync_book.py: do not edit. Edit book.yml, then run\n"
              f"# `{COMMAND}` (the build writes the same toc into its staging folder).\n")


def toc_text() -> str:
    "The text of the top-level _toc.yml: the whole book's toc at book scale, after a header naming its source."
    import yaml
    return TOC_HEADER + yaml.safe_dump(book.toc(set(book.toc_pages())), sort_keys=False)


def exported_module(name: str) -> str | None:
    "The module that notebook nbs/<name>.ipynb exports (its `#| default_exp` line), None if it exports none or is missing."
    path = book.ROOT / "nbs" / f"{name}.ipynb"
    if not path.is_file(): return None          # the registry's test names the missing notebook
    cells = json.loads(path.read_text())["cells"]
    lines = (l for c in cells if c["cell_type"] == "code" for l in book._source(c).splitlines())
    return next((l.split()[-1] for l in lines if l.startswith("#| default_exp")), None)


def api_sections() -> list[tuple[str, str, str]]:
    """(heading of the group, module, notebook) for each notebook of book.yml that exports a module, in reading order:
    a chapter's module under "Chapters", any other under its part's caption."""
    out = []
    for part in book.registry()["parts"]:
        group = "Chapters" if "chapter" in part else part["caption"]
        out += [(group, m, e["page"]) for e in book._pages(part["pages"]) if (m := exported_module(e["page"]))]
    return out


def _cell(kind: str, cell_id: str, source: str, tags: list[str] | None = None) -> dict:
    "A notebook cell as nbdev_clean leaves it."
    cell = {"cell_type": kind, "id": cell_id, "metadata": {"tags": tags} if tags else {},
            "source": source.splitlines(keepends=True)}
    return {**cell, "execution_count": None, "outputs": []} if kind == "code" else cell


def api_cells() -> list[dict]:
    "The API page's generated cells: per group an H2 heading, per module an H3 heading, its page, and `api(module)`."
    cells, group_seen = [], None
    for group, module, page in api_sections():
        if group != group_seen:
            cells.append(_cell("markdown", f"group-{group.lower().replace(' ', '-')}", f"## {group}"))
            group_seen = group
        where = (f"the chapter's implementation page, {{doc}}`{page}`" if group == "Chapters"
                 else f"its {group} page, {{doc}}`{page}`")
        cells.append(_cell("markdown", f"{module}-title", f"### `embeval_nb.{module}`\n\nExplained on {where}."))
        cells.append(_cell("code", f"{module}-api", f'api("{module}")', ["remove-input"]))
    return cells


API_PAGE = Path("nbs") / "api.ipynb"


def _notebook_text(nb: dict) -> str:
    "A notebook as nbdev writes it (sorted keys, one-space indent, a final newline)."
    return json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def api_page_text() -> str:
    "nbs/api.ipynb with its cells from the first H2 heading on replaced by `api_cells()`."
    nb = json.loads((book.ROOT / API_PAGE).read_text())
    head = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown" and book._source(cell).startswith("## "): break
        head.append(cell)
    return _notebook_text({**nb, "cells": head + api_cells()})


def generated() -> dict[Path, str]:
    "{path relative to the repository: the text book.yml says it holds}."
    return {Path("_toc.yml"): toc_text(), API_PAGE: api_page_text()}


def stale() -> list[str]:
    "The generated files whose text differs from what book.yml says (missing ones included)."
    return [str(p) for p, text in generated().items()
            if not (book.ROOT / p).is_file() or (book.ROOT / p).read_text() != text]


def write() -> list[str]:
    "Rewrite every stale generated file; returns their paths."
    changed = stale()
    for p, text in generated().items():
        if str(p) in changed: (book.ROOT / p).write_text(text)
    return changed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only say which generated files are stale (exit 1 if any)")
    a = ap.parse_args(argv)
    if a.check:
        changed = stale()
        if changed: print(f"not what book.yml says: {', '.join(changed)}; run `{COMMAND}`", file=sys.stderr)
        return 1 if changed else 0
    for p in write(): print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
