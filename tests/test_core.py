"""core: seeding, parallel map on every backend, the crash-safe array cache, records."""
import os, signal, subprocess, sys, textwrap, time

import numpy as np
import pytest

from embeval_nb.core import (cache_key, cached_array, make_rng, parallel_map, read_records, record,
                             save_array_atomic)


def _square(x):
    return x * x


def test_make_rng_repeats_for_a_seed():
    assert np.array_equal(make_rng(7).normal(size=5), make_rng(7).normal(size=5))
    assert not np.array_equal(make_rng(7).normal(size=5), make_rng(8).normal(size=5))


@pytest.mark.parametrize("n_jobs,backend", [(1, None), (2, None), (2, "threading")])
def test_parallel_map_keeps_order(n_jobs, backend):
    assert parallel_map(_square, range(20), n_jobs=n_jobs, backend=backend) == [i * i for i in range(20)]


def test_parallel_map_on_dask_cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        assert parallel_map(_square, range(10), n_jobs=2, backend="dask") == [i * i for i in range(10)]


def test_cache_key_is_stable_and_distinguishes():
    assert cache_key("a", 1) == cache_key("a", 1) != cache_key("a", 2)


def test_cached_array_computes_once(tmp_path):
    calls = []
    f = lambda: calls.append(1) or np.arange(4.0)
    np.testing.assert_array_equal(cached_array("x", f, directory=tmp_path), np.arange(4.0))
    np.testing.assert_array_equal(cached_array("x", f, directory=tmp_path), np.arange(4.0))
    assert calls == [1]


def test_failed_write_leaves_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "a.npy"
    save_array_atomic(target, np.arange(3))

    def broken_save(f, arr):
        f.write(b"\x93NUMPY partial")
        raise OSError("disk full")

    monkeypatch.setattr(np, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        save_array_atomic(target, np.arange(10))
    monkeypatch.undo()
    np.testing.assert_array_equal(np.load(target), np.arange(3))
    assert [p.name for p in tmp_path.iterdir()] == ["a.npy"]


def test_cache_survives_a_killed_writer(tmp_path):
    """SIGKILL a process in the middle of writing a 400 MB array: the cache then holds either nothing or the
    complete array, never a truncated file that a later run would load."""
    script = textwrap.dedent(f"""
        import numpy as np, sys
        from embeval_nb.core import cached_array
        print("start", flush=True)
        cached_array("big", lambda: np.ones(50_000_000), directory={str(tmp_path)!r})
        print("done", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "start"
    deadline = time.time() + 60
    while time.time() < deadline and not any(p.suffix == ".tmp" for p in tmp_path.iterdir()):
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL); proc.wait()
    final = tmp_path / "big.npy"
    finished = final.exists()
    if finished:  # the writer won the race: the file must be whole
        assert np.load(final).shape == (50_000_000,)
    else:  # killed mid-write: only the temporary file is left
        assert any(p.suffix == ".tmp" for p in tmp_path.iterdir())
    calls = []
    out = cached_array("big", lambda: calls.append(1) or np.ones(50_000_000), directory=tmp_path)
    assert out.shape == (50_000_000,) and out.sum() == 50_000_000
    assert calls == ([] if finished else [1])


def test_record_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEVAL_RECORD_FILE", str(tmp_path / "r.json"))
    record("err", np.float32(0.5)); record("table", {"a": np.arange(2)})
    assert read_records() == {"err": 0.5, "table": {"a": [0, 1]}}
