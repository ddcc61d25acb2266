"""The book builds (warnings as errors, no network) and its pages render in headless Chromium without console errors."""
import re, shutil, subprocess
from pathlib import Path

import pytest

import book

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=8000"]


@pytest.fixture(scope="session")
def smoke_html(run_notebook):
    return book.build("smoke", only=[])  # executes only the notebooks no other test has run this session


def render(page: Path, tmp_path):
    assert CHROMIUM, "Debian's chromium is not installed (make test installs it)"
    out = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path}", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    console_errors = [l for l in out.stderr.splitlines()
                      if re.search(r"CONSOLE.*(error|Uncaught)|Failed to load resource|net::ERR_", l, re.I)]
    return out.stdout, console_errors


@pytest.mark.book_last
def test_book_has_every_page(smoke_html):
    for name in book.toc_notebooks():
        assert (smoke_html / "nbs" / f"{name}.html").is_file(), name


@pytest.mark.book_last
def test_no_page_loads_anything_from_the_network(smoke_html):
    for page in smoke_html.rglob("*.html"):
        assert not re.search(r'<(script|link)[^>]*(src|href)="(https?:)?//', page.read_text()), page


@pytest.mark.book_last
def test_index_renders_in_chromium_without_console_errors(smoke_html, tmp_path):
    dom, errors = render(smoke_html / "nbs" / "index.html", tmp_path)
    text = re.sub(r"<[^>]+>", "", dom)
    assert "How to read and rerun it" in text and "make test" in text and "papermill nbs/wmd.ipynb" in text
    assert not errors, errors


@pytest.mark.book_last
def test_math_is_typeset_by_the_shipped_mathjax(smoke_html, tmp_path):
    pages = [p for p in (smoke_html / "nbs").glob("*.html") if "_static/mathjax/tex-chtml.js" in p.read_text()]
    if not pages:
        pytest.skip("no page of this book has maths yet")
    dom, errors = render(pages[0], tmp_path)
    assert "<mjx-container" in dom and not errors, errors
