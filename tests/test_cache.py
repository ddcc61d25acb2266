"""cache: atomic writes whose files follow the umask, the lock that serialises read-modify-write, content keys, and
`cached` round-tripping every stored format (npy, npz, sparse.npz, parquet, json); a changed input, name or version
computes again; a torn entry of any format is recomputed with a CacheWarning naming the file; several processes
caching into one folder at once lose nothing; the folder comes from the directory argument, else $EMBEVAL_CACHE."""
import json, os, re, signal, stat, subprocess, sys, textwrap, threading, time, warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from embeval_nb.cache import CacheWarning, atomic_write, cache_dir, cached, content_key, locked


def run_at_once(script: str, n: int, *args) -> list[str]:
    """Run `n` Python processes of `script`, which defines `work(i, *args)`, with `work` starting in all of them at
    the same moment (each signals it is ready, then waits for the word to go); their outputs, or the test fails with
    the stderr of a process that failed. `i` is the process's index 0..n-1, `args` are passed as strings."""
    script += "\nimport sys\nprint('ready', flush=True); sys.stdin.readline(); work(int(sys.argv[1]), *sys.argv[2:])\n"
    procs = [subprocess.Popen([sys.executable, "-c", script, str(i), *map(str, args)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(n)]
    for p in procs: assert p.stdout.readline().strip() == "ready", p.communicate()[1]
    for p in procs: p.stdin.write("go\n"); p.stdin.flush()
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), "\n".join(err for _, err in outs)
    return [out for out, _ in outs]


def modes_under(umask: int, script: str, folder) -> dict:
    """Run `script` in a process with `umask`, with `folder` as sys.argv[1]; the script prints a JSON dict
    {name: path} of files it wrote there, and this returns {name: permission bits}."""
    out = subprocess.run([sys.executable, "-c", script, str(folder)], umask=umask, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return {k: stat.S_IMODE(os.stat(v).st_mode) for k, v in json.loads(out.stdout.splitlines()[-1]).items()}


# --- moved from test_core.py ------------------------------------------------------------------------

def test_content_key_is_stable_and_distinguishes():
    assert content_key("a", 1) == content_key("a", 1) != content_key("a", 2)


def test_cached_computes_once(tmp_path):
    calls = []
    f = lambda: calls.append(1) or np.arange(4.0)
    np.testing.assert_array_equal(cached("x", f, version=0, directory=tmp_path), np.arange(4.0))
    np.testing.assert_array_equal(cached("x", f, version=0, directory=tmp_path), np.arange(4.0))
    assert calls == [1]


def test_failed_write_leaves_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "a.npy"
    atomic_write(target, lambda f: np.save(f, np.arange(3)))

    def broken_write(f):
        f.write(b"\x93NUMPY partial")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_write(target, broken_write)
    np.testing.assert_array_equal(np.load(target), np.arange(3))
    assert [p.name for p in tmp_path.iterdir()] == ["a.npy"]


def test_cache_survives_a_killed_writer(tmp_path):
    """SIGKILL a process in the middle of writing a 400 MB array: the cache then holds either nothing or the
    complete array, never a truncated file that a later run would load (or have to warn about)."""
    script = textwrap.dedent(f"""
        import numpy as np, sys
        from embeval_nb.cache import cached
        print("start", flush=True)
        cached("big", lambda: np.ones(50_000_000), version=0, directory={str(tmp_path)!r})
        print("done", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "start"
    deadline = time.time() + 60
    while time.time() < deadline and not any(tmp_path.rglob("*.tmp")):
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL); proc.wait()
    finals = list(tmp_path.rglob("*.npy"))
    finished = bool(finals)
    if finished:  # the writer won the race: the file must be whole
        assert len(finals) == 1 and np.load(finals[0]).shape == (50_000_000,)
    else:  # killed mid-write: only the temporary file is left
        assert any(tmp_path.rglob("*.tmp"))
    calls = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)           # no torn entry to recover from
        out = cached("big", lambda: calls.append(1) or np.ones(50_000_000), version=0, directory=tmp_path)
    assert out.shape == (50_000_000,) and out.sum() == 50_000_000
    assert calls == ([] if finished else [1])


# --- one value of every stored format ---------------------------------------------------------------

def _values():
    rng = np.random.default_rng(0)
    return {
        "npy": (np.float32(rng.normal(size=(4, 3))), ".npy"),
        "npy-int": (np.arange(7, dtype=np.int16), ".npy"),
        "npy-str": (np.array(["a", "bc", ""]), ".npy"),
        "npz": ({"words": np.array(["x", "y"]), "vectors": rng.normal(size=(2, 5)), "ids": np.arange(2)}, ".npz"),
        "sparse": (sp.random(6, 5, density=0.4, random_state=1, format="csr"), ".sparse.npz"),
        "frame": (pd.DataFrame({"s": ["x", "y", "z"], "n": [1, 2, 3], "f": [0.5, np.nan, 1e300]}), ".parquet"),
        "json": ({"k": [1, 2.5, None, "t"], "nested": {"a": True}}, ".json"),
        "json-list": ([0.1, 1e-300, -2], ".json"),
        "json-scalar": (3.25, ".json"),
    }


def _same(a, b):
    "Whether two cached values are equal, type and contents."
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if sp.issparse(a):
        return sp.issparse(b) and b.format == "csr" and a.shape == b.shape and a.dtype == b.dtype and (a != b).nnz == 0
    if isinstance(a, pd.DataFrame):
        return isinstance(b, pd.DataFrame) and a.equals(b) and list(a.dtypes) == list(b.dtypes)
    if isinstance(a, dict) and a and all(isinstance(v, np.ndarray) for v in a.values()):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("kind", list(_values()))
def test_cached_round_trips_every_format(tmp_path, kind):
    value, suffix = _values()[kind]
    calls = []
    compute = lambda: calls.append(1) or value
    cold = cached("demo", compute, kind, version=3, directory=tmp_path)
    warm = cached("demo", compute, kind, version=3, directory=tmp_path)
    assert calls == [1] and cold is value and _same(value, warm)
    (entry,) = (tmp_path / "demo").iterdir()
    assert entry.name.endswith(suffix) and entry.name[:-len(suffix)] == content_key("demo", 3, kind)
    assert re.fullmatch(r"[0-9a-f]{32}", entry.name[:-len(suffix)])


def test_cached_frame_keeps_its_index(tmp_path):
    """A frame whose index carries data (words, a named index) must come back from the cache as it was computed: a
    warm run returning a different frame than a cold one changes results silently."""
    f = pd.DataFrame({"n": [1, 2]}, index=pd.Index(["x", "y"], name="word"))
    cold = cached("frame", lambda: f, version=0, directory=tmp_path)
    warm = cached("frame", lambda: f, version=0, directory=tmp_path)
    assert cold.equals(f)
    assert warm.index.tolist() == ["x", "y"] and warm.index.name == "word"


def test_cached_series_round_trips(tmp_path):
    """Every pandas object is routed to the parquet format (content_key accepts a Series too); a Series must store
    and come back, not fail inside the writer."""
    s = pd.Series([1.5, 2.5], name="x")
    cold = cached("series", lambda: s, version=0, directory=tmp_path)
    warm = cached("series", lambda: s, version=0, directory=tmp_path)
    assert cold is s and np.array_equal(np.asarray(warm).ravel(), s.to_numpy())


def test_a_changed_input_name_or_version_computes_again(tmp_path):
    calls = []
    def run(name, *inputs, version=0):
        return cached(name, lambda: calls.append((name, inputs, version)) or len(calls), *inputs, version=version,
                      directory=tmp_path)
    x = np.arange(5.0)
    assert run("a", x) == 1 and run("a", x.copy()) == 1                        # equal content: the same entry
    y = x.copy(); y[3] = np.nextafter(y[3], 10)
    assert run("a", y) == 2                                                     # one bit of one input differs
    assert run("a", x.astype(np.float32)) == 3                                  # the dtype is part of the key
    assert run("a", x, version=1) == 4 and run("a", x, version=0) == 1         # a new version; the old entry stays
    assert run("b", x) == 5                                                     # another name, another folder
    assert run("a", x, "extra") == 6 and run("a", x, "extra") == 6
    assert run("a", {"p": 1, "q": 2}) == 7 and run("a", {"q": 2, "p": 1}) == 7  # dict order does not matter
    assert len(calls) == 7
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]
    assert len(list((tmp_path / "a").iterdir())) == 6


def test_version_must_be_a_non_negative_integer(tmp_path):
    for bad, error in [(1.0, TypeError), (True, TypeError), ("1", TypeError), (None, TypeError), (-1, ValueError)]:
        with pytest.raises(error, match="^version must be an integer"):
            cached("v", lambda: 1, version=bad, directory=tmp_path)
    assert cached("v", lambda: 1, version=np.int64(2), directory=tmp_path) == 1


def _torn(path):
    "Cut a file short, as a full disk or an interrupted copy would."
    data = path.read_bytes()
    path.write_bytes(data[:max(1, len(data) // 2)])


@pytest.mark.parametrize("kind", list(_values()))
def test_a_torn_entry_warns_naming_the_file_and_is_computed_again(tmp_path, kind):
    value, suffix = _values()[kind]
    cached("demo", lambda: value, kind, version=0, directory=tmp_path)
    (entry,) = (tmp_path / "demo").iterdir()
    _torn(entry)
    calls = []
    with pytest.warns(CacheWarning, match=re.escape(str(entry))):
        out = cached("demo", lambda: calls.append(1) or value, kind, version=0, directory=tmp_path)
    assert calls == [1] and out is value
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)                            # stored again, whole
        again = cached("demo", lambda: calls.append(2) or value, kind, version=0, directory=tmp_path)
    assert calls == [1] and _same(value, again)
    assert [p.name for p in (tmp_path / "demo").iterdir()] == [entry.name]   # no stray temporary file


def test_a_foreign_or_empty_file_under_the_entry_name_is_replaced(tmp_path):
    stem = tmp_path / "demo" / content_key("demo", 0)
    stem.parent.mkdir()
    for junk in (b"", b"not a numpy file at all"):
        path = stem.with_name(stem.name + ".npy")
        path.write_bytes(junk)
        with pytest.warns(CacheWarning, match=re.escape(path.name)):
            out = cached("demo", lambda: np.arange(3), version=0, directory=tmp_path)
        np.testing.assert_array_equal(out, np.arange(3))
        np.testing.assert_array_equal(np.load(path), np.arange(3))


# --- where the cache lives --------------------------------------------------------------------------

def test_cache_dir_argument_then_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEVAL_CACHE", str(tmp_path / "env"))
    assert cache_dir() == tmp_path / "env" and (tmp_path / "env").is_dir()
    assert cache_dir(tmp_path / "arg" / "deeper") == tmp_path / "arg" / "deeper" and (tmp_path / "arg" / "deeper").is_dir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir("~/c") == tmp_path / "home" / "c"


def test_cached_uses_embeval_cache_when_no_directory_is_given(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEVAL_CACHE", str(tmp_path / "env"))
    cached("envdemo", lambda: [1, 2], "k", version=0)
    assert [p.name for p in (tmp_path / "env" / "envdemo").iterdir()] == [content_key("envdemo", 0, "k") + ".json"]
    cached("argdemo", lambda: [1, 2], "k", version=0, directory=tmp_path / "arg")
    assert not (tmp_path / "env" / "argdemo").exists() and (tmp_path / "arg" / "argdemo").is_dir()
    calls = []
    monkeypatch.setenv("EMBEVAL_CACHE", str(tmp_path / "other"))                # another folder: nothing stored there
    assert cached("envdemo", lambda: calls.append(1) or [1, 2], "k", version=0) == [1, 2] and calls == [1]


# --- several processes at once -----------------------------------------------------------------------

_CACHING = textwrap.dedent("""
    import warnings, numpy as np
    from embeval_nb.cache import CacheWarning, cached
    def work(i, folder, n_shared, n_own):
        warnings.simplefilter("error", CacheWarning)                  # a torn entry read back would warn
        shared = np.random.default_rng(int(i)).permutation(int(n_shared))    # every process, in its own order
        for k in shared:
            out = cached("shared", lambda: np.full(200_000, k, dtype=np.int64), int(k), version=0, directory=folder)
            assert out.shape == (200_000,) and (out == k).all(), (k, out[:3])
        for k in range(int(n_own)):
            out = cached("own", lambda: {"who": [int(i), k]}, int(i), k, version=0, directory=folder)
            assert out == {"who": [int(i), k]}, out
""")


def test_processes_caching_into_one_folder_at_once_lose_nothing(tmp_path):
    """Three processes compute and store the same 40 entries (each in its own order) and 30 entries of their own
    into one folder at once: every value they get, stored or read back, is whole and right; afterwards every entry is
    there exactly once, readable, and no temporary file is left. The shared entries are 1.6 MB, large enough that a
    writer which wrote under the entry's own name (not through a renamed temporary file) is caught being read torn."""
    run_at_once(_CACHING, 3, tmp_path, 40, 30)
    shared, own = sorted((tmp_path / "shared").iterdir()), sorted((tmp_path / "own").iterdir())
    assert [p.name for p in shared] == sorted(content_key("shared", 0, k) + ".npy" for k in range(40))
    assert [p.name for p in own] == sorted(content_key("own", 0, i, k) + ".json" for i in range(3) for k in range(30))
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        for k in range(40):
            assert (cached("shared", lambda: None, k, version=0, directory=tmp_path) == k).all()
        assert all(cached("own", lambda: None, i, k, version=0, directory=tmp_path) == {"who": [i, k]}
                   for i in range(3) for k in range(30))
    assert not list(tmp_path.rglob("*.tmp"))


def test_locked_excludes_other_threads_and_processes(tmp_path):
    """While one holder is inside `locked(path)`, another thread or process waits at its `with`; the lock is the
    file `<path>.lock` beside `path`, which stays (and `path` itself is neither created nor touched)."""
    target, inside = tmp_path / "sub" / "r.json", []
    def hold(name, seconds):
        with locked(target):
            inside.append(f"{name} in"); time.sleep(seconds); inside.append(f"{name} out")
    threads = [threading.Thread(target=hold, args=(n, 0.05)) for n in "abc"]
    for t in threads: t.start()
    for t in threads: t.join()
    assert [x.split()[1] for x in inside] == ["in", "out"] * 3                 # never two inside at once
    assert [p.name for p in target.parent.iterdir()] == ["r.json.lock"]
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from embeval_nb.cache import locked\n"
                               f"with locked({str(target)!r}): print('held', flush=True); time.sleep(0.5)"],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    start = time.perf_counter()
    with locked(target): waited = time.perf_counter() - start
    holder.wait()
    assert waited > 0.2, waited


_MODES = textwrap.dedent("""
    import json, os, sys, numpy as np
    from embeval_nb.cache import _UMASK_AT_IMPORT, _umask, atomic_write, cached, locked
    d = sys.argv[1]
    assert _umask() == _umask("/no/such/status") == _UMASK_AT_IMPORT == os.umask(_UMASK_AT_IMPORT), _umask()
    cached("demo", lambda: np.arange(3), version=0, directory=d)
    with locked(f"{d}/r.json"): pass
    print(json.dumps({"atomic": str(atomic_write(f"{d}/a.bin", lambda f: f.write(b"x"))),
                      "entry": str(next(os.scandir(f"{d}/demo")).path), "lock": f"{d}/r.json.lock"}))
""")


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002], ids=oct)
def test_written_files_follow_the_umask(tmp_path, umask):
    """Files written through atomic_write (cache entries, records) and lock files get the mode a plain `open` gives,
    0o666 less the umask, not mkstemp's private 0600; the umask is read from /proc/self/status, else as at import."""
    assert modes_under(umask, _MODES, tmp_path) == dict.fromkeys(["atomic", "entry", "lock"], 0o666 & ~umask)


# --- atomic writes and content keys -----------------------------------------------------------------

def test_atomic_write_creates_folders_and_replaces_whole_files(tmp_path):
    target = tmp_path / "a" / "b" / "c.bin"
    assert atomic_write(target, lambda f: f.write(b"one")) == target and target.read_bytes() == b"one"
    atomic_write(target, lambda f: f.write(b"two, longer"))
    assert target.read_bytes() == b"two, longer"
    with pytest.raises(KeyboardInterrupt):                                      # even an interrupt leaves no temporary
        atomic_write(target, lambda f: f.write(b"half") and (_ for _ in ()).throw(KeyboardInterrupt))
    assert target.read_bytes() == b"two, longer" and [p.name for p in target.parent.iterdir()] == ["c.bin"]


def test_content_key_distinguishes_types_and_lengths():
    import collections, dataclasses, pathlib
    keys = [content_key(x) for x in (1, 1.0, "1", b"1", True, None, [1], (1,), np.int64(1), np.array([1]),
                                     np.array([1.0]), np.array([1], np.int32), [[1]], {"1": 1})]
    assert content_key(1) == content_key(np.int64(1)) and content_key(1.0) == content_key(np.float64(1.0))
    assert content_key([1]) == content_key((1,))                               # a sequence is a sequence
    distinct = {k for k in keys}
    assert len(distinct) == len(keys) - 2
    assert content_key("ab", "c") != content_key("a", "bc") != content_key("abc")
    assert content_key(0.0) != content_key(-0.0) and content_key(np.nan) == content_key(float("nan"))
    assert re.fullmatch(r"[0-9a-f]{32}", content_key())
    P = collections.namedtuple("P", "a b")

    @dataclasses.dataclass
    class D:
        a: int
        b: int
    assert content_key(P(1, 2)) == content_key(P(1, 2)) != content_key(D(1, 2)) != content_key({"a": 1, "b": 2})
    assert content_key(pathlib.Path("/x/y")) != content_key("/x/y")
    assert content_key(sp.csr_matrix(np.eye(2))) != content_key(sp.csr_matrix(np.eye(2) * 2))
    assert content_key(pd.DataFrame({"a": [1]})) != content_key(pd.DataFrame({"b": [1]}))
    for bad in (object(), {1, 2}, np.array([object()])):
        with pytest.raises(TypeError, match="cannot build a content key"):
            content_key(bad)


def test_content_key_is_the_same_in_another_process():
    out = subprocess.run([sys.executable, "-c", "from embeval_nb.cache import content_key; import numpy as np; "
                          "print(content_key('a', 1, 0.1, np.arange(3), {'b': [None, True]}))"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == content_key("a", 1, 0.1, np.arange(3), {"b": [None, True]})
