"""Build the book: run every notebook of _toc.yml through papermill, stage the outputs, run Jupyter Book.

    python scripts/book.py                 # default parameters (scale="book"), HTML in _build/html
    python scripts/book.py --scale smoke   # small parameters, what `make test` builds and checks

Notebooks with a `parameters` cell get `scale` (only when not "book", so the book runs each notebook's own
defaults). A notebook listed in SWEEPS is run once per value of its sweep parameter; every run writes its
recorded numbers to _build/records/<notebook>[-<value>].json, and the first value's output is the page shown.
"""
from __future__ import annotations

import argparse, json, os, shutil, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("EMBEVAL_BUILD_DIR", ROOT / "_build"))  # another folder lets two test runs share a tree
SWEEPS = {"wmd": ("dataset", ["reuters", "20news", "bbcsport", "twitter", "classic", "amazon", "ohsumed"])}
SMOKE_SWEEPS = {"wmd": ("dataset", ["reuters"])}


def toc_notebooks() -> list[str]:
    "Notebook names (without nbs/ and .ipynb) in the order of _toc.yml."
    import yaml
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for ch in part.get("chapters", []):
            files.append(ch["file"]); files += [s["file"] for s in ch.get("sections", [])]
    return [Path(f).name for f in files]


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


def hide_injected_parameters(nb: dict) -> dict:
    "Tag the cell papermill injects with `remove-cell`: the page shows the notebook's own parameters cell."
    for cell in nb["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags: tags.append("remove-cell")
    return nb


def stage(executed: dict[str, Path], dest: Path) -> Path:
    "Copy config, toc, executed notebooks and MathJax into dest, the folder Jupyter Book builds."
    if dest.exists(): shutil.rmtree(dest)
    (dest / "nbs").mkdir(parents=True)
    for f in ("_config.yml", "_toc.yml", "references.bib"): shutil.copy(ROOT / f, dest / f)
    shutil.copytree(ROOT / "_ext", dest / "_ext")
    for name, path in executed.items():
        (dest / "nbs" / f"{name}.ipynb").write_text(json.dumps(hide_injected_parameters(json.loads(path.read_text()))))
    mathjax = ROOT / "node_modules" / "mathjax" / "es5"
    if not mathjax.is_dir():
        raise FileNotFoundError(f"{mathjax} is missing: run `npm ci` (the Makefile does) to install MathJax")
    shutil.copytree(mathjax, dest / "_assets" / "mathjax")
    return dest


def build(scale: str = "book", only: list[str] | None = None) -> Path:
    "Execute (all, or only the notebooks in `only` plus any never run), stage and build; returns the HTML folder."
    executed = {}
    names = toc_notebooks()
    for name in names[1:] + names[:1]:  # the landing page last: it summarises what the chapters recorded
        for i, (stem, params) in enumerate(runs(name, scale)):
            path = executed_dir(scale) / f"{stem}.ipynb"
            if only is None or name in only or not path.exists():
                path = execute(name, stem, params, scale)
            if i == 0: executed[name] = path
    src = stage({name: executed[name] for name in names}, BUILD / f"book-src-{scale}")
    subprocess.run([str(Path(sys.executable).parent / "jupyter-book"), "build", str(src), "--warningiserror", "--keep-going",
                    "--quiet"], check=True, cwd=ROOT)
    html = BUILD / ("html" if scale == "book" else f"html-{scale}")
    if html.exists(): shutil.rmtree(html)
    shutil.copytree(src / "_build" / "html", html)
    print(f"[book] built {html / 'index.html'}")
    return html


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", default="book", choices=["smoke", "book", "paper"])
    ap.add_argument("--only", nargs="*", help="re-execute only these notebooks; reuse earlier outputs of the rest")
    a = ap.parse_args()
    build(a.scale, a.only)
