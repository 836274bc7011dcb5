"""nonzero / where(c) / argwhere / flatnonzero / unique, searchsorted / digitize,
histogram / bincount and put_along_axis against jax.numpy: shape, dtype, weak_type and
value of every output, eagerly and under tracehlo.jit (one compile per dtype).

Data-dependent lengths need size= (length= for bincount) under jit, as in JAX;
eagerly they are read from the concrete input."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tracehlo
import tracehlo.numpy as tnp
from numpy_helpers import RNG

pytestmark = pytest.mark.filterwarnings("ignore:scatter inputs have incompatible types")


def agree(fn, *args, eager=True, jit=True):
    """fn(tnp, *args) eagerly and jitted has jax.numpy's outputs exactly: jax.jit's,
    one compile where JAX's own eager calls compile op by op, unless fn does not jit."""
    want = jax.tree_util.tree_leaves(jax.jit(lambda *a: fn(jnp, *a))(*args) if jit
                                     else fn(jnp, *args))
    runs = ([("eager", fn(tnp, *args))] if eager else []) + (
        [("jit", tracehlo.jit(lambda *a: fn(tnp, *a))(*args))] if jit else [])
    for mode, got in runs:
        got = jax.tree_util.tree_leaves(got)
        assert len(got) == len(want), f"{mode}: {len(got)} outputs, not {len(want)}"
        for k, (g, w) in enumerate(zip(got, want)):
            where = f"{mode} output {k}"
            assert (g.shape, g.dtype, g.weak_type) == (w.shape, w.dtype, w.weak_type), \
                f"{where}: {g.shape} {g.dtype} weak={g.weak_type} != " \
                f"{w.shape} {w.dtype} weak={w.weak_type}"
            if np.issubdtype(g.dtype, np.inexact):  # linspace edges may differ by an ulp
                np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6,
                                           err_msg=where)
            else:
                np.testing.assert_array_equal(np.asarray(g), np.asarray(w), err_msg=where)


def sample(dtype):
    """A (3, 4) array with zeros and repeated values."""
    x = RNG.integers(-2, 3, (3, 4))
    return x.astype(bool) if dtype == "bool" else x.astype(dtype)


def _sized(m, x):
    return (m.nonzero(x, size=5), m.nonzero(x, size=14, fill_value=-1),
            m.nonzero(x, size=9, fill_value=(7, 8)), m.where(x, size=3),
            m.argwhere(x, size=13), m.argwhere(x, size=2, fill_value=0),
            m.flatnonzero(x, size=12, fill_value=99), m.nonzero(x[0], size=6),
            m.unique(x, size=7), m.unique(x, size=2),
            m.unique(x, return_index=True, return_inverse=True, return_counts=True, size=6),
            m.unique(x, size=8, fill_value=1, return_counts=True))


def _unsized(m, x):
    return (m.nonzero(x), m.where(x), m.argwhere(x), m.flatnonzero(x), m.unique(x),
            m.unique(x[:, 0], return_index=True, return_inverse=True, return_counts=True),
            m.argwhere(x[0, 0]), m.nonzero(x[:0]), m.unique(x[:0]))


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_nonzero_and_unique(dtype):
    """The sized forms under jit for each dtype, eagerly for int32 only (the same code,
    an op-by-op compile each: 11 s for float32 with JAX's own eager calls)."""
    x = sample(dtype)
    agree(_sized, x, eager=dtype == "int32")
    agree(_unsized, x, jit=False)


def test_unique_nan():
    x = np.array([np.nan, 1, np.nan, -0.0, 0.0, 1], np.float32)
    agree(lambda m, x: (m.unique(x, size=4), m.unique(x, size=6, return_counts=True),
                        m.unique(x, equal_nan=False, size=5)), x)


def _unique_api(m, x, sized):
    kw = [dict(size=6), dict(size=7, fill_value=9), dict(size=3), dict(size=8, fill_value=-1)]
    fns = (m.unique_values, m.unique_counts, m.unique_inverse, m.unique_all)
    return tuple(f(x, **(k if sized else {})) for f, k in zip(fns, kw))


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_unique_array_api(dtype):
    """unique_values, unique_counts, unique_inverse, unique_all (the array API's, in
    JAX): JAX's namedtuples and values, NaNs distinct, with size= and fill_value under
    jit."""
    x = np.array([[np.nan, 1, 2], [1, np.nan, -0.0]], np.float32) if dtype == "float32" \
        else sample(dtype)
    agree(lambda m, x: _unique_api(m, x, True), x)
    agree(lambda m, x: _unique_api(m, x, False), x, jit=False)
    want = _unique_api(jnp, x, True)
    for got in (_unique_api(tnp, x, True),
                tracehlo.jit(lambda x: _unique_api(tnp, x, True))(x)):
        for g, w in zip(got[1:], want[1:]):
            assert (type(g).__name__, g._fields) == (type(w).__name__, w._fields)


def _slices(dtype):
    """(6, 3) with repeated rows and columns; (2, 5, 2) with repeated slices along 1."""
    x = np.array([[1, 0, 1], [0, 2, 0], [1, 0, 1], [0, 2, 2], [0, 2, 0], [1, 0, 1]])
    y = RNG.integers(0, 2, (2, 5, 2))
    return x.astype(dtype), y.astype(dtype)


def _axis_sized(m, x, y):
    return (m.unique(x, axis=0, size=5), m.unique(x, axis=1, size=2),
            m.unique(x, axis=0, return_index=True, return_inverse=True, return_counts=True,
                     size=3),
            m.unique(x, axis=-1, return_index=True, return_inverse=True, return_counts=True,
                     size=5, fill_value=7),
            m.unique(y, axis=1, return_counts=True, size=6, fill_value=-1),
            m.unique(x[:0], axis=0, return_index=True, return_counts=True, size=2,
                     fill_value=1),
            m.unique(x[:, :0], axis=0, return_index=True, return_inverse=True,
                     return_counts=True, size=2, fill_value=0))


def _axis_unsized(m, x, y):
    return (m.unique(x, axis=0),
            m.unique(x, axis=1, return_index=True, return_inverse=True, return_counts=True),
            m.unique(y, axis=1, return_inverse=True), m.unique(y, axis=-1, return_index=True),
            m.unique(x[:0], axis=0, return_index=True, return_inverse=True,
                     return_counts=True),
            m.unique(x[:, :0], axis=0, return_index=True, return_inverse=True,
                     return_counts=True),
            m.unique(x[:, :0], axis=1, return_counts=True))


@pytest.mark.parametrize("dtype", ["int32", "bool"])
def test_unique_along_an_axis(dtype):
    x, y = _slices(dtype)
    agree(_axis_sized, x, y, eager=False)  # eager runs the same code, sized or not
    agree(_axis_unsized, x, y, jit=False)


def test_unique_along_an_axis_nan_and_complex():
    nan = np.nan
    x = np.array([[nan, 1], [0, 1], [nan, 1], [-0.0, 1], [0, nan], [0, nan]], np.float32)
    z = (x + 1j * x[::-1]).astype(np.complex64)
    agree(lambda m, x, z: (m.unique(x, axis=0, size=5, return_counts=True),
                           m.unique(x, axis=0, equal_nan=False, size=6, return_inverse=True),
                           m.unique(x.T, axis=1, size=4, fill_value=9, return_index=True),
                           m.unique(z, axis=0, size=5, return_counts=True)), x, z)

A = np.array([-1.5, 0, 0, 2, 2, 2, 7, np.nan], np.float32)
V = np.array([[2, -9, 0.5, np.nan], [7, 8, 0, -1.5]], np.float32)


def test_searchsorted_and_digitize():
    def fn(m, a, v, ai, vi):
        out = [m.searchsorted(a, v), m.searchsorted(a, v, side="right"),
               m.searchsorted(ai, vi), m.searchsorted(ai, vi, side="right"),
               m.searchsorted(ai, 3), m.searchsorted(a[:0], v),
               m.digitize(v, a[:-1]), m.digitize(v, a[:-1], right=True),
               m.digitize(v, a[-2::-1]), m.digitize(vi, ai[::-1], right=True),
               m.digitize(vi, ai[:0])]
        out += [m.searchsorted(a, v, method=k) for k in
                ("scan", "scan_unrolled", "sort", "compare_all")]
        return out
    ai = np.array([0, 1, 1, 4, 9], np.int32)
    agree(fn, A, V, ai, np.array([[1, -3, 9], [10, 4, 2]], np.int32))


def test_histogram_and_bincount():
    x = np.array([1.5, 2, 2, 3, 4, -1, 4, 0.25], np.float32)
    w = np.linspace(0, 1, 8, dtype=np.float32)
    i = np.array([0, 3, 3, 1, 7, -2, 3], np.int32)
    def fn(m, x, w, i):
        return (m.histogram(x), m.histogram(x, bins=3, range=(0, 4)),
                m.histogram(x, bins=np.array([-1.0, 0, 2, 5], np.float32), weights=w),
                m.histogram(x, bins=4, density=True), m.histogram(x[:1], bins=2),
                m.histogram(i[1:5], bins=3),  # [3, 3, 1, 7]: exact edges 1, 3, 5, 7
                m.bincount(i, length=9), m.bincount(i, length=4),
                m.bincount(i, weights=w[:7], length=8), m.bincount(i, minlength=2, length=5))
    agree(fn, x, w, i)
    agree(lambda m, i: (m.bincount(i), m.bincount(i, minlength=12), m.bincount(i[:0])),
          i, jit=False)


def test_put_along_axis():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    def fn(m, x, v):
        return (m.put_along_axis(x, np.array([[0], [3], [1]]), v[:, :1], axis=1,
                                 inplace=False),
                m.put_along_axis(x, np.array([[2, 0, 1, 1]]), -1.0, axis=0, inplace=False),
                m.put_along_axis(x, np.array([[5, -1]]), v[:1, :2], axis=-1, inplace=False),
                m.put_along_axis(x, np.array([0, 11, 4]), 9.0, axis=None, inplace=False),
                m.put_along_axis(x, np.array([[5]]), 3.0, axis=1, inplace=False,
                                 mode="clip"))
    agree(fn, x, -x)


def test_errors_at_user_line():
    def raises(fn, exc, match, *args):
        for run in (fn, tracehlo.jit(fn)):
            if run is fn and match.startswith("The size"):
                continue  # eager: the size is read from the concrete input
            with pytest.raises(exc, match=match) as info:
                run(*args)
            assert "test_searching.py:" in str(info.value), str(info.value)
    x = sample("float32")
    raises(lambda x: tnp.nonzero(x), Exception, r"The size argument of jnp.nonzero must "
           "be statically specified to use jnp.nonzero within JAX transformations.", x)
    raises(lambda x: tnp.unique(x), Exception, r"The size argument of jnp.unique", x)
    raises(lambda x: tnp.unique(x[:0], axis=0, size=2), ValueError, "for zero-sized "
           "input with nonzero size argument, fill_value must be specified", x)
    raises(lambda x: tnp.where(x), Exception, r"The size argument of jnp.nonzero", x)
    raises(lambda x: tnp.nonzero(x[0, 0]), ValueError, "Calling nonzero on 0d arrays", x)
    raises(lambda x: tnp.where(x, x), ValueError, "Either both or neither of the x and y", x)
    raises(lambda x: tnp.put_along_axis(x, np.array([[0]]), 1.0, axis=0), ValueError,
           "cannot modify arrays in-place, because tracehlo arrays are immutable. Pass "
           "inplace=False", x)
    raises(lambda x: tnp.bincount(x[0]), TypeError, "must have an integer type", x)
    raises(lambda x: tnp.searchsorted(x, x[0]), ValueError, "a should be 1-dimensional", x)
    raises(lambda x: tnp.searchsorted(x[0], 1.0, side="middle"), ValueError, "side=", x)
    raises(lambda x: tnp.digitize(x[0], x), ValueError, "bins must be a 1-dimensional", x)
    with pytest.raises(Exception, match="pass a static `length` argument") as info:
        tracehlo.jit(lambda i: tnp.bincount(i))(np.array([1, 2], np.int32))
    assert "test_searching.py:" in str(info.value)
