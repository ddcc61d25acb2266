"""Exact cosine k-NN at the machine's limit: cosine_knn's 8-bit and float32 screens against the float32 product alone,
numpy's product + argpartition and faiss's flat index, all on one thread, in one run.

    python benchmarks/cosine_knn.py                       # 500,000 x 384 random rows, 100 queries, k = 50
    python benchmarks/cosine_knn.py --data sentences      # the N2O chapter's corpus embedded by all-MiniLM-L6-v2 (mean and CLS)
    python benchmarks/cosine_knn.py --data glove          # the 400,000 GloVe 6B 50-d word vectors

The baselines get what they need prepared and untimed: unit float32 rows (normalising with np.linalg.norm is
slow on float32 rows and would flatter us), faiss an index of them. `cosine_knn(E, ...)` is timed from the raw
rows, everything included; `cosine_knn(code_corpus(E), ...)` searches rows coded once, and the coding is timed on
its own line. Every neighbour list is compared with brute force in float64 (ties to the smaller row): ours must
be identical; a float32 tool may swap neighbours whose similarities differ in the last bits. The limit: the
float32 product's rate in GFLOP/s (this core's float32 peak is about 72) and, for the 8-bit product, the same
count of multiply-adds per second. Times are the best of `--repeat` runs; ratios are measured in this run.
"""
import os
import time

for var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np

from embeval_nb.metrics import normalize_rows
from embeval_nb.neighbours import _int8_session, code_corpus, cosine_knn


def best_of(repeat, f, *args, **kw):
    "(result, best wall time in seconds) of `repeat` calls."
    times = []
    for _ in range(repeat):
        t = time.perf_counter(); out = f(*args, **kw); times.append(time.perf_counter() - t)
    return out, min(times)


def corpora(kind: str, n: int, d: int) -> dict:
    "{name: (n, d) float32 rows} to search."
    if kind == "random": return {f"random {n:,} x {d}": np.random.default_rng(0).standard_normal((n, d), dtype=np.float32)}
    if kind == "glove":
        from embeval_nb.embeddings import load_glove
        return {"GloVe 6B 50-d": np.asarray(load_glove().vectors, dtype=np.float32)}
    from embeval_nb.data import mixed_sentence_corpus
    from embeval_nb.embeddings import sentence_embeddings
    texts = mixed_sentence_corpus(50_000).sentence.tolist()
    return {f"N2O corpus, {name}": np.asarray(sentence_embeddings(name, texts), dtype=np.float32)
            for name in ("minilm-l6-avg", "minilm-l6-cls")}


def brute_force(U64, queries, k):
    "Reference neighbours: float64 products, ties to the smaller row, the query excluded."
    S = U64[queries] @ U64.T
    S[np.arange(len(queries)), queries] = -np.inf
    return np.lexsort((np.broadcast_to(np.arange(S.shape[1]), S.shape), -S), axis=1)[:, :k]


def numpy_argpartition(U32, queries, k):
    S = U32[queries] @ U32.T
    S[np.arange(len(queries)), queries] = -np.inf
    part = np.argpartition(-S, k, axis=1)[:, :k]
    return np.take_along_axis(part, np.argsort(-np.take_along_axis(S, part, 1), axis=1, kind="stable"), 1)


def faiss_search(index, U32, queries, k):
    _, I = index.search(U32[queries], k + 1)
    return np.array([[j for j in row if j != q][:k] for row, q in zip(I, queries)])


def run(name, E, n_queries, k, repeat):
    n, d = E.shape
    queries = np.random.default_rng(1).choice(n, n_queries, replace=False)
    U64 = normalize_rows(E.astype(np.float64)); U32 = U64.astype(np.float32)
    ref = brute_force(U64, queries, k)
    cosine_knn(E[:20_000], queries[:3] % 20_000, 10); cosine_knn(E[:20_000], queries[:3] % 20_000, 10, screen="int8")
    _, t_prod = best_of(repeat, lambda: U32[queries] @ U32.T)
    flop = 2.0 * n_queries * n * d
    rows = [("float32 product alone (unit rows)", t_prod, f"{flop / t_prod / 1e9:.0f} GFLOP/s")]
    (_, i8), t8 = best_of(repeat, cosine_knn, E, queries, k, screen="int8")
    rows.append(("embeval cosine_knn, 8-bit screen (rows coded in the call)", t8, _same(i8, ref)))
    C, t_code = best_of(1, code_corpus, E)
    (_, ic), tc = best_of(repeat, cosine_knn, C, queries, k)
    rows.append(("embeval cosine_knn on code_corpus(E)", tc, _same(ic, ref)))
    rows.append(("  code_corpus(E), once", t_code, f"{n * d / t_code / 1e9:.2f} G values/s"))
    (_, i32), t32 = best_of(repeat, cosine_knn, E, queries, k, screen="float32")
    rows.append(("embeval cosine_knn, float32 screen", t32, _same(i32, ref)))
    idx, t_np = best_of(repeat, numpy_argpartition, U32, queries, k)
    rows.append(("numpy product + argpartition (unit rows)", t_np, _same(idx, ref)))
    try:
        import faiss
        index = faiss.IndexFlatIP(d); index.add(U32)
        idx, t_f = best_of(repeat, faiss_search, index, U32, queries, k)
        rows.append(("faiss IndexFlatIP.search (unit rows)", t_f, _same(idx, ref)))
    except ImportError:
        print("faiss-cpu is not installed: skipped")
    session = _int8_session(d, 1)
    A = np.zeros((n, d), np.uint8); B = np.zeros((d, n_queries), np.int8)
    _, t_int = best_of(repeat, session.run, None, {"A": A, "B": B})
    print(f"\n{name}: {n:,} x {d}, {n_queries} queries, k = {k}, one thread, best of {repeat}; the 8-bit product alone "
          f"{t_int:.3f} s ({flop / t_int / 1e9:.0f} G multiply-adds x 2 per second)")
    width = max(len(r[0]) for r in rows)
    for label, t, note in rows:
        print(f"{label:<{width}}  {t:7.3f} s  {t_prod / t:5.2f}x the float32 product  {note}")


def _same(idx, ref) -> str:
    same = int((idx == ref).all(1).sum())
    return f"identical lists {same}/{len(ref)}"


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", choices=("random", "sentences", "glove"), default="random")
    ap.add_argument("--n", type=int, default=500_000, help="rows of the random corpus (default 500,000)")
    ap.add_argument("--d", type=int, default=384, help="dimension of the random corpus (default 384)")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    for name, E in corpora(a.data, a.n, a.d).items():
        run(name, E, a.queries, a.k, a.repeat)
