"""The examples in the package's docstrings run and print what they say; every module has one per public callable; the
package's docstring names every chapter of book.yml."""
import doctest, importlib, inspect, re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULES = ["embeval_nb"] + sorted(f"embeval_nb.{p.stem}" for p in (ROOT / "embeval_nb").glob("*.py") if not p.stem.startswith("_"))
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS

# Every module's every public callable (a function or class in `__all__` defined in the module) shows an example.
EXAMPLES_REQUIRED = [m.split(".", 1)[1] for m in MODULES if "." in m]


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
    assert callables, f"embeval_nb.{name} exports no function or class: its notebook has no `#| export` def or class"
    assert not missing, (f"embeval_nb.{name}: no docstring example in {', '.join(missing)}: in the notebook that exports "
                         f"{name}, add to each docstring a line `>>> <a call>` and the line it prints below it (the API "
                         "page shows it, and this suite runs it)")


def test_the_package_docstring_names_every_chapter():
    "The package's docstring lists its chapter modules, one line each under 'Chapters': every chapter of book.yml."
    import embeval_nb
    import book                # scripts/book.py (conftest puts scripts/ on the path)
    doc = embeval_nb.__doc__.split("Chapters", 1)[-1]
    missing = [c["chapter"] for c in book.chapters() if not re.search(rf"^    {c['chapter']} ", doc, re.M)]
    assert not missing, (f"embeval_nb/__init__.py: the docstring's list of chapters lacks {missing}: add a line "
                         "`    <module>  <what it does> (<the paper's authors and year>)` under 'Chapters, one paper each'")
