"""Write a new chapter with every convention of the book in place, so that it passes the test suite before any content.

    python scripts/new_chapter.py isotropy --title "Isotropy of word embeddings" --paper mu2018allbutthetop
    python scripts/new_chapter.py --check isotropy     # run the checks a chapter must pass (a minute or two)

`make new-chapter CH=isotropy TITLE="..." PAPER=<key>` runs the first. It writes
    nbs/<name>_theory.ipynb     the question, definitions and maths, with a demo that checks itself
    nbs/<name>_impl.ipynb       -> embeval_nb/<name>.py: one exported function (`paired_cosines`) with its label,
                                docstring example and tests against scikit-learn
    nbs/<name>.ipynb            the reproduction: a `parameters` cell, settings per scale, one experiment recorded,
                                the paper's number beside ours, one claim decided by `Claims.bootstrap`, the account
    embeval_nb/papers/<name>.md the paper's numbers (one table) and the account of its items
    tests/test_<name>.py        the function against scikit-learn, its errors, smoke runs of the three notebooks
and adds the chapter to book.yml (before the back matter), a line to the package docstring's list of chapters, the
paper to references.bib if `--paper` names no entry there (a placeholder to replace), then runs nbdev_export (the
module), scripts/sync_book.py (the top-level _toc.yml and the API page's section) and nbdev_clean. The guide to
filling it in is the book's page "How to add a chapter" (nbs/add_a_chapter.ipynb).
"""
from __future__ import annotations

import argparse, json, keyword, re, subprocess, sys
from pathlib import Path

import book  # scripts/book.py: the registry (book.yml) and the repository root
import sync_book

BIN = Path(sys.executable).parent

# --- the three notebooks ---------------------------------------------------------------------------------------
# Each is a list of (cell type, source, tags). <<name>>, <<title>> and <<paper>> are replaced by the chapter's.

THEORY = [
    ("markdown", """# <<title>>: theory

> The paper's question, the definitions and the maths, with small demos that check themselves as they run.""", []),
    ("markdown", """## The question

Replace this section with the paper's question and its answer, citing the paper as {cite}`<<paper>>`. This page
sets out the definitions and the maths; the [implementation page](<<name>>_impl.ipynb) builds and tests the
functions, the [reproduction page](<<name>>.ipynb) runs the paper's experiments.""", []),
    ("code", """import numpy as np

from embeval_nb.<<name>> import paired_cosines""", []),
    ("markdown", """## Paired cosines

The cosine of two vectors $x, y \\in \\mathbb{R}^d$ is

$$\\cos(x, y) = \\frac{x \\cdot y}{\\lVert x \\rVert\\, \\lVert y \\rVert}.$$

If $x$ and $y$ are independent with independent standard normal coordinates, the direction of $x$ is uniform on
the sphere and independent of $y$, so the cosine is symmetric about zero: its mean is zero and its variance is
$1/d$. A check on many pairs:""", []),
    ("code", """rng = np.random.default_rng(0)
d = 50
X, Y = rng.normal(size=(2, 20000, d))
c = paired_cosines(X, Y)
print(f"mean {c.mean():+.4f}, variance {c.var():.5f} against 1/d = {1 / d:.5f}")
assert abs(c.mean()) < 0.01 and abs(c.var() * d - 1) < 0.05""", []),
]

IMPL = [
    ("markdown", """# <<title>>: implementation

> Paired cosines of two sets of vectors, checked against scikit-learn.""", []),
    ("code", "#| default_exp <<name>>", ["remove-cell"]),
    ("code", """#| export
from __future__ import annotations

import numpy as np

from embeval_nb.checks import as_points, check_same_columns""", []),
    ("code", """#| hide
import pytest
from sklearn.metrics.pairwise import paired_cosine_distances""", ["remove-cell"]),
    ("markdown", """This is the implementation half of the chapter: the [theory page](<<name>>_theory.ipynb) says what is
computed, the [reproduction page](<<name>>.ipynb) runs the experiments of {cite}`<<paper>>` with the functions
exported here. Each function is followed by cells that show it and check it against an independent reference.""", []),
    ("markdown", """(api-<<name>>-paired_cosines)=

## Paired cosines

`paired_cosines` gives the cosine of each row of `X` with the same row of `Y`. Rows are rescaled by their largest
entry first, so that no finite input overflows or underflows; an all-zero row has no direction, and is an error
naming the row.""", []),
    ("code", """#| export
def paired_cosines(X,               # (n, d) array of numbers, finite, no all-zero row
                   Y,               # (n, d) array of numbers, paired row by row with X
                  ) -> np.ndarray:  # (n,) float64 in [-1, 1]: the cosine of row i of X with row i of Y
    \"\"\"The cosine of each row of `X` with the same row of `Y`; ValueError naming the row if one is all zero.

    >>> paired_cosines([[1, 0], [1, 1]], [[2, 0], [-1, 1]])
    array([1., 0.])
    \"\"\"
    X, Y = as_points(X, "X"), as_points(Y, "Y")
    check_same_columns(X, Y)
    if len(X) != len(Y): raise ValueError(f"X has {len(X)} rows, Y has {len(Y)}: their rows are paired")
    sx, sy = np.abs(X).max(1, initial=0), np.abs(Y).max(1, initial=0)
    if (zero := np.flatnonzero((sx == 0) | (sy == 0))).size:
        raise ValueError(f"row {zero[0]} of X or Y is all zero: it has no direction, so no cosine")
    X, Y = X / sx[:, None], Y / sy[:, None]
    return np.clip(np.einsum("ij,ij->i", X, Y) / (np.linalg.norm(X, axis=1) * np.linalg.norm(Y, axis=1)), -1, 1)""", []),
    ("code", """rng = np.random.default_rng(0)
X, Y = rng.normal(size=(2, 100, 7))
np.testing.assert_allclose(paired_cosines(X, Y), 1 - paired_cosine_distances(X, Y), atol=1e-12)
np.testing.assert_allclose(paired_cosines(1e200 * X, 1e-200 * Y), paired_cosines(X, Y), rtol=1e-12, atol=1e-15)
assert np.allclose(paired_cosines(X, 3 * X), 1) and np.allclose(paired_cosines(X, -X), -1)
paired_cosines(X[:3], Y[:3])""", []),
    ("code", """with pytest.raises(ValueError, match="row 1 of X or Y is all zero"):
    paired_cosines([[1, 0], [0, 0]], [[1, 1], [1, 1]])
with pytest.raises(ValueError, match="X has 2 rows, Y has 1"):
    paired_cosines([[1, 0], [0, 1]], [[1, 1]])
with pytest.raises(ValueError, match="X has 2 columns, Y has 3"):
    paired_cosines([[1, 0]], [[1, 1, 1]])""", []),
]

REPRODUCTION = [
    ("markdown", """# <<title>>: reproduction

> The paper's experiment, its number beside ours, its claim decided by a stated test, and an account of every item of the paper.

This page runs the experiments of {cite}`<<paper>>`: the [theory page](<<name>>_theory.ipynb) says what is
computed and the [implementation page](<<name>>_impl.ipynb) builds it. Each scale's settings are declared at the
top of the code and picked by {ref}`scale_settings <api-core-scale_settings>`; the paper's numbers are read from
its tables as printed ({ref}`paper_tables <api-core-paper_tables>`, {ref}`paper_value <api-core-paper_value>`),
every number of ours is stored with {ref}`record <api-core-record>`, and each claim is decided by a stated test
({ref}`Claims <api-core-Claims>`).

```
papermill nbs/<<name>>.ipynb out.ipynb                  # default scale="book"
papermill nbs/<<name>>.ipynb out.ipynb -p scale smoke   # what the tests run
```""", []),
    ("code", """scale = "book"  # smoke (tiny, for the tests), book (the book's settings), paper (the paper's sizes)
seed = 0        # seeds every random draw of the page""", ["parameters"]),
    ("code", """import pandas as pd

from embeval_nb.checks import make_rng
from embeval_nb.core import Claims, paper_account, paper_tables, paper_value, record, scale_settings
from embeval_nb.<<name>> import paired_cosines

SETTINGS = {   # n: pairs of random vectors, d: their dimension, n_boot: bootstrap resamples
    "smoke": dict(n=200, d=50, n_boot=1000),
    "book": dict(n=5000, d=50, n_boot=2000),
    "paper": dict(n=50000, d=50, n_boot=2000),
}
S = scale_settings(scale, SETTINGS)
PAPER = paper_tables("<<name>>")
claims = Claims("<<name>>")
_ = record("<<name>>/setup", {"scale": scale, "seed": seed, **S})""", ["hide-input"]),
    ("markdown", """## 1. Random pairs

Replace this section with the paper's first experiment. Here: pairs of independent random vectors with standard
normal coordinates (seeded, {ref}`make_rng <api-checks-make_rng>`), the cosine of each pair
({ref}`paired_cosines <api-<<name>>-paired_cosines>`), and their mean beside the paper's Table 1:""", []),
    ("code", """X, Y = make_rng(seed).normal(size=(2, S["n"], S["d"]))
cosines = paired_cosines(X, Y)
ours = record("<<name>>/table1", {"mean cosine": float(cosines.mean()), "pairs": S["n"], "dimension": S["d"]})
paper = paper_value(PAPER["table1"].loc["mean cosine of independent random vectors", "value"])
pd.DataFrame({"paper": [paper], "ours": [f"{ours['mean cosine']:+.4f}"], "pairs": [S["n"]], "dimension": [S["d"]]},
             index=["mean cosine of independent random vectors"])""", []),
    ("markdown", """The claim, decided by a percentile bootstrap over the pairs; the same test is run on a counterexample
(vectors that share a direction), where it must read fails, or the claim is refused or untestable:""", []),
    ("code", """_ = claims.bootstrap(
    "mean-cosine-zero", "Table 1: the mean cosine of two independent random vectors is zero (the mean over pairs, "
    "within 0.05 of zero)", lambda c: c.mean(), cosines,
    counterexample=paired_cosines(X + 1, Y + 1), paper=paper, unit="pair of vectors", above=-0.05, below=0.05,
    n_boot=S["n_boot"], seed=seed)
claims.table("mean-cosine-zero")""", []),
    ("markdown", """## The paper, item by item

Every table, figure and claim of the paper: what became of it here, the section of this page that shows it and the
claims that decide it, with their verdicts ({ref}`paper_account <api-core-paper_account>`).""", []),
    ("code", 'paper_account("<<name>>", claims)', ["hide-input"]),
    ("markdown", """## The paper's claims

Each claim with the paper's number, ours, the verdict and the test that reached it.""", []),
    ("code", "claims.table()", ["hide-input"]),
]

PAPERS_FILE = """# <<paper>> (replace with the paper's authors (year), title)

The numbers of the paper that the <<name>> chapter quotes, transcribed once; cells are as printed in the paper.
Replace the tables below with the paper's own: one `## <name>` section per table, a sentence saying what its numbers
are, then a pipe table whose first column names the rows. The reproduction page reads them with `paper_tables`.

## table1

Table 1: the mean cosine of two independent random vectors.

| quantity | value |
|---|---|
| mean cosine of independent random vectors | 0 |

## account

Every table, figure and claim of the paper, in its order: what became of it on the reproduction page (reproduced,
substitute, partial or not here), where the page shows it (a section heading of the page, or a note after "-"), and
the claims that decide it (keys separated by spaces, "-" for none).

| item | paper says | status | where | claims |
|---|---|---|---|---|
| Section 1, setup | pairs of independent random vectors with standard normal coordinates | reproduced | 1. Random pairs | - |
| Table 1 | the mean cosine of two independent random vectors is zero | reproduced | 1. Random pairs | mean-cosine-zero |
"""

TESTS = '''"""Tests for embeval_nb.<<name>>: `paired_cosines` against scikit-learn and its errors, and smoke runs of the chapter's
notebooks (what the reproduction records, its claims against the paper's account)."""
import numpy as np
import pytest
from sklearn.metrics.pairwise import paired_cosine_distances

from embeval_nb.core import paper_tables
from embeval_nb.<<name>> import paired_cosines


@pytest.mark.parametrize("seed", range(3))
def test_paired_cosines_match_scikit_learn(seed):
    X, Y = np.random.default_rng(seed).normal(size=(2, 50, 7))
    np.testing.assert_allclose(paired_cosines(X, Y), 1 - paired_cosine_distances(X, Y), atol=1e-12)


def test_paired_cosines_name_the_bad_input():
    with pytest.raises(ValueError, match="row 1 of X or Y is all zero"):
        paired_cosines([[1, 0], [0, 0]], [[1, 1], [1, 1]])
    with pytest.raises(ValueError, match="X has 2 rows, Y has 1"):
        paired_cosines([[1, 0], [0, 1]], [[1, 1]])
    with pytest.raises(TypeError, match="X is None"):
        paired_cosines(None, [[1, 1]])


@pytest.fixture(scope="module")
def smoke(run_notebook):
    "What `papermill nbs/<<name>>.ipynb out.ipynb -p scale smoke` recorded."
    return run_notebook("<<name>>", scale="smoke")


def test_smoke_records_the_experiment(smoke):
    assert smoke["<<name>>/setup"]["scale"] == "smoke"
    table1 = smoke["<<name>>/table1"]
    assert table1["pairs"] == 200 and abs(table1["mean cosine"]) < 0.05


def test_smoke_decides_every_claim_of_the_account(smoke):
    listed = {k for cell in paper_tables("<<name>>")["account"].claims for k in cell.split() if k != "-"}
    claims = smoke["<<name>>/claims"]
    assert {c["key"] for c in claims} == listed
    assert all(c["verdict"] in ("holds", "fails", "undecided", "untested", "untestable") for c in claims)


def test_theory_and_implementation_pages_run(run_notebook):
    run_notebook("<<name>>_theory")
    run_notebook("<<name>>_impl")
'''

PLACEHOLDER_BIB = """
@misc{<<paper>>,
  author = {Surname, Given},
  title = {Title of the paper of the <<name>> chapter},
  year = {2000},
  note = {Placeholder written by make new-chapter: replace it with the paper's entry}
}
"""


def fill(text: str, name: str, title: str, paper: str) -> str:
    return text.replace("<<name>>", name).replace("<<title>>", title).replace("<<paper>>", paper)


def notebook(cells: list[tuple[str, str, list[str]]], name: str, title: str, paper: str) -> str:
    "A notebook of `cells` filled in for the chapter, as nbdev_clean writes it (ids c000, c001, ...)."
    out = [sync_book._cell(kind, f"c{i:03d}", fill(source, name, title, paper), tags)
           for i, (kind, source, tags) in enumerate(cells)]
    kernel = {"display_name": "python3", "language": "python", "name": "python3"}
    return sync_book._notebook_text({"cells": out, "metadata": {"kernelspec": kernel}, "nbformat": 4, "nbformat_minor": 5})


# --- the registry and the package's list of chapters -------------------------------------------------------------

def book_entry(name: str, title: str, paper: str, reproduces: str) -> str:
    "The chapter's part of book.yml, as lines indented like the others."
    q = json.dumps      # a JSON string is a YAML double-quoted string
    return (f"  - caption: {q(title)}\n    chapter: {name}\n    title: {q(title)}\n    paper: {paper}\n"
            f"    reproduces: {q(reproduces)}\n    claims: [{name}, {name}/claims]\n"
            f"    pages: [{name}_theory, {name}_impl, {name}]\n")


def with_chapter(text: str, entry: str) -> str:
    "book.yml's text with the part `entry` inserted after its last chapter (before the back matter), comments kept."
    import yaml
    parts = yaml.safe_load(text)["parts"]
    last = max(i for i, p in enumerate(parts) if "chapter" in p)
    starts = [m.start() for m in re.finditer(r"^  - caption:", text, re.M)]
    if len(starts) != len(parts):
        raise SystemExit("book.yml: every part must start with a line `  - caption: ...`; add the chapter by hand")
    at = starts[last + 1] if last + 1 < len(starts) else len(text)
    return text[:at] + entry + text[at:]


def with_docstring_line(text: str, name: str, title: str, paper: str) -> str:
    "embeval_nb/__init__.py's text with `name` added to its docstring's list of chapters (after the last one)."
    m = re.search(r"Chapters, one paper each:\n((?:    \S.*\n)+)", text)
    if m is None: raise SystemExit("embeval_nb/__init__.py: no 'Chapters, one paper each:' list in its docstring")
    line = f"    {name} ".ljust(21) + f"{title[0].lower() + title[1:]} ({paper})\n"
    return text[:m.end()] + line + text[m.end():]


def check_name(name: str) -> str:
    "`name` if it can name a new chapter (a module, a page and a record key), else SystemExit saying why."
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name):
        raise SystemExit(f"chapter name {name!r}: use lower-case letters, digits and _ (it names a Python module)")
    if name.endswith(("_theory", "_impl")): raise SystemExit(f"chapter name {name!r} must not end in _theory or _impl")
    paths = [Path("nbs") / f"{n}.ipynb" for n in (name, f"{name}_theory", f"{name}_impl")] + [Path("embeval_nb") / f"{name}.py"]
    taken = [f"{p} exists" for p in paths if (book.ROOT / p).exists()] + (["book.yml lists it"] if name in book.notebooks() else [])
    if taken: raise SystemExit(f"chapter name {name!r} is taken: {', '.join(taken)}")
    return name


def files(name: str, title: str, paper: str) -> dict[Path, str]:
    "{path under the repository: text} of the files the chapter adds."
    return {Path("nbs") / f"{name}_theory.ipynb": notebook(THEORY, name, title, paper),
            Path("nbs") / f"{name}_impl.ipynb": notebook(IMPL, name, title, paper),
            Path("nbs") / f"{name}.ipynb": notebook(REPRODUCTION, name, title, paper),
            Path("embeval_nb") / "papers" / f"{name}.md": fill(PAPERS_FILE, name, title, paper),
            Path("tests") / f"test_{name}.py": fill(TESTS, name, title, paper)}


def bib_keys() -> set[str]:
    return set(re.findall(r"^@\w+\s*\{\s*([^,\s]+)\s*,", (book.ROOT / "references.bib").read_text(), re.M))


def new_chapter(name: str, title: str, paper: str | None = None, reproduces: str | None = None) -> list[str]:
    "Write the chapter `name` (see the module's docstring); returns the paths written or changed."
    root, name = book.ROOT, check_name(name)
    paper = paper or name
    written, new = [], files(name, title, paper)
    for path, text in new.items():
        (root / path).write_text(text); written.append(str(path))
    if paper not in bib_keys():
        with open(root / "references.bib", "a") as f: f.write(fill(PLACEHOLDER_BIB, name, title, paper))
        written.append(f"references.bib (a placeholder entry {paper}: replace it)")
    reproduces = reproduces or "the paper's experiment (replace with what the chapter reproduces)"
    registry = root / "book.yml"
    registry.write_text(with_chapter(registry.read_text(), book_entry(name, title, paper, reproduces)))
    init = root / "embeval_nb" / "__init__.py"
    init.write_text(with_docstring_line(init.read_text(), name, title, paper))
    written += ["book.yml", "embeval_nb/__init__.py"]
    subprocess.run([str(BIN / "nbdev_export")], cwd=root, check=True)
    written += [f"embeval_nb/{name}.py", "embeval_nb/_modidx.py"]
    written += sync_book.write()
    for path in [p for p in new if p.suffix == ".ipynb"] + [sync_book.API_PAGE]:
        subprocess.run([str(BIN / "nbdev_clean"), "--fname", str(path)], cwd=root, check=True)
    return written


def check_tests(name: str) -> list[str]:
    """The tests every chapter must pass: the registry and bibliography, the generated files, hygiene (clean
    notebooks, the package matches them, parameters, links, labels, account, prose numbers), the module's docstring
    examples, and the chapter's own tests (smoke runs of its three notebooks)."""
    registry = ["test_every_notebook_is_a_page_of_book_yml_once",
                f"test_each_chapter_has_its_three_notebooks_and_a_claims_record_of_its_own[{name}]",
                "test_every_citation_has_an_entry_in_the_bibliography", "test_the_generated_files_follow_book_yml"]
    docstrings = [f"test_docstring_examples_run[embeval_nb.{name}]", f"test_every_public_callable_has_an_example[{name}]",
                  "test_the_package_docstring_names_every_chapter"]
    return [*(f"tests/test_book.py::{t}" for t in registry), "tests/test_hygiene.py",
            *(f"tests/test_docstrings.py::{t}" for t in docstrings), f"tests/test_{name}.py"]


def check_command(name: str) -> list[str]:
    "The pytest command that runs `check_tests(name)`."
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *check_tests(name)]


def parser() -> argparse.ArgumentParser:
    "The command line of this script (`make new-chapter CH=... TITLE=... PAPER=...` calls it)."
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name", help="the chapter's name: its module embeval_nb/<name>.py and notebooks nbs/<name>*.ipynb")
    ap.add_argument("--title", help="the chapter's title (default: from the name)")
    ap.add_argument("--paper", help="the paper's key in references.bib (default: the name, with a placeholder entry)")
    ap.add_argument("--reproduces", help="what the chapter reproduces, for the landing page's table")
    ap.add_argument("--check", action="store_true", help="run the checks of an existing chapter instead of writing one")
    return ap


def main(argv=None) -> int:
    a = parser().parse_args(argv)
    if a.check:
        return subprocess.run(check_command(a.name), cwd=book.ROOT).returncode
    title = a.title or a.name.replace("_", " ").capitalize()
    for path in new_chapter(a.name, title, a.paper, a.reproduces): print(f"wrote {path}")
    print(f"\nNext: fill it in as the page 'How to add a chapter' says (nbs/add_a_chapter.ipynb), then check it with\n"
          f"    python scripts/new_chapter.py --check {a.name}\n"
          f"    python scripts/book.py --chapter {a.name} --scale smoke")
    return 0


if __name__ == "__main__":
    sys.exit(main())
