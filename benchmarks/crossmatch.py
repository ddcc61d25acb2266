"""Minimum-weight perfect matching for the crossmatch test: embeval_nb against networkx and rustworkx, one run.

    python benchmarks/crossmatch.py            # full run (networkx at N = 400 takes ~30 s)
    python benchmarks/crossmatch.py --quick    # N <= 1000, networkx only at N = 200, no N = 5000
    python benchmarks/crossmatch.py --large    # ours alone at N = 20,000 and 50,000, time per step (~2 min)
    python benchmarks/crossmatch.py --large 10000 100000    # the same at the sizes given

All tools solve the same problem: Euclidean distances of N points (two samples of N/2 in d = 50, the second
shifted by 0.2), minimum total distance over perfect matchings. networkx gets the float distances
(`min_weight_matching`); rustworkx needs integer weights, so it gets ours (C - round(d * 2^30 / d_max)) with
`max_cardinality=True`, i.e. exactly our problem. Every total cost is checked against ours. At the `--large`
sizes the other tools would need the complete graph (1.25e9 edges at N = 50,000), so ours runs alone, and the
time of each step is printed. If benchmarks/matching_lemon is built (see benchmarks/matching_lemon.cpp: LEMON's
MaxWeightedPerfectMatching), it solves the last graph of our sparse route (the k-NN graph with the edges the
certificate added, our integer weights) and its time and cost are printed beside a cold solve of ours on the same
graph; otherwise the comparison is skipped with a message. One core: run with NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 (set below before numpy
is imported). Ratios are measured in this run.
"""
import os
import subprocess
import tempfile
import time

for var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import networkx as nx
import numpy as np
import rustworkx as rx

from embeval_nb.crossmatch import crossmatch_test
from embeval_nb.matching import _complete_edges, _prepare, _solve, min_weight_perfect_matching

LEMON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "matching_lemon")


def points(N, d=50, seed=0):
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal(size=(N // 2, d)), rng.normal(size=(N - N // 2, d)) + 0.2])


def timed(f, *args, **kw):
    t = time.perf_counter()
    out = f(*args, **kw)
    return out, time.perf_counter() - t


def true_cost(Z, pairs):
    pairs = np.asarray(pairs)
    return float(np.linalg.norm(Z[pairs[:, 0]] - Z[pairs[:, 1]], axis=1).sum())


def run_networkx(Z):
    D = np.linalg.norm(Z[:, None] - Z[None], axis=-1)
    G = nx.Graph()
    N = len(Z)
    G.add_weighted_edges_from((i, j, D[i, j]) for i in range(N) for j in range(i + 1, N))
    return [tuple(sorted(e)) for e in nx.min_weight_matching(G)]


def run_rustworkx(Z, levels_per_unit):
    P = _prepare(Z, "euclidean")                    # our rounded distances: the exact kernel on the prepared points
    ei, ej, q = _complete_edges(P.X, P.code, np.ldexp(levels_per_unit, P.shift), np.zeros((0, 0), np.int64))
    C = 2 ** 30 + 1
    G = rx.PyGraph()
    G.add_nodes_from(range(len(Z)))
    G.add_edges_from(list(zip(ei.tolist(), ej.tolist(), (C - q).tolist())))
    return sorted(tuple(sorted(e)) for e in rx.max_weight_matching(G, max_cardinality=True, weight_fn=lambda x: x))


def main(quick=False):
    min_weight_perfect_matching(points(40), method="dense")           # compile (cached on disk afterwards)
    min_weight_perfect_matching(points(200), method="sparse")
    rows = []
    plan = [(200, True, True), (400, not quick, True), (1000, False, True)] + ([] if quick else [(5000, False, False)])
    for N, with_nx, with_rx in plan:
        Z = points(N)
        sparse, t_sparse = timed(min_weight_perfect_matching, Z, method="sparse")
        ours = true_cost(Z, sparse.pairs)
        row = dict(N=N, sparse=t_sparse, rounds=sparse.rounds)
        if N <= 1000:
            dense, row["dense"] = timed(min_weight_perfect_matching, Z, method="dense")
            assert dense.cost == sparse.cost
        if with_rx:
            M, row["rustworkx"] = timed(run_rustworkx, Z, sparse.levels_per_unit)
            assert abs(true_cost(Z, M) - ours) < 1e-6 * ours
        if with_nx:
            M, row["networkx"] = timed(run_networkx, Z)
            assert abs(true_cost(Z, M) - ours) < 1e-6 * ours
        X, Y = Z[:N // 2], Z[N // 2:]
        res, row["test"] = timed(crossmatch_test, X, Y)
        row["a1"], row["p"] = res.a1, res.p_value
        rows.append(row)
        print(f"N={N:5d}  ours sparse+certificate {t_sparse:7.3f} s ({sparse.rounds} solves)"
              + (f"  ours dense {row['dense']:7.3f} s" if "dense" in row else "")
              + (f"  rustworkx {row['rustworkx']:7.3f} s" if "rustworkx" in row else "")
              + (f"  networkx {row['networkx']:7.2f} s" if "networkx" in row else "")
              + f"  | full test {row['test']:.3f} s, A1={res.a1}, p={res.p_value:.3g}", flush=True)
    print("\nratios (time of the other tool / ours, sparse route):")
    for row in rows:
        parts = [f"{k} {row[k] / row['sparse']:.0f}x" for k in ("networkx", "rustworkx", "dense") if k in row]
        print(f"  N={row['N']:5d}: " + (", ".join(parts) or "no other tool run at this size"))
    return rows


PHASES = {"_max_distance_blocked": "largest distance", "_knn_edges": "kNN graph", "_solve": "solves",
          "_violations": "certificate passes"}


def timing_phases():
    """Wrap the steps of min_weight_perfect_matching so that each call's time is recorded: {step: [seconds]}
    (and under "last_solve" the arguments of the last solve)."""
    import embeval_nb.matching as mm
    spent = {name: [] for name in PHASES}
    for name in PHASES:
        def wrapped(*args, _f=getattr(mm, name), _name=name, **kw):
            out, t = timed(_f, *args, **kw)
            spent[_name].append(t)
            if _name == "_solve": spent["last_solve"] = [args]
            return out
        setattr(mm, name, wrapped)
    return spent


def compare_lemon(args):
    """LEMON and a cold solve of ours on the graph of the solve called with `args` (even N: no ghost): printed."""
    if not os.path.exists(LEMON):
        print("          LEMON: skipped (build benchmarks/matching_lemon, see benchmarks/matching_lemon.cpp)", flush=True)
        return
    Z, code, per_unit, C, ei, ej, q, nvert = args[:8]
    (mate, _, _), t_ours = timed(_solve, Z, code, per_unit, C, ei, ej, q, nvert)
    cost_ours = int(q[mate[ei] == ej].sum())
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(f"{nvert} {len(ei)} {C}\n")
        np.savetxt(f, np.c_[ei, ej, q], fmt="%d")
    try:
        perfect, cost, t_lemon = subprocess.run([LEMON, f.name], capture_output=True, text=True, check=True).stdout.split()
    finally:
        os.unlink(f.name)
    assert perfect == "1" and int(cost) == cost_ours, (perfect, cost, cost_ours)
    print(f"          same graph ({len(ei)} edges), cold solves: ours {t_ours:.1f} s, LEMON MaxWeightedPerfectMatching "
          f"{float(t_lemon):.1f} s (LEMON / ours {float(t_lemon) / t_ours:.1f}), the same cost {cost_ours}", flush=True)


def main_large(sizes=(20_000, 50_000)):
    min_weight_perfect_matching(points(4000), method="sparse")        # compile (cached on disk afterwards)
    spent = timing_phases()
    for N in sizes:
        Z = points(N)
        for times in spent.values():
            times.clear()
        spent.pop("last_solve", None)
        M, t = timed(min_weight_perfect_matching, Z, method="sparse")
        print(f"N={N:6d}  ours sparse+certificate {t:8.1f} s ({t / 60:.1f} min, {M.rounds} solves, {M.n_edges} edges, "
              f"certified {M.certified})", flush=True)
        steps = []
        for name, label in PHASES.items():
            each = ", ".join(f"{x:.1f}" for x in spent[name])
            steps.append(f"{label} {sum(spent[name]):.1f} s" + (f" ({each})" if len(spent[name]) > 1 else ""))
        print("          " + "; ".join(steps), flush=True)
        if N % 2 == 0: compare_lemon(spent["last_solve"][0])


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="N <= 1000, networkx only at N = 200 (about a minute)")
    ap.add_argument("--large", nargs="*", type=int, metavar="N",
                    help="ours alone at N = 20,000 and 50,000 (or the N given), with the time of each step (about 2 minutes)")
    args = ap.parse_args()
    if args.large is not None: main_large(tuple(args.large) or (20_000, 50_000))
    else: main(quick=args.quick)
