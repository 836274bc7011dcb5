"""Indexing under tracehlo.jit (`x[...]`, `x.at[...]`) and the functional forms
(take, take_along_axis, sort, argsort) eagerly and jitted.

Eagerly `x[...]` on a jax.Array is JAX's own indexing, so Tracer indexing is tested
under jit. JAX clamps out-of-bounds gather indices and drops out-of-bounds scatter
updates where NumPy raises: those cases take jax.numpy's values."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tracehlo
from numpy_helpers import bools, check, check_raises, f32, i32

pytestmark = pytest.mark.filterwarnings("ignore:scatter inputs have incompatible types")

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

STATIC = [
    ("int", lambda x: x[1]),
    ("negative int", lambda x: x[-1, -2]),
    ("all ints", lambda x: x[1, 2, 3]),
    ("slice", lambda x: x[:, 1:]),
    ("slice step", lambda x: x[:, ::2, 1::2]),
    ("negative step", lambda x: x[::-1, :, ::-2]),
    ("negative bounds", lambda x: x[:, -2:, -3:-1]),
    ("reverse partial", lambda x: x[:, 2:0:-1]),
    ("empty slice", lambda x: x[:, 2:1]),
    ("past the end slice", lambda x: x[:, 1:10]),
    ("None", lambda x: x[None]),
    ("None middle", lambda x: x[:, None, 1]),
    ("ellipsis", lambda x: x[..., 1]),
    ("ellipsis middle", lambda x: x[0, ..., None, 2]),
    ("ellipsis only", lambda x: x[...]),
    ("array index", lambda x: x[:, np.array([2, 0])]),
    ("negative array", lambda x: x[:, :, np.array([-1, 0, -4])]),
    ("2d array index", lambda x: x[:, np.array([[0, 1], [2, 2]])]),
    ("two arrays", lambda x: x[np.array([0, 1]), np.array([2, 0])]),
    ("two arrays broadcast", lambda x: x[np.array([[0], [1]]), :, np.array([1, 3])]),
    ("int and array", lambda x: x[1, :, np.array([0, 3])]),
    ("separated arrays", lambda x: x[np.array([0, 1]), 1:, np.array([2, 3])]),
    ("array and None", lambda x: x[None, np.array([1, 0])]),
    ("bool mask", lambda x: x[np.array([True, False])]),
    ("bool mask 2d", lambda x: x[np.array([[True, False, True], [False, False, True]])]),
    ("0-d", lambda x: x[0, 0][()]),
    ("bool mask and slice", lambda x: x[np.array([True, True]), 1:]),
    ("bool mask middle", lambda x: x[:, np.array([True, False, True]), ::-1]),
    ("bool mask and array", lambda x: x[np.array([False, True]), :, np.array([1, 2])]),
    ("separated array and int", lambda x: x[np.array([0, 1, 1]), :, 1]),
    ("separated 2d arrays", lambda x: x[np.array([[0], [1]]), ::2, np.array([[1, 3, -1]])]),
    ("arrays around ellipsis", lambda x: x[np.array([1]), ..., np.array([0, -1])]),
    ("adjacent arrays after slice", lambda x: x[:, np.array([2, 0]), np.array([[-1], [1]])]),
    # a scalar bool is a 0-d mask: a new axis of length 1 or 0, indexed like an array
    ("True", lambda x: x[True]),
    ("False", lambda x: x[False]),
    ("ellipsis True", lambda x: x[..., True]),
    ("True None", lambda x: x[True, None]),
    ("True and int", lambda x: x[True, 1]),
    ("True True", lambda x: x[True, True]),
    ("slice True array", lambda x: x[:, True, np.array([0, 1])]),
    ("True slice array", lambda x: x[True, :, np.array([0, 1])]),
    ("array True", lambda x: x[np.array([0, 1]), True]),
]


@pytest.mark.parametrize("name,index", STATIC)
def test_getitem(name, index):
    check(lambda m, x: index(m.asarray(x)), X, eager=False)


def test_list_index():
    """A list indexes like an array (NumPy); jax.numpy rejects it."""
    np.testing.assert_array_equal(tracehlo.jit(lambda x: x[[1, 0, 1]])(X), X[[1, 0, 1]])


def test_concrete_jax_array_indices():
    """A jax.Array mask or index array closed over by a jitted function is concrete."""
    mask, idx = X[:, 0, 0] > 0, np.array([2, 0])
    got = tracehlo.jit(lambda x: (x[jnp.asarray(mask)], x[:, jnp.asarray(idx)]))(X)
    np.testing.assert_array_equal(got[0], X[mask])
    np.testing.assert_array_equal(got[1], X[:, idx])


def test_item_assignment_points_to_at():
    def f(x):
        x[0] = 1
        return x
    line = f.__code__.co_firstlineno + 1  # x[0] = 1
    with pytest.raises(TypeError, match=rf"test_indexing.py:{line}: tracehlo arrays are "
                       r"immutable and do not support in-place item assignment. Instead of "
                       r"x\[idx\] = y, use x = x.at\[idx\].set\(y\) or another .at\[\] "
                       r"method \(set, add, multiply, min, max, get, apply"):
        tracehlo.jit(f)(X)


def test_bool_scalar_index_after_none_as_numpy():
    """x[None, True] is NumPy's (1, 1, 2, 3, 4); JAX 0.10.2 gives (1, 1, 1, 3, 4),
    reading x[0] only (it inserts the bool's axis at the index position, not the axis),
    and raises AssertionError for np.True_."""
    got = tracehlo.jit(lambda x: (x[None, True], x[0, None, False], x[np.True_],
                                  x[np.array(True), ..., None, False]))(X)
    for g, w in zip(got, (X[None, True], X[0, None, False], X[np.True_],
                          X[np.array(True), ..., None, False])):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_getitem_dtypes():
    for x in (i32(3, 4), bools(3, 4)):
        check(lambda m, x: m.asarray(x)[1:, np.array([0, -1])], x, eager=False)


TRACED = [
    ("scalar", lambda x, i: x[i], np.int32(1)),
    ("negative scalar", lambda x, i: x[:, i], np.int32(-1)),
    ("scalar and slice", lambda x, i: x[i, 1:, i], np.int32(1)),
    ("array", lambda x, i: x[i], np.array([1, 0, -1], np.int32)),
    ("array axis 2", lambda x, i: x[..., i], np.array([[3, 0], [1, -2]], np.int32)),
    ("array and scalar", lambda x, i: x[i, 0, i], np.array([0, 1], np.int32)),
]


@pytest.mark.parametrize("name,index,i", TRACED)
def test_getitem_traced_index(name, index, i):
    check(lambda m, x, i: index(m.asarray(x), i), X, i, eager=False)


def test_out_of_bounds_array_index_clamps():
    i = np.array([5, -9, 1], np.int32)
    check(lambda m, x, i: m.asarray(x)[:, i], X, i, eager=False, values="jnp")
    check(lambda m, x, i: m.asarray(x)[i], X, np.int32(7), eager=False, values="jnp")


@pytest.mark.parametrize("get", [
    lambda x, i: x[i], lambda x, i: x[:, i], lambda x, i: x[i, 1:],
    lambda x, i: x.at[i].get(), lambda x, i: x.at[:, i].get(mode="promise_in_bounds")],
    ids=["x[i]", "x[:, i]", "x[i, 1:]", "at.get", "at.get_promise_in_bounds"])
def test_out_of_bounds_array_index_gradient(get):
    """x[i] reads an out-of-bounds index at the clamped element but, as JAX's
    promise_in_bounds gather transposes, gives it no cotangent (a negative index past
    -n too). Against jax.grad, eagerly and jitted."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    i = np.array([5, -7, 1, -1, 2, 1], np.int32)
    loss = lambda m: lambda x: m.sum(get(m.asarray(x), i) ** 2)  # noqa: E731
    want = jax.grad(loss(jnp))(x)
    np.testing.assert_array_equal(tracehlo.grad(loss(tracehlo.numpy))(x), want)
    np.testing.assert_array_equal(tracehlo.jit(tracehlo.grad(loss(tracehlo.numpy)))(x), want)


def test_getitem_errors():
    def jit_raises(index, exc, match):
        with pytest.raises(exc, match=match) as info:
            tracehlo.jit(index)(X)
        assert "test_indexing.py:" in str(info.value)

    jit_raises(lambda x: x[0, 0, 0, 0], IndexError, "too many indices for array: array is "
               "3-dimensional, but 4 were indexed")
    jit_raises(lambda x: x[2], IndexError, "index 2 is out of bounds for axis 0 with size 2")
    jit_raises(lambda x: x[:, -4], IndexError, "index -4 is out of bounds for axis 1")
    jit_raises(lambda x: x[..., ...], IndexError, "single ellipsis")
    jit_raises(lambda x: x[x > 0], IndexError, r"test_indexing.py:\d+: Array boolean "
               r"indices must be concrete; got bool\[2,3,4\]\n\nSee https://docs.jax.dev/en/"
               "latest/errors.html#jax.errors.NonConcreteBooleanIndexError")
    jit_raises(lambda x: x[np.array([0.5])], IndexError, "only integers, slices")
    jit_raises(lambda x: x[1.5], IndexError, "only integers, slices")
    jit_raises(lambda x: x["a"], IndexError, "only integers, slices")


# ------------------------------------------------------------- x.at[...]

AT = [
    ("set int", lambda x: x.at[1].set(0)),
    ("set negative int", lambda x: x.at[-1, 0].set(9)),
    ("set slice", lambda x: x.at[:, 1:].set(-1)),
    ("set slice broadcast", lambda x: x.at[0, :, 1:3].set(np.array([7, 8], np.float32))),
    ("set array", lambda x: x.at[:, np.array([0, 2])].set(5)),
    ("set array values", lambda x: x.at[np.array([1, 0])].set(np.ones((2, 3, 4), np.float32))),
    ("set all", lambda x: x.at[...].set(3)),
    ("add int", lambda x: x.at[0].add(100)),
    ("add duplicates", lambda x: x.at[np.array([1, 1, 0])].add(1)),
    ("add slice", lambda x: x.at[:, :2].add(10)),
    ("multiply", lambda x: x.at[:, :, np.array([1, 3])].multiply(2)),
    ("min", lambda x: x.at[1].min(15)),
    ("max", lambda x: x.at[np.array([0]), 1].max(9)),
    ("two arrays", lambda x: x.at[np.array([0, 1]), np.array([2, 0])].set(-5)),
    ("negative array", lambda x: x.at[:, np.array([-1])].add(1)),
    ("get", lambda x: x.at[1, ::2].get()),
    ("int dtype value", lambda x: x.at[0, 0].set(np.int32(4))),
    ("subtract", lambda x: x.at[:, 1].subtract(1)),
    ("stepped slice", lambda x: x.at[:, ::2].set(-1)),
    ("negative step", lambda x: x.at[::-1, 0].set(np.array([1, 2], np.float32)[:, None])),
    ("steps and int", lambda x: x.at[::2, 1, 1::2].add(7)),
    ("slice and array", lambda x: x.at[0:1, np.array([0, 2])].set(-1)),
    ("slice and out-of-bounds array", lambda x: x.at[1:, np.array([2, 5, -1])].add(1)),
    ("separated array and slice", lambda x: x.at[np.array([1, 0]), 1:, np.array([3, 0])]
     .set(np.arange(4, dtype=np.float32).reshape(2, 2))),
]


@pytest.mark.parametrize("name,update", AT)
def test_at(name, update):
    check(lambda m, x: update(m.asarray(x)), X, eager=False, values="jnp")


def test_at_traced_index_and_value():
    check(lambda m, x, i, v: m.asarray(x).at[i].set(v), X, np.int32(1), np.float32(2.5),
          eager=False, values="jnp")
    for i in (-1, 7):  # in bounds from the end; out of bounds: dropped
        check(lambda m, x, i: m.asarray(x).at[i, 1:].add(5), X, np.int32(i), eager=False,
              values="jnp")
    check(lambda m, x, i: m.asarray(x).at[:, i].add(1), X, np.array([0, 0, 2], np.int32),
          eager=False, values="jnp")


def test_at_dtypes():
    check(lambda m, x: m.asarray(x).at[1].set(True), bools(3, 2), eager=False, values="jnp")
    check(lambda m, x: m.asarray(x).at[np.array([0, 0])].add(3), i32(3, 2), eager=False,
          values="jnp")
    check(lambda m, x: m.asarray(x).at[0].set(2.7), i32(3), eager=False, values="jnp")
    # add and multiply combine in the promoted dtype and cast back, as JAX: an int times
    # 0.5 is halved, two 0.6s add up to 1, and a bool adds as an int (XLA's i1 add wraps)
    check(lambda m, x, b: (m.asarray(x).at[0].multiply(0.5),
                           m.asarray(x).at[np.array([1, 1])].add(np.float32(0.6)),
                           m.asarray(x).at[2].subtract(0.5), m.asarray(b).at[0].add(2),
                           m.asarray(b).at[np.array([1, 1])].multiply(3)),
          np.array([3, 1, -2], np.int8), bools(3), eager=False, values="jnp")


def test_at_out_of_bounds_dropped():
    check(lambda m, x: m.asarray(x).at[np.array([5, 0])].set(-1), X, eager=False,
          values="jnp")


AT_MORE = [
    ("divide", lambda x: x.at[1].divide(2)),
    ("divide int", lambda x: x.astype(np.int32).at[np.array([0, 0])].divide(2)),
    ("power", lambda x: x.at[:, 0].power(2)),
    ("apply", lambda x: x.at[np.array([1, 1, 0]), 2].apply(lambda v: v * 2 + 1)),
    ("apply unique", lambda x: x.at[0, 1:].apply(lambda v: -v, unique_indices=True)),
    ("apply at no index", lambda x: x.at[np.zeros(0, np.int32)].apply(lambda v: v - 1)),
    ("None", lambda x: x.at[None, 0].add(1)),
    ("None between", lambda x: x.at[1, None, :, np.array([3, 0])].set(-2)),
    ("static out of bounds set dropped", lambda x: x.at[5].set(1)),
    ("static out of bounds get clamps", lambda x: x.at[:, 7].get()),
    ("hints", lambda x: x.at[np.array([0, 1])].add(1, indices_are_sorted=True,
                                                    unique_indices=True)),
    ("set True", lambda x: x.at[True].set(5)),
    ("add False", lambda x: x.at[False].add(1)),
    ("add True and int", lambda x: x.at[True, 1].add(np.arange(4, dtype=np.float32))),
    ("get ellipsis False", lambda x: x.at[..., False].get()),
    ("get True", lambda x: x.at[True, 0].get()),
]


@pytest.mark.parametrize("name,update", AT_MORE)
def test_at_more(name, update):
    check(lambda m, x: update(m.asarray(x)), X, eager=False, values="jnp")


@pytest.mark.parametrize("mode", [None, "clip", "drop", "fill", "promise_in_bounds"])
def test_at_modes(mode):
    """Out-of-bounds indices under each JAX mode, against jax.numpy; in-bounds ones
    under promise_in_bounds (whose out-of-bounds behaviour is unspecified)."""
    i = np.array([1, 0], np.int32) if mode == "promise_in_bounds" else \
        np.array([5, -9, 1], np.int32)
    s = np.int32(1 if mode == "promise_in_bounds" else 7)
    def fn(m, x, i, s):
        x = m.asarray(x)
        return (x.at[:, i].set(-1, mode=mode), x.at[i, 1:].add(3, mode=mode),
                x.at[s].multiply(2, mode=mode), x.at[:, s, ::2].max(9, mode=mode),
                x.at[1, s].set(-3, mode=mode),
                x.at[:, i].get(mode=mode), x.at[s, 0].get(mode=mode))
    check(fn, X, i, s, eager=False, values="jnp")
    check(lambda m, x: m.asarray(x).at[1, np.array([0, 9])].get(mode=mode, fill_value=-7)
          if mode in ("fill", "drop") else m.asarray(x).at[0, 9].get(mode=mode),
          X, eager=False, values="jnp")


def test_at_repeated_indices_accumulate_as_numpy_ufunc_at():
    """x.at[i].add/multiply/min/max with repeated i equals NumPy's ufunc.at on a copy."""
    i = np.array([[2, 0], [2, 2]], np.int32)
    v = np.arange(1, 5, dtype=np.float32).reshape(2, 2)
    got = tracehlo.jit(lambda x, i, v: (x.at[i].add(v), x.at[i].multiply(v),
                                        x.at[i].min(v), x.at[i].max(v),
                                        x.at[i].subtract(v)))(X[0, 0], i, v)
    for ufunc, g in zip((np.add, np.multiply, np.minimum, np.maximum, np.subtract), got):
        want = X[0, 0].copy()
        ufunc.at(want, i, v)
        np.testing.assert_array_equal(np.asarray(g), want, err_msg=ufunc.__name__)
    want = X.copy()
    want[1, :, [0, 3]] = 5  # NumPy's in-place set on a copy
    np.testing.assert_array_equal(tracehlo.jit(lambda x: x.at[1, :, [0, 3]].set(5))(X), want)


def test_at_errors():
    with pytest.raises(ValueError, match="mode='wrap'.*expected one of") as info:
        tracehlo.jit(lambda x: x.at[0].set(1, mode="wrap"))(X)
    assert "test_indexing.py:" in str(info.value)
    with pytest.raises(ValueError, match="expected one of"):
        tracehlo.jit(lambda x: x.at[0].get(mode="raise"))(X)


# ------------------------------------------------------------- take, sort

TAKE = [
    ("take flat", lambda m, x: m.take(x, np.array([0, 5, 23]))),
    ("take axis", lambda m, x: m.take(x, np.array([2, 0]), axis=1)),
    ("take negative axis", lambda m, x: m.take(x, np.array([[3, -1], [0, 1]]), axis=-1)),
    ("take scalar index", lambda m, x: m.take(x, 1, axis=0)),
    ("take_along_axis", lambda m, x: m.take_along_axis(x, np.argsort(x, axis=1), axis=1)),
    ("take_along_axis broadcast",
     lambda m, x: m.take_along_axis(x, np.array([[[0], [2], [1]]]), axis=-1)),
    ("take_along_axis None", lambda m, x: m.take_along_axis(x, np.array([3, 0, -1]), None)),
]


@pytest.mark.parametrize("name,fn", TAKE)
def test_take(name, fn):
    check(fn, f32(2, 3, 4))


def test_take_along_an_empty_axis_or_into_an_empty_result():
    """No element to take, or none to make: JAX's zeros of the indices' broadcast shape
    (not a gather whose one-element slices do not fit), and the derivative of a sort
    of an empty array (fuzz jit --transform grad 471)."""
    empty = np.zeros((2, 0), np.float32)
    check(lambda m, x: m.take_along_axis(x, np.zeros((2, 3), np.int32), axis=1), empty,
          values="jnp")
    check(lambda m, x: m.take_along_axis(x, np.zeros((2, 0), np.int32), axis=1), empty)
    check(lambda m, x: m.take_along_axis(x, np.zeros((1, 2), np.int32), axis=1),
          np.zeros((0, 3), np.float32))
    check_raises(lambda m, x: m.take_along_axis(x, np.zeros((3, 1), np.int32), axis=1),
                 f32(2, 3), exc=ValueError, match=r"shapes \(3, 1\), \(2, 1\) cannot be broadcast")
    tnp = tracehlo.numpy
    for x in (np.zeros((0,), np.float32), np.zeros((0, 3), np.float32)):
        got = tracehlo.jit(tracehlo.grad(lambda x: tnp.sum(tnp.sort(x))))(x)
        assert got.shape == x.shape and got.dtype == x.dtype


def test_take_traced_indices():
    check(lambda m, x, i: m.take(x, i, axis=1), i32(2, 3), np.array([2, -1], np.int32))
    check(lambda m, x, i: m.take_along_axis(x, i, axis=0), f32(3, 2),
          np.array([[2, 0]], np.int32))


@pytest.mark.parametrize("mode", [None, "fill", "clip", "wrap"])
@pytest.mark.parametrize("dtype", ["f32", "i32", "bool"])
def test_take_modes(mode, dtype):
    """Out-of-bounds indices follow JAX: 'fill' (the default) gives NaN / INT_MIN / True."""
    x = {"f32": f32(2, 4), "i32": i32(2, 4), "bool": bools(2, 4)}[dtype]
    i = np.array([[5, -1], [-5, 3]], np.int32)
    check(lambda m, x: m.take(x, i, axis=1, mode=mode), x, values="jnp")
    if mode != "wrap":  # jax.numpy's take_along_axis has no 'wrap'
        check(lambda m, x: m.take_along_axis(x, i, axis=1, mode=mode), x, values="jnp")


SORTS = [
    ("sort", lambda m, x: m.sort(x)),
    ("sort axis 0", lambda m, x: m.sort(x, axis=0)),
    ("sort None", lambda m, x: m.sort(x, axis=None)),
    ("argsort", lambda m, x: m.argsort(x)),
    ("argsort axis", lambda m, x: m.argsort(x, axis=-2)),
    ("argsort None", lambda m, x: m.argsort(x, axis=None)),
]


@pytest.mark.parametrize("name,fn", SORTS)
@pytest.mark.parametrize("dtype", ["f32", "i32", "bool"])
def test_sort(name, fn, dtype):
    """Stable sorts: ties keep their order (jax.numpy's values: NumPy's default
    argsort is not stable)."""
    x = {"f32": f32(3, 4), "i32": i32(3, 4, lo=-2, hi=3), "bool": bools(3, 4)}[dtype]
    check(fn, x, values="jnp")


def test_sort_nan_and_signed_zero():
    """NaNs last, -0.0 == 0.0 (a stable sort keeps their order), as NumPy and JAX."""
    x = np.array([3, np.nan, 1, -np.inf, 1, -np.nan, 0, -0.0, 0], np.float32)
    check(lambda m, x: m.sort(x), x, values="jnp")
    check(lambda m, x: m.argsort(x), x, values="jnp")
    check(lambda m, x: m.argsort(x), np.array([2, 1, 2, 1, 0, 2], np.int32), values="jnp")


def test_sort_descending():
    for x in (np.array([3, 1, np.nan, 1, 3], np.float32), np.array([3, 1, 2, 1, 3], np.int32),
              np.array([True, False, True])):
        check(lambda m, x: m.sort(x, descending=True), x, values="jnp")
        check(lambda m, x: m.argsort(x, descending=True), x, values="jnp")


def test_sort_and_take_errors():
    check_raises(lambda m, x: m.sort(x), np.float32(1), exc=ValueError,
                 match="out of bounds")
    check_raises(lambda m, x: m.take(x, np.array([0.5])), f32(3), exc=TypeError,
                 match="indices must be integers")
    check_raises(lambda m, x: m.take_along_axis(x, np.array([0]), axis=0), f32(2, 2),
                 exc=ValueError, match="same number of dimensions")
    check_raises(lambda m, x: m.take(x, np.array([0]), mode="raise"), f32(2),
                 exc=ValueError, match="invalid index mode 'raise'")


# ------------------------------------------------------------- eager arrays closed over

CLOSED_OVER = [
    ("a[i]", lambda a, i, t: a[i]),
    ("a[i, ::2]", lambda a, i, t: a[i, ::2]),
    ("a[None, :, i]", lambda a, i, t: a[None, :, i]),
    ("a.at[i].set(t)", lambda a, i, t: a.at[i].set(t)),
    ("a.at[1, 2].add(t)", lambda a, i, t: a.at[1, 2].add(t)),
    ("a.at[:, i].get()", lambda a, i, t: a.at[:, i].get()),
    ("a.take(i)", lambda a, i, t: a.take(i)),
    ("a.clip(t)", lambda a, i, t: a.clip(t, 7.0)),
    ("a.sum(where)", lambda a, i, t: a.sum(axis=1, where=a > t)),
    ("a @ t", lambda a, i, t: a @ (t * a[0])),
    ("divmod(a, t)", lambda a, i, t: divmod(a, t)),
    ("a < t", lambda a, i, t: (a < t) * t),
]


@pytest.mark.parametrize("name,fn", CLOSED_OVER)
def test_eager_array_closed_over_by_a_traced_function(name, fn):
    """An eager result is a jax.Array, whose methods are JAX's: closed over by a traced
    function and given a tracer (a[i] under jit raised IndexError, a.take(i) a
    TypeError), it takes ours. Under jit, vmap and grad (whose a.at[1, 2].add(t) raised a
    ConcretizationError), against JAX with a jax.numpy array."""
    ours, theirs = tracehlo.numpy.arange(12.0).reshape(3, 4), jnp.arange(12.0).reshape(3, 4)
    i, t = np.int32(1), np.float32(2.5)
    sum_ = lambda m, a: lambda i, t: jax.tree_util.tree_reduce(  # noqa: E731
        lambda s, y: s + m.sum(y), fn(a, i, t), 0.0)
    batch = (np.array([0, 2], np.int32), np.array([1.5, 6], np.float32))
    runs = [(tracehlo.jit, jax.jit, (i, t)), (tracehlo.vmap, jax.vmap, batch)]
    for ours_t, jax_t, args in runs:
        got, want = ours_t(lambda i, t: fn(ours, i, t))(*args), \
            jax_t(lambda i, t: fn(theirs, i, t))(*args)
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(tracehlo.grad(sum_(tracehlo.numpy, ours), argnums=1)(i, t),
                                  jax.grad(sum_(jnp, theirs), argnums=1)(i, t))


def test_eager_array_in_control_flow_and_dynamic_slice():
    a = tracehlo.numpy.arange(5.0)
    lax = tracehlo.lax
    assert tracehlo.jit(lambda n: lax.fori_loop(0, n, lambda k, s: s + a[k], 0.0))(4) == 6.0
    assert tracehlo.jit(lambda i: lax.cond(i > 1, lambda: a[i], lambda: -a[i]))(3) == 3.0
    np.testing.assert_array_equal(tracehlo.jit(lambda i: lax.dynamic_slice(a, (i,), (2,)))(2),
                                  [2.0, 3.0])
    with pytest.raises(IndexError, match=r"test_indexing.py:\d+: slice bounds must be static"):
        tracehlo.jit(lambda i: a[i:i + 2])(2)  # as JAX: a traced slice bound is an error
