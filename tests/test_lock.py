"""The book's environment installs from the public package index alone, without torch."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pins():
    lines = [l.strip() for l in (ROOT / "requirements.lock").read_text().splitlines()]
    return [l for l in lines if l and not l.startswith("#")]


def test_lock_has_only_exact_public_pins():
    pins = _pins()
    assert len(pins) > 100
    bad = [p for p in pins if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*==[0-9][0-9A-Za-z.!]*", p)]
    assert not bad, f"not a plain name==version pin (local version, URL or option): {bad}"
    assert not [p for p in pins if "+" in p or "@" in p or "://" in p]


def test_lock_has_no_torch_or_cuda():
    names = {p.split("==")[0].lower().replace("_", "-") for p in _pins()}
    heavy = {n for n in names if n in {"torch", "triton", "sentence-transformers", "transformers"}
             or n.startswith(("nvidia-", "cuda-"))}
    assert not heavy, heavy


def test_model_packages_installed_without_dependencies_are_pinned():
    "requirements-models.in lists weight packages installed with --no-deps; the lock must pin each of them."
    names = {p.split("==")[0].lower() for p in _pins()}
    wanted = [l.split("==")[0].lower() for l in (ROOT / "requirements-models.in").read_text().splitlines()
              if l.strip() and not l.startswith("#")]
    assert wanted and set(wanted) <= names
