"""lax.reduce_window against jax.lax.reduce_window: sum, max and min over SAME, VALID and
explicit padding, strides, base and window dilation, on float32, bfloat16 and int32,
eagerly and under jit with our fusion passes; gradients bit for bit with JAX's, ties
included (the first maximal element of a window takes its cotangent); vmap; and JAX's
errors at the user's line. One compiled function per dtype or transformation."""
import re

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import tracehlo
import tracehlo.lax as tlax
import tracehlo.numpy as tnp
from numpy_helpers import TEST_FILE_LINE

RNG = np.random.default_rng(0)
# (window_dimensions, window_strides, padding, base_dilation, window_dilation) on (2, 5, 6)
WINDOWS = [((1, 2, 2), (1, 2, 2), "VALID", None, None),
           ((1, 3, 3), (1, 2, 1), "SAME", None, None),
           ((2, 2, 3), None, ((0, 1), (1, 2), (0, -1)), (1, 2, 1), None),
           ((1, 2, 2), (1, 1, 2), ((0, 0), (1, 0), (2, 1)), None, (1, 2, 2)),
           ((1, 1, 2), (1, 3, 1), "SAME", (1, 1, 2), (1, 1, 2))]


def _all_windows(lax, windows):
    """Each window under each monoid, its init as flax's pools pass it (-inf for max,
    of integers too: JAX takes the identity of the init's own dtype)."""
    def f(x):
        return [lax.reduce_window(x, init, op, *window)
                for init, op in [(0, lax.add), (-np.inf, lax.max), (np.inf, lax.min)]
                for window in windows]
    return f


def _with_neighbours(lax, np_):
    """Elementwise ops on both sides of the pools, for the fusion passes to fuse around."""
    def f(x):
        y = np_.tanh(x) * 2.0
        pooled = lax.reduce_window(y, -np.inf, lax.max, (1, 2, 2), (1, 1, 1), "SAME")
        return lax.reduce_window(np_.exp(pooled) + 1.0, 0.0, lax.add, (1, 2, 3), (1, 2, 2),
                                 "VALID") / 6.0
    return f


def _ties(shape, dtype=np.float32):
    """Few distinct values, so most windows hold a tie for their max and min."""
    return (RNG.integers(-2, 3, shape) * 0.5).astype(dtype)


def _assert_equal(got, want, tol=0.0):
    got, want = jax.tree.leaves(got), jax.tree.leaves(want)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.shape, g.dtype) == (w.shape, w.dtype), (k, g.shape, g.dtype, w.shape, w.dtype)
        if tol:
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol,
                                       atol=tol, err_msg=f"output {k}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"output {k}")


@pytest.mark.parametrize("dtype,windows", [
    (np.float32, WINDOWS), (ml_dtypes.bfloat16, WINDOWS[1:4]), (np.int32, WINDOWS[2:])],
    ids=["float32", "bfloat16", "int32"])
def test_values_are_jaxs(dtype, windows):
    x = RNG.normal(size=(2, 5, 6)) * 4
    x = x.astype(dtype) if dtype == np.int32 else np.round(x).astype(dtype) / 4  # exact sums
    want = jax.jit(_all_windows(jax.lax, windows))(x)
    _assert_equal(tracehlo.jit(_all_windows(tlax, windows))(x), want)
    if dtype == np.float32:  # eager: one compile per call, so one window per primitive
        eager = [tlax.reduce_window(x, init, op, *windows[k]) for k, (init, op) in
                 enumerate([(0, tlax.add), (-np.inf, tlax.max), (np.inf, tlax.min)])]
        _assert_equal(eager, [want[k * len(windows) + k] for k in range(3)])


def test_fusion_passes_take_the_pools_and_lower_them_as_jax():
    x = RNG.normal(size=(2, 6, 7)).astype(np.float32)
    compiled = tracehlo.compile(_with_neighbours(tlax, tnp), (x,))  # our passes, the default
    assert "mhlo.fusion" in compiled.fused
    _assert_equal(compiled(x), jax.jit(_with_neighbours(jax.lax, jnp))(x), 1e-6)
    # JAX's attributes, all of them, as MLIR prints both modules
    attrs = re.compile(r'"stablehlo.reduce_window".*?<\{(.*?)\}>')
    assert attrs.findall(compiled.fused) == attrs.findall(
        jax.jit(_with_neighbours(jax.lax, jnp)).lower(x).as_text())


def _pools(lax, np_):
    """A loss over max, min and average pools with overlapping windows, padding and
    dilation (no window dilation for max and min: JAX has no VJP for it)."""
    w = np.linspace(-1, 1, 3 * 3, dtype=np.float32).reshape(3, 3)

    def loss(x):
        top = lax.reduce_window(x, -np.inf, lax.max, (1, 3, 3), (1, 2, 2), "SAME")
        low = lax.reduce_window(x, np.inf, lax.min, (1, 2, 3), (1, 2, 2), ((0, 0), (1, 0), (1, 1)),
                                (1, 1, 2))
        avg = lax.reduce_window(x, 0.0, lax.add, (1, 2, 2), (1, 2, 3), "SAME", (1, 1, 2),
                                (1, 1, 2))
        return np_.sum(top * w) + np_.sum(low * low) + np_.sum(avg * avg[:, :, :1])
    return loss


def _derivatives(M, lax, np_):
    """Gradients of the pools' loss, JVPs of each pool, and a hessian-vector product of a
    max pool (its gradient's own derivatives: select_and_scatter_add's JVP and VJP)."""
    loss = _pools(lax, np_)
    pools = [lambda y: lax.reduce_window(y, -np.inf, lax.max, *WINDOWS[1]),
             lambda y: lax.reduce_window(y, np.inf, lax.min, *WINDOWS[3]),
             lambda y: lax.reduce_window(y, 0.0, lax.add, *WINDOWS[2])]

    def square_pool(y):
        return np_.sum(lax.reduce_window(y * y, -np.inf, lax.max, (1, 2, 2), (1, 1, 2),
                                         "SAME") ** 2)

    def f(x, t):
        return (M.grad(loss)(x),
                [M.jvp(p, (x,), (t,)) for p in pools] + [M.jvp(M.grad(square_pool), (x,), (t,))])
    return f


def test_derivatives_are_jaxs_with_ties():
    """Gradients bit for bit: ties send the cotangent to the first maximal (minimal)
    element of a window, as JAX's select_and_scatter does."""
    x = np.concatenate([_ties((2, 5, 6)), np.zeros((1, 5, 6), np.float32)])  # all ties last
    t = RNG.normal(size=x.shape).astype(np.float32)
    grads, jvps = tracehlo.jit(_derivatives(tracehlo, tlax, tnp))(x, t)
    want_grads, want_jvps = jax.jit(_derivatives(jax, jax.lax, jnp))(x, t)
    _assert_equal(grads, want_grads)
    _assert_equal(jvps, want_jvps, 1e-6)


def test_grad_of_a_rank_0_max_pool():
    """Its one window chooses its one element (XLA aborts on the rank-0 select_and_scatter
    JAX's grad emits)."""
    grad = tracehlo.grad(lambda v: tlax.reduce_window(v, -np.inf, tlax.max, ()))
    assert grad(np.float32(2.0)) == 1.0 and tracehlo.jit(grad)(np.float32(2.0)) == 1.0


def test_vmap_over_axes_0_and_1():
    x = _ties((2, 3, 5, 6))

    def batched(M, lax, np_):
        pools = [lambda y: lax.reduce_window(y, -np.inf, lax.max, *WINDOWS[2]),
                 lambda y: lax.reduce_window(y, 0.0, lax.add, *WINDOWS[4])]
        return lambda x: ([M.vmap(f, in_axes=a)(x) for f in pools for a in (0, 1)],
                          M.vmap(M.grad(_pools(lax, np_)), in_axes=1)(x))
    got = tracehlo.jit(batched(tracehlo, tlax, tnp))(x)
    _assert_equal(got, jax.jit(batched(jax, jax.lax, jnp))(x), 1e-6)


X = np.ones((4, 5), np.float32)
ERRORS = [  # (window_dimensions, window_strides, padding, more, exception, message)
    ((2,), (1,), "VALID", {}, TypeError,
     r"reduce_window got the wrong number of window_dimensions for operand: got operand "
     r"shape \(4, 5\) with window_dimensions \(2,\)"),
    ((2, 0), (1, 1), "VALID", {}, TypeError,
     r"reduce_window window_dimensions must have every element be strictly positive"),
    ((2, 2), (1, 0), "VALID", {}, TypeError,
     r"reduce_window window_strides must have every element be strictly positive"),
    ((2, 2), (1,), "VALID", {}, TypeError,
     r"reduce_window got inconsistent window_strides and window_dimensions"),
    ((2, 2), (1, 1), "VALID", dict(base_dilation=(1,)), TypeError,
     r"reduce_window got inconsistent base_dilation and window_dimensions"),
    ((2, 2), (1, 1), "FULL", {}, RuntimeError, "Unrecognized padding type"),
    ((2, 2.0), (1, 1), "VALID", {}, TypeError,
     r"reduce_window window_dimensions must have every element be an integer type"),
]


@pytest.mark.parametrize("window,strides,padding,more,exc,message", ERRORS,
                         ids=[re.sub(r"\W+", "_", e[-1][14:50]) for e in ERRORS])
def test_errors_are_jaxs_at_the_users_line(window, strides, padding, more, exc, message):
    with pytest.raises(exc, match=message):
        jax.lax.reduce_window(X, 0.0, jax.lax.add, window, strides, padding, **more)
    with pytest.raises(exc, match=TEST_FILE_LINE + message):
        tlax.reduce_window(X, 0.0, tlax.add, window, strides, padding, **more)
    with pytest.raises(exc, match=TEST_FILE_LINE + message):
        tracehlo.jit(lambda a: tlax.reduce_window(a, 0.0, tlax.add, window, strides, padding,
                                                  **more))(X)


@pytest.mark.parametrize("init,computation,message", [
    (1.0, tlax.mul, "reduce_window with computation mul and init_value 1.0"),
    (1.0, tlax.add, "reduce_window with computation add and init_value 1.0"),
    (0.0, tnp.maximum, "reduce_window with computation maximum and init_value 0.0"),
], ids=["mul", "add_not_identity", "numpy_maximum"])
def test_a_general_computation_is_refused_at_the_users_line(init, computation, message):
    for run in (lambda: tlax.reduce_window(X, init, computation, (2, 2)),
                lambda: tracehlo.jit(lambda a: tlax.reduce_window(a, init, computation,
                                                                  (2, 2)))(X)):
        with pytest.raises(NotImplementedError, match=TEST_FILE_LINE + message):
            run()


def test_a_traced_init_and_a_pytree_are_refused():
    with pytest.raises(NotImplementedError, match=TEST_FILE_LINE + "reduce_window with "
                                                  r"computation add and init_value"):
        tracehlo.jit(lambda a, z: tlax.reduce_window(a, z, tlax.add, (2, 2)))(X, np.float32(0))
    with pytest.raises(NotImplementedError, match=TEST_FILE_LINE + "reduce_window of a pytree"):
        tlax.reduce_window((X, X), (0.0, 0.0), tlax.add, (2, 2))


def test_grad_of_a_window_dilated_max_pool_is_refused_as_jax():
    def loss(lax, np_):
        return lambda x: np_.sum(lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1),
                                                   "VALID", window_dilation=(2, 1)))
    with pytest.raises(NotImplementedError, match="with window dilation"):
        jax.grad(loss(jax.lax, jnp))(X)
    for grad in (tracehlo.grad(loss(tlax, tnp)), tracehlo.jit(tracehlo.grad(loss(tlax, tnp)))):
        with pytest.raises(NotImplementedError, match=TEST_FILE_LINE + "VJP not implemented "
                                                      r"for select_and_gather \(MaxPool\)"):
            grad(X)


def test_grad_of_a_max_pool_with_negative_padding_is_refused_at_the_pool():
    """JAX fails in its slice ('start_indices must ... be nonnegative'); ours failed in
    MLIR's parser when compiling, with no line of the user's."""
    loss = lambda x: tnp.sum(tlax.reduce_window(x, -np.inf, tlax.max, (2, 2), (1, 1),  # noqa: E731
                                                ((-1, 0), (0, 0))))
    with pytest.raises(TypeError, match="nonnegative"):
        jax.grad(lambda x: jnp.sum(jax.lax.reduce_window(x, -np.inf, jax.lax.max, (2, 2), (1, 1),
                                                         ((-1, 0), (0, 0)))))(X)
    for grad in (tracehlo.grad(loss), tracehlo.jit(tracehlo.grad(loss))):
        with pytest.raises(NotImplementedError, match=TEST_FILE_LINE + "the derivative of a "
                                                      "max or min pool with negative padding"):
            grad(X)


def test_padtype_to_pads_is_jaxs():
    for args in [((5, 6), (3, 2), (2, 1), "SAME"), ((5, 6), (3, 2), (2, 4), "SAME_LOWER"),
                 ((5, 6), (3, 2), (1, 1), "VALID")]:
        assert [tuple(p) for p in tlax.padtype_to_pads(*args)] == \
            [tuple(p) for p in jax.lax.padtype_to_pads(*args)]
