"""Corpus distances: embeval_nb against the tools people use today, one run, ratios printed.

    python benchmarks/corpus_distance.py            # everything (~5 min: dcor ~1 min, 50,000 per side ~3 min)
    python benchmarks/corpus_distance.py --quick    # no dcor, memory check at 10,000 per side

1. Energy distance and average Hausdorff distance (AHD) of two corpora of 2000 x 384 (Gaussian, the second
   shifted by 0.05 per coordinate), Euclidean and cosine document distances: ours (blocked BLAS + numba) against
   `dcor.energy_distance` (Euclidean only) and against three `scipy.spatial.distance.cdist` calls (the full
   matrices X-Y, X-X, Y-Y; AHD from the X-Y one). Every value is checked against the others (relative 1e-9).
2. Precision/recall/density/coverage, k = 5, Euclidean: ours against the `prdc` package; PR and DC distances.
3. MAUVE: our wrapper against `mauve.compute_mauve` on the same features (the same package underneath).
4. Peak memory of energy distance + AHD at 50,000 documents per side (d = 384), in a fresh process (the
   high-water mark of its resident memory, VmHWM), and of dcor at 2000 per side likewise.

One core: every tool runs single-threaded (BLAS, numba, OpenMP; set below before numpy is imported), so the ratios
compare algorithms rather than thread counts; scipy's cdist is single-threaded anyway.
"""
import os

for var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import argparse
import contextlib
import io
import json
import subprocess
import sys
import time

import numpy as np
from scipy.spatial.distance import cdist

from embeval_nb.corpus_distance import (_quiet_c_stderr, average_hausdorff, dc_distance, energy_distance,
                                        mauve_distance, pr_distance, prdc)


def corpora(n, d=384, seed=0, shift=0.05):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.normal(size=(n, d)) + shift


def timed(f, *args, repeat=1, **kw):
    "(result, best wall time of `repeat` runs)"
    best, out = np.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f(*args, **kw)
        best = min(best, time.perf_counter() - t)
    return out, best


def scipy_energy(X, Y, metric):
    "Paper eq. 3 from three full scipy distance matrices."
    return 2 * cdist(X, Y, metric).mean() - cdist(X, X, metric).mean() - cdist(Y, Y, metric).mean()


def scipy_ahd(X, Y, metric):
    "AHD from one full scipy distance matrix."
    D = cdist(X, Y, metric)
    return 0.5 * (D.min(1).mean() + D.min(0).mean())


def agree(a, b, rtol=1e-9):
    return bool(np.allclose(a, b, rtol=rtol, atol=0))


def energy_and_ahd(n, with_dcor):
    X, Y = corpora(n)
    energy_distance(X[:50], Y[:50])                                # compile the numba kernel (cached on disk)
    rows = []
    for metric in ("euclidean", "cosine"):
        row = dict(metric=metric)
        e, row["ours_energy"] = timed(energy_distance, X, Y, metric=metric, repeat=3)
        a, row["ours_ahd"] = timed(average_hausdorff, X, Y, metric=metric, repeat=3)
        e_ref, row["scipy_energy"] = timed(scipy_energy, X, Y, metric)
        a_ref, row["scipy_ahd"] = timed(scipy_ahd, X, Y, metric)
        row["agree_scipy"] = agree([e, a], [e_ref, a_ref])
        line = (f"{n} x 384, {metric:9s}: energy ours {row['ours_energy']:.3f} s vs 3 scipy cdist {row['scipy_energy']:.2f} s "
                f"({row['scipy_energy'] / row['ours_energy']:.1f}x) | AHD ours {row['ours_ahd']:.3f} s vs 1 cdist "
                f"{row['scipy_ahd']:.2f} s ({row['scipy_ahd'] / row['ours_ahd']:.1f}x) | agree with scipy: {row['agree_scipy']}")
        if with_dcor and metric == "euclidean":
            r = in_fresh_process(DCOR_CHILD, n)
            row["dcor_energy"], row["dcor_peak_mb"], row["agree_dcor"] = r["seconds"], r["peak_mb"], agree(e, r["energy"])
            line += (f" | dcor.energy_distance {r['seconds']:.1f} s ({r['seconds'] / row['ours_energy']:.0f}x, "
                     f"agree: {row['agree_dcor']}, peak memory {r['peak_mb']:.0f} MB)")
        print(line + f"; energy {e:.10g}, AHD {a:.10g}", flush=True)
        rows.append(row)
    return rows


def prdc_against_package(n):
    import prdc as prdc_pkg
    X, Y = corpora(n, seed=1, shift=0.02)
    prdc(X[:50], Y[:50], 5)
    ours, t_ours = timed(prdc, X, Y, 5, repeat=3)
    with contextlib.redirect_stdout(io.StringIO()):                # the package prints the sample sizes
        ref, t_ref = timed(prdc_pkg.compute_prdc, X, Y, 5)
    ref = [ref["precision"], ref["recall"], ref["density"], ref["coverage"]]
    ok = agree(ours, ref, rtol=1e-12)
    print(f"PRDC {n} x 384, k = 5: ours {t_ours:6.3f} s | prdc package {t_ref:6.3f} s ({t_ref / t_ours:4.1f}x); "
          f"identical: {ok}; ours {np.round(ours, 4).tolist()}")
    print(f"  PR distance {pr_distance(X, Y, 5, metric='euclidean'):.4f}, DC distance "
          f"{dc_distance(X, Y, 5, metric='euclidean'):.4f}")
    return dict(ours=t_ours, prdc=t_ref, identical=ok)


def mauve_against_package(n):
    import mauve
    X, Y = corpora(n, seed=2, shift=0.05)
    mauve_distance(X[:100], Y[:100])                               # imports and faiss start-up, for both
    ours, t_ours = timed(mauve_distance, X, Y)
    with _quiet_c_stderr():                                        # faiss warns about too few points per bucket
        ref, t_ref = timed(mauve.compute_mauve, p_features=X, q_features=Y, seed=25, verbose=False)
    ok = abs(ours - (1 - ref.mauve)) < 1e-12
    print(f"MAUVE {n} x 384: ours (mauve-text inside) {t_ours:6.2f} s | mauve.compute_mauve {t_ref:6.2f} s; "
          f"1 - MAUVE {ours:.4f}, same number: {ok}")
    return dict(ours=t_ours, mauve=t_ref, identical=ok)


CHILD_HEAD = """
import json, sys, time
import numpy as np
from embeval_nb.corpus_distance import average_hausdorff, energy_distance
energy_distance(np.ones((3, 2)), np.zeros((2, 2)), metric="euclidean")    # load the compiled kernels
def peak_mb():
    "High-water mark of this process's resident memory (VmHWM), in MB."
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmHWM")) / 1024
n = int(sys.argv[1])
rng = np.random.default_rng(0)
X, Y = rng.normal(size=(n, 384)), rng.normal(size=(n, 384)) + 0.05
before = peak_mb()
t = time.perf_counter()
"""
MEMORY_CHILD = CHILD_HEAD + """
e, a = energy_distance(X, Y, metric="euclidean"), average_hausdorff(X, Y, metric="euclidean")
print(json.dumps(dict(n=n, seconds=time.perf_counter() - t, energy=e, ahd=a, inputs_mb=(X.nbytes + Y.nbytes) / 2**20,
                      peak_mb=peak_mb(), before_mb=before)))
"""
DCOR_CHILD = CHILD_HEAD + """
import dcor
e = float(dcor.energy_distance(X, Y))
print(json.dumps(dict(n=n, seconds=time.perf_counter() - t, energy=e, peak_mb=peak_mb(), before_mb=before)))
"""


def in_fresh_process(code, n):
    "Run `code` with argument n in a new Python process; its last output line, parsed as JSON."
    out = subprocess.run([sys.executable, "-c", code, str(n)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def memory_check(n):
    r = in_fresh_process(MEMORY_CHILD, n)
    print(f"memory: {n} + {n} documents x 384 (inputs {r['inputs_mb']:.0f} MB): energy + AHD in {r['seconds']:.0f} s, "
          f"peak resident memory {r['peak_mb']:.0f} MB ({r['peak_mb'] - r['before_mb']:.0f} MB above the process with "
          f"its inputs); energy {r['energy']:.6g}, AHD {r['ahd']:.6g}")
    return r


def main(quick=False):
    mem = memory_check(10_000 if quick else 50_000)
    rows = energy_and_ahd(2000, with_dcor=not quick)
    pr = prdc_against_package(2000)
    mv = mauve_against_package(2000)
    print("\nratios (time of the other tool / ours):")
    for r in rows:
        print(f"  {r['metric']}: energy vs 3 scipy cdist {r['scipy_energy'] / r['ours_energy']:.1f}x, AHD vs 1 cdist "
              f"{r['scipy_ahd'] / r['ours_ahd']:.1f}x"
              + (f", energy vs dcor.energy_distance {r['dcor_energy'] / r['ours_energy']:.0f}x (dcor peak memory "
                 f"{r['dcor_peak_mb']:.0f} MB)" if "dcor_energy" in r else ""))
    print(f"  PRDC: prdc package {pr['prdc'] / pr['ours']:.1f}x;  MAUVE: mauve-text {mv['mauve'] / mv['ours']:.2f}x")
    print(f"  memory at {mem['n']} per side: {mem['peak_mb']:.0f} MB peak")
    return dict(energy_ahd=rows, prdc=pr, mauve=mv, memory=mem)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="skip dcor at 2000 and check memory at 10,000 per side")
    main(quick=ap.parse_args().quick)
