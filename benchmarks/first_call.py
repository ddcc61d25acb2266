"""What a new user waits for on first use: numba compiling the package's kernels, module by module.

    python benchmarks/first_call.py            # every module of `embeval_nb.cli.WARM_UPS`, then all at once
    python benchmarks/first_call.py wmd n2o    # some modules

For each module, a fresh process with an empty numba cache (`NUMBA_CACHE_DIR` set to a new folder: what a fresh
installation has) runs `warm_up(modules=[m])`, the tiny calls `embeval warmup` makes, and reports their seconds:
almost all of it is compiling. A second fresh process with the same cache then runs them again: the seconds a
user waits on every later first call (machine code loaded from the cache). Imports are not timed. Then one cold
process warms every module, as `embeval warmup` does. One thread for numba and BLAS, so that compile time is
not hidden by parallel work; the compiler itself is single-threaded.
"""
import json
import os
import subprocess
import sys
import tempfile

for var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

from embeval_nb.cli import WARM_UPS

_RUN = "import json, sys; from embeval_nb.cli import warm_up; print(json.dumps(warm_up(False, sys.argv[1:])))"


def warm_seconds(modules: list[str], cache: str) -> float:
    "Seconds `warm_up(modules)` takes in a new process whose numba cache is the folder `cache`."
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "EMBEVAL_PROGRESS": "0"}
    out = subprocess.run([sys.executable, "-c", _RUN, *modules], env=env, capture_output=True, text=True, check=True)
    return sum(json.loads(out.stdout.strip().splitlines()[-1]).values())


def main(modules: list[str]) -> None:
    print(f"{'module':<16} {'first use (s)':>14} {'cached (s)':>11}")
    total = 0.0
    for m in modules:
        with tempfile.TemporaryDirectory() as cache:
            cold, warm = warm_seconds([m], cache), warm_seconds([m], cache)
        total += cold
        print(f"{m:<16} {cold:>14.1f} {warm:>11.2f}", flush=True)
    with tempfile.TemporaryDirectory() as cache:
        together = warm_seconds(modules, cache)
        print(f"{'all, one process':<16} {together:>14.1f} {warm_seconds(modules, cache):>11.2f}")
    print(f"sum of the modules alone: {total:.1f} s (kernels shared between modules compile once in one process)")


if __name__ == "__main__":
    main(sys.argv[1:] or list(WARM_UPS))
