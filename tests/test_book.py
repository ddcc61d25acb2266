"""The book's registry (book.yml), its execution cache, the build (warnings as errors, no network), and its pages
rendered in headless Chromium without console errors."""
import json, re, shutil, subprocess
from pathlib import Path

import pytest

import book

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=8000", "--window-size=1280,900"]


# --- the registry ----------------------------------------------------------------------------------------------

def test_every_notebook_is_a_page_of_book_yml_once():
    names = book.notebooks()
    assert sorted(names) == sorted(p.stem for p in (book.ROOT / "nbs").glob("*.ipynb")) and len(set(names)) == len(names)


def test_each_chapter_has_its_three_notebooks_and_a_claims_record_of_its_own():
    for part in book.chapters():
        c, pages = part["chapter"], [e["page"] for e in book._pages(part["pages"])]
        assert {f"{c}_theory", f"{c}_impl", c} <= set(pages), c
        assert part["claims"][0] in pages and part["claims"][1].startswith(f"{c}/") and part["title"] and part["paper"]
        assert f"@" in (book.ROOT / "references.bib").read_text().split(part["paper"] + ",")[0][-40:], part["paper"]


def test_every_data_set_is_a_page_of_the_toc():
    pages, sweep, (parameter, values) = book.toc_pages(), book.sweep_pages(), book.sweeps()["wmd"]
    assert parameter == "dataset" and set(sweep) <= set(pages) and sweep["wmd"] == ("wmd", values[0])
    assert [v for _, v in sweep.values()] == values and (set(sweep) - {"wmd"}).isdisjoint(book.notebooks())
    assert pages.index("wmd_tables") < pages.index("wmd") < pages.index("wmd-20news")
    assert book.sweeps("smoke")["wmd"][1][0] == values[0]     # the page `wmd` exists in every build
    assert [book.page_of("wmd", s, p) for s, p in book.runs("wmd", "book")] == list(sweep)


def _files(toc: dict) -> list[dict]:
    "Every entry of a toc with a file, depth first."
    out = []
    def walk(entries):
        for e in entries: out.append(e); walk(e.get("sections", []))
    for part in toc["parts"]: walk(part["chapters"])
    return out


def test_the_toc_follows_book_yml_and_keeps_only_the_pages_of_this_build():
    full = book.toc(set(book.toc_pages()))
    assert full["root"] == "nbs/index" and [e["file"] for e in _files(full)] == [f"nbs/{p}" for p in book.toc_pages()[1:]]
    toc = book.toc(set(book.notebooks()) | {"wmd-20news"})
    files = [e["file"] for e in _files(toc)]
    assert "nbs/wmd" in files and "nbs/wmd-20news" in files and "nbs/wmd-amazon" not in files
    assert next(e for e in _files(toc) if e["file"] == "nbs/wmd-20news")["title"] == "WMD on 20 Newsgroups"
    tables = next(e for e in _files(toc) if e["file"] == "nbs/wmd_tables")
    assert [e["file"] for e in tables["sections"]] == ["nbs/wmd", "nbs/wmd-20news"]
    one = book.toc({"n2o_theory", "n2o_impl", "n2o"})   # a one-chapter build: its first page is the root
    assert one["root"] == "nbs/n2o_theory" and [e["file"] for e in _files(one)] == ["nbs/n2o_impl", "nbs/n2o"]


def test_pages_run_after_the_records_they_read():
    order = book.execution_order()
    assert sorted(order) == sorted(book.notebooks()) and order[-1] == book.registry()["root"]
    for name in order:
        assert all(order.index(r) < order.index(name) for r in book.reads(name)), name
    assert book.reads("wmd_tables") == ["wmd"]


# --- the execution cache ------------------------------------------------------------------------------------------

NOTEBOOK = lambda *sources: {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"name": "python3",
    "display_name": "Python 3", "language": "python"}}, "cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {},
    "execution_count": None, "outputs": [], "source": s} for i, s in enumerate(sources)]}
WRITE_RECORD = 'import os, json, time; open(os.environ["EMBEVAL_RECORD_FILE"], "w").write(json.dumps({"t": time.time()}))'


@pytest.fixture
def tiny_book(tmp_path, monkeypatch):
    """A book of four notebooks in a folder of its own: `a` and `c`, `b` that reads a's records, and the landing page
    `index` (reads every record). Returns (root, runs): `runs` lists the stems executed so far."""
    (tmp_path / "nbs").mkdir(); (tmp_path / "embeval_nb").mkdir()
    (tmp_path / "book.yml").write_text("root: index\nparts:\n  - caption: Only\n    pages: [a, {page: b, reads: [a]}, c]\n")
    for name in "abc" + "":
        (tmp_path / "nbs" / f"{name}.ipynb").write_text(json.dumps(NOTEBOOK(WRITE_RECORD)))
    (tmp_path / "nbs" / "index.ipynb").write_text(json.dumps(NOTEBOOK("1 + 1")))
    (tmp_path / "embeval_nb" / "x.py").write_text("X = 1\n"); (tmp_path / "requirements.lock").write_text("numpy==2\n")
    monkeypatch.setattr(book, "ROOT", tmp_path); monkeypatch.setattr(book, "BUILD", tmp_path / "_build")
    monkeypatch.setenv("EMBEVAL_RECORD_DIR", ""); monkeypatch.setenv("EMBEVAL_RECORD_FILE", "")
    runs, execute = [], book.execute
    monkeypatch.setattr(book, "execute", lambda name, stem, params, scale: (runs.append(stem), execute(name, stem, params, scale))[1])
    return tmp_path, runs


def _rerun(runs) -> list[str]:
    runs.clear(); book.execute_stale("smoke"); return sorted(runs)


def test_a_build_reruns_exactly_what_changed(tiny_book):
    root, runs = tiny_book
    assert _rerun(runs) == ["a", "b", "c", "index"]
    assert _rerun(runs) == []                                                   # nothing changed: nothing runs
    (root / "nbs" / "c.ipynb").write_text(json.dumps(NOTEBOOK(WRITE_RECORD, "2")))
    assert _rerun(runs) == ["c", "index"]                                       # c, and the page that reads it
    (root / "nbs" / "a.ipynb").write_text(json.dumps(NOTEBOOK(WRITE_RECORD, "3")))
    assert _rerun(runs) == ["a", "b", "index"]                                  # a, and b and index read it
    (root / "embeval_nb" / "x.py").write_text("X = 2\n")
    assert _rerun(runs) == ["a", "b", "c", "index"]                             # the package: everything
    (root / "requirements.lock").write_text("numpy==3\n")
    assert _rerun(runs) == ["a", "b", "c", "index"]                             # the lock: everything
    (book.records_dir("smoke") / "c.json").unlink()
    assert _rerun(runs) == ["c", "index"]                                       # an output gone: never reused
    (book.executed_dir("smoke") / "b.ipynb").unlink()
    assert _rerun(runs) == ["b", "index"]
    assert _rerun(runs) == []
    assert book.stale_because("c", "c", {"scale": "smoke"}, "smoke") == ["parameters"]


def test_an_edit_to_prose_alone_runs_nothing_and_shows(tiny_book):
    root, runs = tiny_book
    nb = NOTEBOOK(WRITE_RECORD, "x = 2")
    nb["cells"].insert(1, {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": "Old prose."})
    (root / "nbs" / "a.ipynb").write_text(json.dumps(nb))
    assert "a" in _rerun(runs)
    nb["cells"][1]["source"] = "New prose."
    nb["cells"].insert(0, {"cell_type": "markdown", "id": "m0", "metadata": {}, "source": "# A title"})
    (root / "nbs" / "a.ipynb").write_text(json.dumps(nb))
    assert _rerun(runs) == []
    ran = json.loads((book.executed_dir("smoke") / "a.ipynb").read_text())
    staged = book.with_current_prose(ran, "a")["cells"]
    assert [c["cell_type"] for c in staged] == ["markdown", "code", "markdown", "code"]
    assert [book._source(c) for c in staged if c["cell_type"] == "markdown"] == ["# A title", "New prose."]
    assert staged[1]["outputs"] == ran["cells"][0]["outputs"] and "x = 2" in book._source(staged[3])
    nb["cells"][3]["source"] = "x = 3"
    (root / "nbs" / "a.ipynb").write_text(json.dumps(nb))
    assert _rerun(runs) == ["a", "b", "index"]                                  # code changed: it runs


def test_a_hand_edit_to_the_package_stops_the_build(tmp_path, monkeypatch):
    book.copy_project(tmp_path)
    with open(tmp_path / "embeval_nb" / "stats.py", "a") as f: f.write("\nEDITED_BY_HAND = 1\n")
    monkeypatch.setattr(book, "ROOT", tmp_path)
    assert book.stale_exports() == ["embeval_nb/stats.py"]
    with pytest.raises(SystemExit, match="nbdev_export would change embeval_nb/stats.py"):
        book.check_exports()


@pytest.fixture(scope="session")
def smoke_html(run_notebook):
    return book.build("smoke")  # reuses every notebook another test already ran this session with the same inputs


def render(page: Path, tmp_path):
    assert CHROMIUM, "Debian's chromium is not installed (make test installs it)"
    out = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path}", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    console_errors = [l for l in out.stderr.splitlines()
                      if re.search(r"CONSOLE.*(error|Uncaught)|Failed to load resource|net::ERR_", l, re.I)]
    return out.stdout, console_errors


@pytest.mark.book_last
def test_book_has_every_page(smoke_html):
    for name in book.notebooks():
        assert (smoke_html / "nbs" / f"{name}.html").is_file(), name


@pytest.mark.book_last
def test_a_second_build_with_nothing_changed_runs_nothing(smoke_html, monkeypatch):
    monkeypatch.setattr(book, "execute", lambda *a: pytest.fail(f"{a[1]} ran again with nothing changed"))
    assert set(book.notebooks()) <= set(book.execute_stale("smoke"))


@pytest.mark.book_last
def test_a_chapter_builds_alone_with_the_pages_it_links_to(smoke_html, monkeypatch):
    "`make chapter`: its pages and the foundations they link to (Jupyter Book fails on a link to a page it lacks)."
    monkeypatch.setattr(book, "execute", lambda *a: pytest.fail(f"{a[1]} ran again with nothing changed"))
    own, shared = book.chapter_pages("crossmatch")
    html = book.build("smoke", "crossmatch")
    assert html.name == "html-smoke-crossmatch" and "core" in shared and "references" in shared
    assert sorted(p.stem for p in (html / "nbs").glob("*.html")) == sorted(own + shared)
    assert (html / "index.html").read_text().count("crossmatch_theory.html") >= 1   # the chapter's first page is the root


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
    (r"\w*Warning:|Traceback \(most recent", "a warning or traceback"),   # a warning as Python prints it, not a class name
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
