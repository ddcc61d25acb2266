"""Exact cosine k-nearest neighbours for N2O: embeval_nb.neighbours.cosine_knn against numpy, faiss and scikit-learn, one run.

    python benchmarks/n2o.py                  # 500,000 x 384 float32, 100 queries, k = 50 (about a minute)
    python benchmarks/n2o.py --n 100000       # a smaller corpus
    python benchmarks/n2o.py --dask           # also cosine_knn over a dask array on a 2-worker LocalCluster
    python benchmarks/n2o.py --encoders       # also sentences per second of every embedder of the chapter

Every tool answers the same question: the k rows most cosine-similar to each query row (the query itself
excluded), normalisation included in every timing. The contenders are what people use today: a plain numpy
brute force (normalise a copy, one matrix product, argpartition, sort), faiss's exact inner-product index
(IndexFlatIP on L2-normalised rows; its build, i.e. normalising a copy and adding it, is timed separately from
the search), and scikit-learn's NearestNeighbors(algorithm="brute", metric="cosine"). Each tool's neighbour
lists are checked against ours (float32 arithmetic can swap two neighbours whose similarities differ in the
last bits; the check reports identical lists and the share of shared neighbours). Two threads everywhere (set
below before numpy is imported). Each timing is the best of `--repeat` runs; ratios are measured in this run.
"""
import os
import time

THREADS = "2"
for var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, THREADS)

import numpy as np

from embeval_nb.n2o import neighbour_overlap
from embeval_nb.neighbours import cosine_knn


def best_of(repeat, f, *args, **kw):
    "(result, best wall time in seconds) of `repeat` calls."
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = f(*args, **kw)
        times.append(time.perf_counter() - t)
    return out, min(times)


def numpy_brute(E, queries, k):
    X = E / np.linalg.norm(E, axis=1, keepdims=True)
    S = X[queries] @ X.T
    S[np.arange(len(queries)), queries] = -np.inf
    part = np.argpartition(-S, k, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(S, part, 1), axis=1, kind="stable")
    return np.take_along_axis(part, order, 1)


def faiss_build(E):
    import faiss
    X = np.array(E, dtype=np.float32, copy=True)
    faiss.normalize_L2(X)
    index = faiss.IndexFlatIP(E.shape[1])
    index.add(X)
    return index


def faiss_search(index, E, queries, k):
    import faiss
    Q = np.array(E[queries], dtype=np.float32, copy=True)
    faiss.normalize_L2(Q)
    _, I = index.search(Q, k + 1)
    return drop_self(I, queries, k)


def sklearn_brute(E, queries, k):
    from sklearn.neighbors import NearestNeighbors
    nn = NearestNeighbors(n_neighbors=k + 1, algorithm="brute", metric="cosine", n_jobs=int(THREADS)).fit(E)
    return drop_self(nn.kneighbors(E[queries], return_distance=False), queries, k)


def drop_self(I, queries, k):
    "The first k entries of each row other than the query itself."
    return np.array([[j for j in row if j != q][:k] for row, q in zip(I, queries)])


def agreement(idx, ours):
    same = int((idx == ours).all(1).sum())
    return f"identical lists {same}/{len(ours)}, shared neighbours {neighbour_overlap(idx, ours).mean():.4f}"


def run_knn(n, d, n_queries, k, repeat, with_dask):
    rng = np.random.default_rng(0)
    E = rng.standard_normal((n, d), dtype=np.float32)
    queries = rng.choice(n, n_queries, replace=False)
    cosine_knn(E[:5000], queries[:3] % 5000, 10)                        # compile the kernels (cached on disk)
    (sims, ours), t_ours = best_of(repeat, cosine_knn, E, queries, k)
    print(f"{n:,} x {d} float32, {n_queries} queries, k = {k}, {THREADS} threads, best of {repeat}\n")
    rows = [("embeval_nb cosine_knn (in memory)", t_ours, "reference")]
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"n2o-bench-{os.getpid()}.npy")
    try:
        np.save(path, E)
        M = np.load(path, mmap_mode="r")
        (_, idx), t = best_of(repeat, cosine_knn, M, queries, k)
        rows.append(("embeval_nb cosine_knn (memory-mapped file, cached pages)", t, agreement(idx, ours)))
    finally:
        os.unlink(path)
    idx, t = best_of(repeat, numpy_brute, E, queries, k)
    rows.append(("numpy brute force (normalised copy, matmul, argpartition)", t, agreement(idx, ours)))
    try:
        index, t_build = best_of(1, faiss_build, E)
        idx, t_search = best_of(repeat, faiss_search, index, E, queries, k)
        rows.append(("faiss IndexFlatIP search", t_search, agreement(idx, ours)))
        rows.append(("faiss IndexFlatIP build (normalise a copy, add) + search", t_build + t_search, ""))
        del index
    except ImportError:
        print("faiss-cpu is not installed: skipped")
    idx, t = best_of(1, sklearn_brute, E, queries, k)
    rows.append(("scikit-learn NearestNeighbors brute cosine (fit + query, one run)", t, agreement(idx, ours)))
    if with_dask:
        import warnings
        import dask.array as da
        from distributed import Client, LocalCluster
        warnings.filterwarnings("ignore", message=".*[Ll]arge graph.*")        # the corpus goes to the workers once
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster):
            D = da.from_array(E, chunks=(50_000, d)).persist()
            cosine_knn(D[:20_000], queries[:3] % 20_000, 10)            # workers compile / load the kernels
            (s2, idx), t = best_of(repeat, cosine_knn, D, queries, k)
            assert (s2 == sims).all()
            rows.append(("embeval_nb cosine_knn (dask array on a 2-worker LocalCluster)", t, agreement(idx, ours)))
    width = max(len(r[0]) for r in rows)
    for name, t, check in rows:
        print(f"{name:<{width}}  {t:7.3f} s  {t / t_ours:6.2f}x ours  {check}")
    return rows


def embed_uncached(e, texts):
    "The vectors of `texts` by embedder `e`, computed now (training included), never read from the cache."
    from embeval_nb.data import tokenize
    from embeval_nb.embeddings import (_trained_word_vectors, average_word_vectors, load_encoder, load_glove,
                                       tfidf_vectors)
    if e.kind == "encoder":
        return load_encoder(e.options[0]).encode(texts, pooling=e.options[1], cache=False, show_progress=False)
    docs = [tokenize(t) for t in texts]
    if e.kind == "tfidf": return tfidf_vectors(docs)
    return average_word_vectors(load_glove() if e.kind == "glove" else _trained_word_vectors(e, docs, 0), docs)


def run_encoders(n_sentences=2000):
    "Sentences per second of every embedder of the chapter on real sentences of its corpus (the BBC Sport articles)."
    from embeval_nb.data import mixed_sentence_corpus
    from embeval_nb.embeddings import EMBEDDERS
    texts = mixed_sentence_corpus(20_000).sentence.tolist()[:n_sentences]
    print(f"\n{len(texts)} sentences of the chapter's corpus, {THREADS} threads; tf-idf, word2vec and fastText include "
          "fitting on these sentences")
    for name, e in EMBEDDERS.items():
        embed_uncached(e, texts[:32])                                     # load the model, compile
        _, t = best_of(1, embed_uncached, e, texts)
        print(f"{name:<18} {t:7.2f} s  {len(texts) / t:8.0f} sentences/s")


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=500_000, help="corpus rows (default 500,000)")
    ap.add_argument("--d", type=int, default=384, help="dimension (default 384)")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3, help="timings are the best of this many runs")
    ap.add_argument("--dask", action="store_true", help="also time cosine_knn over a dask array on a LocalCluster")
    ap.add_argument("--encoders", action="store_true", help="also time every embedder of the chapter")
    a = ap.parse_args()
    run_knn(a.n, a.d, a.queries, a.k, a.repeat, a.dask)
    if a.encoders:
        run_encoders()
