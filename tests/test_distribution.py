"""The wheel and sdist a user installs: built with `python -m build` (the wheel from the sdist), accepted by twine,
with the metadata an index shows; and every module the book's notebooks import comes with `pip install ".[book]"`."""
import ast, email, json, re, shutil, subprocess, sys, tarfile, zipfile
from importlib.metadata import packages_distributions
from importlib.util import find_spec
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
SDIST_NEEDS = ("setup.py", "settings.ini", "README.md", "LICENSE", "MANIFEST.in")
CLASSIFIERS = {"Development Status :: 3 - Alpha", "Intended Audience :: Science/Research",
               "License :: OSI Approved :: Apache Software License", "Operating System :: OS Independent",
               "Programming Language :: Python :: 3.11", "Programming Language :: Python :: 3.12",
               "Topic :: Scientific/Engineering :: Artificial Intelligence",
               "Topic :: Scientific/Engineering :: Information Analysis"}


def _setup_kwargs(monkeypatch) -> dict:
    "The keyword arguments setup.py passes to setuptools.setup, without building anything."
    import runpy, setuptools
    kwargs = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kw: kwargs.update(kw))
    monkeypatch.chdir(ROOT)
    runpy.run_path(str(ROOT / "setup.py"))
    return kwargs


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> tuple[Path, Path]:
    "(wheel, sdist) built from a copy of the project by `python -m build --no-isolation`, which builds the wheel from the sdist."
    src, out = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("dist")
    for f in SDIST_NEEDS: shutil.copy(ROOT / f, src / f)
    shutil.copytree(ROOT / "embeval_nb", src / "embeval_nb", ignore=shutil.ignore_patterns("__pycache__"))
    run = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "-o", str(out), str(src)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    (wheel,), (sdist,) = out.glob("embeval_nb-*.whl"), out.glob("embeval_nb-*.tar.gz")
    return wheel, sdist


def _metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as z:
        return email.message_from_bytes(z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))))


def test_twine_accepts_the_wheel_and_the_sdist(dists):
    if find_spec("twine") is None:
        pytest.skip("twine is not installed in this environment (requirements.lock pins it: reinstall the environment)")
    run = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dists)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_wheel_metadata_has_licence_classifiers_urls_extras_and_the_command(dists, monkeypatch):
    meta, extras = _metadata(dists[0]), _setup_kwargs(monkeypatch)["extras_require"]
    assert meta["License"] == "Apache-2.0" and meta.get_all("License-File") == ["LICENSE"]
    assert CLASSIFIERS <= set(meta.get_all("Classifier"))
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert urls == {"Documentation": "https://embeval.github.io/embeval", "Source": "https://github.com/embeval/embeval",
                    "Issues": "https://github.com/embeval/embeval/issues"}
    assert meta["Requires-Python"] == ">=3.11" and meta["Keywords"]
    assert {canonicalize_name(e) for e in meta.get_all("Provides-Extra")} == {canonicalize_name(e) for e in extras} >= {"book", "all"}
    with zipfile.ZipFile(dists[0]) as z:
        names = z.namelist()
        entry = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert "[console_scripts]\nembeval = embeval_nb.cli:main" in entry
    assert any(n.endswith(".dist-info/LICENSE") for n in names)


def test_sdist_holds_what_the_wheel_is_built_from_and_the_wheel_imports(dists, tmp_path):
    wheel, sdist = dists
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    papers = {f"embeval_nb/papers/{p.name}" for p in (ROOT / "embeval_nb" / "papers").glob("*.md")}
    modules = {f"embeval_nb/{p.name}" for p in (ROOT / "embeval_nb").glob("*.py")}
    assert set(SDIST_NEEDS) | papers | modules <= names, sorted(set(SDIST_NEEDS) | papers | modules - names)
    assert not [n for n in names if n.startswith(("tests/", "nbs/", "scripts/", "benchmarks/"))]   # the package alone
    with zipfile.ZipFile(wheel) as z:
        assert papers | modules <= set(z.namelist())
        z.extractall(tmp_path)
    code = "import embeval_nb, embeval_nb.core as c; print(embeval_nb.__file__); print(len(c.paper_tables('wmd')))"
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)})
    assert run.returncode == 0, run.stderr
    file, n_tables = run.stdout.split()
    assert Path(file).is_relative_to(tmp_path) and int(n_tables) > 0


def _guarded(node: ast.AST) -> bool:
    "Whether `node` is a try/except ImportError or a `with contextlib.suppress(ImportError)`: imports in it may fail."
    if isinstance(node, ast.Try):
        return any(re.search(r"\b(ImportError|ModuleNotFoundError)\b", ast.unparse(h.type or ast.Constant(None)))
                   for h in node.handlers)
    return isinstance(node, ast.With) and any("suppress(ImportError" in ast.unparse(i.context_expr) for i in node.items)


def _imports(node: ast.AST) -> set[str]:
    "The top-level modules `node` imports outside guarded blocks (see `_guarded`)."
    if isinstance(node, ast.Import): return {a.name.split(".")[0] for a in node.names}
    if isinstance(node, ast.ImportFrom): return {node.module.split(".")[0]} if node.level == 0 else set()
    if _guarded(node): return set()
    return set().union(*(_imports(c) for c in ast.iter_child_nodes(node)))


def _notebook_imports() -> dict[str, set[str]]:
    "{module: notebooks} for every third-party module a code cell of a notebook in nbs/ imports."
    found = {}
    for nb in sorted((ROOT / "nbs").glob("*.ipynb")):
        for cell in json.loads(nb.read_text())["cells"]:
            if cell["cell_type"] != "code": continue
            code = "\n".join(l for l in "".join(cell["source"]).splitlines() if not l.lstrip().startswith(("%", "!")))
            for m in _imports(ast.parse(code)): found.setdefault(m, set()).add(nb.stem)
    return {m: nbs for m, nbs in found.items() if m not in sys.stdlib_module_names and m != "embeval_nb"}


def _provided(requirements: list[str], extras: dict) -> set[str]:
    "The distributions `requirements` name, with extras of this package they name (embeval_nb[x]) resolved."
    names = set()
    for r in map(Requirement, requirements):
        if canonicalize_name(r.name) == "embeval-nb": names |= _provided([q for e in r.extras for q in extras[e]], extras)
        else: names.add(canonicalize_name(r.name))
    return names


def test_every_module_a_notebook_imports_comes_with_the_book_extra(monkeypatch):
    kw = _setup_kwargs(monkeypatch)
    provided = _provided(kw["install_requires"] + kw["extras_require"]["book"], kw["extras_require"])
    dists, missing = packages_distributions(), {}
    imports = _notebook_imports()
    assert {"numpy", "pandas", "matplotlib", "yaml"} <= imports.keys()
    for module, notebooks in sorted(imports.items()):
        names = {canonicalize_name(d) for d in dists.get(module, [])}
        if not names & provided: missing[module] = (sorted(names), sorted(notebooks))
    assert not missing, f"imported by notebooks, installed by neither the runtime nor the book extra: {missing}"
