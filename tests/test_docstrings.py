"""The examples in the package's docstrings run and print what they say; the modules listed below have one per public callable."""
import doctest, importlib, inspect
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULES = ["embeval_nb"] + sorted(f"embeval_nb.{p.stem}" for p in (ROOT / "embeval_nb").glob("*.py") if not p.stem.startswith("_"))
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS

# Modules whose every public callable (a function or class in `__all__` defined in the module) shows an example.
EXAMPLES_REQUIRED = [
    "cache",
    "checks",
    "cli",
    "core",
    "corpus_distance",
    "crossmatch",
    "data",
    "embeddings",
    "matching",
    "metrics",
    "n2o",
    "neighbours",
    "retrofit",
    "stats",
    "wmd",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    "The package's docstring and every module's: each example prints what its docstring says."
    module = importlib.import_module(name)
    runner, reports = doctest.DocTestRunner(optionflags=FLAGS), []
    for test in doctest.DocTestFinder(exclude_empty=True).find(module, name):
        runner.run(test, out=reports.append)        # not print: doctest redirects stdout while it runs
    failed, attempted = runner.summarize(verbose=False)
    assert failed == 0, f"{failed} of {attempted} docstring examples of {name} failed:\n" + "".join(reports)


def _public_callables(module):
    "The functions (`lru_cache` wrappers included) and classes named in `module.__all__` that `module` defines."
    objs = ((n, getattr(module, n)) for n in getattr(module, "__all__", ()))
    return [(n, o) for n, o in objs
            if (inspect.isfunction(inspect.unwrap(o)) or inspect.isclass(o)) and o.__module__ == module.__name__]


@pytest.mark.parametrize("name", EXAMPLES_REQUIRED)
def test_every_public_callable_has_an_example(name):
    module = importlib.import_module(f"embeval_nb.{name}")
    callables = _public_callables(module)
    missing = [n for n, o in callables if ">>>" not in (o.__doc__ or "")]
    assert callables and not missing, f"embeval_nb.{name}: no docstring example in {', '.join(missing)}"
