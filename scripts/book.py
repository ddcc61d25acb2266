"""Build the book: run every notebook of _toc.yml through papermill, stage the outputs, run Jupyter Book.

    python scripts/book.py                 # default parameters (scale="book"), HTML in _build/html
    python scripts/book.py --scale smoke   # small parameters, what `make test` builds and checks

Notebooks with a `parameters` cell get `scale` (only when not "book", so the book runs each notebook's own
defaults). A notebook listed in SWEEPS is run once per value of its sweep parameter; every run writes its
recorded numbers to _build/records/<notebook>-<value>.json and is a page of its own: the first value's run is
the page `<notebook>`, each further value's run the page `<notebook>-<value>`. _toc.yml lists those pages
(with their titles) like any other; a page whose run is not part of this build (the smoke build runs fewer
values) is left out of the staged toc. Pages that assemble other pages' records (SUMMARIES) run after every
other chapter page, the landing page last.
"""
from __future__ import annotations

import argparse, json, os, shutil, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("EMBEVAL_BUILD_DIR", ROOT / "_build"))  # another folder lets two test runs share a tree
SWEEPS = {"wmd": ("dataset", ["reuters", "20news", "ohsumed", "bbcsport", "twitter", "classic", "amazon"])}
SMOKE_SWEEPS = {"wmd": ("dataset", ["reuters", "bbcsport"])}   # the first value of SWEEPS first: it is the page `<notebook>`
SUMMARIES = ("wmd_tables",)   # read the records of other pages: executed after them


def sweep_pages() -> dict[str, tuple[str, str]]:
    "{page: (notebook, sweep value)} for every run of every sweep at book scale (the first run's page is the notebook's)."
    return {(name if i == 0 else f"{name}-{v}"): (name, v)
            for name, (_, values) in SWEEPS.items() for i, v in enumerate(values)}


def _toc_entries(toc: dict) -> list[dict]:
    "Every entry of a parsed toc with a `file`, in order (chapters and their sections, nested)."
    out = []
    def walk(entries):
        for e in entries:
            out.append(e); walk(e.get("sections", []))
    for part in toc.get("parts", []): walk(part.get("chapters", []))
    return out


def toc_pages() -> list[str]:
    "Page names (without nbs/ and .ipynb) in the order of _toc.yml, generated sweep pages included."
    import yaml
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [Path(f).name for f in [toc["root"]] + [e["file"] for e in _toc_entries(toc)]]


def toc_notebooks() -> list[str]:
    "Notebook names (without nbs/ and .ipynb) in the order of _toc.yml: its pages except the further runs of a sweep."
    generated = {page for page, (name, _) in sweep_pages().items() if page != name}
    return [p for p in toc_pages() if p not in generated]


def has_parameters(name: str) -> bool:
    nb = json.loads((ROOT / "nbs" / f"{name}.ipynb").read_text())
    return any("parameters" in c.get("metadata", {}).get("tags", []) for c in nb["cells"])


def runs(name: str, scale: str) -> list[tuple[str, dict]]:
    "(output stem, parameters) for each papermill run of notebook `name`."
    params = {"scale": scale} if scale != "book" and has_parameters(name) else {}
    sweep = (SMOKE_SWEEPS if scale == "smoke" else SWEEPS).get(name)
    if sweep is None: return [(name, params)]
    key, values = sweep
    return [(f"{name}-{v}", {**params, key: v}) for v in values]


def page_of(name: str, stem: str, params: dict) -> str:
    "The page that the run `stem` of notebook `name` with `params` becomes (see `sweep_pages`)."
    if name not in SWEEPS: return name
    value = params[SWEEPS[name][0]]
    return next(page for page, run in sweep_pages().items() if run == (name, value))


def executed_dir(scale: str) -> Path:
    return BUILD / ("executed" if scale == "book" else f"executed-{scale}")


def records_dir(scale: str) -> Path:
    return BUILD / ("records" if scale == "book" else f"records-{scale}")


def execute(name: str, stem: str, params: dict, scale: str) -> Path:
    "Run nbs/<name>.ipynb with `params` into the scale's executed folder, recording to <records>/<stem>.json."
    import papermill as pm
    out = executed_dir(scale) / f"{stem}.ipynb"; out.parent.mkdir(parents=True, exist_ok=True)
    records = records_dir(scale) / f"{stem}.json"; records.parent.mkdir(parents=True, exist_ok=True)
    if records.exists(): records.unlink()
    os.environ["EMBEVAL_RECORD_DIR"] = str(records.parent)
    os.environ["EMBEVAL_RECORD_FILE"] = str(records)
    os.environ["EMBEVAL_PROGRESS"] = "0"  # progress bars are for interactive runs, not for the pages
    t = time.time()
    pm.execute_notebook(str(ROOT / "nbs" / f"{name}.ipynb"), str(out), parameters=params, cwd=str(ROOT),
                        kernel_name="python3", progress_bar=False)
    print(f"[book] {stem}: {time.time() - t:.0f} s {params}", flush=True)
    return out


def _source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def hide_injected_parameters(nb: dict) -> dict:
    """Show the parameters a page was run with in the notebook's own parameters cell: each value papermill injected
    replaces the default of the same name there (its comment kept), and the injected cell is tagged `remove-cell`."""
    import re
    cells = nb["cells"]
    tags = lambda c: c.get("metadata", {}).get("tags", [])
    injected = [c for c in cells if "injected-parameters" in tags(c)]
    own = next((c for c in cells if "parameters" in tags(c)), None)
    for cell in injected:
        if own is not None:
            values = dict(re.findall(r"^(\w+) = (.*)$", _source(cell), re.M))
            lines = [re.sub(r"^(\w+)(\s*=\s*)(.*?)(\s*#.*)?$",
                            lambda m: m[1] + m[2] + values.get(m[1], m[3]) + (m[4] or ""), line)
                     for line in _source(own).split("\n")]
            own["source"] = "\n".join(lines)
        if "remove-cell" not in tags(cell): cell.setdefault("metadata", {}).setdefault("tags", []).append("remove-cell")
    return nb


def retitle(nb: dict, title: str) -> dict:
    "Replace the page's `# ` title (the first line of its first markdown cell) with `title`."
    first = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
    lines = _source(first).split("\n")
    if lines[0].startswith("# "): first["source"] = "\n".join([f"# {title}"] + lines[1:])
    return nb


def relabel(nb: dict, suffix: str) -> dict:
    """Append `suffix` to every figure name the notebook defines (`mystnb.figure.name`) and to its references to them:
    each run of a sweep is a page of its own, and Sphinx wants every label once in the book."""
    import re
    figures = [c.get("metadata", {}).get("mystnb", {}).get("figure", {}) for c in nb["cells"]]
    names = {f["name"] for f in figures if "name" in f}
    if not names: return nb
    pattern = re.compile(r"`(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + r")`")
    for cell, figure in zip(nb["cells"], figures):
        if "name" in figure: figure["name"] += suffix
        if cell["cell_type"] == "markdown": cell["source"] = pattern.sub(lambda m: f"`{m[1]}{suffix}`", _source(cell))
    return nb


def staged_toc(pages: set[str]) -> dict:
    "_toc.yml without the sweep pages that are not in `pages` (runs this build did not make)."
    import yaml
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    generated = set(sweep_pages())
    keep = lambda e: Path(e["file"]).name in pages or Path(e["file"]).name not in generated
    def prune(entries):
        out = []
        for e in entries:
            if not keep(e): continue
            if "sections" in e:
                e["sections"] = prune(e["sections"])
                if not e["sections"]: del e["sections"]
            out.append(e)
        return out
    for part in toc.get("parts", []): part["chapters"] = prune(part["chapters"])
    return toc


def stage(executed: dict[str, Path], dest: Path) -> Path:
    "Copy config, toc, executed notebooks (`{page: path}`) and MathJax into dest, the folder Jupyter Book builds."
    import yaml
    if dest.exists(): shutil.rmtree(dest)
    (dest / "nbs").mkdir(parents=True)
    for f in ("_config.yml", "references.bib"): shutil.copy(ROOT / f, dest / f)
    toc = staged_toc(set(executed))
    (dest / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))
    titles = {Path(e["file"]).name: e["title"] for e in _toc_entries(toc) if "title" in e}
    shutil.copytree(ROOT / "_ext", dest / "_ext")
    sweeps = sweep_pages()
    for page, path in executed.items():
        nb = hide_injected_parameters(json.loads(path.read_text()))
        if page in sweeps:
            name, value = sweeps[page]
            if page in titles: nb = retitle(nb, titles[page])
            if page != name: nb = relabel(nb, f"-{value}")
        (dest / "nbs" / f"{page}.ipynb").write_text(json.dumps(nb))
    mathjax = ROOT / "node_modules" / "mathjax" / "es5"
    if not mathjax.is_dir():
        raise FileNotFoundError(f"{mathjax} is missing: run `npm ci` (the Makefile does) to install MathJax")
    shutil.copytree(mathjax, dest / "_assets" / "mathjax")
    return dest


def build(scale: str = "book", only: list[str] | None = None) -> Path:
    "Execute (all, or only the notebooks in `only` plus any never run), stage and build; returns the HTML folder."
    executed = {}
    names = toc_notebooks()
    order = [n for n in names[1:] if n not in SUMMARIES] + [n for n in names[1:] if n in SUMMARIES] + names[:1]
    for name in order:  # summaries after the pages they read, the landing page last: it summarises every chapter
        for stem, params in runs(name, scale):
            path = executed_dir(scale) / f"{stem}.ipynb"
            if only is None or name in only or not path.exists():
                path = execute(name, stem, params, scale)
            executed[page_of(name, stem, params)] = path
    pages = [p for p in toc_pages() if p in executed]
    for page in sorted(set(executed) - set(pages)): print(f"[book] {page} is not in _toc.yml: not staged", flush=True)
    src = stage({page: executed[page] for page in pages}, BUILD / f"book-src-{scale}")
    subprocess.run([str(Path(sys.executable).parent / "jupyter-book"), "build", str(src), "--warningiserror", "--keep-going",
                    "--quiet"], check=True, cwd=ROOT)
    html = BUILD / ("html" if scale == "book" else f"html-{scale}")
    if html.exists(): shutil.rmtree(html)
    shutil.copytree(src / "_build" / "html", html)
    print(f"[book] built {html / 'index.html'}")
    if scale == "book":   # the README's verdicts are generated from these records: say when they are stale
        import readme_claims
        if readme_claims.main(["--records", str(records_dir(scale)), "--check"]) != 0:
            print("[book] README.md's claims blocks are stale: run scripts/readme_claims.py", flush=True)
    return html


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", default="book", choices=["smoke", "book", "paper"])
    ap.add_argument("--only", nargs="*", help="re-execute only these notebooks; reuse earlier outputs of the rest")
    a = ap.parse_args()
    build(a.scale, a.only)
