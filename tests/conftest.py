"""Shared pytest fixtures: run a notebook through papermill once per session and read back what it recorded."""
import os, shutil, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("EMBEVAL_PROGRESS", "0")

import book  # noqa: E402  (scripts/book.py: the book build that `make book` runs)


def pytest_sessionstart(session):
    "Smoke outputs of an earlier session must not be mistaken for this one's."
    for d in (book.executed_dir("smoke"), book.records_dir("smoke")):
        shutil.rmtree(d, ignore_errors=True)


def pytest_collection_modifyitems(items):
    "The book test goes last: it reuses every notebook the other tests already ran."
    items.sort(key=lambda item: item.get_closest_marker("book_last") is not None)


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
