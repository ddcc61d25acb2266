"""WMD speed, side by side with the tools people use today (POT, gensim), in one run.

    python benchmarks/wmd.py [--dataset reuters] [--metric euclidean] [--pca-dim 0] [--pairs 400] [--queries 200]
                             [--check-queries 4] [--pot-sample 6000] [--skip-single] [--breakdown 40]

Data: `load_corpus(--dataset)` (reuters, R8, by default; 20news has twice as many words per document and twice
as many training documents), GloVe 6B 50d L2-normalised (the paper's convention).
1. exact single-pair throughput on random pairs of real documents: POT `ot.emd2` with its cost matrix
   built by `ot.dist` (what a user writes), gensim `KeyedVectors.wmdistance`, ours (`wmd_paired`, one call
   for all pairs, and `wmd` called once per pair);
2. the k = 19 nearest training documents of `--queries` test documents by exact WMD: ours (`wmd_knn`,
   prefetch and prune) against brute force with POT. POT brute force over all pairs takes hours, so it is
   timed on a random sample of `--pot-sample` (query, training document) pairs and extrapolated; the time of a
   pair varies a lot with the documents' lengths, so the output gives the sample size, the ratio from each half
   of the sample and a bootstrap interval over pairs. Ours and POT take turns (a fifth of the queries, then a
   fifth of the POT sample), so that a change in the load of a shared machine hits both sides alike. Agreement with POT is checked on the first
   `--check-queries` queries (every training document each): the same neighbours and distances to 1e-9, and
   exactly the neighbours and distances of our own brute force (`wmd_pairwise`).
   `--metric` picks the cost between word vectors, `--pca-dim 5` the 5-d PCA vectors of the paper's ablation
   (`pca_embeddings`, fitted on the training documents); `--skip-single` leaves out part 1.
3. where the time of a query goes, on the first `--breakdown` queries of part 2 (0: skip): the float64 cost table,
   the bounds of every training document (with the rate at which they read the float32 cost rows, beside the
   machine's streaming read rate measured in the same run), the rest of the search, and the time of the k exact
   solves that an oracle knowing the neighbours would still need: how far the search is from that limit.
Times are CPU seconds of this process (`time.process_time`, robust to other jobs on a shared machine) and
wall seconds; ratios use CPU time; the single-pair timings are the best of `--repeats` interleaved runs.
BLAS is pinned to one thread (threadpoolctl): with its default threads, OpenBLAS workers spin after every
small matrix product in `ot.dist` and double POT's CPU time on this machine, which would flatter our ratios. Everything runs on one core unless `--n-jobs` is given.
"""
import argparse
import os
import time


import numpy as np
import ot
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from embeval_nb.data import load_corpus
from embeval_nb.embeddings import bow_matrix, load_glove, vocabulary
from embeval_nb.metrics import normalize_rows
from embeval_nb.wmd import pca_embeddings, wmd, wmd_knn, wmd_paired, wmd_pairwise


class Timer:
    def __enter__(self):
        self.cpu, self.wall = time.process_time(), time.perf_counter(); return self

    def __exit__(self, *exc):
        self.cpu, self.wall = time.process_time() - self.cpu, time.perf_counter() - self.wall


class Best(Timer):
    "A timer that keeps the smallest CPU and wall time over the blocks it timed."
    def __init__(self):
        self.best_cpu = self.best_wall = float("inf")

    def __exit__(self, *exc):
        super().__exit__(*exc)
        self.best_cpu, self.best_wall = min(self.best_cpu, self.cpu), min(self.best_wall, self.wall)
        self.cpu, self.wall = self.best_cpu, self.best_wall


def rows(X, i):
    s, t = X.indptr[i], X.indptr[i + 1]
    return X.indices[s:t], X.data[s:t] / X.data[s:t].sum()


def pot_pair(X, i, Y, j, E, exact_cost=False, metric="euclidean"):
    xi, a = rows(X, i); yi, b = rows(Y, j)
    if exact_cost:
        from scipy.spatial.distance import cdist
        M = cdist(E[xi], E[yi], metric=metric)
    else:
        M = ot.dist(E[xi], E[yi], metric=metric)
    return ot.emd2(a, b, M)


def pot_ratio(seconds, npairs, ours):
    "Extrapolated POT brute-force CPU time over npairs from per-pair times, and its ratio to ours: (total, ratio, ratios of the two halves, 90% bootstrap interval)."
    total = seconds.mean() * npairs
    half = len(seconds) // 2
    halves = [seconds[:half].mean() * npairs / ours, seconds[half:].mean() * npairs / ours]
    rng = np.random.default_rng(1)
    boot = [rng.choice(seconds, len(seconds)).mean() * npairs / ours for _ in range(2000)]
    return total, total / ours, halves, np.quantile(boot, [0.05, 0.95])


def main():
    with threadpool_limits(1):               # one core for everyone; see the note printed in part 1
        run()


def run():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="reuters")
    ap.add_argument("--metric", default="euclidean", choices=["euclidean", "sqeuclidean", "cityblock"])
    ap.add_argument("--pca-dim", type=int, default=0)
    ap.add_argument("--skip-single", action="store_true")
    ap.add_argument("--pairs", type=int, default=400)
    ap.add_argument("--gensim-pairs", type=int, default=150)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--check-queries", type=int, default=4)
    ap.add_argument("--pot-sample", type=int, default=6000)
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--breakdown", type=int, default=40)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)

    corpus = load_corpus(args.dataset); wv = load_glove()
    words = vocabulary(corpus.docs, wv)
    X = sp.csr_matrix(bow_matrix(corpus.docs, words))
    E = normalize_rows(np.stack([wv.vectors[wv.index[w]] for w in words]).astype(np.float64))
    train, test = corpus.splits[0]
    keep = X.getnnz(axis=1) > 0
    train, test = train[keep[train]], test[keep[test]]
    Xtr, Xte = X[train], X[test]
    if args.pca_dim: E = pca_embeddings(E, Xtr, args.pca_dim)
    vectors = f"GloVe-50d L2-normalised, {args.pca_dim}-d PCA" if args.pca_dim else "GloVe-50d L2-normalised"
    print(f"{args.dataset}: {len(train)} train / {len(test)} test documents, vocabulary {len(words)} words, "
          f"median {np.median(X.getnnz(axis=1)):.0f} distinct words per document; {vectors}; cost {args.metric}")
    P = rng.choice(X.shape[0], (args.pairs, 2))             # drawn even with --skip-single: part 2 gets the same queries
    if not args.skip_single: single_pairs(args, P, X, E, corpus, words, wv)
    knn(args, rng, Xtr, Xte, E)


def single_pairs(args, P, X, E, corpus, words, wv):
    "Part 1: exact WMD of the random document pairs P (pairs, 2), POT and gensim against ours (Euclidean cost)."

    Xa, Xb = X[P[:, 0]], X[P[:, 1]]
    wmd_paired(Xa[:2], Xb[:2], E); wmd(Xa[0], Xb[0], E); pot_pair(Xa, 0, Xb, 0, E)   # compile / warm up
    rows_a, rows_b = [Xa[r] for r in range(args.pairs)], [Xb[r] for r in range(args.pairs)]   # inputs ready, as for POT
    t_pot, t_ours, t_call = Best(), Best(), Best()
    for _ in range(args.repeats):            # interleaved repeats, best of each: robust to other jobs on the machine
        with t_pot: ref = np.array([pot_pair(Xa, r, Xb, r, E) for r in range(args.pairs)])
        with t_ours: ours = wmd_paired(Xa, Xb, E)
        with t_call: ours_call = np.array([wmd(x, y, E) for x, y in zip(rows_a, rows_b)])
    with threadpool_limits(os.cpu_count()), Timer() as t_threads:       # what a default install does: BLAS may use every core
        [pot_pair(Xa, r, Xb, r, E) for r in range(args.pairs)]
    exact = np.array([pot_pair(Xa, r, Xb, r, E, exact_cost=True) for r in range(args.pairs)])
    print(f"\n1. exact WMD of {args.pairs} random document pairs (one core, CPU ms per pair, best of {args.repeats} interleaved runs)")
    print(f"   POT ot.dist + ot.emd2        {t_pot.cpu / args.pairs * 1e3:8.3f} ms")
    print(f"   ours wmd_paired (one call)   {t_ours.cpu / args.pairs * 1e3:8.3f} ms   -> {t_pot.cpu / t_ours.cpu:5.1f}x POT")
    print(f"   ours wmd (a call per pair)   {t_call.cpu / args.pairs * 1e3:8.3f} ms   -> {t_pot.cpu / t_call.cpu:5.1f}x POT")
    print(f"   (POT with default BLAS threads: CPU {t_threads.cpu / args.pairs * 1e3:.3f} ms, wall {t_threads.wall / args.pairs * 1e3:.3f} ms "
          f"per pair: idle BLAS threads spin after each ot.dist; every other timing here pins BLAS to one thread)")
    print(f"   max relative difference to POT on the same (scipy cdist) cost: {np.max(np.abs(ours - exact) / np.maximum(exact, 1e-300)):.1e}; "
          f"to POT with ot.dist's cost (|x|^2+|y|^2-2xy, cancellation): {np.max(np.abs(ours - ref) / np.maximum(ref, 1e-300)):.1e}")
    assert np.allclose(ours, exact, rtol=1e-9) and np.array_equal(ours, ours_call)
    try:
        from gensim.models import KeyedVectors
        kv = KeyedVectors(E.shape[1]); kv.add_vectors(words, E.astype(np.float32))
        docs = [[w for w in corpus.docs[i] if w in wv] for i in range(len(corpus.docs))]
        g = args.gensim_pairs
        kv.wmdistance(docs[P[0, 0]], docs[P[0, 1]])
        with Timer() as t_gen: gen = np.array([kv.wmdistance(docs[i], docs[j]) for i, j in P[:g]])
        print(f"   gensim wmdistance            {t_gen.cpu / g * 1e3:8.3f} ms   (ours {t_gen.cpu / g / (t_ours.cpu / args.pairs):5.1f}x faster; "
              f"{g} pairs, float32 vectors, max rel. diff {np.max(np.abs(gen - ours[:g]) / ours[:g]):.1e})")
    except ImportError as e:
        print(f"   gensim not available: {e}")



def knn(args, rng, Xtr, Xte, E):
    "Part 2: the k = 19 nearest training documents of --queries test documents, ours against POT brute force."
    k, nq, metric = 19, args.queries, args.metric
    qidx = rng.choice(Xte.shape[0], nq, replace=False)
    Xq = Xte[qidx]
    wmd_knn(Xq[:1], Xtr[:40], E, 3, metric=metric); pot_pair(Xq, 0, Xtr, 0, E, metric=metric)   # compile / warm up
    npairs = nq * Xtr.shape[0]
    sample = np.column_stack([rng.integers(0, nq, args.pot_sample), rng.integers(0, Xtr.shape[0], args.pot_sample)])
    seconds = np.empty(args.pot_sample); parts, t_knn = [], Timer(); t_knn.cpu = t_knn.wall = 0.0
    # ours and POT take turns (a fifth of the queries, then a fifth of the POT sample): both see the same machine load
    for chunk, pairs in zip(np.array_split(np.arange(nq), 5), np.array_split(np.arange(args.pot_sample), 5)):
        with Timer() as t: parts.append(wmd_knn(Xq[chunk], Xtr, E, k, metric=metric, n_jobs=args.n_jobs, return_stats=True))
        t_knn.cpu += t.cpu; t_knn.wall += t.wall
        for s in pairs:
            i, j = sample[s]; t0 = time.process_time(); pot_pair(Xq, i, Xtr, j, E, metric=metric); seconds[s] = time.process_time() - t0
    dist, idx = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    stats = {"exact": sum(p[2]["exact"] for p in parts)}
    pot_total, ratio, halves, interval = pot_ratio(seconds, npairs, t_knn.cpu)
    print(f"\n2. k={k} nearest of {nq} test documents among {Xtr.shape[0]} training documents ({npairs:,} pairs), cost {metric}")
    print(f"   ours wmd_knn (n_jobs={args.n_jobs})          CPU {t_knn.cpu:8.1f} s, wall {t_knn.wall:8.1f} s; exact solver runs: "
          f"{stats['exact']:,} ({stats['exact'] / nq:.0f} per query, {100 * stats['exact'] / npairs:.2f}% of pairs; "
          "some stop early once a dual bound passes the k-th distance)")
    print(f"   POT brute force (extrapolated)  CPU {pot_total:8.1f} s  from {args.pot_sample} random pairs "
          f"({seconds.mean() * 1e3:.3f} ms per pair)  -> ours {ratio:5.1f}x faster")
    print(f"   spread of that ratio: {halves[0]:.1f}x and {halves[1]:.1f}x from the two halves of the sample, "
          f"{interval[0]:.1f}x to {interval[1]:.1f}x (90% bootstrap interval over the {args.pot_sample} pairs)")
    check(args, Xq, Xtr, E, dist, idx, k)
    if args.breakdown: breakdown(args, Xq[:args.breakdown], Xtr, E, idx[:args.breakdown], k)


def check(args, Xq, Xtr, E, dist, idx, k):
    "Neighbours of the first --check-queries queries against POT brute force and against our own (wmd_pairwise)."
    c, metric = args.check_queries, args.metric
    if c == 0: return
    with Timer() as t_check:
        Pq = np.array([[pot_pair(Xq, i, Xtr, j, E, exact_cost=True, metric=metric) for j in range(Xtr.shape[0])] for i in range(c)])
    order = np.argsort(Pq, axis=1, kind="stable")[:, :k]
    same_idx = np.array_equal(order, idx[:c])
    rel = np.max(np.abs(np.take_along_axis(Pq, order, 1) - dist[:c]) / np.maximum(dist[:c], 1e-300))
    Ours = wmd_pairwise(Xq[:c], Xtr, E, metric=metric)
    o2 = np.argsort(Ours, axis=1, kind="stable")[:, :k]
    print(f"   check on {c} queries x {Xtr.shape[0]} (POT brute force, {t_check.cpu:.0f} s): same neighbours as POT: {same_idx}, "
          f"max rel. distance difference {rel:.1e}; identical to our own brute force (wmd_pairwise): "
          f"{np.array_equal(o2, idx[:c]) and np.array_equal(np.take_along_axis(Ours, o2, 1), dist[:c])}")


def streaming_read_rate(nbytes=2 ** 29, repeats=3) -> float:
    "Bytes per second of one thread taking the largest entry of a float32 array of `nbytes` (the memory floor of a pass over data), best of `repeats`."
    A = np.ones(nbytes // 4, np.float32); best = np.inf
    for _ in range(repeats):
        t = time.perf_counter(); A.max(); best = min(best, time.perf_counter() - t)
    return nbytes / best


def breakdown(args, Xq, Xtr, E, idx, k):
    """Part 3: where a query's time goes, per query: the float64 cost table, the bounds of every training document,
    the rest of the search (potential and ICT bounds, exact solves), and the k exact solves that an oracle knowing
    the neighbours would still need (the same solver on the same costs)."""
    from embeval_nb.metrics import SQEUCLIDEAN, _distance_rows
    from embeval_nb.wmd import _bound_costs, _gather_costs, _knn_query, _lower_bounds, _prepare, _used_words, _wmd_pair
    Xq, Xr, E, Cr, code, _ = _prepare(Xq, Xtr, E, args.metric)
    used, local = _used_words(Xr)
    ptr, ind, dat = Xr.indptr.astype(np.int64), Xr.indices.astype(np.int64), Xr.data
    t_cost = t_bound = t_search = t_oracle = 0.0; n_exact = bytes_rows = 0
    for q in range(-1, Xq.shape[0]):                        # q = -1: compile and warm up on the first query
        row = max(q, 0)
        qw = Xq.indices[Xq.indptr[row]:Xq.indptr[row + 1]].astype(np.int64); qa = Xq.data[Xq.indptr[row]:Xq.indptr[row + 1]].copy()
        query = (qw, qa, qa @ E[qw])
        t0 = time.process_time(); DT = _distance_rows(E, used, E, qw, code)
        t1 = time.process_time(); _lower_bounds(_bound_costs(DT), query, (ptr, local, dat), Cr, code)
        t2 = time.process_time(); out = (np.empty(k), np.empty(k, np.int64))
        solved = _knn_query(DT, query, (ptr, ind, dat, local), Cr, code, k, -1, out)
        t3 = time.process_time()
        oracle = [_wmd_pair(_gather_costs(DT, local[ptr[r]:ptr[r + 1]]), qw, qa, ind[ptr[r]:ptr[r + 1]], dat[ptr[r]:ptr[r + 1]],
                            code != SQEUCLIDEAN) for r in idx[row]]
        t4 = time.process_time()
        assert np.array_equal(out[1], idx[row]) and np.array_equal(oracle, out[0])   # the same search, the same solver
        if q < 0: continue
        t_cost += t1 - t0; t_bound += t2 - t1; t_search += t3 - t2; t_oracle += t4 - t3
        n_exact += solved; bytes_rows += len(ind) * len(qw) * 4
    n = Xq.shape[0]; rate = streaming_read_rate()
    ms = lambda t: t / n * 1e3
    total = t_cost + t_search
    print(f"\n3. where a query's time goes ({n} of the queries above, CPU ms per query, one core)")
    line = lambda label, t, more="": print(f"   {label:<66}{ms(t):7.1f}{more}")
    line(f"cost table (float64, {len(used)} words x the query's words)", t_cost)
    line(f"bounds of all {Xr.shape[0]} documents (RWMD, WCD)", t_bound,
         f"   (they read {bytes_rows / n / 2**20:.0f} MB of float32 cost rows: {bytes_rows / t_bound / 1e9:.1f} GB/s; "
         f"streaming reads on this machine {rate / 1e9:.1f} GB/s)")
    line(f"rest of the search (potential and ICT bounds, {n_exact / n:.0f} exact solves)", t_search - t_bound)
    line("the whole query", total)
    line(f"an oracle knowing the {k} neighbours: their {k} exact solves", t_oracle,
         f"   -> the search takes {total / t_oracle:.1f}x the solves it cannot avoid")


if __name__ == "__main__":
    main()
