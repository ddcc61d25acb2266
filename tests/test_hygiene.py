"""Repository hygiene: notebooks committed clean, nbdev_export reproduces the package, tags survive nbdev_clean."""
import json, shutil, subprocess, sys
from pathlib import Path

import pytest

import book  # scripts/book.py (conftest puts scripts/ on the path)

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "nbs").glob("*.ipynb"))
BIN = Path(sys.executable).parent


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_no_outputs(nb):
    cells = json.loads(nb.read_text())["cells"]
    dirty = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count"))]
    assert not dirty, f"{nb.name}: cells {dirty} carry outputs; strip them (nbconvert --clear-output, nbdev_clean)"


def test_nbdev_export_leaves_the_package_unchanged():
    changed = book.stale_exports()
    assert not changed, f"nbdev_export changes {changed}: the package was edited by hand or not re-exported"


def test_notebooks_are_exactly_what_nbdev_clean_makes(tmp_path):
    proj = book.copy_project(tmp_path)
    before = book.files_of(proj / "nbs")
    subprocess.run([str(BIN / "nbdev_clean")], cwd=proj, check=True)
    after = book.files_of(proj / "nbs")
    changed = sorted(k for k in before if before[k] != after[k])
    assert not changed, f"nbdev_clean changes {changed}: run it before committing"


def test_parameters_and_book_tags_survive_nbdev_clean(tmp_path):
    nb = {"cells": [{"cell_type": "code", "execution_count": 3, "id": "x", "outputs": [{"output_type": "stream", "name": "stdout", "text": ["1"]}],
                     "metadata": {"tags": ["parameters"], "collapsed": True}, "source": ["scale = 'book'"]},
                    {"cell_type": "code", "execution_count": None, "id": "y", "outputs": [],
                     "metadata": {"tags": ["remove-cell"]}, "source": ["#| hide\nimport os"]}],
          "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    proj = book.copy_project(tmp_path)
    path = proj / "nbs" / "tagged.ipynb"
    path.write_text(json.dumps(nb))
    subprocess.run([str(BIN / "nbdev_clean"), "--fname", str(path)], cwd=proj, check=True)
    cells = json.loads(path.read_text())["cells"]
    assert [c["metadata"].get("tags") for c in cells] == [["parameters"], ["remove-cell"]]
    assert cells[0]["execution_count"] is None and "collapsed" not in cells[0]["metadata"]


def _cells(nb: Path) -> list[dict]:
    return json.loads(nb.read_text())["cells"]


def _subtitle(nb: Path) -> str:
    "The `> ...` lines under a notebook's title, joined as nbdev should join them."
    lines = "".join(_cells(nb)[0]["source"]).splitlines()
    return " ".join(l[1:].strip() for l in lines if l.startswith(">"))


EXPORTING = [nb for nb in NOTEBOOKS
             if any(c["cell_type"] == "code" and "#| default_exp" in "".join(c["source"]) for c in _cells(nb))]


@pytest.mark.parametrize("nb", EXPORTING, ids=lambda p: p.name)
def test_module_docstring_is_the_full_subtitle(nb):
    import ast
    module = next(l.split()[-1] for c in _cells(nb) if c["cell_type"] == "code"
                  for l in "".join(c["source"]).splitlines() if l.startswith("#| default_exp"))
    doc = ast.get_docstring(ast.parse((ROOT / "embeval_nb" / f"{module}.py").read_text()))
    assert _subtitle(nb) and doc == _subtitle(nb), f"{module}.py docstring {doc!r} is not the subtitle {_subtitle(nb)!r}"


# What a reader of the site cannot follow (repository files outside the site) or should not read (our own process).
NOT_FOR_READERS = [
    (r"tests/test_\w+\.py", "a test file: say what it checks instead"),
    (r"shared/papers|REFERENCE\.md|STYLE\.md|SOURCES\.md", "a repository file outside the site: say what it holds"),
    (r"\]\((?!https?://|#|[\w-]+\.(md|ipynb))[^)]*\)", "a link to something that is not a page of the site"),
    (r"\bthe issue\b|\bissue's\b|\bour (speed )?targets?\b|previous version|\bwas measured before\b", "our own process"),
]


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.name)
def test_book_text_is_for_readers(nb):
    import re
    found = []
    for i, cell in enumerate(_cells(nb)):
        if cell["cell_type"] != "markdown": continue
        text = "".join(cell["source"])
        for pattern, why in NOT_FOR_READERS:
            found += [f"cell {i}: {m.group(0)!r} ({why})" for m in re.finditer(pattern, text)]
    assert not found, "\n".join(found)


# --- numbers in the reproduction pages' prose ------------------------------------------------------

REPRODUCTIONS = book.reproductions()     # {page: chapter}, from book.yml: every chapter page but theory and implementation
NUMBER = r"(?<![\w.])\d[\d,]*(?:\.\d+)?"
CONVENTIONS = {"95"}        # the interval level every verdict uses, stated on the stats page


def _numbers(text):
    "The numbers written in digits in `text`, outside citations, link targets, maths, code and section numbers."
    import re
    for pattern in (r"\{cite[^}]*\}`[^`]*`", r"\]\([^)]*\)", r"\$\$.*?\$\$", r"\$[^$]*\$", r"`[^`]*`", r"^#+ \d+\."):
        text = re.sub(pattern, " ", text, flags=re.M | re.S)
    return {m.replace(",", "").rstrip(".") for m in re.findall(NUMBER, text)}


def _papers_file(chapter: str) -> Path:
    "embeval_nb/papers/<chapter>.md, or a failure saying what to write there."
    path = ROOT / "embeval_nb" / "papers" / f"{chapter}.md"
    if not path.is_file():
        pytest.fail(f"{path.relative_to(ROOT)} is missing: the chapter {chapter!r} of book.yml needs its papers file, "
                    "the paper's numbers as `## <table>` sections with pipe tables and an `## account` table "
                    "(`make new-chapter` writes one)")
    return path


@pytest.mark.parametrize("page", sorted(REPRODUCTIONS))
def test_prose_numbers_are_the_papers(page):
    """A number typed into a reproduction page's prose must be one the paper prints (or a convention such as the
    95% level); our own numbers reach the prose only through the records, in generated text. The paper's numbers are
    those of its papers file and, where book.yml names its `paper_text` and that text is beside the repository, of
    the full text."""
    chapter = REPRODUCTIONS[page]
    allowed = _numbers(_papers_file(chapter).read_text())
    if name := next(c for c in book.chapters() if c["chapter"] == chapter).get("paper_text"):
        paper = ROOT.parent / "shared" / "papers" / f"{name}.md"
        if not paper.is_file(): pytest.skip(f"{paper} is not beside the repository")
        allowed |= _numbers(paper.read_text())
    cells = json.loads((ROOT / "nbs" / f"{page}.ipynb").read_text())["cells"]
    typed = {(c.get("id"), x) for c in cells if c["cell_type"] == "markdown"
             for x in _numbers("".join(c["source"])) - allowed - CONVENTIONS}
    assert not typed, (f"{page}: numbers typed into prose that the paper does not print (cell, number): {sorted(typed)}; "
                       "generate the sentence from the records instead (a code cell printing `Markdown(f\"...\")`), "
                       f"or transcribe the paper's number into embeval_nb/papers/{chapter}.md")


def _parameters_cells(page: str) -> list[str]:
    "The sources of the cells of nbs/<page>.ipynb tagged `parameters`."
    return [book._source(c) for c in _cells(ROOT / "nbs" / f"{page}.ipynb")
            if "parameters" in c.get("metadata", {}).get("tags", [])]


@pytest.mark.parametrize("page", sorted(REPRODUCTIONS))
def test_reproduction_pages_take_their_scale_as_a_parameter(page):
    """A reproduction page has one code cell tagged `parameters` that sets `scale` (and the parameter of its sweep):
    without the tag papermill writes `scale = "smoke"` into a cell of its own at the top, the page's own
    `scale = "book"` overrides it, and every smoke build of the tests runs the page at book scale."""
    import re
    cells = _parameters_cells(page)
    how = ("tag the code cell that sets `scale = \"book\"` (and `seed`) `parameters`: its cell metadata "
           "{\"tags\": [\"parameters\"]}, or in Jupyter the cell's tags (View > Cell Toolbar > Tags)")
    assert cells, f"nbs/{page}.ipynb has no cell tagged `parameters`, so its smoke runs would run at book scale: {how}"
    assert len(cells) == 1, f"nbs/{page}.ipynb has {len(cells)} cells tagged `parameters`; papermill reads one: merge them"
    names = set(re.findall(r"^(\w+)\s*=", cells[0], re.M))
    sweep = book.sweeps().get(page, (None,))[0]
    missing = [n for n in ("scale", sweep) if n and n not in names]
    assert not missing, (f"nbs/{page}.ipynb: its `parameters` cell sets {sorted(names)} but not {missing}: add "
                         + ", ".join(f"`{n} = ...`" for n in missing) + " there, with a comment naming the values")


def _account(chapter: str):
    "The account table of the chapter's papers file (a failure saying what to add if it has none)."
    from embeval_nb.core import paper_tables
    path = _papers_file(chapter)
    try:
        tables = paper_tables(chapter)
    except ValueError as e:
        pytest.fail(f"{path.relative_to(ROOT)}: {e}; each `## <name>` section holds a sentence and a pipe table "
                    "with a header line and a line per row")
    if "account" not in tables:
        pytest.fail(f"{path.relative_to(ROOT)} has no `## account` section: add one with the table "
                    "`| item | paper says | status | where | claims |`, a row per table, figure and claim of the paper")
    return tables["account"]


def _account_page(chapter: str) -> str:
    "The reproduction page of `chapter` that shows its account (calls `paper_account(\"<chapter>\", ...)`)."
    import re
    call = re.compile(rf"paper_account\(\s*[\"']{chapter}[\"']")
    pages = [p for p, c in REPRODUCTIONS.items() if c == chapter
             and any(c["cell_type"] == "code" and call.search(book._source(c)) for c in _cells(ROOT / "nbs" / f"{p}.ipynb"))]
    assert pages, (f"no reproduction page of the chapter {chapter!r} shows the paper's account: end nbs/{chapter}.ipynb "
                   f"with a section \"## The paper, item by item\" and a code cell `paper_account(\"{chapter}\", claims)`")
    return pages[0]


def _headings(page: str) -> list[str]:
    "The section headings of nbs/<page>.ipynb's markdown cells (code blocks aside), as written."
    import re
    out = []
    for cell in _cells(ROOT / "nbs" / f"{page}.ipynb"):
        if cell["cell_type"] != "markdown": continue
        fenced = False
        for line in book._source(cell).splitlines():
            if line.lstrip().startswith(("```", "~~~")): fenced = not fenced
            elif not fenced and (m := re.match(r"#{1,6} +(.+?)\s*$", line)): out.append(m[1])
    return out


CHAPTERS = [c["chapter"] for c in book.chapters()]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_account_points_at_headings_of_its_page(chapter):
    """Each `where` of the account that is not a note (`- ...`) is a section heading of the page that shows the
    account: the account links it (`#<anchor>`), and a link to no heading leads nowhere."""
    from embeval_nb.core import heading_anchor
    page, account = _account_page(chapter), _account(chapter)
    headings = _headings(page)
    anchors = {heading_anchor(h) for h in headings}
    bad = [(item, w) for item, w in account["where"].items() if not w.startswith("-") and heading_anchor(w) not in anchors]
    assert not bad, (f"embeval_nb/papers/{chapter}.md, account: " + "; ".join(f"row {i!r} has where {w!r}" for i, w in bad)
                     + f", which is no heading of nbs/{page}.ipynb. Write the text of one of its headings "
                     f"({'; '.join(headings)}), or a note starting with \"- \" where the page has no section for it")


CLAIM_METHODS = ("add", "interval", "bootstrap", "replicated", "agreement", "paired_errors", "untested")   # `Claims` methods that decide


def _decided_claims(page: str) -> list[str]:
    "The claim keys nbs/<page>.ipynb passes as a literal to a `Claims` method (`claims.interval(\"key\", ...)`)."
    import ast
    keys = []
    for cell in _cells(ROOT / "nbs" / f"{page}.ipynb"):
        if cell["cell_type"] != "code": continue
        code = "\n".join(l for l in book._source(cell).splitlines() if not l.lstrip().startswith(("%", "!")))
        keys += [n.args[0].value for n in ast.walk(ast.parse(code))
                 if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in CLAIM_METHODS
                 and n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)]
    return keys


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_account_lists_every_claim_its_pages_decide(chapter):
    """Every claim a reproduction page decides under a key written in its code is listed in the `claims` column of
    the account (the page's `paper_account` refuses a claim listed under no item when it runs; this says so without
    running it). Keys made at run time are checked by `paper_account` alone."""
    listed = {k for cell in _account(chapter)["claims"] for k in cell.split() if k != "-"}
    missing = {p: sorted(set(_decided_claims(p)) - listed) for p, c in REPRODUCTIONS.items() if c == chapter}
    missing = {p: keys for p, keys in missing.items() if keys}
    assert not missing, ("; ".join(f"nbs/{p}.ipynb decides the claims {keys}" for p, keys in missing.items())
                         + f", which no row of the account in embeval_nb/papers/{chapter}.md lists: add each key to the "
                         "`claims` column (keys separated by spaces) of the row of the item it decides, or a row "
                         "`| <item> | <what the paper says> | <status> | <heading of the page> | <key> |`")


def _public_callables():
    "(qualified name, function) for every public function and public method of a public class the package defines."
    import importlib, inspect
    for path in sorted((ROOT / "embeval_nb").glob("*.py")):
        if path.stem.startswith("_"): continue
        module = importlib.import_module(f"embeval_nb.{path.stem}")
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__: continue
            if inspect.isfunction(obj): yield f"{path.stem}.{name}", obj
            elif inspect.isclass(obj):
                yield from ((f"{path.stem}.{name}.{m}", f) for m, f in vars(obj).items()
                            if not m.startswith("_") and inspect.isfunction(f))


def test_functions_with_more_than_three_parameters_document_each_one():
    "nbdev's docments style: a comment after each parameter (self aside) says what it is, its shape and its range."
    import inspect
    from fastcore.docments import docments
    missing = []
    for name, f in _public_callables():
        params = [p for p in inspect.signature(f).parameters if p not in ("self", "cls")]
        if len(params) <= 3: continue
        docs = docments(f, full=False, args_kwargs=True)
        missing += [f"{name}({p})" for p in params if not docs.get(p)]
    assert not missing, f"parameters without a docments comment: {', '.join(missing)}"


# --- the reproduction pages name and link the package functions they call ----------------------------------------

API_LABEL = r"\(api-(\w+)-(\w+)\)="     # a MyST target `(api-<module>-<name>)=` on a line of its own


def _api_imports(nb: Path) -> dict[str, str]:
    """{name: defining module (short)} of every function or class notebook `nb` imports from `embeval_nb`. A loader
    wrapped in `functools.lru_cache` counts as the function it wraps."""
    import ast, importlib, inspect
    out = {}
    for cell in _cells(nb):
        if cell["cell_type"] != "code": continue
        code = "\n".join(l for l in "".join(cell["source"]).splitlines() if not l.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Import):
                assert not any(a.name.split(".")[0] == "embeval_nb" for a in node.names), \
                    f"{nb.name}: import names from embeval_nb (`from embeval_nb.x import f`), so that the page can link them"
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "embeval_nb":
                module = importlib.import_module(node.module)
                for alias in node.names:
                    obj = getattr(module, alias.name)
                    if inspect.isfunction(inspect.unwrap(obj)) or inspect.isclass(obj):
                        out[alias.name] = obj.__module__.rsplit(".", 1)[-1]
    return out


@pytest.mark.parametrize("page", sorted(REPRODUCTIONS))
def test_reproduction_pages_link_the_package_functions_they_call(page):
    """Where a page calls a package function that does the work, it names it and links its definition: every function
    or class the page imports from the package appears in its prose as {ref}`name <api-<module>-<name>>`."""
    nb = ROOT / "nbs" / f"{page}.ipynb"
    prose = "\n".join("".join(c["source"]) for c in _cells(nb) if c["cell_type"] == "markdown")
    missing = [f"{{ref}}`{name} <api-{module}-{name}>`" for name, module in sorted(_api_imports(nb).items())
               if f"{{ref}}`{name} <api-{module}-{name}>`" not in prose]
    assert not missing, f"{page}: the prose names and links none of {', '.join(missing)}; add each where the page describes the step"


def _missing_label(nb: str, ref: str) -> str:
    "What to write where, for a {ref} to the label `ref` (api-<module>-<name>) that no notebook defines."
    _, module, name = ref.split("-", 2)
    source = next((f"nbs/{p.name}" for p in NOTEBOOKS for c in _cells(p) if c["cell_type"] == "code"
                   and f"#| default_exp {module}\n" in book._source(c) + "\n"), f"the notebook that exports {module}")
    return (f"{nb}: {{ref}} to {ref}, which no notebook defines: in {source}, put the line `({ref})=` first in the "
            f"markdown cell right before the code cell with `def {name}` (or `class {name}`), then a blank line")


def test_api_labels_stand_once_before_their_definitions():
    """Every `(api-<module>-<name>)=` label is defined once in the book, leads a markdown cell of the notebook that
    exports `<module>`, and the next cell is the code cell with `def <name>` or `class <name>`; every {ref} to an
    api- label has its label."""
    import importlib, re
    where, refs, problems = {}, set(), []
    for nb in NOTEBOOKS:
        cells = _cells(nb)
        exported = {l.split()[-1] for c in cells if c["cell_type"] == "code"
                    for l in "".join(c["source"]).splitlines() if l.startswith("#| default_exp")}
        for i, cell in enumerate(cells):
            if cell["cell_type"] != "markdown": continue
            text = book.prose("".join(cell["source"]))
            refs |= {(nb.name, r) for r in re.findall(r"\{ref\}`[^`<]*<(api-[^>`]+)>`", text)}
            lines = [l for l in text.split("\n") if l.strip()]
            labels = [l for l in lines if l.startswith("(api-")]
            if not labels: continue
            if lines[:len(labels)] != labels:
                problems.append(f"{nb.name} cell {i}: api labels must lead the cell, each on a line of its own")
            nxt = cells[i + 1] if i + 1 < len(cells) else {"cell_type": "none", "source": []}
            for line in labels:
                m = re.fullmatch(API_LABEL, line.strip())
                if not m: problems.append(f"{nb.name} cell {i}: {line!r} is not (api-<module>-<name>)="); continue
                module, name = m[1], m[2]
                label = f"api-{module}-{name}"
                where.setdefault(label.lower().replace("_", "-"), []).append(f"{nb.name} cell {i} ({label})")
                if module not in exported:
                    problems.append(f"{nb.name} cell {i}: {label} names module {module}, but the notebook exports {exported or 'nothing'}")
                elif getattr(importlib.import_module(f"embeval_nb.{module}"), name, None) is None:
                    problems.append(f"{nb.name} cell {i}: {label}: embeval_nb.{module} has no {name}")
                if nxt["cell_type"] != "code" or not re.search(rf"^(def|class) {re.escape(name)}\b", "".join(nxt["source"]), re.M):
                    problems.append(f"{nb.name} cell {i}: {label} is not right before the code cell that defines {name}")
    problems += [f"label defined {len(v)} times (Sphinx folds case, HTML ids turn _ into -): {', '.join(v)}"
                 for v in where.values() if len(v) > 1]
    problems += [_missing_label(nb, r) for nb, r in sorted(refs) if r.lower().replace("_", "-") not in where]
    assert not problems, "\n".join(problems)
