"""The book's registry (book.yml), the files generated from it, a new chapter written by the scaffold (it passes the
checks, and each piece taken out of it fails one whose message says what to add), the execution cache, the build
(warnings as errors, no network), and its pages rendered in headless Chromium without console errors."""
import json, os, re, shutil, subprocess, sys
from pathlib import Path

import pytest

import book

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=8000", "--window-size=1280,900"]


# --- the registry ----------------------------------------------------------------------------------------------

def test_every_notebook_is_a_page_of_book_yml_once():
    names, on_disk = book.notebooks(), {p.stem for p in (book.ROOT / "nbs").glob("*.ipynb")}
    twice = sorted({n for n in names if names.count(n) > 1})
    assert not twice, f"book.yml lists {twice} more than once: a page has one place in the book"
    unlisted = sorted(on_disk - set(names))
    assert not unlisted, (f"nbs/ holds {', '.join(f'{n}.ipynb' for n in unlisted)}, which book.yml does not list: add each "
                          "to the `pages` of its part (a chapter's three notebooks go in a part of their own with "
                          "`chapter: <name>`, as `make new-chapter CH=<name>` writes it), or delete the notebook")
    absent = sorted(set(names) - on_disk)
    assert not absent, f"book.yml lists {absent}, but nbs/ has no such notebook: create nbs/<name>.ipynb or drop the entry"


@pytest.mark.parametrize("part", book.chapters(), ids=lambda p: p["chapter"])
def test_each_chapter_has_its_three_notebooks_and_a_claims_record_of_its_own(part):
    c, pages = part["chapter"], [e["page"] for e in book._pages(part["pages"])]
    missing = [k for k in ("caption", "title", "paper", "reproduces", "claims") if not part.get(k)]
    assert not missing, f"book.yml, chapter {c}: add {missing} to its part (the header of book.yml says what each is)"
    lacking = [p for p in (f"{c}_theory", f"{c}_impl", c) if p not in pages]
    assert not lacking, (f"book.yml, chapter {c}: its pages lack {lacking}: a chapter's pages are {c}_theory, {c}_impl "
                         f"and its reproduction {c} (then any further reproduction pages)")
    stem, key = part["claims"]
    assert stem in pages and key.startswith(f"{c}/"), \
        f"book.yml, chapter {c}: claims must be [<the page that records them>, {c}/<key>], got {part['claims']}"
    impl = json.loads((book.ROOT / "nbs" / f"{c}_impl.ipynb").read_text())["cells"]
    assert any(f"#| default_exp {c}\n" in book._source(x) + "\n" for x in impl if x["cell_type"] == "code"), \
        f"nbs/{c}_impl.ipynb exports no module {c}: its first code cell is `#| default_exp {c}` (tagged remove-cell)"


def _bib_keys() -> set[str]:
    "The keys of references.bib's entries."
    return set(re.findall(r"^@\w+\s*\{\s*([^,\s]+)\s*,", (book.ROOT / "references.bib").read_text(), re.M))


def _citations() -> dict[str, set[str]]:
    "{key: where it is cited} for each chapter's paper in book.yml and each {cite} in the notebooks' markdown."
    cited = {}
    for part in book.chapters(): cited.setdefault(part["paper"], set()).add(f"book.yml as the paper of {part['chapter']}")
    for nb in sorted((book.ROOT / "nbs").glob("*.ipynb")):
        for cell in json.loads(nb.read_text())["cells"]:
            if cell["cell_type"] != "markdown": continue
            for keys in re.findall(r"\{cite(?::\w+)?\}`([^`]+)`", book.prose(book._source(cell))):
                for k in keys.split(","): cited.setdefault(k.strip(), set()).add(f"nbs/{nb.name}")
    return cited


def test_every_citation_has_an_entry_in_the_bibliography():
    keys = _bib_keys()
    missing = {k: where for k, where in _citations().items() if k not in keys}
    assert not missing, ("references.bib has no entry " + "; ".join(f"{k!r} (cited in {', '.join(sorted(w))})"
                                                                   for k, w in sorted(missing.items()))
                         + ": add each as `@article{<key>, author = {...}, title = {...}, journal = {...}, year = {...}}` "
                         "(`@inproceedings` with `booktitle` for a conference paper), or correct the key where it is cited")


def test_the_generated_files_follow_book_yml():
    "The top-level _toc.yml and the API page's module sections are what scripts/sync_book.py writes from book.yml."
    import sync_book
    stale = sync_book.stale()
    assert not stale, (f"{', '.join(stale)} not what book.yml says: run `{sync_book.COMMAND}` (`make new-chapter` runs "
                       "it) and commit the result; edit book.yml, never these files")


def test_every_data_set_is_a_page_of_the_toc():
    pages, sweep, (parameter, values) = book.toc_pages(), book.sweep_pages(), book.sweeps()["wmd"]
    assert parameter == "dataset" and set(sweep) <= set(pages) and sweep["wmd"] == ("wmd", values[0])
    assert [v for _, v in sweep.values()] == values and (set(sweep) - {"wmd"}).isdisjoint(book.notebooks())
    assert pages.index("wmd_tables") < pages.index("wmd") < pages.index("wmd-20news")
    assert book.sweeps("smoke")["wmd"][1][0] == values[0]     # the page `wmd` exists in every build
    assert [book.page_of("wmd", s, p) for s, p in book.runs("wmd", "book")] == list(sweep)


def test_paper_scale_pages_follow_their_book_page_with_their_own_title_and_labels():
    assert book.paper_notebooks() == ["wmd", "crossmatch", "corpus_distance", "n2o", "retrofit"]
    stems = book.paper_runs("wmd")
    assert stems[0] == ("wmd-reuters-paper", {"dataset": "reuters", "scale": "paper", "missing": "error"}, "wmd")
    assert [page for _, _, page in stems] == list(book.sweep_pages())
    toc = book.toc(set(book.notebooks()) | {"wmd-paper", "wmd-20news", "wmd-20news-paper", "retrofit-paper"})
    files = {e["file"]: e for e in _files(toc)}
    order = list(files)
    assert order.index("nbs/wmd") + 1 == order.index("nbs/wmd-paper") < order.index("nbs/wmd-20news") + 1 == order.index("nbs/wmd-20news-paper")
    assert files["nbs/wmd-paper"]["title"] == "WMD on Reuters (R8) at paper scale"
    assert files["nbs/retrofit-paper"]["title"] == book._heading("retrofit") + " at paper scale"
    assert [book._label_suffix(p) for p in ("wmd", "wmd-paper", "wmd-20news", "wmd-20news-paper")] == ["", "-paper", "-20news", "-20news-paper"]
    assert book.notebook_of("wmd-20news-paper") == "wmd" and book.book_page_of("retrofit-paper") == "retrofit"


def test_a_paper_scale_page_runs_only_on_complete_current_records(tmp_path, monkeypatch):
    from embeval_nb import runs, wmd
    units = [u for u in wmd.dataset_units("bbcsport") if u.name.startswith("bbcsport/s1/BOW/")][:2]
    monkeypatch.setattr(runs, "chapter_units", lambda chapter: units)
    monkeypatch.setenv("EMBEVAL_RESULTS", str(tmp_path))
    assert book.paper_tables("wmd", {"dataset": "bbcsport"}) == [units[0].table]
    assert book.paper_tables("wmd", {"dataset": "reuters"}) == []
    assert book.paper_records("wmd", {"dataset": "bbcsport"}) == (None, "0 of 2 units done")
    assert book.paper_records("wmd", {"dataset": "reuters"}) == (None, "0 of 0 units done")
    runs.write_record(runs.compute_unit(units[0]))
    assert book.paper_records("wmd", {"dataset": "bbcsport"}) == (None, "1 of 2 units done")
    runs.write_record(runs.compute_unit(units[1]))
    key, progress = book.paper_records("wmd", {"dataset": "bbcsport"})
    assert key is not None and progress == "2 of 2 units done"
    rec = runs.read_record(units[1])
    runs.write_record({**rec, "code": "0" * 16})                  # stale: the page is not shown
    assert book.paper_records("wmd", {"dataset": "bbcsport"})[0] is None
    runs.write_record({**rec, "cpu_seconds": rec["cpu_seconds"] + 1})   # another record: another run input
    assert book.paper_records("wmd", {"dataset": "bbcsport"})[0] not in (None, key)


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


# --- a new chapter, written by the scaffold -----------------------------------------------------------------------

NEW = "demo_chapter"
REPOSITORY = ("book.yml", "_config.yml", "references.bib", "settings.ini", "setup.py", "README.md", "requirements.lock",
              "nbs", "embeval_nb", "scripts", "tests", "_ext", "_assets")     # what the checks of a chapter read


def _pytest(root: Path, *args: str) -> subprocess.CompletedProcess:
    "pytest `args` run in the copy `root`, on its own package, build folder and records."
    env = {k: v for k, v in os.environ.items() if not k.startswith("EMBEVAL_RECORD")}
    env.update(PYTHONPATH=str(root), EMBEVAL_BUILD_DIR=str(root / "_build"), EMBEVAL_PROGRESS="0")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600)


def _edit_json(path: Path, edit) -> None:
    nb = json.loads(path.read_text()); edit(nb["cells"]); path.write_text(json.dumps(nb, indent=1))


def _untag_parameters(cells):
    for c in cells:
        if "parameters" in c["metadata"].get("tags", []): c["metadata"]["tags"].remove("parameters")


def _replace_in_cells(old: str, new: str):
    "An edit of a notebook's cells: `old` replaced by `new` in every cell's source."
    def edit(cells):
        for c in cells: c["source"] = book._source(c).replace(old, new)
    return edit


def _without_lines(*fragments: str):
    "An edit of a text: the lines holding any of `fragments` taken out."
    return lambda text: "".join(l for l in text.splitlines(keepends=True) if not any(f in l for f in fragments))


def _without_part(chapter: str):
    "An edit of book.yml: the part of `chapter` taken out."
    return lambda text: re.sub(rf"  - caption: .*\n    chapter: {chapter}\n(    .*\n)+", "", text)


# (what is taken out, file, its edit (text -> text, or cells edited in place), the test that must fail, words its
# message must hold). The docstring example is taken out of the notebook, and the package exported again.
PIECES = [
    ("the parameters tag", f"nbs/{NEW}.ipynb", ("cells", _untag_parameters),
     f"tests/test_hygiene.py::test_reproduction_pages_take_their_scale_as_a_parameter[{NEW}]",
     "has no cell tagged `parameters`, so its smoke runs would run at book scale: tag the code cell"),
    ("a link", f"nbs/{NEW}.ipynb", ("cells", _replace_in_cells("{ref}`record <api-core-record>`", "`record`")),
     f"tests/test_hygiene.py::test_reproduction_pages_link_the_package_functions_they_call[{NEW}]",
     "the prose names and links none of {ref}`record <api-core-record>`; add each"),
    ("a label", f"nbs/{NEW}_impl.ipynb", ("cells", _replace_in_cells(f"(api-{NEW}-paired_cosines)=\n\n", "")),
     "tests/test_hygiene.py::test_api_labels_stand_once_before_their_definitions",
     f"in nbs/{NEW}_impl.ipynb, put the line `(api-{NEW}-paired_cosines)=` first in the markdown cell right before the "
     "code cell with `def paired_cosines`"),
    ("the account row", f"embeval_nb/papers/{NEW}.md", ("text", _without_lines("| mean-cosine-zero |")),
     f"tests/test_hygiene.py::test_the_account_lists_every_claim_its_pages_decide[{NEW}]",
     f"decides the claims ['mean-cosine-zero'], which no row of the account in embeval_nb/papers/{NEW}.md lists: add"),
    ("the heading the account points at", f"nbs/{NEW}.ipynb",
     ("cells", _replace_in_cells("## 1. Random pairs", "## 1. Pairs")),
     f"tests/test_hygiene.py::test_the_account_points_at_headings_of_its_page[{NEW}]",
     f"has where '1. Random pairs', which is no heading of nbs/{NEW}.ipynb. Write the text of one of its headings"),
    ("the bibliography entry", "references.bib", ("text", lambda t: t[:t.index(f"\n@misc{{{NEW},")] + "\n"),
     "tests/test_book.py::test_every_citation_has_an_entry_in_the_bibliography",
     f"references.bib has no entry '{NEW}' (cited in book.yml as the paper of {NEW}, nbs/{NEW}.ipynb"),
    ("the docstring example", f"nbs/{NEW}_impl.ipynb", ("cells", _replace_in_cells(
        "\n    >>> paired_cosines([[1, 0], [1, 1]], [[2, 0], [-1, 1]])\n    array([1., 0.])\n", "")),
     f"tests/test_docstrings.py::test_every_public_callable_has_an_example[{NEW}]",
     f"embeval_nb.{NEW}: no docstring example in paired_cosines: in the notebook that exports {NEW}, add"),
    ("the API page's section", "nbs/api.ipynb", ("cells", lambda cells: cells.__delitem__(slice(-2, None))),
     "tests/test_book.py::test_the_generated_files_follow_book_yml",
     "nbs/api.ipynb not what book.yml says: run `python scripts/sync_book.py`"),
    ("the chapter's part of book.yml", "book.yml", ("text", _without_part(NEW)),
     "tests/test_book.py::test_every_notebook_is_a_page_of_book_yml_once",
     f"nbs/ holds {NEW}.ipynb, {NEW}_impl.ipynb, {NEW}_theory.ipynb, which book.yml does not list: add each"),
    ("the package docstring's line", "embeval_nb/__init__.py", ("text", _without_lines(f"    {NEW} ")),
     "tests/test_docstrings.py::test_the_package_docstring_names_every_chapter",
     f"the docstring's list of chapters lacks ['{NEW}']: add a line"),
]


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory):
    "A copy of the repository with a chapter written by `scripts/new_chapter.py`; returns the copy's root."
    root = tmp_path_factory.mktemp("repository")
    for name in REPOSITORY:
        src = book.ROOT / name
        if src.is_dir(): shutil.copytree(src, root / name, ignore=shutil.ignore_patterns("__pycache__", "_build"))
        else: shutil.copy(src, root / name)
    run = subprocess.run([sys.executable, "scripts/new_chapter.py", NEW, "--title", "A demonstration chapter"], cwd=root,
                         env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    return root


@pytest.mark.xdist_group("scaffold")      # one worker makes the copy and runs both tests on it
def test_a_scaffolded_chapter_passes_every_check_untouched(scaffolded):
    """`make new-chapter` writes a chapter that passes, as written, every check a chapter must pass: the registry,
    the bibliography, the generated files, hygiene, docstring examples and its own tests (smoke runs of its pages)."""
    import new_chapter
    run = _pytest(scaffolded, *new_chapter.check_tests(NEW))
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert re.search(r"\b\d+ passed", run.stdout) and " failed" not in run.stdout
    assert not list((book.ROOT / "nbs").glob(f"{NEW}*")) and not (book.ROOT / "embeval_nb" / f"{NEW}.py").exists()


@pytest.mark.xdist_group("scaffold")
@pytest.mark.parametrize("piece, path, edit, test, message", PIECES, ids=[p[0] for p in PIECES])
def test_a_chapter_without_a_required_piece_fails_a_check_that_says_what_to_add(scaffolded, piece, path, edit, test,
                                                                               message):
    file, before = scaffolded / path, (scaffolded / path).read_text()
    exported = {p: p.read_text() for p in (scaffolded / "embeval_nb" / f"{NEW}.py", scaffolded / "embeval_nb" / "_modidx.py")}
    try:
        kind, change = edit
        if kind == "text": file.write_text(change(before))
        else: _edit_json(file, change)
        assert file.read_text() != before, f"the edit taking out {piece} changed nothing"
        if piece == "the docstring example":
            subprocess.run([str(Path(sys.executable).parent / "nbdev_export")], cwd=scaffolded, check=True)
        run = _pytest(scaffolded, test)
        assert run.returncode == 1 and "1 failed" in run.stdout, f"without {piece}, {test} did not fail:\n{run.stdout[-3000:]}"
        assert message in " ".join(run.stdout.split()), \
            f"without {piece}, {test} failed without saying {message!r}:\n{run.stdout[-3000:]}"
    finally:
        file.write_text(before)
        for p, text in exported.items(): p.write_text(text)


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
