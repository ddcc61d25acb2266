"""cache: atomic writes, content keys, and `cached` round-tripping every stored format (npy, npz, sparse.npz, parquet,
json); a changed input, name or version computes again; a torn entry of any format is recomputed with a CacheWarning
naming the file; the folder comes from the directory argument, else $EMBEVAL_CACHE."""
import re, signal, subprocess, sys, textwrap, time, warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from embeval_nb.cache import CacheWarning, atomic_write, cache_dir, cached, content_key


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
