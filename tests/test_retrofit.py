"""Tests of embeval_nb.retrofit: the kernels against a line-by-line port of the reference code, a dense linear
solve, scipy's correlations and hand-computed examples; bad input; the chapter's notebooks at smoke scale."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import pearsonr, spearmanr

from embeval_nb.core import paper_tables, paper_value
from embeval_nb.data import clean_lexicon, is_plain_term, lexicon_groups
from embeval_nb.embeddings import vocab_index
from embeval_nb.retrofit import (METHODS, SCORE_RANGES, SIMILARITY_METRICS, _faruqui_norm_word, _faruqui_read_lexicon,
                                 _faruqui_retrofit, bootstrap_similarity, evaluate_similarity, lexicon_graph,
                                 lexicon_text_graph, lexicon_words, mse_decomposition, recalibrate,
                                 resource_statistics, retrofit, retrofit_fixed_point, similarity_metrics)
from embeval_nb.stats import bootstrap_interval, percentile_interval


def random_problem(seed, V=400, d=6, n_heads=300, max_deg=7, oov=True, self_loops=True):
    "Random vectors and a random lexicon: repeated neighbours, self-loops and out-of-vocabulary words included."
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(V)]
    pool = words + (["oov-a", "oov-b", "oov-c"] if oov else [])
    lexicon = {}
    for w in rng.choice(words, n_heads, replace=False):
        neighbours = [str(x) for x in rng.choice(pool, rng.integers(0, max_deg + 1))]
        if not self_loops: neighbours = [x for x in neighbours if x != w]
        lexicon[str(w)] = neighbours
    if oov: lexicon["oov-head"] = words[:3]
    return rng.normal(size=(V, d)), words, lexicon


def dense_fixed_point(E, words, lexicon, alpha=1.0):
    "The fixed point from its definition, with a dense solve: (1+a) n_i q_i - sum_j q_j = a n_i qhat_i for words with neighbours."
    index = {w: i for i, w in enumerate(words)}
    V = len(words)
    M, B = np.eye(V), E.astype(float).copy()
    for head, neighbours in lexicon.items():
        if head not in index: continue
        i, js = index[head], {index[w] for w in neighbours if w in index}
        if not js: continue
        M[i, i] = (1 + alpha) * len(js)
        for j in js: M[i, j] -= 1
        B[i] = alpha * len(js) * E[i]
    return np.linalg.solve(M, B)


def symmetrised(lexicon, words):
    "The lexicon with every in-vocabulary link made two-way."
    vocab = set(words)
    out = {w: set() for w in words}
    for h, ns in lexicon.items():
        if h not in vocab: continue
        for n in ns:
            if n in vocab: out[h].add(n); out[n].add(h)
    return {h: sorted(ns) for h, ns in out.items() if ns}


# --- the update ----------------------------------------------------------------------------------------------

def test_one_iteration_by_hand():
    E = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    lex = {"a": ["b"], "b": ["a", "c"], "c": ["b"]}
    np.testing.assert_array_equal(retrofit(E, list("abc"), lex, n_iter=1), [[0.5, 0.5], [-0.125, 0.625], [-0.5625, 0.3125]])
    # alpha = 3: q_a = (3 * 1 * (1, 0) + (0, 1)) / 4; q_b = (3 * 2 * (0, 1) + (0.75, 0.25) + (-1, 0)) / 8
    Q = retrofit(E, list("abc"), lex, n_iter=1, alpha=3.0)
    np.testing.assert_allclose(Q[:2], [[0.75, 0.25], [-0.03125, 0.78125]], rtol=1e-15)
    # a self-loop counts in the degree and pulls b towards its own current vector (the reference code)
    lex_loop = {"b": ["b", "a"]}
    np.testing.assert_allclose(retrofit(E, list("abc"), lex_loop, n_iter=1)[1], [(2 * 0 + 0 + 1) / 4, (2 + 1 + 0) / 4])
    np.testing.assert_allclose(retrofit(E, list("abc"), lex_loop, n_iter=1, self_loops="drop")[1], [0.5, 0.5])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_inplace_equals_the_reference_port_in_its_own_order(seed):
    E, words, lex = random_problem(seed)
    word_vecs = dict(zip(words, E))
    ref = _faruqui_retrofit(word_vecs, lex, 10)
    # the port visits its set loop_vocab; a set built the same way iterates in the same order
    loop_vocab = set(dict(zip(words, E)).keys()).intersection(set(lex.keys()))
    index = vocab_index(words)
    order = [index[w] for w in loop_vocab]
    order += sorted(set(range(len(words))) - set(order))
    ours = retrofit(E, words, lex, order=order)
    np.testing.assert_allclose(ours, np.array([ref[w] for w in words]), rtol=1e-12, atol=1e-13)
    for w in words:                                                   # the port did not touch its input
        np.testing.assert_array_equal(word_vecs[w], E[index[w]])


def test_port_and_ours_agree_in_a_shuffled_order_on_a_cleaned_file_lexicon():
    "Lines of a lexicon file read by the reference reader vs cleaned by clean_lexicon: the same retrofitted vectors."
    E, words, _ = random_problem(3)
    rng = np.random.default_rng(3)
    tokens = words[:60] + ["1,800", "--", "b2b", "Self-Reliant"]
    lines = [" ".join(rng.choice(tokens, rng.integers(2, 6))) for _ in range(80)]
    ref_lex = _faruqui_read_lexicon(lines)
    ours_lex = clean_lexicon({l.lower().split()[0]: l.lower().split()[1:] for l in lines})
    order = list(rng.permutation([w for w in ref_lex if w in set(words)]))
    ref = _faruqui_retrofit(dict(zip(words, E)), ref_lex, 10, order=order)
    index = vocab_index(words)
    full = [index[w] for w in order] + [i for i in range(len(words)) if words[i] not in set(order)]
    np.testing.assert_allclose(retrofit(E, words, ours_lex, order=full), [ref[w] for w in words], rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("seed", [0, 4])
@pytest.mark.parametrize("alpha", [1.0, 0.25])
def test_converged_iterations_equal_the_linear_solve(seed, alpha):
    E, words, lex = random_problem(seed, V=150, n_heads=120)
    ref = dense_fixed_point(E, words, lex, alpha)
    for solver in ("auto", "bicgstab", "lu"):
        np.testing.assert_allclose(retrofit_fixed_point(E, words, lex, alpha=alpha, solver=solver), ref, rtol=1e-9, atol=1e-11)
    rate = 1 / (1 + alpha)
    k = int(np.ceil(np.log(1e-13) / np.log(rate)))
    for method in ("inplace", "jacobi"):
        np.testing.assert_allclose(retrofit(E, words, lex, n_iter=k, alpha=alpha, method=method), ref, atol=1e-11)
    order = np.random.default_rng(seed).permutation(len(words))
    np.testing.assert_allclose(retrofit(E, words, lex, n_iter=k, alpha=alpha, order=order), ref, atol=1e-11)


def test_ten_passes_are_within_the_contraction_bound():
    "Each pass shrinks the largest error by 1/(1 + alpha) at least, in place or simultaneous, in any order."
    E, words, lex = random_problem(5, V=300, n_heads=250)
    Q_star = retrofit_fixed_point(E, words, lex)
    e0 = np.abs(E - Q_star).max()
    for method in ("inplace", "jacobi"):
        for k in (1, 3, 10):
            assert np.abs(retrofit(E, words, lex, n_iter=k, method=method) - Q_star).max() <= e0 * 0.5 ** k + 1e-9


def test_conjugate_gradients_on_a_symmetric_lexicon():
    E, words, lex = random_problem(6, V=200, n_heads=150)
    sym = symmetrised(lex, words)
    A = lexicon_graph(sym, words)
    assert (A != A.T).nnz == 0
    ref = dense_fixed_point(E, words, sym)
    for solver in ("cg", "bicgstab", "lu", "auto"):
        np.testing.assert_allclose(retrofit_fixed_point(E, words, sym, solver=solver), ref, rtol=1e-9, atol=1e-10)
    with pytest.raises(ValueError, match="symmetric"):
        retrofit_fixed_point(E, words, lex, solver="cg")


def test_graph_argument_and_dtypes():
    E, words, lex = random_problem(7, V=100, n_heads=80)
    A = lexicon_graph(lex, words)
    np.testing.assert_array_equal(retrofit(E, words, A), retrofit(E, words, lex))
    np.testing.assert_array_equal(retrofit(E.astype(np.float32), words, lex), retrofit(E.astype(np.float32).astype(float), words, lex))
    out = retrofit(E, words, lex)
    assert out.dtype == np.float64 and out.shape == E.shape and out is not E
    np.testing.assert_array_equal(retrofit_fixed_point(E, words, A), retrofit_fixed_point(E, words, lex))
    with pytest.raises(ValueError, match="0/1"): retrofit(E, words, 2 * A)


def test_lexicon_graph_against_a_dense_construction():
    E, words, lex = random_problem(8, V=120, n_heads=100)
    index = {w: i for i, w in enumerate(words)}
    D = np.zeros((120, 120))
    for h, ns in lex.items():
        for n in ns:
            if h in index and n in index: D[index[h], index[n]] = 1
    A = lexicon_graph(lex, words)
    np.testing.assert_array_equal(A.toarray(), D)
    assert A.has_sorted_indices and A.dtype == np.float64
    np.fill_diagonal(D, 0)
    np.testing.assert_array_equal(lexicon_graph(lex, words, self_loops="drop").toarray(), D)


# --- bad input -----------------------------------------------------------------------------------------------

def test_lexicon_edge_cases_have_documented_behaviour():
    E = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    words = ["a", "b", "c"]
    np.testing.assert_array_equal(retrofit(E, words, {}), E)                              # empty lexicon
    np.testing.assert_array_equal(retrofit(E, words, {"x": ["a"], "a": ["y", "z"]}), E)   # nothing in vocab
    np.testing.assert_array_equal(retrofit_fixed_point(E, words, {}), E)
    # a repeated head given as pairs: the last pair wins, as the reference code's last line
    pairs = [("a", ["b"]), ("a", ["c"])]
    np.testing.assert_array_equal(retrofit(E, words, pairs), retrofit(E, words, {"a": ["c"]}))
    assert _faruqui_read_lexicon(["a b", "a c"]) == {"a": ["c"]}
    # only the head's own line counts: "b" lists nobody, so it keeps its vector although "a" lists it
    np.testing.assert_array_equal(retrofit(E, words, {"a": ["b"]})[1:], E[1:])


@pytest.mark.parametrize("call, error, match", [
    (lambda E, w: retrofit(np.where(np.arange(3)[:, None] == 1, np.nan, E), w, {"a": ["b"]}), ValueError, "row 1"),
    (lambda E, w: retrofit(np.where(np.arange(3)[:, None] == 2, np.inf, E), w, {}), ValueError, "row 2"),
    (lambda E, w: retrofit(E, ["a", "b", "a"], {}), ValueError, "'a' twice"),
    (lambda E, w: retrofit(E, ["a", "b"], {}), ValueError, "vocab has 2 words but E has 3 rows"),
    (lambda E, w: retrofit(E, "abc", {}), TypeError, "vocab must be a sequence of words, got str"),
    (lambda E, w: retrofit(E, ["a", "b", 3], {}), TypeError, "vocab\\[2\\] is int"),
    (lambda E, w: retrofit(E, w, {"a": "bc"}), TypeError, "list of words, got str"),
    (lambda E, w: retrofit(E, w, {("a",): ["b"]}), TypeError, "expected str"),
    (lambda E, w: retrofit(E, w, {}, n_iter=2.5), TypeError, r"n_iter must be an integer, got 2\.5"),
    (lambda E, w: retrofit(E, w, {}, n_iter=-1), ValueError, "n_iter must be an integer >= 0, got -1"),
    (lambda E, w: retrofit(E, w, {}, alpha=-1), ValueError, "alpha must be a number > 0"),
    (lambda E, w: retrofit(E, w, {}, alpha="1"), TypeError, "alpha must be a real number"),
    (lambda E, w: retrofit(E, w, {}, alpha=np.nan), ValueError, "alpha"),
    (lambda E, w: retrofit(E, w, {}, method="sor"), ValueError, "method"),
    (lambda E, w: retrofit(E, w, {}, self_loops="ignore"), ValueError, "self_loops"),
    (lambda E, w: retrofit(E, w, {"a": ["b"]}, order=[1, 2]), ValueError, "leaves out 1"),
    (lambda E, w: retrofit(E, w, {"a": ["b"]}, order=[0, 0]), ValueError, "order repeats row 0"),
    (lambda E, w: retrofit(E, w, {"a": ["b"]}, order=[0, 5]), ValueError, r"order\[1\] = 5 is out of range for 3 rows \(0\.\.2\)"),
    (lambda E, w: retrofit(E, w, {"a": ["b"]}, order=[0.0, 1.0]), TypeError, "order must hold integer row indices"),
    (lambda E, w: retrofit(E, w, {"a": ["b"]}, order=[0, 1], method="jacobi"), ValueError, "applies to method=.inplace. only"),
    (lambda E, w: retrofit(E[:, 0], w, {}), ValueError, "2-D"),
    (lambda E, w: retrofit(E.astype(str), w, {}), TypeError, r"E must be a 2-D \(n, d\) array of numbers"),
    (lambda E, w: retrofit(None, w, {}), TypeError, "E is None"),
    (lambda E, w: retrofit_fixed_point(E, w, {}, solver="qr"), ValueError, "solver"),
    (lambda E, w: retrofit_fixed_point(E, w, {}, rtol=0), ValueError, "rtol"),
])
def test_bad_input_is_a_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        call(np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]]), ["a", "b", "c"])


# --- evaluation ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n, ties", [(3, False), (50, True), (1000, False), (1000, True)])
def test_similarity_metrics_match_scipy(n, ties):
    rng = np.random.default_rng(n)
    h = rng.random(n); p = 0.5 * h + 0.5 * rng.random(n)
    if ties: h, p = np.round(h, 1), np.round(p, 1)
    m = similarity_metrics(p, h)
    r, s = pearsonr(p, h)[0], spearmanr(p, h)[0]
    assert r > 0 and s > 0                                            # one sign: the harmonic mean
    np.testing.assert_allclose([m[k] for k in SIMILARITY_METRICS],
                               [r, s, 2 * r * s / (r + s), np.sqrt(np.mean((p - h) ** 2)), np.mean(np.abs(p - h))],
                               rtol=1e-11)


def combined(r, s):
    "The combined correlation, by its rule: the harmonic mean of r and s if they have one sign, else 0 (nan stays nan)."
    if np.isnan(r) or np.isnan(s): return np.nan
    return 2 * r * s / (r + s) if r * s > 0 else 0.0


def test_combined_correlation_is_zero_when_pearson_and_spearman_disagree_in_sign():
    from embeval_nb.retrofit import _combined_correlation
    assert _combined_correlation(-0.63, 0.14) == 0.0 and _combined_correlation(0.14, -0.63) == 0.0
    assert _combined_correlation(0.5, 0.0) == 0.0 and _combined_correlation(0.0, 0.0) == 0.0
    both_negative = _combined_correlation(-0.63, -0.14)
    assert both_negative < 0 and both_negative == pytest.approx(2 * 0.63 * 0.14 / (-0.77), rel=1e-15)
    assert _combined_correlation(0.63, 0.14) == pytest.approx(2 * 0.63 * 0.14 / 0.77, rel=1e-15)
    assert np.isnan(_combined_correlation(np.nan, 0.3)) and np.isnan(_combined_correlation(-0.3, np.nan))
    # data whose ranks agree but whose one outlier turns Pearson negative: r < 0 < rho, combined 0
    p, h = np.arange(1.0, 11.0), np.r_[np.arange(1.0, 10.0), -100.0]
    r, rho = pearsonr(p, h)[0], spearmanr(p, h)[0]
    assert r < 0 < rho
    m = similarity_metrics(p, h)
    assert m["correlation"] == 0.0
    np.testing.assert_allclose([m["pearson"], m["spearman"]], [r, rho], rtol=1e-12)
    # both negative: the harmonic mean, negative (not its absolute value)
    m = similarity_metrics(-p[:9] + 0.1 * np.sin(p[:9]), h[:9])
    r, rho = pearsonr(-p[:9] + 0.1 * np.sin(p[:9]), h[:9])[0], spearmanr(-p[:9] + 0.1 * np.sin(p[:9]), h[:9])[0]
    assert r < 0 and rho < 0 and m["correlation"] < 0
    assert m["correlation"] == pytest.approx(2 * r * rho / (r + rho), rel=1e-11)


@pytest.mark.parametrize("seed", range(6))
def test_combined_correlation_of_random_data_matches_scipy(seed):
    "Weak correlations of either sign: the combined correlation is scipy's harmonic mean if the signs agree, else 0."
    rng = np.random.default_rng(seed)
    signs = set()
    for _ in range(40):
        n = int(rng.integers(5, 40))
        h = np.round(rng.random(n), 1); p = rng.uniform(-0.3, 0.3) * h + rng.random(n)
        r, rho = pearsonr(p, h)[0], spearmanr(p, h)[0]
        m = similarity_metrics(p, h)
        np.testing.assert_allclose([m["pearson"], m["spearman"]], [r, rho], rtol=1e-10, atol=1e-14)
        if r * rho > 0: assert m["correlation"] == pytest.approx(2 * r * rho / (r + rho), rel=1e-10)
        else: assert m["correlation"] == 0.0
        signs.add(np.sign(r * rho))
    assert signs >= {1.0, -1.0}                                       # both cases met
    # the bootstrap replicates follow the same rule
    h = np.round(rng.random(25), 1); P = np.stack([rng.random(25), 0.1 * h + rng.random(25)])
    reps = bootstrap_similarity(h, P, n_boot=300, seed=seed)
    expected = [combined(r, s) for r, s in reps[..., :2].reshape(-1, 2)]
    np.testing.assert_allclose(reps[..., 2].ravel(), expected, rtol=1e-12)
    assert (reps[..., 2] == 0).any() and (reps[..., 0] * reps[..., 1] > 0).any()


def test_similarity_metrics_edge_cases():
    m = similarity_metrics(np.full(4, 0.3), np.arange(4.0))          # constant predictions: no correlation
    assert np.isnan(m["pearson"]) and np.isnan(m["spearman"]) and np.isnan(m["correlation"])
    assert np.isclose(m["rmse"], np.sqrt(np.mean((0.3 - np.arange(4.0)) ** 2)))
    m = similarity_metrics([0.1, 0.2], [1e-300, 2e-300])
    assert np.isclose(m["pearson"], 1) and np.isclose(m["spearman"], 1)
    assert np.isnan(similarity_metrics([0.5], [0.5])["pearson"])
    m = similarity_metrics([], [])
    assert all(np.isnan(v) for v in m.values())
    with pytest.raises(ValueError, match="one length"): similarity_metrics([0.1, 0.2], [0.1])
    with pytest.raises(ValueError, match="finite"): similarity_metrics([0.1, np.nan], [0.1, 0.2])


def test_evaluate_similarity_conventions():
    rng = np.random.default_rng(1)
    words = ["a", "b", "c", "d", "e"]
    E = rng.normal(size=(5, 4)); E[4] = 0
    pairs = [("a", "b"), ("b", "c"), ("a", "zz"), ("c", "d"), ("d", "e"), ("a", "d")]
    scores = np.array([4.0, 1.0, 3.0, 2.5, 5.0, 1.0])
    res = evaluate_similarity(E, words, pairs, scores, score_range="mturk-771")
    assert SCORE_RANGES["mturk-771"] == (1.0, 5.0)
    np.testing.assert_array_equal(evaluate_similarity(E, words, pairs, scores, score_range=(1, 5)).human, res.human)
    cos = lambda x, y: E[x] @ E[y] / np.linalg.norm(E[x]) / np.linalg.norm(E[y])
    expected = np.array([cos(0, 1), cos(1, 2), 0.0, cos(2, 3), 0.0, cos(0, 3)])     # missing word -> 0, zero vector -> 0
    np.testing.assert_allclose(res.predicted, expected, rtol=1e-12)
    np.testing.assert_allclose(res.human, (scores - 1) / 4)
    assert res.n == 6 and np.isclose(res.coverage, 5 / 6) and res.found.tolist() == [1, 1, 0, 1, 1, 1]
    np.testing.assert_allclose(res.rmse, np.sqrt(np.mean((expected - (scores - 1) / 4) ** 2)))
    np.testing.assert_allclose(res.spearman, spearmanr(expected, (scores - 1) / 4)[0])
    dropped = evaluate_similarity(E, words, pairs, scores, score_range=(1, 5), missing="drop")
    assert dropped.n == 5 and dropped.coverage == 1 and dropped.kept.tolist() == [1, 1, 0, 1, 1, 1]
    sub = evaluate_similarity(E, words, pairs, scores, score_range=(1, 5), restrict_to={"a", "b", "d", "zz"})
    assert sub.kept.tolist() == [1, 0, 1, 0, 0, 1] and sub.n == 3
    np.testing.assert_allclose(sub.predicted, expected[[0, 2, 5]])
    empty = evaluate_similarity(E, words, pairs, scores, score_range=(1, 5), restrict_to=set())
    assert empty.n == 0 and np.isnan(empty.rmse) and np.isnan(empty.coverage)
    # a vocabulary given as a {word: row} dict, and float32 vectors
    same = evaluate_similarity(E.astype(np.float32), vocab_index(words), pairs, scores, score_range=(1, 5))
    np.testing.assert_allclose(same.predicted, res.predicted, atol=1e-7)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(scores=[4.0, 9.0]), ValueError, "outside the score range"),
    (dict(scores=[4.0]), ValueError, "2 pairs but 1 scores"),
    (dict(scores=[4.0, np.nan]), ValueError, "finite"),
    (dict(score_range=(5, 1)), ValueError, "high > low"),
    (dict(score_range="wordsim"), ValueError, "score_range must be one of 'men', 'mturk-771', 'mturk-287', 'rw'"),
    (dict(score_range=5), TypeError, r"score_range must be a \(low, high\) pair"),
    (dict(missing="skip"), ValueError, "missing must be"),
    (dict(missing="error"), ValueError, "'zz'"),
    (dict(pairs=[("a", 1), ("b", "c")]), TypeError, "pairs of strings"),
    (dict(pairs=[("a", "b", "c")]), TypeError, "pairs of strings"),
    (dict(vocab=["a", "b"]), ValueError, "vocab has 2 words but E has 3 rows"),
])
def test_evaluate_similarity_bad_input(kwargs, error, match):
    args = dict(E=np.eye(3), vocab=["a", "b", "c"], pairs=[("a", "b"), ("c", "zz")], scores=[4.0, 2.0], score_range=(1, 5))
    args.update(kwargs)
    with pytest.raises(error, match=match):
        evaluate_similarity(args.pop("E"), args.pop("vocab"), args.pop("pairs"), args.pop("scores"), **args)


def test_nan_vectors_in_the_pairs_are_an_error():
    E = np.eye(3); E[1, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        evaluate_similarity(E, ["a", "b", "c"], [("a", "b")], [1.0], score_range=(0, 1))
    evaluate_similarity(E, ["a", "b", "c"], [("a", "c")], [1.0], score_range=(0, 1))   # rows not used are not read


@pytest.mark.filterwarnings("ignore::embeval_nb.stats.ResampleWarning")   # few resamples, for speed
def test_bootstrap_matches_stats_bootstrap_interval():
    "The same resamples as stats.bootstrap_interval, with scipy's statistics on the resampled arrays."
    rng = np.random.default_rng(2)
    n = 60
    h = np.round(rng.random(n), 1); before = np.round(h + 0.3 * rng.normal(size=n), 2)
    after = np.round(h + 0.2 * rng.normal(size=n), 2); mask = rng.random(n) < 0.6
    reps = bootstrap_similarity(h, [before, after], [np.ones(n, bool), mask], n_boot=200, seed=9)
    assert reps.shape == (200, 2, 2, 5)
    stat = lambda h, b, a: spearmanr(a, h)[0] - spearmanr(b, h)[0]
    est, lo, hi = bootstrap_interval(stat, h, before, after, n_boot=200, seed=9)
    np.testing.assert_allclose(percentile_interval(reps[:, 0, 1, 1] - reps[:, 0, 0, 1]), (lo, hi), rtol=1e-10)
    assert est == pytest.approx(similarity_metrics(after, h)["spearman"] - similarity_metrics(before, h)["spearman"], rel=1e-12)
    stat_in = lambda h, b, m: np.sqrt(np.mean((b[m] - h[m]) ** 2))     # RMSE on the subset, resampled alike
    est, lo, hi = bootstrap_interval(stat_in, h, before, mask, n_boot=200, seed=9)
    np.testing.assert_allclose(percentile_interval(reps[:, 1, 0, 3]), (lo, hi), rtol=1e-10)
    assert est == pytest.approx(similarity_metrics(before[mask], h[mask])["rmse"], rel=1e-12)
    # replicate b: the metrics of the explicitly resampled arrays
    idx = np.random.default_rng(9).integers(0, n, n)
    np.testing.assert_allclose(reps[0, 0, 1], [similarity_metrics(after[idx], h[idx])[k] for k in SIMILARITY_METRICS], rtol=1e-11)
    with pytest.raises(ValueError, match="1 of 2 bootstrap replicates are NaN"): percentile_interval([0.1, np.nan])
    with pytest.raises(ValueError, match="share n"): bootstrap_similarity(h, [before[:-1]])


def test_mse_decomposition_and_recalibration():
    rng = np.random.default_rng(3)
    for n in (2, 10, 500):
        p, h = rng.random(n), rng.random(n)
        parts = mse_decomposition(p, h)
        assert np.isclose(parts["mean"] + parts["spread"] + parts["correlation"], parts["mse"], rtol=1e-12)
        assert np.isclose(parts["mse"], np.mean((p - h) ** 2)) and min(parts.values()) >= 0
    parts = mse_decomposition(np.full(5, 0.2), np.arange(5.0) / 4)     # constant prediction: r taken as 0
    assert np.isclose(sum(parts[k] for k in ("mean", "spread", "correlation")), parts["mse"])
    p, h = rng.random(40), rng.random(40); fit = rng.random(40) < 0.5
    np.testing.assert_allclose(recalibrate(p, h, fit), np.polyval(np.polyfit(p[fit], h[fit], 1), p), rtol=1e-10)
    with pytest.raises(ValueError, match="two distinct"): recalibrate(np.ones(5), h[:5], np.ones(5, bool))


# --- resources -----------------------------------------------------------------------------------------------

def test_plain_terms_are_what_the_reference_reader_keeps():
    words = ["dog", "Dog", "self-reliant", "o'clock", "a_b", "1800", "1,800", "b2b", "--", "...", "¡", "café", "x-1", "_"]
    assert [is_plain_term(w) for w in words] == [_faruqui_norm_word(w) == w.lower() for w in words]


def test_resource_statistics_on_a_tiny_lexicon():
    lex = {"dog": ["canine", "pup", "k9", "dog", "pup"], "pup": ["dog"], "cat": [], "9/11": ["attack"], "--": ["dash"]}
    assert resource_statistics(lex) == {"terms": 4, "entries": 2, "links": 3, "groupings": 2}
    assert resource_statistics(lex, clean=False) == {"terms": 9, "entries": 4, "links": 6, "groupings": 4}
    groups = [("dog", "canine"), ("canine", "dog"), ("k9",), ("pup", "dog"), ("cat",)]
    assert resource_statistics(lex, groups)["groupings"] == 4                 # ("k9",) is empty once cleaned
    assert resource_statistics(lex, groups, clean=False)["groupings"] == 5
    assert resource_statistics({})["terms"] == 0
    assert lexicon_words(lex) == {"dog", "canine", "pup", "k9", "cat", "9/11", "attack", "--", "dash"}


def test_faruqui_lexicon_files():
    "PPDB-XL and FrameNet as distributed: line counts, FrameNet's frames, and the links lost to 'last line wins'."
    from embeval_nb.data import load_lexicon
    ppdb, fn = lexicon_groups("ppdb"), lexicon_groups("framenet")
    assert len(ppdb) == 102902 and len(fn) == 10822
    assert resource_statistics(load_lexicon("ppdb"))["terms"] == 84465
    merged, last = load_lexicon("framenet", merge_repeated=True), load_lexicon("framenet")
    assert len(merged) == len(last) == 7853                       # heads, lower-cased
    assert resource_statistics(merged)["links"] > resource_statistics(last)["links"]
    with pytest.raises(ValueError, match="wordnet\\+ is built from WordNet"): lexicon_groups("wordnet+")
    with pytest.raises(FileNotFoundError, match=r"neither a registered lexicon \(ppdb, framenet\)"): lexicon_groups("roget")


def test_wordnet_plus():
    "WordNet+ links a word form to the synonyms, hypernyms and hyponyms of all its synsets (the paper's dog example)."
    from embeval_nb.data import load_lexicon, wordnet_lexicon, wordnet_synsets
    wn = wordnet_lexicon(clean=True)                                  # the chapter's WordNet+ (was retrofit.wordnet_plus())
    assert wn == load_lexicon("wordnet+", clean=True)
    assert {"canine", "corgi", "domestic_animal", "track"} <= set(wn["dog"])
    assert all(is_plain_term(w) for w in list(wn)[:1000] + wn["dog"])
    synsets = wordnet_synsets()
    assert len(synsets) == 117659 and ("dog", "domestic_dog", "canis_familiaris") in synsets
    s = resource_statistics(wn, synsets)
    assert 146000 < s["terms"] < 147306 and 117000 < s["groupings"] <= 117659


# --- a lexicon file straight to its graph --------------------------------------------------------------------

def read_lines(text, merge_repeated=False):
    "A plain-Python reading of a lexicon text, as load_lexicon reads a file (repeated head: last line, or merged)."
    lexicon = {}
    for line in text.splitlines():
        words = line.lower().split()
        if not words: continue
        lexicon[words[0]] = (lexicon.get(words[0], []) + words[1:]) if merge_repeated else words[1:]
    return lexicon


def dictionary_graph(text, vocab, clean=True, merge_repeated=False, self_loops="keep"):
    "The graph of the dictionary path: plain-Python reading, clean_lexicon, lexicon_graph."
    lexicon = read_lines(text, merge_repeated)
    return lexicon_graph(clean_lexicon(lexicon) if clean else lexicon, vocab, self_loops=self_loops)


def assert_same_graph(A, B):
    assert A.shape == B.shape
    for k in ("indptr", "indices", "data"):
        a, b = getattr(A, k), getattr(B, k)
        assert a.dtype == b.dtype and np.array_equal(a, b), k


FLAGS = [dict(clean=c, merge_repeated=m, self_loops=s) for c in (True, False) for m in (False, True) for s in ("keep", "drop")]

EDGE_TEXT = ("Dog hound  DOG k9 canine \n\n  \n\t\ncat feline Cat\nDOG puppy hound\t\nlion\npuppy dog\n9/11 attack\n"
             "b2b\u00a0trade -- o'clock\nΟΔΟΣ street ΟΔΟΣ\u2028café coffee\x85snake serpent\r\nlion cat\rbird fowl emu\x1c"
             "owl\x1fbird İstanbul a_b\u3000٣\nstreet zzz yyy\npuppy\nΣ ǅ self-reliant\x0b\x0ctrade b2b\x1dhound\x1edog\x00\n"
             "ﬁsh fish\u2029tab\tseparated\u2003words ½ _ \u00ad\nDOG   \n")
EDGE_VOCAB = ["dog", "hound", "canine", "k9", "cat", "feline", "puppy", "lion", "b2b", "trade", "--", "o'clock",
              "\u03bf\u03b4\u03bf\u03c2", "\u03bf\u03b4\u03bf\u03c3", "street", "café", "coffee", "snake", "serpent", "bird",
              "fowl", "owl\x1fbird", "owl", "i\u0307stanbul", "istanbul", "a_b", "٣", "σ", "ǆ", "self-reliant",
              "snake\nserpent", "dog\x00", "ﬁsh", "fish", "tab", "separated", "words", "½", "_", "\u00ad", "zzz "]


@pytest.mark.parametrize("flags", FLAGS)
def test_file_graph_equals_the_dictionary_path_on_edge_cases(flags):
    "Repeated heads, self-loops, empty and blank lines, trailing spaces, Unicode whitespace and line breaks, final sigma."
    assert_same_graph(lexicon_text_graph(EDGE_TEXT, EDGE_VOCAB, **flags), dictionary_graph(EDGE_TEXT, EDGE_VOCAB, **flags))
    for vocab in (tuple(EDGE_VOCAB), vocab_index(EDGE_VOCAB), np.array(EDGE_VOCAB, dtype=object)):
        assert_same_graph(lexicon_text_graph(EDGE_TEXT, vocab, **flags), dictionary_graph(EDGE_TEXT, EDGE_VOCAB, **flags))


def test_file_graph_rules_by_hand():
    A = lexicon_text_graph(EDGE_TEXT, EDGE_VOCAB)
    row = lambda w: [EDGE_VOCAB[j] for j in A[EDGE_VOCAB.index(w)].indices]
    assert row("dog") == []                                    # the last "dog" line lists nobody
    assert row("cat") == ["cat", "feline"]                     # a self-loop counts (as in the reference code)
    assert row("puppy") == [] and row("street") == []          # a bare last line; only out-of-vocabulary neighbours
    assert row("lion") == ["cat"] and row("istanbul") == []    # "İstanbul" lower-cases to "i̇stanbul"
    assert row("\u03bf\u03b4\u03bf\u03c2") == ["\u03bf\u03b4\u03bf\u03c2", "street"]   # final sigmas, as str.lower makes them
    assert row("owl") == ["bird", "i\u0307stanbul", "a_b"]     # \x1f separates words, \u3000 too; "٣" is a digit
    assert row("trade") == [] and row("hound") == []           # b2b has a digit; \x1d ends a line
    assert lexicon_text_graph(EDGE_TEXT, EDGE_VOCAB, merge_repeated=True)[0].indices.tolist() == [0, 1, 2, 6]
    assert row("ﬁsh") == ["fish"]                              # the ligature stays itself (lower() keeps it)
    assert row("tab") == ["separated", "words", "½", "_"]      # "½" is \w but no \d digit; the soft hyphen is no \w


def test_file_graph_on_random_texts():
    "Random lines over a small vocabulary with random case, separators, repeats and out-of-vocabulary words."
    rng = np.random.default_rng(5)
    vocab = ["a", "b", "c", "dé", "e-f", "g_h", "i1", "..", "ΣΑΣ", "σας", "ς"]
    pool = vocab + ["A", "B", "Dé", "ΣΑΣ", "zz", "9"]
    seps, breaks = [" ", "  ", "\t", "\xa0", "\u3000", "\x1f"], ["\n", "\r\n", "\r", "\x0b", "\x1c", "\x85", "\u2028", "\n\n"]
    links = 0
    for _ in range(20):
        lines = ["".join(str(rng.choice(seps)) * int(rng.integers(0, 2)) + str(w) + str(rng.choice(seps))
                         for w in rng.choice(pool, int(rng.integers(0, 6)))) for _ in range(30)]
        text = "".join(line + str(rng.choice(breaks)) for line in lines)
        for flags in FLAGS[::3]:
            A = lexicon_text_graph(text, vocab, **flags)
            assert_same_graph(A, dictionary_graph(text, vocab, **flags))
            links += A.nnz
    assert links > 500


def test_file_graph_on_ppdb_and_framenet_over_glove():
    "The chapter's readings of the real files: PPDB (last line wins) and FrameNet (lines merged), cleaned."
    from embeval_nb.data import load_lexicon
    from embeval_nb.embeddings import load_glove
    from embeval_nb.retrofit import read_lexicon_graph
    words = list(load_glove().words)
    A = read_lexicon_graph("ppdb", words)
    assert_same_graph(A, lexicon_graph(clean_lexicon(load_lexicon("ppdb")), words))
    assert A.nnz == 287999 and int((np.diff(A.indptr) > 0).sum()) == 65681
    assert_same_graph(read_lexicon_graph("framenet", words, merge_repeated=True),
                      lexicon_graph(clean_lexicon(load_lexicon("framenet", merge_repeated=True)), words))
    from embeval_nb.data import lexicon_text
    head, index = "\n".join(lexicon_text("ppdb").splitlines()[:15000]), vocab_index(words)   # every flag on a part
    for flags in FLAGS:
        assert_same_graph(lexicon_text_graph(head, words, **flags), dictionary_graph(head, index, **flags))
    with pytest.raises(ValueError, match="wordnet\\+ is built from WordNet"): read_lexicon_graph("wordnet+", words)


def lettered(words):
    "The words with each digit spelled as a letter (w12 -> wbc): plain terms, which cleaning keeps."
    return [w.translate(str.maketrans("0123456789", "abcdefghij")) for w in words]


def test_file_graph_gives_bit_identical_vectors():
    "Retrofitting from the file's graph and from the lexicon dict: the same arrays, in place and Jacobi."
    E, words, _ = random_problem(3, V=60, d=5, n_heads=40)
    words = lettered(words)                                           # w0, w1, ... have digits: cleaning drops them all
    text = "\n".join(" ".join(rng_words) for rng_words in np.random.default_rng(3).choice(words + ["oov", "b2b"], (80, 6)))
    A = lexicon_text_graph(text, words)
    assert A.nnz > 100
    for method in METHODS:
        assert np.array_equal(retrofit(E, words, A, method=method), retrofit(E, words, clean_lexicon(read_lines(text)), method=method))


def test_lexicon_file_path_as_source_and_as_lexicon(tmp_path):
    "read_lexicon_graph, retrofit and retrofit_fixed_point take the path of a lexicon file: the graph of its text."
    from embeval_nb.retrofit import read_lexicon_graph
    E, words, _ = random_problem(4, V=60, d=5, n_heads=40)
    words = lettered(words)
    text = "\n".join(" ".join(w) for w in np.random.default_rng(4).choice(words + ["oov", "b2b"], (80, 5)))
    f = tmp_path / "lex.txt"
    f.write_text(text, encoding="utf-8")
    A = lexicon_text_graph(text, words)
    assert A.nnz > 100
    for source in (f, str(f)):
        assert_same_graph(read_lexicon_graph(source, words), A)
        assert np.array_equal(retrofit(E, words, source), retrofit(E, words, A))
        assert np.array_equal(retrofit_fixed_point(E, words, source), retrofit_fixed_point(E, words, A))
    assert_same_graph(read_lexicon_graph(f, words, clean=False, merge_repeated=True, self_loops="drop"),
                      lexicon_text_graph(text, words, clean=False, merge_repeated=True, self_loops="drop"))
    with pytest.raises(FileNotFoundError, match="neither a registered lexicon"):
        read_lexicon_graph(tmp_path / "missing.txt", words)
    with pytest.raises(FileNotFoundError, match="neither a registered lexicon"):
        retrofit(E, words, str(tmp_path / "missing.txt"))


def test_file_graph_whitespace_is_pythons():
    "The scanner's whitespace and line breaks are str.split's and str.splitlines', for every code point."
    from embeval_nb.retrofit import _WIDE_LINE_BREAKS, _WIDE_SPACES, _scan_tokens
    everything = "".join(map(chr, range(0x110000)))
    space = "".join(chr(b) for b in [*range(9, 14), *range(28, 33)]) + _WIDE_SPACES + _WIDE_LINE_BREAKS
    breaks = "".join(chr(b) for b in [*range(10, 14), 28, 29, 30]) + _WIDE_LINE_BREAKS
    # each listed character splits, and the whole range loses exactly as many characters: no other one splits
    assert all(len(("x" + c + "y").split()) == 2 for c in space) and len(everything) - len("".join(everything.split())) == len(space)
    assert all(len(("x" + c + "y").splitlines()) == 2 for c in breaks)
    assert len(everything) - len("".join(everything.splitlines())) == len(breaks)
    assert len("".join(everything.split()).lower().split()) == 1             # lower() makes no whitespace ...
    assert space.lower() == space                                            # ... and keeps it
    for b in range(128):                                                     # the byte classes of the scanner
        starts, _, line = _scan_tokens(np.frombuffer(b"x" + bytes([b]) + b"y", dtype=np.uint8))
        assert len(starts) == len(("x" + chr(b) + "y").split()) and line[-1] + 1 == len(("x" + chr(b) + "y").splitlines())


def test_file_graph_matching_survives_hash_collisions():
    "Words are matched by their bytes: with every hash equal, the merge still finds each word, and repeats are found."
    from embeval_nb.retrofit import _has_repeats, _match_words, _word_bytes
    words = ["b", "a", "ab", "ba", "", "abc"]
    tokens = ["ab", "x", "abc", "a", "b", "ba", "c"]
    vbuf, vs, ve = _word_bytes(words)
    tbuf, ts, te = _word_bytes(tokens)
    found = _match_words(np.zeros(len(tokens), np.int64), tbuf, ts, te, np.zeros(len(words), np.int64), vbuf, vs, ve)
    assert [words[k] if k >= 0 else None for k in found] == ["ab", None, "abc", "a", "b", "ba", None]
    zeros = np.zeros(len(words), np.int64)
    assert not _has_repeats(words, zeros, np.arange(len(words))) and _has_repeats(words + ["a"], np.zeros(7, np.int64), np.arange(7))


def test_plain_words_from_bytes_are_is_plain_term():
    from embeval_nb.retrofit import _plain_words
    rng = np.random.default_rng(0)
    chars = [chr(c) for c in range(1, 128)] + ["é", "٣", "½", "ǅ", "\u0307", "¡"]
    words = chars + ["".join(rng.choice(chars, int(rng.integers(1, 5)))) for _ in range(3000)]
    assert _plain_words(words).tolist() == [is_plain_term(w) for w in words]
    assert _plain_words([]).shape == (0,)


@pytest.mark.parametrize("call, error, match", [
    (lambda: lexicon_text_graph("a b", ["a", "b", "a"]), ValueError, "'a' twice"),
    (lambda: lexicon_text_graph("a b", ["a", 3]), TypeError, "vocab\\[1\\] is int"),
    (lambda: lexicon_text_graph("a b", "ab"), TypeError, "vocab must be a sequence of words, got str"),
    (lambda: lexicon_text_graph("a b", ["a", "b"], self_loops="no"), ValueError, "self_loops"),
])
def test_file_graph_bad_input(call, error, match):
    with pytest.raises(error, match=match): call()


def test_file_graph_empty_cases():
    assert lexicon_text_graph("", ["a"]).shape == (1, 1) and lexicon_text_graph(" \n\t\n", ["a"]).nnz == 0
    assert lexicon_text_graph("a b", []).shape == (0, 0)
    assert_same_graph(lexicon_text_graph("a a\nb\n", ["a", "b"]), dictionary_graph("a a\nb\n", ["a", "b"]))


# --- the chapter's notebooks ---------------------------------------------------------------------------------

def test_paper_numbers():
    t = paper_tables("retrofit")
    assert {"table1", "table2"} <= set(t)
    assert paper_value(t["table1"].loc["PPDB", "terms"]) == 84467
    assert paper_value(t["table2"].loc["SL999", "GloVe correlation"]) == 0.38


@pytest.fixture(scope="session")
def smoke(run_notebook):
    "What `papermill nbs/retrofit.ipynb ... -p scale smoke` recorded."
    return run_notebook("retrofit", scale="smoke")


def test_smoke_setup_and_resources(smoke):
    assert smoke["retrofit/setup"]["scale"] == "smoke" and smoke["retrofit/setup"]["vectors"] == ["glove", "sg"]
    t1 = smoke["retrofit/table1"]
    assert set(t1) == {"WN+", "PPDB", "FN", "FN (last line)"}
    assert t1["PPDB"]["terms"] == 84465 and t1["PPDB"]["groupings"] == t1["PPDB"]["entries"]
    assert 146000 < t1["WN+"]["terms"] < 147306 and 117000 < t1["WN+"]["groupings"] <= 117659
    assert t1["FN"]["terms"] == t1["FN (last line)"]["terms"]                  # the same words, fewer links
    assert t1["FN (last line)"]["links"] < t1["FN"]["links"] and t1["FN (last line)"]["groupings"] < t1["FN"]["groupings"]
    loss = smoke["retrofit/polysemy_loss"]
    assert 0.25 < loss["lines"] < 0.30 and 0.15 < loss["links"] < 0.2


def test_smoke_vectors_and_baselines(smoke):
    v = smoke["retrofit/vectors"]
    assert v["words"]["glove"] == 30000 and v["skipgram_corpus"]["tokens"] > 500_000
    t2 = smoke["retrofit/table2"]
    for vs in ("glove", "sg"):
        for b, m in t2[vs].items():
            assert 0 < m["rmse"] < 1 and 0 < m["mae"] <= m["rmse"] and -1 <= m["spearman"] <= 1
    assert 0.4 < t2["glove"]["MT771"]["correlation"] < 0.7 and 0.4 < t2["glove"]["MEN3K"]["correlation"] < 0.7
    cov = smoke["retrofit/coverage"]
    assert cov["WN+"]["SL999"] > 0.95 and cov["FN"]["RW"] < 0.1


def test_smoke_changes_are_consistent(smoke):
    rows = smoke["retrofit/changes"]
    assert len(rows) == 2 * 4 * 4 * 2 * 5
    t2 = smoke["retrofit/table2"]
    names = {"GloVe 50-d": "glove", "skip-gram": "sg"}
    for r in rows:
        assert np.isclose(r["change"], r["after"] - r["before"])
        undefined = np.isnan(r["low"]) and np.isnan(r["high"])   # a resample left fewer than two of the pairs (`ci`)
        assert r["low"] <= r["high"] or (undefined and r["pairs"] != "all")
        if r["pairs"] == "all":
            assert np.isclose(r["before"], t2[names[r["vectors"]]][r["benchmark"]][r["metric"]])
        else:
            assert r["n"] <= {"MT771": 771, "MEN3K": 3000, "RW": 2034, "SL999": 999}[r["benchmark"]]


def test_smoke_beyond_the_paper(smoke):
    # ten passes are within rounding of the fixed point, and the visiting order does not move the scores
    for v in smoke["retrofit/fixed_point"].values():
        assert v["largest |correlation difference|"] < 1e-4 and v["largest |RMSE difference|"] < 1e-4
    o = smoke["retrofit/orders"]
    assert o["n_orders"] == 2 and o["largest_correlation_spread"] < 1e-4 and o["largest_rmse_spread"] < 1e-4
    d = smoke["retrofit/mse_decomposition"]
    assert d["conditions"] == 24 and d["gains_covered_by_mean_term"] <= d["mse_gains"]
    r = smoke["retrofit/recalibration"]
    assert r["gains_surviving"] <= r["raw_gains"] <= r["conditions"] == 24
    f5 = smoke["retrofit/figure5"]
    assert f5["kind"] in ("paper", "reverse", "agree") and 0 <= f5["closer"] <= f5["moved"]


def test_smoke_claims(smoke):
    claims = smoke["retrofit/claims"]
    assert len(claims) == len({c["key"] for c in claims}) >= 25
    account = paper_tables("retrofit")["account"]
    listed = {k for cell in account.claims for k in cell.split() if k != "-"}
    assert {c["key"] for c in claims} == listed                    # every claim of the account is decided, and only those
    for c in claims:
        assert c["verdict"] in ("holds", "fails", "undecided", "untested", "untestable") and c["statement"] and c["paper"] and c["ours"]
        assert c["test"].startswith("word bootstrap" if c["verdict"] != "untested" else "not tested here")
        assert c["unit"].startswith("word") or c["verdict"] == "untested"
    by_key = {c["key"]: c for c in claims}
    assert by_key["fn-rw-coverage"]["verdict"] == "untested"       # a count of a lexicon we do not have: no verdict
    assert smoke["retrofit/resampling"]["unit"] == "word" and smoke["retrofit/resampling"]["n_boot"] == 1000


def test_theory_notebook_runs(run_notebook):
    run_notebook("retrofit_theory")


def test_every_word_similarity_set_has_its_range_and_evaluates_from_its_frame():
    "Each registered set's scores lie in its SCORE_RANGES scale (sources: the sets' own distributions), and the frame "
    "load_wordsim returns evaluates as its pairs and scores with that range."
    from embeval_nb.data import WORDSIM, load_wordsim
    from embeval_nb.embeddings import load_glove
    from embeval_nb.retrofit import evaluate_similarity
    assert set(SCORE_RANGES) == set(WORDSIM)
    glove = load_glove()
    for name in WORDSIM:
        frame = load_wordsim(name)
        lo, hi = SCORE_RANGES[name]
        assert lo <= frame.score.min() and frame.score.max() <= hi and frame.score.max() > lo + (hi - lo) / 2, name
    frame = load_wordsim("rg-65")
    ours = evaluate_similarity(glove.vectors, glove, frame)
    explicit = evaluate_similarity(glove.vectors, glove, list(zip(frame.word1, frame.word2)), frame.score, score_range=(0, 4))
    assert (ours.correlation, ours.rmse, ours.mae) == (explicit.correlation, explicit.rmse, explicit.mae)


def test_paper_units_are_declared_for_the_runner():
    "The paper-scale run: per vector set a scores table (baseline and four resources) and an orders table, names unique."
    from embeval_nb.retrofit import ORDER_BLOCK, SETTINGS
    from embeval_nb.runs import chapter_units, unit_versions
    units = chapter_units("retrofit")
    tables = {u.table: sum(v.table == u.table for v in units) for u in units}
    blocks = -(-SETTINGS["paper"]["n_orders"] // ORDER_BLOCK)
    assert tables == {"glove/scores": 5, "sg/scores": 5, "glove/orders": 3 * blocks, "sg/orders": 3 * blocks}
    assert all(u.params["seed"] == 0 and u.params.get("glove_words", None) is None for u in units)
    code, inputs = unit_versions(units[0])
    assert len(code) == len(inputs) == 16 and unit_versions(units[1])[1] != inputs    # the lexicon's files count


def test_a_scores_unit_is_the_page_computation_it_replaces():
    "GloVe (smoke's 30,000 words) retrofitted with FN: the unit's cosines are those the page computed in place, and the "
    "record is small JSON."
    import json
    from embeval_nb.data import load_lexicon, load_wordsim
    from embeval_nb.embeddings import load_glove
    from embeval_nb.metrics import normalize_rows
    from embeval_nb.retrofit import BENCHMARKS, scale_units
    from embeval_nb.runs import compute_unit
    unit = next(u for u in scale_units("smoke", ["glove"]) if u.name == "glove/scores/fn")
    rec = compute_unit(unit)
    assert rec["cpu_seconds"] < 60 and len(json.dumps(rec)) < 300_000
    wv = load_glove()
    words, E = list(wv.words[:30000]), normalize_rows(np.asarray(wv.vectors[:30000], dtype=np.float64))
    index = vocab_index(words)
    A = lexicon_graph(load_lexicon("framenet", merge_repeated=True, clean=True), index)
    Q, F = retrofit(E, index, A, n_iter=10), retrofit_fixed_point(E, index, A)
    for b, key in BENCHMARKS.items():
        df = load_wordsim(key)
        pairs = list(zip(df.word1, df.word2))
        got = rec["result"]["benchmarks"][b]
        assert got["predicted"] == evaluate_similarity(Q, index, pairs, df.score, score_range=key).predicted.tolist()
        assert got["fixed_point"] == evaluate_similarity(F, index, pairs, df.score, score_range=key).predicted.tolist()
    assert rec["result"]["links"] == A.nnz


def test_an_orders_unit_is_the_page_computation_it_replaces():
    "One visiting order of GloVe (30,000 words) with FN: the unit's correlation and RMSE are those of retrofitting in that order."
    from embeval_nb.data import load_wordsim
    from embeval_nb.retrofit import BENCHMARKS, load_vector_set, orders_unit, resource_lexicon, visiting_order
    got = orders_unit("glove", "FN", 3, 4, glove_words=30000)
    V = load_vector_set("glove", glove_words=30000)
    order = visiting_order("glove", "FN", 3, len(V.words))
    assert not np.array_equal(order, visiting_order("glove", "FN", 2, len(V.words)))
    assert not np.array_equal(order, visiting_order("glove", "WN+", 3, len(V.words)))
    Q = retrofit(V.E, V.index, lexicon_graph(resource_lexicon("FN"), V.index), n_iter=10, order=order)
    for b, key in BENCHMARKS.items():
        r = evaluate_similarity(Q, V.index, load_wordsim(key))
        assert got["scores"][b] == [[r.correlation, r.rmse]]
    with pytest.raises(ValueError, match="resource must be one of"):
        orders_unit("glove", "FN (last line)", 0, 1, glove_words=30000)
