"""Build the book: run the notebooks of book.yml through papermill, reuse what has not changed, run Jupyter Book.

    python scripts/book.py                    # default parameters (scale="book"), HTML in _build/html
    python scripts/book.py --scale smoke      # small parameters, what `make test` builds and checks
    python scripts/book.py --chapter wmd      # one chapter's pages only, HTML in _build/html-wmd

book.yml declares the book: parts, pages, chapters, sweeps (a notebook run once per value of a parameter, each run
a page of its own), the pages that read other pages' records, and the pages also shown at paper scale: a book
build runs each of those once more with scale="paper" and missing="error" (page `<page>-paper`, right after its
book page) when the committed unit records of its tables (results/, see embeval_nb.runs) are all done and
current, and says how far they are otherwise. Notebooks with a `parameters` cell get `scale`
(only when not "book", so the book runs each notebook's own defaults). Every run writes its executed notebook to
_build/executed/<stem>.ipynb, its recorded numbers to _build/records/<stem>.json, and what it depended on to
_build/executed/<stem>.inputs.json: the notebook, its parameters, the package source, the lock and the records
it read. A later build runs a notebook again only when one of those changed (or its outputs are missing), so a
build with nothing changed runs nothing, and an edit to one chapter reruns that chapter and the pages that read
its records. Before anything runs, the build stops if `nbdev_export` would change the package.
"""
from __future__ import annotations

import argparse, copy, functools, hashlib, json, os, shutil, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("EMBEVAL_BUILD_DIR", ROOT / "_build"))  # another folder lets two test runs share a tree


def registry() -> dict:
    "book.yml, parsed: the book's parts, pages and chapters (the file's header says what each key means)."
    return copy.deepcopy(_parsed((ROOT / "book.yml").read_text()))


@functools.lru_cache(maxsize=4)
def _parsed(text: str) -> dict:
    "book.yml's text parsed once, however often the registry is asked for (a new text is parsed again)."
    import yaml
    return yaml.safe_load(text)


def _page(entry) -> dict:
    "A page entry of book.yml as a mapping {page, reads, sweep, sections}."
    entry = {"page": entry} if isinstance(entry, str) else dict(entry)
    return {"reads": [], "sweep": None, "sections": [], **entry}


def _pages(entries) -> list[dict]:
    "Every page entry under `entries`, depth first in reading order (sections after their page)."
    out = []
    for e in map(_page, entries):
        out += [e] + _pages(e["sections"])
    return out


def _all_pages() -> list[dict]:
    "Every page entry of book.yml but the root, in reading order (see `_pages`)."
    return [e for part in registry()["parts"] for e in _pages(part["pages"])]


def chapters() -> list[dict]:
    "The chapter parts of book.yml in order: chapter (module), title, paper, reproduces, claims, pages."
    return [part for part in registry()["parts"] if "chapter" in part]


def reproductions() -> dict[str, str]:
    "{page: chapter} for every page of a chapter but its theory and implementation pages: the pages that run the paper."
    return {e["page"]: part["chapter"] for part in chapters() for e in _pages(part["pages"])
            if e["page"] not in (f"{part['chapter']}_theory", f"{part['chapter']}_impl")}


def notebooks() -> list[str]:
    "Every notebook of the book (names under nbs/ without .ipynb): the root first, then in reading order."
    return [registry()["root"]] + [e["page"] for e in _all_pages()]


def sweeps(scale: str = "book") -> dict[str, tuple[str, list[str]]]:
    "{notebook: (parameter, values)} for every notebook run once per value; a smoke build runs the `smoke` values."
    return {e["page"]: (e["sweep"]["parameter"], list(e["sweep"]["smoke" if scale == "smoke" else "titles"]))
            for e in _all_pages() if e["sweep"]}


def sweep_pages() -> dict[str, tuple[str, str]]:
    "{page: (notebook, sweep value)} for every run of every sweep at book scale (the first run's page is the notebook's)."
    return {(name if i == 0 else f"{name}-{v}"): (name, v)
            for name, (_, values) in sweeps().items() for i, v in enumerate(values)}


def toc_pages() -> list[str]:
    "Every page of a book-scale build in reading order: the notebooks, each sweep's further runs after its first."
    further = {}
    for page, (name, _) in sweep_pages().items():
        if page != name: further.setdefault(name, []).append(page)
    return [p for name in notebooks() for p in [name] + further.get(name, [])]


def reads(name: str) -> list[str]:
    "The notebooks whose records notebook `name` reads: those book.yml lists, and every other one for the root."
    if name == registry()["root"]: return [n for n in notebooks() if n != name]
    return next(e["reads"] for e in _all_pages() if e["page"] == name)


def execution_order() -> list[str]:
    "The notebooks in the order they run: pages that read other pages' records after those pages, the root last."
    order = []
    def visit(name):
        if name in order: return
        for r in reads(name): visit(r)
        order.append(name)
    for name in notebooks()[1:] + notebooks()[:1]: visit(name)
    return order


def sweep_titles() -> dict[str, str]:
    "{page: title} for every run of every sweep at book scale."
    titles = {e["page"]: e["sweep"]["titles"] for e in _all_pages() if e["sweep"]}
    return {page: titles[name][value] for page, (name, value) in sweep_pages().items()}


def book_page_of(page: str) -> str:
    "The book-scale page a page shows: the page itself, or for a paper-scale page `<page>-paper` the page `<page>`."
    return page[:-len(PAPER)] if page.endswith(PAPER) else page


def notebook_of(page: str) -> str:
    "The notebook a page is a run of."
    page = book_page_of(page)
    return sweep_pages().get(page, (page, None))[0]


def _heading(name: str) -> str:
    "The `# ` title of notebook `name` (the first line of its first markdown cell)."
    cells = json.loads((ROOT / "nbs" / f"{name}.ipynb").read_text())["cells"]
    return _source(next(c for c in cells if c["cell_type"] == "markdown")).split("\n")[0].removeprefix("# ")


def page_titles(pages) -> dict[str, str]:
    "{page: title} of the pages among `pages` whose title is not their notebook's: the sweep runs and the paper-scale pages."
    titles = sweep_titles()
    book_title = lambda page: titles.get(page) or _heading(notebook_of(page))
    return {p: titles[p] if p in titles else f"{book_title(book_page_of(p))} at paper scale" for p in pages
            if p in titles or p.endswith(PAPER)}


def _label_suffix(page: str) -> str:
    "What `relabel` appends to the figure labels of `page`: '-<value>' for a sweep's further run, '-paper' at paper scale."
    base = book_page_of(page)
    name, value = sweep_pages().get(base, (base, None))
    return (f"-{value}" if base != name else "") + (PAPER if page != base else "")


def toc(pages: set[str], root: str | None = None) -> dict:
    """The Jupyter Book toc of a build whose pages are `pages`, in book.yml's order: a page this build did not run
    is left out; the root is `root`, else the landing page, else (a one-chapter build) the first page."""
    order = [q for p in toc_pages() for q in (p, f"{p}{PAPER}")]   # a paper-scale page right after its book page
    root = root or (registry()["root"] if registry()["root"] in pages else next(p for p in order if p in pages))
    titles, runs_of = page_titles(pages), {}
    for p in order: runs_of.setdefault(notebook_of(p), []).append(p)
    def entries(items) -> list[dict]:
        out = []
        for e in map(_page, items):
            for p in runs_of[e["page"]]:
                if p in pages and p != root: out.append({"file": f"nbs/{p}", **({"title": titles[p]} if p in titles else {})})
            sections = entries(e["sections"])
            if sections and out: out[-1]["sections"] = sections
        return out
    parts = [{"caption": part["caption"], "chapters": entries(part["pages"])} for part in registry()["parts"]]
    return {"format": "jb-book", "root": f"nbs/{root}", "parts": [p for p in parts if p["chapters"]]}


def has_parameters(name: str) -> bool:
    nb = json.loads((ROOT / "nbs" / f"{name}.ipynb").read_text())
    return any("parameters" in c.get("metadata", {}).get("tags", []) for c in nb["cells"])


def runs(name: str, scale: str) -> list[tuple[str, dict]]:
    "(output stem, parameters) for each papermill run of notebook `name`."
    params = {"scale": scale} if scale != "book" and has_parameters(name) else {}
    sweep = sweeps(scale).get(name)
    if sweep is None: return [(name, params)]
    key, values = sweep
    return [(f"{name}-{v}", {**params, key: v}) for v in values]


def page_of(name: str, stem: str, params: dict) -> str:
    "The page that the run `stem` of notebook `name` with `params` becomes (see `sweep_pages`)."
    sweep = sweeps().get(name)
    if sweep is None: return name
    return next(page for page, run in sweep_pages().items() if run == (name, params[sweep[0]]))


def executed_dir(scale: str) -> Path:
    return BUILD / ("executed" if scale == "book" else f"executed-{scale}")


def records_dir(scale: str) -> Path:
    return BUILD / ("records" if scale == "book" else f"records-{scale}")


def _sha256(path: Path) -> str | None:
    "The sha256 of a file's bytes (None if it does not exist)."
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def code_hash(name: str) -> str:
    """One sha256 over what a run of notebook `name` executes: its code cells' sources and tags, in order. Its prose
    is not part of it: `with_current_prose` puts the notebook's current markdown into a reused run."""
    cells = json.loads((ROOT / "nbs" / f"{name}.ipynb").read_text())["cells"]
    code = [(_source(c), c.get("metadata", {}).get("tags", [])) for c in cells if c["cell_type"] == "code"]
    return hashlib.sha256(json.dumps(code).encode()).hexdigest()


def package_hash() -> str:
    "One sha256 over every file of the package source (embeval_nb/, compiled caches aside): paths and bytes."
    h = hashlib.sha256()
    for f in sorted((ROOT / "embeval_nb").rglob("*")):
        if f.is_file() and "__pycache__" not in f.parts:
            h.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def run_inputs(name: str, params: dict, scale: str, package: str | None = None, results: str | None = None) -> dict:
    """Everything a run of notebook `name` with `params` depends on: the notebook's code, its parameters, the package
    source, the lock, the records it reads and, at paper scale, `results` (`paper_records`' key of its unit
    records). The package holds the data registry (every data file's sha256, checked on load), so data that differ
    fail the run rather than pass unseen. `package` saves rehashing per run."""
    return {"code": code_hash(name), "parameters": params,
            "package": package or package_hash(), "lock": _sha256(ROOT / "requirements.lock"),
            "reads": {f.name: _sha256(f) for r in reads(name) for f in sorted(records_dir(scale).glob(f"{r}*.json"))
                      if f.stem == r or f.stem.startswith(f"{r}-")},
            **({"results": results} if results is not None else {})}


def _inputs_file(stem: str, scale: str) -> Path:
    return executed_dir(scale) / f"{stem}.inputs.json"


def stale_because(name: str, stem: str, params: dict, scale: str, package: str | None = None,
                  results: str | None = None) -> list[str]:
    """Why the last run `stem` cannot be reused: the inputs that changed since it ran ('never run' if there is no
    complete run). An empty list means its output and records are those the current inputs would make."""
    saved = _inputs_file(stem, scale)
    if not (saved.is_file() and (executed_dir(scale) / f"{stem}.ipynb").is_file()): return ["never run"]
    before, now = json.loads(saved.read_text()), run_inputs(name, params, scale, package, results)
    if before.pop("record", None) != _sha256(records_dir(scale) / f"{stem}.json"): return ["its records"]
    return [k for k in now if before.get(k) != now[k]]


def execute(name: str, stem: str, params: dict, scale: str, results: str | None = None) -> Path:
    """Run nbs/<name>.ipynb with `params` into the scale's executed folder, recording to <records>/<stem>.json;
    what the run depended on is saved beside its output (<stem>.inputs.json) for `stale_because`."""
    import papermill as pm
    out = executed_dir(scale) / f"{stem}.ipynb"; out.parent.mkdir(parents=True, exist_ok=True)
    records = records_dir(scale) / f"{stem}.json"; records.parent.mkdir(parents=True, exist_ok=True)
    saved = _inputs_file(stem, scale)
    for f in (records, saved): f.unlink(missing_ok=True)
    inputs = run_inputs(name, params, scale, results=results)
    os.environ["EMBEVAL_RECORD_DIR"] = str(records.parent)
    os.environ["EMBEVAL_RECORD_FILE"] = str(records)
    os.environ["EMBEVAL_PROGRESS"] = "0"  # progress bars are for interactive runs, not for the pages
    t = time.time()
    pm.execute_notebook(str(ROOT / "nbs" / f"{name}.ipynb"), str(out), parameters=params, cwd=str(ROOT),
                        kernel_name="python3", progress_bar=False)
    saved.write_text(json.dumps({**inputs, "record": _sha256(records)}, indent=1))
    print(f"[book] {stem}: {time.time() - t:.0f} s {params}", flush=True)
    return out


def execute_stale(scale: str, notebooks_: list[str] | None = None) -> dict[str, Path]:
    """Run every notebook of the book (or those in `notebooks_`) whose last run is stale, in `execution_order`;
    reuse the rest. Returns {page: executed notebook} for the pages run or reused."""
    executed, package = {}, package_hash()
    for name in execution_order():
        if notebooks_ is not None and name not in notebooks_: continue
        for stem, params in runs(name, scale):
            why = stale_because(name, stem, params, scale, package)
            if why:
                print(f"[book] {stem}: runs ({', '.join(why)} changed)" if why != ["never run"] else f"[book] {stem}: runs",
                      flush=True)
                execute(name, stem, params, scale)
            executed[page_of(name, stem, params)] = executed_dir(scale) / f"{stem}.ipynb"
    return executed


PAPER = "-paper"   # the page of a run at paper scale is its book page's name with this suffix


def paper_notebooks() -> list[str]:
    "The notebooks book.yml marks `paper: true`: a book build also shows each of their runs at paper scale."
    return [e["page"] for e in _all_pages() if e.get("paper")]


def paper_runs(name: str) -> list[tuple[str, dict, str]]:
    """(output stem, parameters, book page) of each paper-scale run of notebook `name`: each of its book-scale runs
    with scale='paper' and missing='error' (the page assembles its results from the committed unit records)."""
    return [(f"{stem}{PAPER}", {**params, "scale": "paper", "missing": "error"}, page_of(name, stem, params))
            for stem, params in runs(name, "book")]


def paper_tables(name: str, params: dict, units: list | None = None) -> list[str]:
    """The unit tables a paper-scale run of notebook `name` with `params` reads: for a run of a sweep with value v,
    those of its chapter named `v/...`; otherwise every table of its chapter (`units`: its units, None: looked up)."""
    from embeval_nb.runs import chapter_units
    units = chapter_units(reproductions()[name]) if units is None else units
    tables = list(dict.fromkeys(u.table for u in units))
    sweep = sweeps().get(name)
    return [t for t in tables if t.startswith(f"{params[sweep[0]]}/")] if sweep else tables


def paper_records(name: str, params: dict) -> tuple[str | None, str]:
    """(one sha256 over the records of every unit of the run's tables, None unless all are done and current;
    'k of n units done')."""
    from embeval_nb.runs import chapter_units, results_dir, unit_states
    units = chapter_units(reproductions()[name])
    tables = set(paper_tables(name, params, units))
    states = unit_states([u for u in units if u.table in tables])
    done = sum(s == "done" for _, s, _ in states)
    progress = f"{done} of {len(states)} units done"
    if not states or done < len(states): return None, progress
    h = hashlib.sha256()
    for u, _, _ in states: h.update(u.name.encode() + b"\0" + (results_dir() / u.path).read_bytes())
    return h.hexdigest(), progress


def execute_paper(notebooks_: list[str] | None = None) -> dict[str, Path]:
    """Run (or reuse) the paper-scale run of every `paper_notebooks` page (of those in `notebooks_`) whose unit records
    are all done and current; say how far the others are. Returns {page: executed notebook}. The run's inputs
    include its records, so a new or recomputed record runs the page again."""
    executed, package = {}, package_hash()
    for name in paper_notebooks():
        if notebooks_ is not None and name not in notebooks_: continue
        for stem, params, page in paper_runs(name):
            key, progress = paper_records(name, params)
            if key is None:
                print(f"[book] {stem}: not shown ({progress})", flush=True); continue
            if why := stale_because(name, stem, params, "paper", package, results=key):
                print(f"[book] {stem}: runs ({', '.join(why)} changed)" if why != ["never run"] else f"[book] {stem}: runs",
                      flush=True)
                execute(name, stem, params, "paper", results=key)
            executed[f"{page}{PAPER}"] = executed_dir("paper") / f"{stem}.ipynb"
    return executed


def _source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def prose(markdown: str) -> str:
    "`markdown` without its fenced code blocks and ``double-backtick`` code spans: where a role is shown, not used."
    import re
    return re.sub(r"``.+?``", " ", re.sub(r"^(```|~~~).*?^\1[^\n]*$", " ", markdown, flags=re.M | re.S))


def with_current_prose(nb: dict, name: str) -> dict:
    """The run `nb` of notebook `name` with the notebook's current markdown cells around its outputs. A run is reused
    while the notebook's code cells are unchanged (`code_hash`), so an edit to the prose shows without a rerun."""
    ran = iter([c for c in nb["cells"] if c["cell_type"] == "code"])
    cells = []
    for cell in json.loads((ROOT / "nbs" / f"{name}.ipynb").read_text())["cells"]:
        if cell["cell_type"] != "code": cells.append(cell); continue
        out = next(ran)
        while "injected-parameters" in out.get("metadata", {}).get("tags", []):
            cells.append(out); out = next(ran)
        cells.append(out)
    return {**nb, "cells": cells}


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


PARTIAL_BUILD_WARNINGS = ["myst.xref_missing", "ref.ref", "ref.doc"]   # links, {ref}s and {doc}s to pages a chapter build leaves out


def stage(executed: dict[str, Path], dest: Path, root: str | None = None) -> Path:
    """Copy config, toc (rooted at `root`, see `toc`), executed notebooks (`{page: path}`), the CSS and MathJax into dest,
    the folder Jupyter Book builds. A build of part of the book (a `root` given) accepts links to the pages it
    leaves out; the whole book must resolve every link."""
    import yaml
    if dest.exists(): shutil.rmtree(dest)
    (dest / "nbs").mkdir(parents=True)
    shutil.copy(ROOT / "references.bib", dest / "references.bib")
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    if root is not None: config["sphinx"]["config"]["suppress_warnings"] += PARTIAL_BUILD_WARNINGS
    (dest / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    staged = toc(set(executed), root)
    (dest / "_toc.yml").write_text(yaml.safe_dump(staged, sort_keys=False))
    titles = page_titles(set(executed))
    shutil.copytree(ROOT / "_ext", dest / "_ext")
    for page, path in executed.items():
        nb = hide_injected_parameters(with_current_prose(json.loads(path.read_text()), notebook_of(page)))
        if page in titles: nb = retitle(nb, titles[page])
        if suffix := _label_suffix(page): nb = relabel(nb, suffix)
        (dest / "nbs" / f"{page}.ipynb").write_text(json.dumps(nb))
    mathjax = ROOT / "node_modules" / "mathjax" / "es5"
    if not mathjax.is_dir():
        raise FileNotFoundError(f"{mathjax} is missing: run `npm ci` (the Makefile does) to install MathJax")
    shutil.copytree(ROOT / "_assets", dest / "_assets")   # the book's own CSS (see _config.yml)
    shutil.copytree(mathjax, dest / "_assets" / "mathjax")
    return dest


def copy_project(dest: Path) -> Path:
    "Copy what nbdev needs (settings, notebooks, package source) into `dest`, to run nbdev there and compare."
    for f in ("settings.ini", "setup.py", "README.md"): shutil.copy(ROOT / f, dest / f)
    shutil.copytree(ROOT / "nbs", dest / "nbs")
    shutil.copytree(ROOT / "embeval_nb", dest / "embeval_nb", ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def files_of(folder: Path) -> dict[str, bytes]:
    "{path relative to `folder`: bytes} of every file under it, compiled caches aside."
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def stale_exports() -> list[str]:
    "The package files that `nbdev_export` would change: the package does not match the notebooks if any."
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        proj = copy_project(Path(tmp))
        before = files_of(proj / "embeval_nb")
        subprocess.run([str(Path(sys.executable).parent / "nbdev_export")], cwd=proj, check=True)
        after = files_of(proj / "embeval_nb")
    return sorted(f"embeval_nb/{k}" for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def check_exports() -> None:
    "Stop with a clear message when the package does not match the notebooks (a book would run stale code)."
    changed = stale_exports()
    if changed:
        sys.exit(f"[book] the package does not match the notebooks: nbdev_export would change {', '.join(changed)}. "
                 "Run nbdev_export (or undo the hand edit to the package) and build again.")


def chapter_pages(chapter: str) -> tuple[list[str], list[str]]:
    """(the chapter's own notebooks, the notebooks of the parts that are no chapter: the foundations and back matter
    its pages link to and cite from)."""
    part = next((p for p in chapters() if p["chapter"] == chapter), None)
    if part is None: raise SystemExit(f"unknown chapter {chapter!r}; book.yml has {', '.join(c['chapter'] for c in chapters())}")
    shared = [e["page"] for p in registry()["parts"] if "chapter" not in p for e in _pages(p["pages"])]
    return [e["page"] for e in _pages(part["pages"])], shared


def build(scale: str = "book", chapter: str | None = None) -> Path:
    """Run what is stale, stage and build the book (or one `chapter` with the foundations); returns the HTML folder.
    A chapter build runs that chapter's notebooks, those whose records they read, and the foundations."""
    names, root = None, None
    if chapter is not None:
        own, shared = chapter_pages(chapter)
        names = own + shared + [r for n in own for r in reads(n) if r not in own]
        root = own[0]
    executed = execute_stale(scale, names)
    if scale == "book": executed.update(execute_paper(names))
    pages = [q for p in toc_pages() for q in (p, f"{p}{PAPER}") if q in executed]
    if chapter is not None:   # the pages whose records the chapter reads ran, but are not shown
        pages = [p for p in pages if notebook_of(p) in own + shared]
    src = stage({page: executed[page] for page in pages}, BUILD / (f"book-src-{scale}" + (f"-{chapter}" if chapter else "")), root)
    subprocess.run([str(Path(sys.executable).parent / "jupyter-book"), "build", str(src), "--warningiserror", "--keep-going",
                    "--quiet"], check=True, cwd=ROOT)
    html = BUILD / ("html" if scale == "book" else f"html-{scale}")
    if chapter is not None: html = html.with_name(f"{html.name}-{chapter}")
    if html.exists(): shutil.rmtree(html)
    shutil.copytree(src / "_build" / "html", html)
    print(f"[book] built {html / 'index.html'}")
    if scale == "book" and chapter is None:   # the README's verdicts are generated from these records: say when they are stale
        import readme_claims
        if readme_claims.main(["--records", str(records_dir(scale)), "--check"]) != 0:
            print("[book] README.md's claims blocks are stale: run scripts/readme_claims.py", flush=True)
    return html


def parser() -> argparse.ArgumentParser:
    "The command line of this script (`make book`, `make chapter CH=...`)."
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", default="book", choices=["smoke", "book", "paper"])
    ap.add_argument("--chapter", help="build only this chapter of book.yml (its pages and the pages they read)")
    return ap


if __name__ == "__main__":
    a = parser().parse_args()
    check_exports()
    build(a.scale, a.chapter)
