"""The book builds (warnings as errors, no network) and its pages render in headless Chromium without console errors."""
import re, shutil, subprocess
from pathlib import Path

import pytest

import book

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=8000", "--window-size=1280,900"]


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


def _outputs(page: Path) -> list[str]:
    "The HTML of every cell output on a built page (from its output box to the next cell)."
    segments = page.read_text().split('class="cell_output')[1:]
    return [re.split(r'class="cell docutils container|class="cell_input|<footer', seg)[0] for seg in segments]


READER_UNFRIENDLY = [
    (r"\w*Warning\b|Traceback \(most recent", "a warning or traceback"),
    (r"\d+%\|[█▏▎▍▌▋▊▉ #]*\||\d+/\d+ \[\d\d:\d\d|it/s\]|Loading weights", "a progress bar"),
    (r"/(work|home|root|tmp|usr|opt)/[\w.-]+/|site-packages|\.venv/", "a local path"),
]


@pytest.mark.book_last
def test_pages_print_nothing_a_reader_should_not_see(smoke_html):
    import html as html_lib
    found = []
    for page in sorted((smoke_html / "nbs").glob("*.html")):
        for out in _outputs(page):
            text = html_lib.unescape(re.sub(r"<[^>]+>", " ", out))
            found += [f"{page.name}: {why}: {m.group(0)!r}" for pattern, why in READER_UNFRIENDLY
                      for m in re.finditer(pattern, text)]
    assert not found, "\n".join(found)


def _tables(page: Path) -> list[list[list[str]]]:
    "Every HTML table on a page as rows of cell texts (header row first)."
    import html as html_lib
    tables = []
    for t in re.findall(r"<table.*?</table>", page.read_text(), re.S):
        rows = [[html_lib.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, re.S)]
                for r in re.findall(r"<tr.*?</tr>", t, re.S)]
        tables.append([r for r in rows if r])
    return tables


COUNT = re.compile(r"(?i)\b(rank|ranks|count|counts|number|n|pairs|documents|docs|words|classes|errors|size|samples|"
                   r"training|test|vocabulary|significant)\b|^#|^n_")


@pytest.mark.book_last
def test_tables_show_counts_as_integers_and_no_empty_columns(smoke_html):
    "A column or row named as a count (rank, documents, errors, ...) prints integers as integers; no column is all NaN."
    integral_floats = lambda cells: cells and all(re.fullmatch(r"-?\d+\.0+", c) for c in cells)
    found = []
    for page in sorted((smoke_html / "nbs").glob("*.html")):
        for table in _tables(page):
            header, body = table[0], [r for r in table[1:] if len(r) == len(table[0])]
            for j, name in enumerate(header[1:], start=1):
                cells = [r[j] for r in body]
                if len(cells) >= 2 and all(c.lower() in ("nan", "none", "", "<na>") for c in cells) and any(cells):
                    found.append(f"{page.name}: column {name!r} is empty (all NaN)")
                if COUNT.search(name) and integral_floats(cells):
                    found.append(f"{page.name}: column {name!r} holds integers printed as floats ({cells[0]})")
            for row in body:
                if COUNT.search(row[0]) and integral_floats(row[1:]):
                    found.append(f"{page.name}: row {row[0]!r} holds integers printed as floats ({row[1]})")
    assert not found, "\n".join(found)


@pytest.mark.book_last
def test_claims_are_shown_in_full_inside_the_page(smoke_html, tmp_path):
    "Every claims table (a `verdict` column) shows whole cells and does not run past the right edge of its output box."
    probe = """<script>window.addEventListener('load', () => { const bad = [];
      document.querySelectorAll('table').forEach((t, i) => {
        if (![...t.querySelectorAll('th')].some(h => h.textContent.trim() === 'verdict')) return;
        const box = t.closest('.cell_output, .output, article') || document.body;
        if (t.getBoundingClientRect().right > box.getBoundingClientRect().right + 1) bad.push(i); });
      document.body.setAttribute('data-overflowing-claims', JSON.stringify(bad)); });</script></body>"""
    checked = 0
    for page in sorted((smoke_html / "nbs").glob("*.html")):
        tables = [t for t in _tables(page) if "verdict" in t[0]]
        if not tables: continue
        checked += 1
        for t in tables:
            assert not [c for r in t for c in r if c.endswith("...")], f"{page.name}: a claims cell is cut"
        probe_page = page.with_name(f"_probe_{page.name}")
        probe_page.write_text(page.read_text().replace("</body>", probe))
        dom, _ = render(probe_page, tmp_path)
        probe_page.unlink()
        assert 'data-overflowing-claims="[]"' in dom, f"{page.name}: a claims table runs past the right edge"
    if not checked:
        pytest.skip("no page of this build has a claims table yet")
