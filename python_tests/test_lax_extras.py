"""jax.lax's scatter_* family, select_n, index_in_dim, collapse, reduce_precision and
cumlogsumexp against jax.lax: values eagerly and under tracehlo.jit (several cases per
compile), gradients against jax.grad, batching against jax.vmap, errors in JAX's words
at the user's line, and the StableHLO they lower to where JAX's form matters."""
import re

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import tracehlo
import tracehlo.lax as tlax
from numpy_helpers import TEST_FILE_LINE

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
RNG = np.random.default_rng(7)
BF16 = ml_dtypes.bfloat16


def lax_check(fn, *args, rtol=1e-6, atol=1e-6):
    """fn(lax, *args) with lax = tracehlo.lax under jit, and eagerly for f32 (where each
    primitive compiles on its own), against jax.lax under jax.jit: one compile a side."""
    want = jax.jit(lambda *a: fn(jax.lax, *a))(*args)
    close(tracehlo.jit(lambda *a: fn(tlax, *a))(*args), want, rtol, atol)
    if args[0].dtype == np.float32:
        close(fn(tlax, *args), want, rtol, atol)


def transformed(fn, *args):
    """fn(lax, grad, vmap, *args) with JAX's and ours, each jitted (one compile a side)."""
    want = jax.jit(lambda *a: fn(jax.lax, jax.grad, jax.vmap, *a))(*args)
    close(tracehlo.jit(lambda *a: fn(tlax, tracehlo.grad, tracehlo.vmap, *a))(*args), want)


def close(got, want, rtol=1e-5, atol=1e-6):
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g.shape, g.dtype) == (w.shape, w.dtype), (g.shape, g.dtype, w.shape, w.dtype)
        np.testing.assert_allclose(np.asarray(g).astype(np.complex128),
                                   np.asarray(w).astype(np.complex128), rtol=rtol, atol=atol)


def sample(dtype, *shape, lo=-2.0, hi=2.0):
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(-4, 5, shape).astype(dtype)
    return RNG.uniform(lo, hi, shape).astype(dtype)


# ---------------------------------------------------------------- scatter family

ROWS = (1,), (0,), (0,)  # rows of updates into rows of the operand
DUPLICATES = np.array([[2], [0], [2], [7], [-1], [4]], np.int32)  # row 2 twice, two outside
IN_BOUNDS = np.array([[1], [3], [1], [0], [4], [1]], np.int32)
KINDS = ("add", "sub", "mul", "min", "max")


def scatters(lax, x, u, modes=(None, "clip")):
    """Every scatter_* in every mode, out-of-bounds and repeated rows, and
    promise_in_bounds on in-bounds rows; with batching dimensions; scatter_apply."""
    dn = lax.ScatterDimensionNumbers(*ROWS)
    outs = [getattr(lax, f"scatter_{k}")(x, DUPLICATES, u, dn, mode=mode)
            for k in KINDS for mode in modes]
    outs += [getattr(lax, f"scatter_{k}")(x, IN_BOUNDS, u, dn, mode="promise_in_bounds",
                                          indices_are_sorted=False) for k in KINDS]
    batched = lax.ScatterDimensionNumbers((), (1,), (1,), (0,), (0,))  # x[r, i[r, k]]
    columns = np.array([[[0], [2]], [[2], [2]], [[1], [5]], [[0], [1]], [[2], [0]]], np.int32)
    outs += [lax.scatter_max(x[:5, :3], columns, u[:5, :2], batched),
             lax.scatter_add(x[:5, :3], columns, u[:5, :2], batched, mode="clip")]
    outs.append(lax.scatter_apply(x, DUPLICATES, lambda v: v * 2 + 1, dn, update_shape=(6, 3)))
    return outs


@pytest.mark.parametrize("dtype", [np.float32, BF16, np.int32])
def test_scatter_family_values(dtype):
    x, u = sample(dtype, 5, 3), sample(dtype, 6, 3)
    u[1] = x[0]  # a tie of min/max with the operand
    lax_check(scatters, x, u, rtol=1e-2 if dtype == BF16 else 1e-6)


def _one_hot_mul(x, u):
    """scatter_mul of DUPLICATES' rows, differentiable in JAX (its scatter_mul is not
    for repeated indices): each row of x times the product of the updates landing on it."""
    hits = np.arange(x.shape[0])[:, None] == DUPLICATES[:, 0][None, :]
    return x * jnp.prod(jnp.where(hits[:, :, None], u[None], 1.0), axis=1)


def test_scatter_family_grads_and_vmap():
    """jax.grad's derivatives: repeated indices, ties among the updates and with the
    operand (min/max split the cotangent evenly), out-of-bounds rows dropped or clamped;
    scatter_mul's exact derivative over repeated indices and a zero factor (where JAX's
    raises). jax.vmap's results with in_axes 0, 1 and None per operand."""
    x = RNG.normal(size=(5, 3)).astype(np.float32)
    u = RNG.normal(size=(6, 3)).astype(np.float32)
    u[0] = u[2]        # two updates tie on row 2
    u[1, 0] = x[0, 0]  # an update ties with the operand
    u[2, 1] = 0.0      # a zero factor among row 2's repeated products
    weights = RNG.normal(size=(5, 3)).astype(np.float32)
    xs = RNG.normal(size=(4, 5, 3)).astype(np.float32)
    idx = RNG.integers(-1, 7, size=(4, 6, 1)).astype(np.int32)
    us = RNG.normal(size=(4, 6, 3)).astype(np.float32)
    axes = [(0, 0, 0), (1, None, 1), (None, 0, None), (0, None, 1), (None, 1, 0)]
    batched = [[np.moveaxis(v, 0, a) if a is not None else v[0]
                for v, a in zip((xs, idx, us), ax)] for ax in axes]

    def loss(lax, x, u):
        d = lax.ScatterDimensionNumbers(*ROWS)
        out = [getattr(lax, f"scatter_{k}")(x, DUPLICATES, u, d, mode=mode)
               for k in ("add", "sub", "min", "max") for mode in (None, "clip")
               if mode is None or k in ("add", "sub")]
        out.append(lax.scatter_mul(x, IN_BOUNDS[3:], u[3:], d, unique_indices=True))
        out.append(lax.scatter_max(x, IN_BOUNDS, u, d, mode="clip"))
        return sum((o * weights).sum() for o in out)

    def fn(lax, grad, vmap, x, u, batched):
        d = lax.ScatterDimensionNumbers(*ROWS)
        return grad(lambda *a: loss(lax, *a), (0, 1))(x, u), [
            vmap(lambda o, i, v, k=k, m=m: getattr(lax, f"scatter_{k}")(o, i, v, d, mode=m),
                 ax)(*a) for k in KINDS for m, (ax, a) in zip([None, "clip"] * 3,
                                                             zip(axes, batched))]
    transformed(fn, x, u, batched)
    mul = lambda x, u: (tlax.scatter_mul(  # noqa: E731
        x, DUPLICATES, u, tlax.ScatterDimensionNumbers(*ROWS)) * weights).sum()
    close(tracehlo.jit(tracehlo.grad(mul, (0, 1)))(x, u),
          jax.jit(jax.grad(lambda x, u: (_one_hot_mul(x, u) * weights).sum(), (0, 1)))(x, u))
    with pytest.raises(NotImplementedError):  # JAX's side of that difference
        jax.grad(lambda u: jax.lax.scatter_mul(x, DUPLICATES, u, jax.lax.ScatterDimensionNumbers(
            *ROWS)).sum())(u)


def test_clipped_scatter_with_narrow_indices_clamps_as_jax_does():
    """The upper bound of a clipped int8 index into 300 rows is int8's largest (it built
    299 as an int8 and failed with NumPy's OverflowError); -5 clamps to 0."""
    args = (np.zeros(300, np.float32), np.array([[100], [-5], [127]], np.int8),
            np.arange(1, 4, dtype=np.float32))
    dn = ((), (0,), (0,))
    want = jax.lax.scatter_add(*args, jax.lax.ScatterDimensionNumbers(*dn), mode="clip")
    ours = lambda *a: tlax.scatter_add(*a, tlax.ScatterDimensionNumbers(*dn), mode="clip")  # noqa: E731
    for run in (ours, tracehlo.jit(ours)):
        np.testing.assert_array_equal(np.asarray(run(*args)), np.asarray(want))


def test_a_traced_bit_count_names_the_user_line_once():
    with pytest.raises(tracehlo.ConcretizationError) as got:
        tracehlo.jit(lambda b: tlax.reduce_precision(X, b, 3))(np.int32(5))
    assert len(re.findall(TEST_FILE_LINE, str(got.value))) == 1, str(got.value)


def test_scatter_lowering_passes_the_promises_to_xla():
    x, u = np.zeros((5, 3), np.float32), np.ones((2, 3), np.float32)
    i = np.array([[0], [3]], np.int32)
    text = tracehlo.compile(lambda x, u: tlax.scatter_add(
        x, i, u, tlax.ScatterDimensionNumbers(*ROWS), indices_are_sorted=True,
        unique_indices=True), (x, u), fusion="none").stablehlo
    assert "indices_are_sorted = true, unique_indices = true" in text
    assert re.search(r"stablehlo\.add", text)


# ---------------------------------------------------------------- select_n

def selects(lax, w, a, b, c, d):
    return (lax.select_n(w, a, b, c, d), lax.select_n(w % 3, a, b, c),
            lax.select_n(np.int32(2), a, b, c), lax.select_n(w > 1, a, b),
            lax.select_n(True, a, b), lax.select_n(np.uint8(1), a),
            lax.select_n(np.int32(7), a, b, c))  # out of range: the last case, as JAX


@pytest.mark.parametrize("dtype", [np.float32, BF16, np.int32])
def test_select_n_values(dtype):
    w = np.array([[0, 1, 2, 3, -1, 5]] * 2, np.int32)
    lax_check(selects, w, *[sample(dtype, 2, 6) for _ in range(4)])


def test_select_n_grad_and_vmap():
    """A `which` out of range passes no cotangent (JAX's transpose); vmap of an array
    and of a scalar `which`, with in_axes 0, 1 and None."""
    w = np.array([[0, 1, 2], [3, -1, 2]], np.int32)
    a, b, c = (RNG.normal(size=(2, 3)).astype(np.float32) for _ in range(3))
    ws = np.array([[0, 2, 1], [1, 0, 2], [2, 2, 0]], np.int32)
    cases = [RNG.normal(size=(3, 3)).astype(np.float32) for _ in range(3)]
    axes = [(0, 0, 0, 0), (1, 1, None, 1), (None, 0, 1, None), (0, None, None, None)]
    batched = [[v if ax is not None else v[0] for v, ax in zip([ws] + cases, ax)]
               for ax in axes]

    def fn(lax, grad, vmap, a, b, c, batched):
        loss = lambda a, b, c: (lax.select_n(w, a, b, c) * a  # noqa: E731
                                + lax.select_n(np.int32(1), c, b, a)).sum()
        return grad(loss, (0, 1, 2))(a, b, c), [
            (vmap(lax.select_n, ax)(*args),
             vmap(lax.select_n, (None if ax[0] is None else 0,) + ax[1:])(
                 ws[:, 0] if ax[0] is not None else ws[0, 0], *args[1:]))
            for ax, args in zip(axes, batched)]
    transformed(fn, a, b, c, batched)


def test_select_n_lowering_is_jaxs_tree_of_selects():
    x = np.zeros(4, np.float32)
    text = tracehlo.compile(lambda w, a, b, c, d: tlax.select_n(w, a, b, c, d),
                            (np.int32(0), x, x, x, x), fusion="none").stablehlo
    assert len(re.findall(r"stablehlo\.compare\s+LT", text)) == 3
    assert len(re.findall(r"stablehlo\.select", text)) == 3


# ---------------------------------------------------------------- reduce_precision

def precisions(lax, x):
    return tuple(lax.reduce_precision(x, e, m) for e, m in [(5, 10), (8, 7), (4, 3), (2, 0),
                                                            (11, 52), (5, 2)])


@pytest.mark.parametrize("dtype", [np.float32, BF16, np.float16])
def test_reduce_precision_values(dtype):
    x = np.concatenate([RNG.normal(size=8) * 10.0 ** RNG.integers(-9, 9, 8),
                        [np.inf, -np.inf, np.nan, 0.0, -0.0, 65504, 1e-7, 3e38]])
    with np.errstate(over="ignore"):
        lax_check(precisions, x.astype(dtype), rtol=0, atol=0)


def test_reduce_precision_grad_vmap_and_fusion():
    """Linear, as in JAX: tangents and cotangents are rounded too. Fused by our passes
    (an elementwise op, as XLA treats it) with JAX's numbers."""
    x = RNG.normal(size=(3, 4)).astype(np.float32)

    def fn(lax, grad, vmap, x):
        return grad(lambda x: (lax.reduce_precision(x * 3.1, 4, 2) * x).sum())(x), [
            vmap(lambda v: lax.reduce_precision(v, 5, 2), axis)(x) for axis in (0, 1)]
    transformed(fn, x)
    fused = lambda lax, x: lax.reduce_precision(lax.exp(x) * 2.0 + 1.0, 5, 10) * x  # noqa: E731
    compiled = tracehlo.compile(lambda x: fused(tlax, x), (x,))
    assert "stablehlo.reduce_precision" in compiled.stablehlo
    assert "format = e5m10" in compiled.stablehlo
    np.testing.assert_array_equal(compiled(x), jax.jit(lambda x: fused(jax.lax, x))(x))


# ---------------------------------------------------------------- cumlogsumexp

def cumulative(lax, x):
    return (lax.cumlogsumexp(x), lax.cumlogsumexp(x, axis=1), lax.cumlogsumexp(x, 1, True),
            lax.cumlogsumexp(x, axis=0, reverse=True))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.complex64])
def test_cumlogsumexp_values(dtype):
    x = RNG.normal(size=(3, 5)) * 3
    if dtype == np.complex64:
        x = x + 1j * RNG.normal(size=(3, 5)) * 3
    else:
        x[0, 1], x[1, 2], x[2, 0], x[2, 3] = -np.inf, np.inf, np.nan, -np.inf
    lax_check(cumulative, x.astype(dtype), rtol=2e-3 if dtype == np.float16 else 1e-5,
              atol=2e-3 if dtype == np.float16 else 1e-6)


def test_cumlogsumexp_grad_vmap_and_lowering():
    """The derivative is JAX's: that of an associative_scan of logaddexp, whose rule
    counts an infinity as 0. Lowered as JAX lowers it: a reduce_window of logaddexp."""
    x = RNG.normal(size=(3, 5)).astype(np.float32)
    x[0, 0] = x[0, 2] = -np.inf
    weights = RNG.normal(size=(3, 5)).astype(np.float32)

    def fn(lax, grad, vmap, x):
        loss = lambda x: ((lax.cumlogsumexp(x, 1, True) + lax.cumlogsumexp(x)) # noqa: E731
                          * weights).sum()
        return grad(loss)(x), [vmap(lambda v: lax.cumlogsumexp(v, 0, True), axis)(x)
                               for axis in (0, 1)]
    transformed(fn, x)
    text = tracehlo.compile(lambda x: tlax.cumlogsumexp(x, 1), (x,), fusion="none").stablehlo
    assert "stablehlo.reduce_window" in text and "stablehlo.log_plus_one" in text


# ---------------------------------------------------------------- index_in_dim, collapse

def reshapes(lax, x):
    return (lax.index_in_dim(x, 1), lax.index_in_dim(x, -1, 1, keepdims=False),
            lax.index_in_dim(x, 0, axis=-1), lax.collapse(x, 0, 2), lax.collapse(x, 1),
            lax.collapse(x, -2, -1), lax.collapse(x, 1, 1))


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_index_in_dim_and_collapse(dtype):
    x = sample(dtype, 2, 3, 4)
    lax_check(reshapes, x)
    if dtype == np.float32:
        transformed(lambda lax, grad, vmap, x: (
            grad(lambda x: sum((o * o).sum() for o in reshapes(lax, x)))(x),
            [vmap(lambda v: reshapes(lax, v), axis)(x) for axis in (0, 1, 2)]), x)


# ---------------------------------------------------------------- errors

X = np.ones((4, 3), np.float32)
I = np.array([[2], [0], [7]], np.int32)
U = np.ones((3, 3), np.float32)


def _dn(lax, *dims):
    return lax.ScatterDimensionNumbers(*(dims or ROWS))


ERRORS = [
    (lambda lax: lax.scatter_add(X, I, U, _dn(lax), mode="bogus"), ValueError),
    (lambda lax: lax.scatter_add(X > 0, I, U > 0, _dn(lax)), TypeError),
    (lambda lax: lax.scatter_sub(X > 0, I, U > 0, _dn(lax)), TypeError),
    (lambda lax: lax.scatter_mul(X > 0, I, U > 0, _dn(lax)), TypeError),
    (lambda lax: lax.scatter_add(X, I.astype(np.float32), U, _dn(lax)), ValueError),
    (lambda lax: lax.scatter_max(X, I, U.astype(np.int32), _dn(lax)), TypeError),
    (lambda lax: lax.scatter_add(X, I, U[0], _dn(lax)), TypeError),
    (lambda lax: lax.scatter_min(X, I, np.ones((3, 4), np.float32), _dn(lax)), TypeError),
    (lambda lax: lax.scatter_add(X, I, U[:2], _dn(lax)), TypeError),
    (lambda lax: lax.scatter_add(X, I, U, _dn(lax, (1,), (), (0,))), TypeError),
    (lambda lax: lax.scatter_add(X, I, U, _dn(lax, (1,), (0,), (0, 1))), TypeError),
    (lambda lax: lax.scatter_add(X, I, U, _dn(lax, (1,), (0,), (3,))), TypeError),
    (lambda lax: lax.scatter_add(X, I, U, _dn(lax, (1,), (0,), (0,), (1,))), TypeError),
    (lambda lax: lax.scatter_add(X, I, U[:, :1], _dn(lax, (1,), (0,), (0,), (0,), (0,))),
     TypeError),
    (lambda lax: lax.scatter_add(X, I, U, _dn(lax, (1,), (), (0,), (0,), (0,))), TypeError),
    (lambda lax: lax.scatter_add(X, np.zeros((4, 4, 1), np.int32), np.ones((4, 4, 1)),
                                 _dn(lax, (2,), (), (1,), (0,), (0, 0))), TypeError),
    (lambda lax: lax.scatter_add(X, I, U, _dn(lax), mode=lax.FftType.FFT), ValueError),
    (lambda lax: lax.select_n(np.int32(1)), ValueError),
    (lambda lax: lax.select_n(np.float32(1), X, X), TypeError),
    (lambda lax: lax.select_n(True, X, X, X), TypeError),
    (lambda lax: lax.select_n(np.ones(4, bool), X, X), TypeError),
    (lambda lax: lax.select_n(True, X, X[0]), TypeError),
    (lambda lax: lax.select_n(np.int32(0), X, X, X.astype(np.int32)), TypeError),
    (lambda lax: lax.reduce_precision(X.astype(np.int32), 5, 10), TypeError),
    (lambda lax: lax.reduce_precision(X, 0, 10), ValueError),
    (lambda lax: lax.reduce_precision(X, 5, -1), ValueError),
    (lambda lax: lax.reduce_precision(X, 5.0, 1), TypeError),
    (lambda lax: lax.cumlogsumexp(X, axis=-1), ValueError),
    (lambda lax: lax.cumlogsumexp(X, axis=2), ValueError),
    (lambda lax: lax.cumlogsumexp(X[0, 0]), ValueError),
    (lambda lax: lax.index_in_dim(X, 4, 0), IndexError),
    (lambda lax: lax.index_in_dim(X, -4, 1), IndexError),
    (lambda lax: lax.collapse(X, 2, 1), ValueError),
]


def test_errors_are_jaxs_at_the_user_line():
    """JAX's exception type and message, at this file's line, eagerly and under jit."""
    for fn, exc in ERRORS:
        with pytest.raises(exc) as expected:
            fn(jax.lax)
        for run in (lambda: fn(tlax), lambda: tracehlo.jit(lambda: fn(tlax))()):
            with pytest.raises(exc) as got:
                run()
            message = str(got.value)
            assert re.match(".*/" + TEST_FILE_LINE, message), message
            assert message.endswith(str(expected.value)), (message, str(expected.value))


def test_cumlogsumexp_of_a_bool_or_integer_is_refused():
    """JAX's dtype rule lets an integer through to a lowering that then fails
    (OverflowError): refused here, with JAX's wording for the dtypes it computes."""
    for x in (X > 0, X.astype(np.int32)):
        with pytest.raises(TypeError, match=TEST_FILE_LINE + "cumlogsumexp does not accept "
                           "dtype (bool|int32). Accepted dtypes are subtypes of floating"):
            tlax.cumlogsumexp(x)
