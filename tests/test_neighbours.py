"""neighbours: knn against a brute force (every distance, numpy's stable argsort: ties to the smaller index) on ties,
duplicates and crowds of copies, X alone (a row never its own neighbour, its duplicates are) and X against Y, every
metric and block size; merge_top_lists and ball_counts (strict d < radius) against brute force; cosine_knn against
scikit-learn's cosine similarities sorted by (similarity, row) on dense, float32, sparse and memory-mapped corpora;
the errors of check_corpus and cosine_knn."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import cdist
from sklearn.metrics.pairwise import cosine_similarity

from embeval_nb.checks import make_rng
from embeval_nb.metrics import pairwise_distances
from embeval_nb.neighbours import (NO_INDEX, BallCounts, ball_counts, check_corpus, code_corpus, cosine_knn, empty_top_lists, int8_screen_available, knn,
                                   merge_top_lists)

POINT_METRICS = ["euclidean", "sqeuclidean", "cityblock", "cosine", "angular"]
BLOCKS = [None, 1e-5, 0.0005, 0.01]          # MiB: the default, 1 x 1 tiles, 8 x 8, 35 x 35


def _brute(D, k, within=False):
    "The k smallest entries of each row of D by numpy's stable argsort (ties to the smaller index); the diagonal skipped if within."
    D = np.array(D, dtype=np.float64)
    if within:
        np.fill_diagonal(D, np.inf)
    idx = np.argsort(D, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(D, idx, 1), idx


def _integer_sets(seed, n=40, m=30, d=3):
    "Points on a small integer grid: many exact ties and duplicates, distances exact in floating point."
    rng = make_rng(seed)
    X = rng.integers(-2, 3, size=(n, d)).astype(float); Y = rng.integers(-2, 3, size=(m, d)).astype(float)
    X[(X == 0).all(1)] = 1; Y[(Y == 0).all(1)] = 1                               # no zero row
    X[0] = X[1] = X[2]; Y[3] = X[5]
    return X, Y


def _numpy_distances(X, Y, metric):
    "Exact on integer data: sums of small integers, then one correctly rounded square root."
    diff = X[:, None, :] - Y[None, :, :]
    if metric == "cityblock":
        return np.abs(diff).sum(-1)
    sq = (diff ** 2).sum(-1)
    return np.sqrt(sq) if metric == "euclidean" else sq


def _random_sets(seed, n=45, m=38, d=6):
    "Random points with duplicates, power-of-two multiples (one direction), and rows shared between X and Y."
    rng = make_rng(seed)
    X = rng.normal(size=(n, d)); Y = rng.normal(size=(m, d)) + 0.2
    X[10:14] = X[3]; X[20] = 2 * X[4]; X[21] = 0.25 * X[4]; Y[:5] = X[5:10]; Y[30] = Y[31] = X[3]
    return X, Y


# --- knn against brute force ------------------------------------------------------------------------

@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cityblock"])
@pytest.mark.parametrize("wm", BLOCKS)
def test_knn_on_integer_points_is_numpys_stable_argsort(metric, wm):
    X, Y = _integer_sets(0)
    D = _numpy_distances(X, Y, metric)
    for k in (1, 4, 30):
        dist, idx = knn(X, Y, k, metric=metric, working_memory=wm)
        rd, ri = _brute(D, k)
        np.testing.assert_array_equal(idx, ri); np.testing.assert_array_equal(dist, rd)
        assert dist.dtype == np.float64 and idx.dtype == np.int64
    DX = _numpy_distances(X, X, metric)
    for k in (1, 5, 39):
        dist, idx = knn(X, k=k, metric=metric, working_memory=wm)
        rd, ri = _brute(DX, k, within=True)
        np.testing.assert_array_equal(idx, ri); np.testing.assert_array_equal(dist, rd)
        assert not (idx == np.arange(40)[:, None]).any()                           # never its own neighbour
    assert knn(X, k=2, metric=metric, working_memory=wm)[1][:3].tolist() == [[1, 2], [0, 2], [0, 1]]   # its duplicates are


@pytest.mark.parametrize("metric", POINT_METRICS)
@pytest.mark.parametrize("wm", BLOCKS)
def test_knn_on_random_points_with_ties(metric, wm):
    X, Y = _random_sets(1)
    D = pairwise_distances(X, Y, metric=metric)
    ref = cdist(X, Y, metric) if metric != "angular" else np.arccos(np.clip(cosine_similarity(X, Y), -1, 1)) / np.pi
    np.testing.assert_allclose(D, ref, rtol=1e-12, atol=1e-7 if metric == "angular" else 1e-14)
    for k in (1, 7, 38):
        dist, idx = knn(X, Y, k, metric=metric, working_memory=wm)
        rd, ri = _brute(D, k)
        np.testing.assert_array_equal(idx, ri); np.testing.assert_array_equal(dist, rd)
    assert (knn(X, Y, 2, metric=metric)[1][3] == [30, 31]).all()                  # a shared row twice, at exactly 0
    DX = pairwise_distances(X, metric=metric)
    dist, idx = knn(X, k=8, metric=metric, working_memory=wm)
    rd, ri = _brute(DX, 8, within=True)
    np.testing.assert_array_equal(idx, ri); np.testing.assert_array_equal(dist, rd)
    assert idx[3, :4].tolist() == [10, 11, 12, 13] and (dist[3, :4] == 0).all()
    if metric in ("cosine", "angular"):                                            # one direction: distance exactly 0
        assert idx[4, :2].tolist() == [20, 21] and (dist[4, :2] == 0).all()


@pytest.mark.parametrize("metric", POINT_METRICS)
def test_knn_with_a_crowd_of_copies(metric):
    """More copies of a row than a candidate list holds (2k + 16): the row is searched again exactly and still gets
    the brute-force answer, copies in index order."""
    rng = make_rng(2)
    X = rng.normal(size=(90, 4)); X[20:80] = X[5]
    DX = pairwise_distances(X, metric=metric)
    for wm in (None, 0.0005):
        dist, idx = knn(X, k=3, metric=metric, working_memory=wm)
        rd, ri = _brute(DX, 3, within=True)
        np.testing.assert_array_equal(idx, ri); np.testing.assert_array_equal(dist, rd)
        assert idx[5].tolist() == [20, 21, 22] and idx[50].tolist() == [5, 20, 21]
        dist, idx = knn(X[[5, 50, 0]], X, 4, metric=metric, working_memory=wm)
        assert idx[0].tolist() == [5, 20, 21, 22] and idx[1].tolist() == [5, 20, 21, 22]


def test_knn_precomputed_matrix():
    X, _ = _integer_sets(3)
    D = _numpy_distances(X, X, "euclidean")
    for wm in BLOCKS:
        for k in (1, 6, 39):
            dist, idx = knn(D, k=k, metric="precomputed", working_memory=wm)
            rd, ri = _brute(D, k, within=True)
            np.testing.assert_array_equal(idx, ri); np.testing.assert_array_equal(dist, rd)
    d0, i0 = knn(D, k=4, metric="precomputed")
    for s in (2.0 ** 700, 2.0 ** -700):                                            # rescaled inside, exactly
        d, i = knn(D * s, k=4, metric="precomputed")
        np.testing.assert_array_equal(i, i0); np.testing.assert_array_equal(d, d0 * s)
    with pytest.raises(ValueError, match="^metric must be one of"):
        knn(D, D, 2, metric="precomputed")


def test_knn_one_row_and_extreme_scales():
    X, Y = _random_sets(4)
    d, i = knn(X[:1], Y, 1)
    rd, ri = _brute(pairwise_distances(X[:1], Y), 1)
    assert d.shape == (1, 1) and (i == ri).all() and (d == rd).all()
    d, i = knn(X[:2], k=1)
    assert i.tolist() == [[1], [0]] and d[0, 0] == d[1, 0]
    for s, metrics in [(2.0 ** -700, ("euclidean", "cityblock")), (2.0 ** 700, ("euclidean", "cityblock")),
                       (2.0 ** -450, ("sqeuclidean",)), (2.0 ** 450, ("sqeuclidean",))]:
        for metric in metrics:
            d, i = knn(X * s, Y * s, 5, metric=metric)
            d0, i0 = knn(X, Y, 5, metric=metric)
            np.testing.assert_array_equal(i, i0)
            np.testing.assert_array_equal(d, d0 * s ** (2 if metric == "sqeuclidean" else 1))


def test_knn_errors():
    X, Y = _random_sets(5)
    with pytest.raises(ValueError, match=r"^k must be an integer in 1\.\.44, got 45 \(X has 45 rows and a row is not its own neighbour\)$"):
        knn(X, k=45)
    with pytest.raises(ValueError, match=r"^k must be an integer in 1\.\.38, got 39 \(Y has 38 rows\)$"):
        knn(X, Y, 39)
    with pytest.raises(ValueError, match=r"^k must be an integer in 1\.\.38, got 0"):
        knn(X, Y, 0)
    for bad in (2.0, True, "3", None):
        with pytest.raises(TypeError, match="^k must be an integer"):
            knn(X, Y, bad)
    with pytest.raises(ValueError, match="^X has 6 columns, Y has 5"):
        knn(X, Y[:, :5])
    with pytest.raises(ValueError, match="^X needs at least 1 rows, got 0"):
        knn(X[:0], Y, 1)
    with pytest.raises(ValueError, match=r"^k must be an integer in 1\.\.0"):
        knn(X[:1], k=1)
    Z = X.copy(); Z[7] = 0
    with pytest.raises(ValueError, match="^X row 7 is all zeros: the cosine distance is undefined"):
        knn(Z, k=2, metric="cosine")
    with pytest.raises(ValueError, match="^metric must be one of"):
        knn(X, Y, 2, metric="chebyshev")


# --- top lists --------------------------------------------------------------------------------------

def _random_top_list(rng, n, k, rows_indices, dtype):
    "Sorted (keys, idx) lists over the given indices (some rows short: padded with the empty key and NO_INDEX)."
    keys, idx = empty_top_lists(n, k, dtype)
    for r in range(n):
        j = rng.choice(rows_indices, rng.integers(0, min(k, len(rows_indices)) + 1), replace=False)
        v = rng.integers(0, 4, len(j)).astype(dtype)                              # few values: many ties
        order = np.lexsort((j, v))
        keys[r, :len(j)] = v[order]; idx[r, :len(j)] = j[order]
    return keys, idx


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_merge_top_lists_is_the_sorted_union(dtype):
    rng = make_rng(6)
    n, k = 50, 5
    a = _random_top_list(rng, n, k, np.arange(0, 12), dtype)
    b = _random_top_list(rng, n, k, np.arange(12, 30), dtype)                    # disjoint rows, as blocks of a corpus
    keys, idx = merge_top_lists(a, b)
    assert keys.shape == idx.shape == (n, k) and keys.dtype == dtype and idx.dtype == np.int64
    top = np.inf if dtype != np.int64 else np.iinfo(np.int64).max
    for r in range(n):
        pairs = sorted([(ka, ia) for ka, ia in zip(a[0][r], a[1][r]) if ia != NO_INDEX]
                       + [(kb, ib) for kb, ib in zip(b[0][r], b[1][r]) if ib != NO_INDEX])[:k]
        pairs += [(top, NO_INDEX)] * (k - len(pairs))
        assert keys[r].tolist() == [p[0] for p in pairs] and idx[r].tolist() == [p[1] for p in pairs]
    ka, ia = merge_top_lists(b, a)                                                # either order
    np.testing.assert_array_equal(ka, keys); np.testing.assert_array_equal(ia, idx)
    e = empty_top_lists(n, k, dtype)
    np.testing.assert_array_equal(merge_top_lists(a, e)[1], a[1])                # an empty list changes nothing


def test_empty_top_lists():
    keys, idx = empty_top_lists(3, 2)
    assert keys.dtype == np.float64 and (keys == np.inf).all() and (idx == NO_INDEX).all() and idx.dtype == np.int64
    keys, idx = empty_top_lists(2, 4, np.int32)
    assert keys.dtype == np.int32 and (keys == np.iinfo(np.int32).max).all() and keys.shape == (2, 4)


# --- ball counts ------------------------------------------------------------------------------------

def _brute_balls(D, rx, ry):
    inx = D < rx[:, None]; iny = D < ry[None, :]
    return BallCounts(inx.sum(1), inx.sum(0), iny.sum(0), iny.sum(1))


def _assert_counts(got, ref):
    assert isinstance(got, BallCounts)
    for name in BallCounts._fields:
        np.testing.assert_array_equal(getattr(got, name), getattr(ref, name), err_msg=name)
        assert getattr(got, name).dtype == np.int64


@pytest.mark.parametrize("metric", POINT_METRICS)
@pytest.mark.parametrize("wm", [None, 1e-5, 0.0005])
def test_ball_counts_are_brute_force_counts_with_strict_inequality(metric, wm):
    X, Y = _random_sets(7)
    Y[33] = -X[6]                                                                  # antipodal: cosine 2, angular exactly 1
    D = pairwise_distances(X, Y, metric=metric)
    rng = make_rng(8)
    rx_knn = knn(X, Y, 3, metric=metric)[0][:, -1]                                # on the boundary of each ball
    ry_knn = knn(Y, X, 4, metric=metric)[0][:, -1]
    rx_pair = D[np.arange(45), rng.integers(0, 38, 45)]                          # exactly some pair's distance
    ry_pair = D[rng.integers(0, 45, 38), np.arange(38)]
    for rx, ry in [(rx_knn, ry_knn), (rx_pair, ry_pair), (rng.uniform(0, np.median(D), 45), rng.uniform(0, np.median(D), 38)),
                   (np.zeros(45), np.full(38, np.inf)), (np.nextafter(rx_knn, np.inf), np.nextafter(ry_knn, 0)),
                   (D.max(1), D.max(0)), (np.full(45, D.max()), np.full(38, 1e300)), (-np.ones(45), np.full(38, 1e-300))]:
        _assert_counts(ball_counts(X, Y, rx, ry, metric=metric, working_memory=wm), _brute_balls(D, rx, ry))
    _assert_counts(ball_counts(X, Y, rx_knn, metric=metric, working_memory=wm), _brute_balls(D, rx_knn, np.zeros(38)))
    zero = ball_counts(X, Y, metric=metric)
    assert all((c == 0).all() for c in zero)
    if metric in ("cosine", "angular"):
        top = {"cosine": 2.0, "angular": 1.0}[metric]
        assert D[6, 33] == top                                                     # the largest distance, exactly
        full = ball_counts(X, Y, np.full(45, top), np.full(38, np.nextafter(top, 3)), metric=metric, working_memory=wm)
        assert full.x_ball_sizes[6] == 37 and full.y_ball_sizes[33] == 45


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cityblock"])
def test_ball_counts_on_integer_points(metric):
    X, Y = _integer_sets(9)
    D = _numpy_distances(X, Y, metric)
    radii = np.unique(D)
    rng = make_rng(10)
    rx, ry = rng.choice(radii, 40), rng.choice(radii, 30)                         # every ball has points on its boundary
    for wm in (None, 1e-5):
        _assert_counts(ball_counts(X, Y, rx, ry, metric=metric, working_memory=wm), _brute_balls(D, rx, ry))


def test_ball_counts_at_extreme_scales_and_errors():
    X, Y = _random_sets(11)
    r = knn(X, Y, 2)[0][:, -1]
    ref = ball_counts(X, Y, r, metric="euclidean")
    for s in (2.0 ** -900, 2.0 ** 900):
        _assert_counts(ball_counts(X * s, Y * s, r * s), ref)
    rs = knn(X, Y, 2, metric="sqeuclidean")[0][:, -1]
    refs = ball_counts(X, Y, rs, metric="sqeuclidean")
    _assert_counts(ball_counts(X * 2.0 ** 450, Y * 2.0 ** 450, rs * 2.0 ** 900, metric="sqeuclidean"), refs)
    _assert_counts(refs, _brute_balls(pairwise_distances(X, Y, metric="sqeuclidean"), rs, np.zeros(38)))
    with pytest.raises(ValueError, match=r"^radius_x must be 45 radii \(one per row\), got shape \(44,\)"):
        ball_counts(X, Y, r[:44])
    with pytest.raises(ValueError, match=r"^radius_y must be 38 radii \(one per row\), got shape \(38,\)"):
        ball_counts(X, Y, r, np.full(38, np.nan))
    with pytest.raises(ValueError, match="^X has 6 columns, Y has 5"):
        ball_counts(X, Y[:, :5], r)


# --- exact cosine neighbours of corpus rows ---------------------------------------------------------

def _corpus(seed=12, n=700, d=16):
    "A float32 corpus with copies and power-of-two multiples of some rows (exact ties); `cls[j]` is j's first copy."
    rng = make_rng(seed)
    E = rng.normal(size=(n, d)).astype(np.float32)
    cls = np.arange(n)
    for src, dst, scale in [(3, range(100, 110), 1), (4, [200], 2), (4, [201], 0.5), (9, [650, 651], 1), (650, [5], 1)]:
        for j in dst:
            E[j] = E[src] * np.float32(scale)
    cls[list(range(100, 110))] = 3; cls[[200, 201]] = 4; cls[[650, 651]] = 9
    cls[5] = 9                                                                     # row 5 a copy of row 9 as well
    return E, cls


def _reference(E, queries, k, cls, exclude_self=True):
    """scikit-learn's cosine similarities, sorted by (-similarity, row) with numpy's stable argsort; copies of one
    direction take the similarity of their first copy (BLAS may round a copy's product differently)."""
    Ed = E.toarray() if sp.issparse(E) else np.asarray(E, dtype=np.float64)
    C = cosine_similarity(Ed[queries], Ed)[:, cls]
    if exclude_self:
        C[np.arange(len(queries)), queries] = -np.inf
    idx = np.argsort(-C, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(C, idx, 1), idx


QUERIES = np.array([3, 4, 9, 650, 5, 0, 101, 699, 250, 7])
INT8 = int8_screen_available()   # onnxruntime's 8-bit product is exact on this processor (not on AVX2 without VNNI)
NO_INT8 = "onnxruntime's 8-bit product is not exact on this processor: the 8-bit screen is refused here"


def _int8_or_refused(E, queries, k, **kw):
    "cosine_knn with screen='int8' where the 8-bit product is exact; elsewhere, check it is refused and search in float32."
    if INT8: return cosine_knn(E, queries, k, screen="int8", **kw)
    with pytest.raises(RuntimeError, match="not exact on this processor"): cosine_knn(E, queries, k, screen="int8", **kw)
    return cosine_knn(E, queries, k, screen="float32", **kw)


@pytest.mark.parametrize("screen", ["float32", "int8", "coded"])
@pytest.mark.parametrize("exclude_self", [True, False])
@pytest.mark.parametrize("form", ["float32", "float64", "memmap", "fortran"])
def test_cosine_knn_dense_against_sklearn(tmp_path, form, exclude_self, screen):
    "Both screens, and a corpus coded once, give sklearn's neighbours (ties to the smaller row) and its similarities."
    if screen == "int8" and not INT8: pytest.skip(NO_INT8)
    E, cls = _corpus()
    if form == "float64":
        E = E.astype(np.float64) * 3.0
    elif form == "memmap":
        np.save(tmp_path / "E.npy", E); E = np.load(tmp_path / "E.npy", mmap_mode="r")
    elif form == "fortran":
        E = np.asfortranarray(E)
    search = code_corpus(E) if screen == "coded" else E
    kw = {} if screen == "coded" else {"screen": screen}
    for k, wm in [(1, None), (12, 0.01), (25, 0.002)]:
        sims, idx = cosine_knn(search, QUERIES, k, exclude_self=exclude_self, working_memory=wm, **kw)
        rs, ri = _reference(E, QUERIES, k, cls, exclude_self)
        assert sims.shape == idx.shape == (10, k) and sims.dtype == np.float64 and idx.dtype == np.int64
        np.testing.assert_array_equal(idx, ri)
        np.testing.assert_allclose(sims, rs, rtol=0, atol=1e-12)
        assert (np.diff(sims, axis=1) <= 0).all()
    sims, idx = cosine_knn(search, QUERIES, 12, exclude_self=exclude_self, **kw)
    first = 0 if exclude_self else 1
    assert idx[0, first:first + 10].tolist() == list(range(100, 110)) and (sims[0, :10] == 1.0).all()
    assert idx[1, first:first + 2].tolist() == [200, 201] and (sims[1, :2] == 1.0).all()
    if not exclude_self:                                                          # the query's first copy (maybe itself)
        assert idx[:, 0].tolist() == [int(np.flatnonzero(cls == cls[q])[0]) for q in QUERIES] and (sims[:, 0] == 1.0).all()
    else:
        assert not (idx == QUERIES[:, None]).any()


def test_cosine_knn_same_answer_in_every_form(tmp_path):
    E, _ = _corpus()
    ref = cosine_knn(E, QUERIES, 15)
    np.save(tmp_path / "E.npy", E)
    for other in (E.astype(np.float64), np.load(tmp_path / "E.npy", mmap_mode="r"), sp.csr_matrix(E), sp.coo_matrix(E)):
        out = cosine_knn(other, QUERIES, 15, working_memory=0.003)
        np.testing.assert_array_equal(out[1], ref[1]); np.testing.assert_array_equal(out[0], ref[0])
    d, i = knn(E[QUERIES].astype(np.float64), E.astype(np.float64), 16, metric="cosine")   # the generic search agrees
    for q in range(10):                                                           # (the query itself is among its 16: drop it)
        assert [j for j in i[q] if j != QUERIES[q]][:15] == ref[1][q].tolist()


@pytest.mark.parametrize("exclude_self", [True, False])
def test_cosine_knn_sparse_against_sklearn(exclude_self):
    rng = make_rng(13)
    S = sp.random(900, 300, density=0.015, random_state=3, format="csr")
    S = S + sp.csr_matrix((np.ones(900), (np.arange(900), np.arange(900) % 300)), shape=(900, 300))   # no empty row
    S = sp.vstack([S, S[:4] * 2.0, S[7:8]]).tocsr()                                # rows 900-903 tie with 0-3, 904 with 7
    cls = np.r_[np.arange(900), 0, 1, 2, 3, 7]
    queries = np.r_[0, 1, 7, 904, rng.choice(np.arange(8, 900), 12, replace=False)]
    for k, wm in [(3, None), (20, 0.02)]:                                          # many similarities exactly 0: ties
        sims, idx = cosine_knn(S, queries, k, exclude_self=exclude_self, working_memory=wm)
        rs, ri = _reference(S, queries, k, cls, exclude_self)
        np.testing.assert_array_equal(idx, ri)
        np.testing.assert_allclose(sims, rs, rtol=0, atol=1e-12)
    sims, idx = cosine_knn(S, queries, 3)
    assert idx[0, 0] == 900 and sims[0, 0] == 1.0 and idx[2, 0] == 904 and idx[3, 0] == 7
    dense = cosine_knn(S.toarray(), queries, 20, exclude_self=exclude_self)      # dense and sparse: the same bits
    sparse = cosine_knn(S, queries, 20, exclude_self=exclude_self)
    np.testing.assert_array_equal(dense[1], sparse[1]); np.testing.assert_array_equal(dense[0], sparse[0])


@pytest.mark.parametrize("screen", ["float32", "int8"])
def test_cosine_knn_a_crowd_of_ties_goes_to_the_exact_pass(screen):
    if screen == "int8" and not INT8: pytest.skip(NO_INT8)
    E, cls = _corpus(14)
    E[300:520] = E[8]; cls[300:520] = 8
    queries = np.array([8, 400, 0])
    sims, idx = cosine_knn(E, queries, 40, working_memory=0.004, screen=screen)
    assert idx[0].tolist() == list(range(300, 340)) and idx[1].tolist() == [8] + list(range(300, 339))
    rs, ri = _reference(E, queries, 40, cls)
    np.testing.assert_array_equal(idx, ri); np.testing.assert_allclose(sims, rs, rtol=0, atol=1e-12)


def _brute_cosine(E, queries, k):
    "Neighbours by float64 products of exactly normalised rows, the query excluded, ties to the smaller row."
    from embeval_nb.metrics import normalize_rows
    U = normalize_rows(np.asarray(E, dtype=np.float64))
    S = U[queries] @ U.T
    S[np.arange(len(queries)), queries] = -np.inf
    return np.lexsort((np.broadcast_to(np.arange(S.shape[1]), S.shape), -S), axis=1)[:, :k]


def test_the_8bit_screen_on_real_embeddings():
    """On GloVe word vectors and on sentence embeddings with a dominant dimension (all-MiniLM-L6-v2's CLS vectors of STS-B
    sentences), the 8-bit screen, with and without coding once, gives the float32 screen's answers bit for bit and
    brute force's neighbours."""
    from embeval_nb.data import load_sts
    from embeval_nb.embeddings import load_encoder, load_glove
    texts = sorted(set(load_sts("train").sentence1))[:3000]
    cls = load_encoder("all-MiniLM-L6-v2").encode(texts, pooling="cls", cache=False, show_progress=False)
    glove = np.asarray(load_glove().vectors[:30_000], dtype=np.float32)
    for E in (glove, cls):
        queries = make_rng(5).choice(len(E), 40, replace=False)
        ref = cosine_knn(E, queries, 30, screen="float32")
        for out in (_int8_or_refused(E, queries, 30), cosine_knn(code_corpus(E), queries, 30)):
            np.testing.assert_array_equal(out[1], ref[1]); np.testing.assert_array_equal(out[0], ref[0])
        np.testing.assert_array_equal(ref[1], _brute_cosine(E, queries, 30))
    assert code_corpus(cls).heavy.sum() >= 1                                      # the CLS vectors' dominant dimension


@pytest.mark.parametrize("seed", range(4))
def test_the_8bit_screen_against_brute_force(seed):
    "Random corpora of many shapes and scales, duplicated rows, any k: the 8-bit screen's neighbours are brute force's."
    rng = make_rng(seed)
    n, d, k = int(rng.integers(200, 3000)), int(rng.choice([8, 64, 200, 384])), int(rng.integers(1, 60))
    E = rng.normal(size=(n, d)) * np.exp(rng.normal(size=(n, 1)) * 3)
    E[rng.choice(n, 20)] = E[rng.choice(n, 20)]                                    # exact duplicates
    queries = rng.choice(n, 15, replace=False)
    np.testing.assert_array_equal(_int8_or_refused(E, queries, k)[1], _brute_cosine(E, queries, k))
    np.testing.assert_array_equal(cosine_knn(code_corpus(E), queries, k)[1], _brute_cosine(E, queries, k))


def test_the_8bit_screen_takes_float32_and_float64_rows_only():
    "Other dtypes (float16, integers) are searched by the float32 screen under 'auto'; 'int8' and `code_corpus` say why not."
    E = make_rng(9).normal(size=(3000, 256)).astype(np.float16)
    out, ref = cosine_knn(E, np.arange(20), 5), cosine_knn(E.astype(np.float64), np.arange(20), 5)
    np.testing.assert_array_equal(out[1], ref[1]); np.testing.assert_array_equal(out[0], ref[0])
    with pytest.raises(ValueError, match=r"^screen='int8' needs a dense float32 or float64 .* not an array of float16$"):
        cosine_knn(E, [0], 5, screen="int8")
    with pytest.raises(ValueError, match=r"^code_corpus needs a dense float32 or float64 .* not an array of int32$"):
        code_corpus((E * 100).astype(np.int32))
    with pytest.raises(ValueError, match=r"^screen='int8' needs a dense .* not a sparse matrix$"):
        cosine_knn(sp.csr_matrix(np.abs(E.astype(np.float64))), [0], 5, screen="int8")


def test_auto_screens_in_8_bits_where_coding_pays():
    "'auto': the 8-bit screen for INT8_MIN_QUERIES queries or more and INT8_MIN_DIM..INT8_MAX_DIM dimensions, else float32."
    from embeval_nb.neighbours import INT8_MIN_DIM, INT8_MIN_QUERIES, _int8_session_for
    E = make_rng(3).normal(size=(2000, 64)).astype(np.float32)
    pick = lambda E, q: _int8_session_for(E, np.ones((q, E.shape[1])), 5, "auto") is not None
    if not INT8:                                                            # never where the product is not exact
        assert not pick(E, 100) and _int8_session_for(E, np.ones((100, 64)), 5, "auto", coded=True) is None
        with pytest.raises(RuntimeError, match="not exact on this processor"): _int8_session_for(E, np.ones((1, 64)), 5, "int8")
        return
    assert pick(E, INT8_MIN_QUERIES) and not pick(E, INT8_MIN_QUERIES - 1)
    assert not pick(E[:, :INT8_MIN_DIM - 1], 100) and pick(E[:, :INT8_MIN_DIM], 100)
    assert _int8_session_for(E, np.ones((1, 64)), 5, "int8") is not None      # asked for: always


def _small(seed, n):
    return make_rng(seed).normal(size=(n, 8)).astype(np.float32)


def test_cosine_knn_k_limits():
    E = _small(15, 30)
    assert cosine_knn(E, [0, 1], 29)[1].shape == (2, 29)
    assert cosine_knn(E, [0, 1], 30, exclude_self=False)[1].shape == (2, 30)
    with pytest.raises(ValueError, match=r"^k must be an integer in 1\.\.29, got 30 \(the corpus has 30 rows and a query is not its own neighbour\)$"):
        cosine_knn(E, [0], 30)
    with pytest.raises(ValueError, match=r"^k must be an integer in 1\.\.30, got 31 \(the corpus has 30 rows\)$"):
        cosine_knn(E, [0], 31, exclude_self=False)


@pytest.mark.parametrize("queries,k,kw,error,msg", [
    ([1, 1], 2, {}, ValueError, r"^queries repeats row 1"),
    ([40], 2, {}, ValueError, r"^queries\[0\] = 40 is out of range for 40 rows"),
    ([], 2, {}, ValueError, "^queries is empty"),
    ([0.0], 2, {}, TypeError, "^queries must hold integer row indices"),
    ([True], 2, {}, TypeError, "^queries must hold integer row indices"),
    (None, 2, {}, TypeError, "^queries must be a 1-D sequence"),
    ([0], 2.0, {}, TypeError, "^k must be an integer"),
    ([0], 0, {}, ValueError, "^k must be an integer in 1"),
    ([0], 2, dict(exclude_self="no"), TypeError, "^exclude_self must be True or False"),
    ([0], 2, dict(exclude_self=1), TypeError, "^exclude_self must be True or False"),
    ([0], 2, dict(working_memory=0), ValueError, "^working_memory must be a number > 0")])
def test_cosine_knn_argument_errors(queries, k, kw, error, msg):
    E = _small(16, 40)
    with pytest.raises(error, match=msg):
        cosine_knn(E, queries, k, **kw)


def test_cosine_knn_bad_rows_are_named():
    E = _small(17, 50)
    for form in (lambda A: A, lambda A: A.astype(np.float64), sp.csr_matrix):
        Z = E.copy(); Z[33] = 0
        with pytest.raises(ValueError, match="^E row 33 is a zero vector"):
            cosine_knn(form(Z), [1, 2], 3, working_memory=0.001)
        Z = E.copy(); Z[41, 2] = np.nan
        with pytest.raises(ValueError, match="^E row 41 has NaN or infinite values"):
            cosine_knn(form(Z), [1, 2], 3, working_memory=0.001)
    Z = E.copy(); Z[2] = 0
    for form in (lambda A: A, sp.csr_matrix):                      # a query row itself: named by its corpus row
        with pytest.raises(ValueError, match=r"^E row 2 is a zero vector"):
            cosine_knn(form(Z), [1, 2], 3)


@pytest.mark.parametrize("bad,error,msg", [
    (None, TypeError, "^corpus is None"),
    (np.zeros(5), ValueError, r"^corpus must be a non-empty 2-D \(n, d\) array, got shape \(5,\)"),
    (np.zeros((0, 3)), ValueError, r"^corpus must be a non-empty 2-D \(n, d\) array, got shape \(0, 3\)"),
    (np.zeros((3, 0)), ValueError, r"^corpus must be a non-empty 2-D \(n, d\) array, got shape \(3, 0\)"),
    (np.zeros((2, 2, 2)), ValueError, r"^corpus must be a non-empty 2-D"),
    (np.array([["a", "b"]]), TypeError, "^corpus must be a numeric 2-D .* got dtype <U1"),
    (np.ones((2, 2), complex), TypeError, "^corpus must be a numeric 2-D .* got dtype complex128"),
    ([[1, 2], [3]], TypeError, r"^corpus must be a 2-D \(n, d\) array, got list"),
    ({"a": 1}, TypeError, "^corpus must be a numeric 2-D"),
    (sp.csr_matrix((0, 4)), ValueError, r"^corpus must be a non-empty 2-D \(n, d\) array, got shape \(0, 4\)")], ids=repr)
def test_check_corpus_errors_name_the_argument(bad, error, msg):
    with pytest.raises(error, match=msg):
        check_corpus(bad, "corpus")


def test_check_corpus_passes_corpora_through():
    E = np.ones((3, 2), np.float32)
    assert check_corpus(E) is E
    m = check_corpus([[1, 2], [3, 4]])
    assert isinstance(m, np.ndarray) and m.shape == (2, 2)
    for fmt in ("csr", "csc", "coo", "lil", "dok", "bsr", "dia"):
        S = sp.random(5, 4, density=0.5, random_state=0, format=fmt)
        out = check_corpus(S)
        assert out.format == "csr" and (out != S.tocsr()).nnz == 0
    assert check_corpus(np.ones((2, 2), bool)).dtype == bool


def test_nearest_pass_rejects_lists_it_cannot_keep():
    "P against itself keeps one list per row (k_rows); each list asks for no more rows than there are."
    from embeval_nb.metrics import prepare
    from embeval_nb.neighbours import nearest_pass
    rng = make_rng(0)
    P, Q = prepare(rng.normal(size=(5, 3))), prepare(rng.normal(size=(4, 3)))
    with pytest.raises(ValueError, match="k_cols=2 needs Q"): nearest_pass(P, None, 0, 2)
    with pytest.raises(ValueError, match="k_rows must be an integer in 0..4, got 5"): nearest_pass(P, None, 5)
    with pytest.raises(ValueError, match="k_rows must be an integer in 0..4, got 5"): nearest_pass(P, Q, 5)
    with pytest.raises(ValueError, match="k_cols must be an integer in 0..5, got 6"): nearest_pass(P, Q, 1, 6)
    with pytest.raises(TypeError, match="k_rows must be an integer"): nearest_pass(P, None, 1.0)
    dist, idx = nearest_pass(P, Q, 4, 5).cols
    assert idx.shape == (4, 5) and np.allclose(dist, np.sort(cdist(Q.X, P.X), axis=1))
