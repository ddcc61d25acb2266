"""checks: every argument check lets good values through (Python and numpy scalars alike, converted to plain Python
types), rejects a bool where a number is needed, and turns each wrong type into a TypeError and each bad value into a
ValueError whose message names the argument."""
import fractions

import numpy as np
import pytest

from embeval_nb.checks import (as_points, check_bool, check_choice, check_int, check_n_jobs, check_real, check_rows,
                               check_same_columns, check_seed, make_rng)


# --- moved from test_core.py ------------------------------------------------------------------------

def test_make_rng_repeats_for_a_seed():
    assert np.array_equal(make_rng(7).normal(size=5), make_rng(7).normal(size=5))
    assert not np.array_equal(make_rng(7).normal(size=5), make_rng(8).normal(size=5))


def test_as_points_converts_and_keeps_values():
    X = as_points([[1, 2], [3, 4]])
    assert X.dtype == np.float64 and X.flags.c_contiguous and X.tolist() == [[1, 2], [3, 4]]
    F = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    assert as_points(F).flags.c_contiguous and np.array_equal(as_points(F), F)
    assert as_points(np.zeros((0, 3))).shape == (0, 3)
    assert as_points(np.ones((2, 2)), dtype=np.float32).dtype == np.float32


@pytest.mark.parametrize("bad,error,msg", [
    (None, TypeError, "Y is None"), (np.ones(3), ValueError, r"shape \(3,\)"), (np.ones((1, 2, 2)), ValueError, "2-D"),
    ([["a", "b"]], TypeError, r"Y must be a 2-D \(n, d\) array of numbers, got list"),
    ([[1.0, np.inf]], ValueError, "row 0"), ([[0.0, 1.0], [np.nan, 0.0]], ValueError, "row 1"),
    (np.ones((1, 2), complex), TypeError, "array of numbers, got ndarray of dtype complex128")])
def test_as_points_names_the_problem(bad, error, msg):
    with pytest.raises(error, match=msg):
        as_points(bad, "Y")


def test_as_points_min_rows_and_nonfinite_opt_out():
    with pytest.raises(ValueError, match="at least 2 rows"):
        as_points(np.ones((1, 3)), min_rows=2)
    assert np.isnan(as_points([[np.nan]], finite=False)).all()


@pytest.mark.parametrize("bad", [2.0, "2", True, None, np.float64(2), [2]])
def test_check_int_rejects_what_is_not_an_integer(bad):
    with pytest.raises(TypeError, match=r"^k must be an integer, got "):
        check_int(bad, "k")


def test_check_int_and_n_jobs_ranges():
    assert [check_int(v, "k", low=1, high=3) for v in (1, np.int64(3), np.uint8(2))] == [1, 3, 2]
    with pytest.raises(ValueError, match=r"k must be an integer in 1\.\.3, got 4"):
        check_int(4, "k", low=1, high=3)
    with pytest.raises(ValueError, match="size must be an integer <= 10, got 11"):
        check_int(11, "size", high=10)
    assert [check_n_jobs(v) for v in (None, 1, 4, -1, -2)] == [1, 1, 4, -1, -2]
    with pytest.raises(ValueError, match="n_jobs must be a positive number of workers or negative"):
        check_n_jobs(0)
    with pytest.raises(TypeError, match="n_jobs must be an integer"):
        check_n_jobs("2")


# --- check_int --------------------------------------------------------------------------------------

INTEGERS = [0, 7, -3, 10 ** 30, np.int8(-5), np.int16(7), np.int32(7), np.int64(-3), np.uint8(200), np.uint16(7),
            np.uint32(7), np.uint64(2 ** 63 + 1)]


@pytest.mark.parametrize("value", INTEGERS, ids=repr)
def test_check_int_returns_a_python_int_of_the_same_value(value):
    out = check_int(value, "count")
    assert type(out) is int and out == int(value)


@pytest.mark.parametrize("bad", [True, False, np.bool_(True), 2.0, 2.5, np.float32(2), float("nan"), float("inf"),
                                 "2", b"2", None, [2], (2,), np.array(2), np.array([2]), 2 + 0j,
                                 fractions.Fraction(2, 1)], ids=repr)
def test_check_int_type_errors_name_the_argument(bad):
    with pytest.raises(TypeError, match=r"^n_boot must be an integer, got "):
        check_int(bad, "n_boot")


@pytest.mark.parametrize("value,low,high,ok", [
    (1, 1, 3, True), (3, 1, 3, True), (0, 1, 3, False), (4, 1, 3, False),          # both ends closed
    (-5, None, 0, True), (1, None, 0, False), (10 ** 20, 0, None, True), (-1, 0, None, False),
    (np.uint64(2 ** 64 - 1), None, 2 ** 63, False), (np.int64(-2 ** 63), -2 ** 63, None, True)])
def test_check_int_range_is_closed_at_both_ends(value, low, high, ok):
    if ok:
        assert check_int(value, "k", low=low, high=high) == int(value)
    else:
        with pytest.raises(ValueError, match=r"^k must be an integer .*got " + str(int(value))):
            check_int(value, "k", low=low, high=high)


def test_check_int_range_words_and_reason():
    for value, low, high, words in [(-7, 1, 5, r"in 1\.\.5"), (-7, 0, None, ">= 0"), (70, None, 9, "<= 9")]:
        with pytest.raises(ValueError, match=f"^k must be an integer {words}, got {value} \\(it says why\\)$"):
            check_int(value, "k", low=low, high=high, why="it says why")


# --- check_real -------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [0, 1, -2.5, 1e-300, 1e300, np.float16(0.5), np.float32(0.25), np.float64(3.5),
                                   np.int64(4), np.uint8(3), fractions.Fraction(1, 4)], ids=repr)
def test_check_real_returns_a_python_float_of_the_same_value(value):
    out = check_real(value, "alpha")
    assert type(out) is float and out == float(value)


@pytest.mark.parametrize("bad", [True, False, np.bool_(False), None, "0.5", b"1", [0.5], np.array(0.5), 1j,
                                 np.complex128(1)], ids=repr)
def test_check_real_type_errors_name_the_argument(bad):
    with pytest.raises(TypeError, match=r"^alpha must be a real number, got "):
        check_real(bad, "alpha")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), np.float32("nan"), np.float64("-inf")],
                         ids=repr)
def test_check_real_rejects_nan_and_infinity_with_a_value_error(bad):
    with pytest.raises(ValueError, match=r"^alpha must be a finite number, got "):
        check_real(bad, "alpha")


@pytest.mark.parametrize("value,kw,ok", [
    (0.0, dict(low=0), True), (0.0, dict(low=0, low_open=True), False), (1e-300, dict(low=0, low_open=True), True),
    (1.0, dict(high=1), True), (1.0, dict(high=1, high_open=True), False),
    (np.nextafter(1.0, 0), dict(low=0, high=1, low_open=True, high_open=True), True),
    (-0.5, dict(low=0, high=1), False), (1.5, dict(low=0, high=1), False)])
def test_check_real_open_and_closed_ends(value, kw, ok):
    if ok:
        assert check_real(value, "level", **kw) == value
    else:
        with pytest.raises(ValueError, match=r"^level must be a number "):
            check_real(value, "level", **kw)


def test_check_real_range_words():
    for value, kw, words in [(5, dict(low=0, high=1, low_open=True, high_open=True), r"in \(0, 1\)"),
                             (5, dict(low=0, high=1), r"in \[0, 1\]"), (-5, dict(low=0, low_open=True), "> 0"),
                             (5, dict(high=2, high_open=True), "< 2"), (-5, dict(low=1), ">= 1")]:
        with pytest.raises(ValueError, match=f"^level must be a number {words}, got {value} \\(why\\)$"):
            check_real(value, "level", **kw, why="why")


def test_check_real_too_large_an_integer_is_a_value_error():
    """A Python integer beyond the largest double is a real number whose value is out of range: ValueError naming
    the argument (the policy), not the OverflowError that float() raises."""
    with pytest.raises(ValueError, match="^alpha must be"):
        check_real(10 ** 400, "alpha")


# --- check_choice and check_bool --------------------------------------------------------------------

def test_check_choice_passes_known_values_through():
    assert check_choice("mean", "pooling", ("mean", "cls")) == "mean"
    assert check_choice(None, "norm", ("l1", "l2", None)) is None
    assert check_choice(np.str_("cls"), "pooling", ["mean", "cls"]) == "cls"


@pytest.mark.parametrize("bad", ["max", "", "MEAN", None, 3, 1.5, ["mean"], {"mean": 1}, ("mean",)], ids=repr)
def test_check_choice_lists_the_choices(bad):
    """An unknown option is a ValueError whatever its type (the notebook's rule: an unknown option is a bad value)."""
    with pytest.raises(ValueError, match=r"^pooling must be one of 'mean', 'cls', got "):
        check_choice(bad, "pooling", ("mean", "cls"))


@pytest.mark.parametrize("bad", [np.array(["mean", "cls"]), np.array(["mean"])], ids=["two-names", "one-name"])
def test_check_choice_rejects_an_array_of_names(bad):
    """An array is not one of the option strings, just as the list ['mean'] is not: the same ValueError naming the
    argument, not numpy's 'truth value of an array is ambiguous' (two names) or a silent pass (one name)."""
    with pytest.raises(ValueError, match=r"^pooling must be one of 'mean', 'cls', got "):
        check_choice(bad, "pooling", ("mean", "cls"))


@pytest.mark.parametrize("value", [True, False, np.bool_(True), np.bool_(False)], ids=repr)
def test_check_bool_passes_python_and_numpy_bools(value):
    out = check_bool(value, "exclude_self")
    assert type(out) is bool and out == bool(value)


@pytest.mark.parametrize("bad", [0, 1, np.int64(1), 1.0, "yes", "no", "True", None, [True], np.array([True])], ids=repr)
def test_check_bool_rejects_everything_else(bad):
    with pytest.raises(TypeError, match=r"^exclude_self must be True or False, got "):
        check_bool(bad, "exclude_self")


# --- seeds and workers ------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [None, 0, 12345, np.int64(3), np.uint32(3), 2 ** 100, [0, 7], (1, 2, 3),
                                  np.array([4, 5]), np.random.SeedSequence(9)], ids=repr)
def test_check_seed_passes_seeds_through_unchanged(seed):
    assert check_seed(seed) is seed


def test_make_rng_from_each_kind_of_seed():
    g = np.random.default_rng(1)
    assert make_rng(g) is g
    assert make_rng(np.int64(5)).integers(10 ** 9) == make_rng(5).integers(10 ** 9) == np.random.default_rng(5).integers(10 ** 9)
    assert make_rng([3, 1]).integers(10 ** 9) == np.random.default_rng([3, 1]).integers(10 ** 9)
    assert make_rng([3, 1]).integers(10 ** 9) != make_rng([3, 2]).integers(10 ** 9)
    ss = np.random.SeedSequence(4)
    assert make_rng(ss).integers(10 ** 9) == np.random.default_rng(np.random.SeedSequence(4)).integers(10 ** 9)
    assert isinstance(make_rng(None), np.random.Generator)


@pytest.mark.parametrize("bad,error", [(1.5, TypeError), ("0", TypeError), (True, TypeError), (np.bool_(False), TypeError),
                                       (-1, ValueError), ([0, -1], ValueError), ([0, 1.0], TypeError), ([[1, 2]], TypeError),
                                       (np.random.RandomState(0), TypeError)],
                         ids=lambda x: type(x).__name__ if isinstance(x, np.random.RandomState) else repr(x))
def test_check_seed_errors_name_the_argument(bad, error):
    with pytest.raises(error, match=r"^random_state must be an integer"):
        check_seed(bad, "random_state")
    with pytest.raises(error, match=r"^seed must be an integer"):
        make_rng(bad)


def test_check_n_jobs_reads_joblib_counts():
    for v in (1, 2, 64, -1, -2, -8, np.int64(3), np.int32(-1)):
        out = check_n_jobs(v)
        assert type(out) is int and out == int(v)
    assert check_n_jobs(None) == 1
    for bad in (True, 1.0, "1", [1]):
        with pytest.raises(TypeError, match="^n_jobs must be an integer"):
            check_n_jobs(bad)
    with pytest.raises(ValueError, match="^n_jobs .*got 0$"):
        check_n_jobs(np.int64(0))


# --- row indices ------------------------------------------------------------------------------------

@pytest.mark.parametrize("rows", [[2, 0, 1], (0,), np.array([1, 1], np.int32), np.array([4], np.uint8), range(3)], ids=repr)
def test_check_rows_gives_int64_with_the_same_values(rows):
    out = check_rows(rows, "queries", 5)
    assert out.dtype == np.int64 and out.ndim == 1 and out.tolist() == [int(r) for r in rows]


def test_check_rows_empty():
    for empty in ([], (), np.array([], np.float64), np.zeros(0, np.int64)):
        out = check_rows(empty, "order", 4)
        assert out.dtype == np.int64 and out.shape == (0,)
        with pytest.raises(ValueError, match="^order is empty"):
            check_rows(empty, "order", 4, allow_empty=False)


@pytest.mark.parametrize("bad,error,msg", [
    (None, TypeError, "^queries must be a 1-D sequence of row indices, got NoneType"),
    (3, TypeError, "^queries must be a 1-D sequence of row indices, got int"),
    ("012", TypeError, "^queries must be a 1-D sequence"), (b"\x00", TypeError, "^queries must be a 1-D sequence"),
    (np.int64(1), TypeError, "^queries must be a 1-D sequence"),
    ([True, False], TypeError, "^queries must hold integer row indices, got dtype bool"),
    ([0.0, 1.0], TypeError, "^queries must hold integer row indices, got dtype float64"),
    (["0"], TypeError, "^queries must hold integer row indices"),
    ([[0, 1]], ValueError, r"^queries must be a 1-D sequence of row indices, got shape \(1, 2\)"),
    ([0, 5], ValueError, r"^queries\[1\] = 5 is out of range for 5 rows \(0\.\.4\)"),
    ([-1, 0], ValueError, r"^queries\[0\] = -1 is out of range for 5 rows")], ids=repr)
def test_check_rows_errors_name_the_argument(bad, error, msg):
    with pytest.raises(error, match=msg):
        check_rows(bad, "queries", 5)


def test_check_rows_ragged_rows_are_named():
    """Nested lists of different lengths are not a 1-D sequence of indices: an error naming `queries` (numpy's own
    'inhomogeneous shape' ValueError names nothing)."""
    with pytest.raises((TypeError, ValueError), match="^queries "):
        check_rows([[0], [1, 2]], "queries", 5)


def test_check_rows_unique():
    assert check_rows([3, 1, 0], "queries", 5, unique=True).tolist() == [3, 1, 0]
    assert check_rows([1, 1], "queries", 5).tolist() == [1, 1]                 # repeats allowed unless unique
    with pytest.raises(ValueError, match=r"^queries repeats row 2 \(positions \[1, 3\]\)"):
        check_rows([0, 2, 4, 2, 4], "queries", 5, unique=True)


# --- matrices of points -----------------------------------------------------------------------------

@pytest.mark.parametrize("value", [[[1, 2]], np.array([[1, 2]], np.int8), np.array([[True, False]]),
                                   np.array([[0.5, 1.5]], np.float32), np.array([[1, 2]], np.uint64),
                                   np.arange(6.0).reshape(2, 3)[:, ::2]], ids=repr)
def test_as_points_accepts_numbers_of_every_kind(value):
    X = as_points(value)
    assert X.dtype == np.float64 and X.flags.c_contiguous and X.ndim == 2
    np.testing.assert_array_equal(X, np.asarray(value, dtype=np.float64))
    assert as_points(value, dtype=np.float32).dtype == np.float32


@pytest.mark.parametrize("bad,error", [("abc", TypeError), (np.array([[1, 2]], object), TypeError),
                                       ([[1], [1, 2]], TypeError), ({"a": 1}, TypeError), (np.ones((2, 2), "U1"), TypeError),
                                       (np.ones(0), ValueError), (np.ones((2, 1, 1)), ValueError),
                                       ([[1.0, -np.inf]], ValueError)], ids=repr)
def test_as_points_errors_name_the_argument(bad, error):
    with pytest.raises(error, match=r"^E "):
        as_points(bad, "E")


def test_as_points_returns_a_copy_only_when_it_must():
    A = np.ones((3, 2))
    assert as_points(A) is A                       # already a C-contiguous float64 matrix: no copy
    assert not np.shares_memory(as_points(A, dtype=np.float32), A)


def test_check_same_columns_names_both():
    check_same_columns(np.ones((3, 4)), np.ones((1, 4)))
    check_same_columns(np.ones((0, 4)), np.ones((5, 4)))
    with pytest.raises(ValueError, match="^queries has 2 columns, corpus has 3$"):
        check_same_columns(np.ones((1, 2)), np.ones((1, 3)), ("queries", "corpus"))
    with pytest.raises(ValueError, match="^X has 2 columns, Y has 3: one embedder$"):
        check_same_columns(np.ones((1, 2)), np.ones((1, 3)), why="one embedder")
