"""Shared pytest fixtures: run a notebook through papermill once per session and read back what it recorded."""
import os, shutil, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("EMBEVAL_PROGRESS", "0")

import book  # noqa: E402  (scripts/book.py: the book build that `make book` runs)


def pytest_sessionstart(session):
    "Smoke outputs of an earlier session must not be mistaken for this one's (cleared once, not by each xdist worker)."
    if hasattr(session.config, "workerinput"):
        return
    for d in (book.executed_dir("smoke"), book.records_dir("smoke")):
        shutil.rmtree(d, ignore_errors=True)


def _runs_notebooks(item) -> bool:
    return bool({"run_notebook", "smoke_html"} & set(getattr(item, "fixturenames", ())))


@pytest.hookimpl(tryfirst=True)       # before xdist's own hook reads the groups
def pytest_collection_modifyitems(items):
    """Every test that runs a chapter notebook, and the book test that reuses their runs, form one group that goes
    first, the book test at its end: under `pytest -n 2 --dist loadgroup` (`make test`) one worker takes the group
    in this order while the other runs everything else."""
    for item in items:
        if _runs_notebooks(item):
            item.add_marker(pytest.mark.xdist_group("notebooks"))
    items.sort(key=lambda item: (not _runs_notebooks(item), item.get_closest_marker("book_last") is not None))


def pytest_collection_finish(session):
    "Under `--dist loadgroup` a notebook test must carry its group, else two workers would run the same notebooks."
    if getattr(session.config.option, "loadgroup", False):
        lost = [item.nodeid for item in session.items if _runs_notebooks(item) and not item.nodeid.endswith("@notebooks")]
        if lost:
            raise pytest.UsageError(f"pytest-xdist did not group {lost[0]} (and {len(lost) - 1} more) with the notebook "
                                    "tests: this pytest and pytest-xdist do not work together, see requirements.in")


def pytest_configure(config):
    config.addinivalue_line("markers", "book_last: run after every other test (reuses their notebook runs)")


_CACHE = {}


@pytest.fixture(scope="session")
def run_notebook():
    """`run_notebook("wmd", scale="smoke", dataset="reuters") -> dict` of the numbers the notebook recorded.

    A run whose parameters are those of the smoke book build writes where that build looks, so the book test
    reuses it; each distinct run happens once per session."""
    from embeval_nb.core import read_records

    def run(name, **parameters):
        key = (name, tuple(sorted(parameters.items())))
        if key not in _CACHE:
            stem = next((s for s, p in book.runs(name, "smoke") if p == parameters), None)
            if stem is None:
                stem = name + "-" + "-".join(f"{k}={v}" for k, v in sorted(parameters.items()))
            book.execute(name, stem, parameters, "smoke")
            _CACHE[key] = read_records(book.records_dir("smoke") / f"{stem}.json")
        return _CACHE[key]

    return run
