"""The examples in the docstrings of `embeval_nb.n2o`, `embeval_nb.corpus_distance` and `embeval_nb.core` run, and every public callable has one."""
import doctest, importlib, inspect

import pytest

MODULES = ["embeval_nb.n2o", "embeval_nb.corpus_distance", "embeval_nb.core"]
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def _public_callables(module):
    "(name, object) of every function or class in `module.__all__` that the module defines."
    for name in module.__all__:
        obj = getattr(module, name)
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module.__name__:
            yield name, obj


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    tests = doctest.DocTestFinder(exclude_empty=True).find(module, name)
    assert tests, f"{name} has no docstring examples"
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in tests: runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed (the report is above)"


@pytest.mark.parametrize("name", MODULES)
def test_every_public_callable_has_an_example(name):
    module = importlib.import_module(name)
    missing = [n for n, obj in _public_callables(module) if ">>>" not in (inspect.getdoc(obj) or "")]
    assert not missing, f"{name}: public callables without a docstring example: {', '.join(missing)}"
