"""Forward and reverse mode: every primitive's rules checked numerically from one table,
and the transformations (grad, jvp, vjp, jacfwd, jacrev, hessian, custom rules,
checkpoint) against jax's as the oracle, alone and composed with jit."""
import functools
import re
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.dtypes import float0

import tracehlo
import tracehlo.numpy as tnp
from tracehlo import ad, core, lax, verify
from tracehlo.ad_checkpoint import checkpoint_name
from tracehlo.primitives.linalg import triangular_solve
from tracehlo.primitives.windowed import select_and_gather_add_p, select_and_scatter_add_p

from numpy_helpers import JAX_RELEASE

# ---------------------------------------------------------------- check_grads

rng = np.random.default_rng(0)


def uniform(lo, hi, shape=(2, 3)):
    return rng.uniform(lo, hi, shape)


def normal(shape=(2, 3)):
    return rng.normal(size=shape)


def cnormal(shape=(2, 3)):
    return rng.normal(size=shape) + 1j * rng.normal(size=shape)


def positive_definite(n, complex_=False):
    m = cnormal((n, n)) if complex_ else normal((n, n))
    return m @ np.conj(m.T) + n * np.eye(n)


def triangular(shape, complex_=False):
    """Well conditioned: a dominant diagonal in whichever triangle the solve reads."""
    return (cnormal(shape) if complex_ else normal(shape)) + 3 * np.eye(shape[-1])


def distinct(shape=(2, 3)):
    """Values far apart, so max/min/sort/clamp have no ties near them."""
    return rng.permutation(np.arange(np.prod(shape))).reshape(shape) * 0.5 - 1.0


PRED = np.array([[True, False, True], [False, False, True]])
IDX = np.array([[1], [0], [1]], np.int32)
jitted_sin_mul = tracehlo.jit(lambda x, y: tnp.sin(x) * y)


@tracehlo.custom_jvp
def _softplus(x):
    return tnp.log1p(tnp.exp(x))


_softplus.defjvp(lambda p, t: (_softplus(p[0]), t[0] / (1.0 + tnp.exp(-p[0]))))


def _scatter_rows(scatter, indices=IDX):
    """Rows of updates scattered into rows of x (IDX: row 1 twice, row 0 once)."""
    return lambda x, u: scatter(x, indices, u, lax.ScatterDimensionNumbers((1,), (0,), (0,)))

# (primitive, function of float64 arrays, arguments[, order checked (default 2)]): one row
# per differentiable primitive
ROWS = [
    ("neg", lax.neg, [normal()]),
    ("abs", lax.abs, [normal()]),
    ("abs", lax.abs, [cnormal()]),
    ("exp", lax.exp, [normal()]),
    ("exp2", lax.exp2, [normal()]),
    ("log", lax.log, [uniform(0.5, 2)]),
    ("log1p", lax.log1p, [uniform(0, 2)]),
    ("expm1", lax.expm1, [normal()]),
    ("sqrt", lax.sqrt, [uniform(0.5, 2)]),
    ("rsqrt", lax.rsqrt, [uniform(0.5, 2)]),
    ("cbrt", lax.cbrt, [uniform(0.5, 2)]),
    ("sin", lax.sin, [normal()]),
    ("sin", lax.sin, [cnormal()]),
    ("cos", lax.cos, [normal()]),
    ("tan", lax.tan, [uniform(-1, 1)]),
    ("tanh", lax.tanh, [normal()]),
    ("logistic", lax.logistic, [normal()]),
    ("asin", lax.asin, [uniform(-0.8, 0.8)]),
    ("acos", lax.acos, [uniform(-0.8, 0.8)]),
    ("atan", lax.atan, [normal()]),
    ("sinh", lax.sinh, [normal()]),
    ("cosh", lax.cosh, [normal()]),
    ("asinh", lax.asinh, [normal()]),
    ("acosh", lax.acosh, [uniform(1.5, 3)]),
    ("atanh", lax.atanh, [uniform(-0.8, 0.8)]),
    ("erf", lax.erf, [normal()]),
    ("erfc", lax.erfc, [normal()]),
    ("erf_inv", lax.erf_inv, [uniform(-0.8, 0.8)]),
    ("lgamma", lax.lgamma, [uniform(0.5, 3)]),
    ("digamma", lax.digamma, [uniform(0.5, 3)]),
    ("polygamma", lambda x: lax.polygamma(np.full(x.shape, 2.0), x), [uniform(0.5, 3)]),
    ("add", lax.add, [normal(), normal()]),
    ("add", lambda x, s: lax.add(x, s), [normal(), normal(())]),  # a rank-0 operand
    ("sub", lax.sub, [normal(), normal()]),
    ("mul", lax.mul, [normal(), normal()]),
    ("mul", lax.mul, [cnormal(), cnormal()]),
    ("div", lax.div, [normal(), uniform(0.5, 2)]),
    ("pow", lax.pow, [uniform(0.5, 2), normal()]),
    ("integer_pow", lambda x: lax.integer_pow(x, 3) + lax.integer_pow(x, -2)
     + lax.integer_pow(x, 1) + lax.integer_pow(x, 0), [uniform(0.5, 2)]),
    ("max", lax.max, [distinct(), distinct() + 0.25]),
    ("min", lax.min, [distinct(), distinct() + 0.25]),
    ("atan2", lax.atan2, [normal(), normal()]),
    ("rem", lax.rem, [uniform(2.1, 2.9), uniform(0.6, 0.9)]),
    ("real", lax.real, [cnormal()]),
    ("imag", lax.imag, [cnormal()]),
    ("complex", lax.complex, [normal(), normal()]),
    ("conj", lax.conj, [cnormal()]),
    ("conj", lax.conj, [normal()]),
    ("select", lambda a, b: lax.select(PRED, a, b), [normal(), normal()]),
    ("select_n", lambda a, b, c: lax.select_n(PRED + np.eye(2, 3, dtype=np.int32), a, b, c),
     [normal(), normal(), normal()]),
    ("select_n", lambda a, b, c: lax.select_n(np.uint8(2), a, b, c),
     [normal(), normal(), normal()]),
    ("reduce_precision", lambda x: lax.reduce_precision(x, 8, 40), [normal()]),
    ("clamp", lax.clamp, [np.float64(-0.75), distinct(), np.float64(0.75)]),
    ("convert_element_type", lambda x: lax.convert_element_type(x, np.complex128),
     [normal()]),
    ("reduce_sum", lambda x: lax.reduce_sum(x, (1,)), [normal()]),
    ("reduce_max", lambda x: lax.reduce_max(x, (0, 1)), [distinct()]),
    ("reduce_min", lambda x: lax.reduce_min(x, (0,)), [distinct()]),
    ("reduce_prod", lambda x: lax.reduce_prod(x, (1,)), [normal()]),
    ("cumsum", lambda x: lax.cumsum(x, 1), [normal()]),
    ("cumprod", lambda x: lax.cumprod(x, 1, reverse=True), [normal()]),
    ("cummax", lambda x: lax.cummax(x, 1), [distinct()]),
    ("cummin", lambda x: lax.cummin(x, 0), [distinct()]),
    ("cumlogsumexp", lambda x: lax.cumlogsumexp(x, 1, reverse=True), [normal()]),
    ("cumlogsumexp", lambda x: lax.cumlogsumexp(x, 0), [cnormal()]),
    ("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 2, 3), (1, 2)),
     [normal((1, 3))]),
    ("reshape", lambda x: lax.reshape(x, (3, 2)), [normal()]),
    ("squeeze", lambda x: lax.squeeze(x, (0,)), [normal((1, 3))]),
    ("expand_dims", lambda x: lax.expand_dims(x, (1,)), [normal()]),
    ("transpose", lambda x: lax.transpose(x, (1, 0)), [normal()]),
    ("rev", lambda x: lax.rev(x, (1,)), [normal()]),
    ("concatenate", lambda x, y: lax.concatenate([x, y], 1), [normal(), normal((2, 2))]),
    ("pad", lambda x, v: lax.pad(x, v, [(1, -1, 1), (0, 2, 0)]), [normal(), normal(())]),
    ("slice", lambda x: lax.slice(x, (0, 0), (2, 3), (1, 2)), [normal()]),
    ("dynamic_slice", lambda x: lax.dynamic_slice(x, (1, 1), (1, 2)), [normal()]),
    ("dynamic_update_slice", lambda x, u: lax.dynamic_update_slice(x, u, (0, 1)),
     [normal(), normal((2, 1))]),
    ("gather", lambda x: lax.gather(x, IDX, lax.GatherDimensionNumbers((1,), (0,), (0,)),
                                    (1, 3), mode="clip"), [normal()]),
    ("gather", lambda x: tnp.take_along_axis(x, np.array([[2, 0], [1, 1]]), 1), [normal()]),
    ("scatter", _scatter_rows(lax.scatter_add), [normal(), normal((3, 3))]),
    ("scatter", _scatter_rows(lax.scatter, IDX[:1]), [normal(), normal((1, 3))]),
    ("scatter", _scatter_rows(lax.scatter_mul), [normal(), normal((3, 3))]),  # row 1 twice
    ("scatter", _scatter_rows(lax.scatter_min), [distinct(), distinct((3, 3)) + 0.25]),
    ("scatter", _scatter_rows(lax.scatter_max), [distinct(), distinct((3, 3)) + 0.25]),
    ("scatter", lambda x, u: lax.scatter_sub(x, IDX, u, lax.ScatterDimensionNumbers(
        (1,), (0,), (0,)), mode="clip"), [normal(), normal((3, 3))]),
    ("scatter", lambda x, u: lax.scatter_mul(x, IDX[:2], u, lax.ScatterDimensionNumbers(
        (1,), (0,), (0,)), unique_indices=True), [normal(), normal((2, 3))]),
    ("scatter", lambda x, u: lax.scatter_max(x, IDX[:, :, None], u, lax.ScatterDimensionNumbers(
        (), (1,), (1,), (0,), (0,))), [distinct((3, 2)), distinct((3, 1)) + 0.25]),
    ("slice", lambda x: lax.index_in_dim(x, -1, 1, keepdims=False), [normal()]),
    ("reshape", lambda x: lax.collapse(x, 1), [normal((2, 3, 2))]),
    ("dot_general", lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))),
     [normal((2, 3, 4)), normal((2, 4, 2))]),
    ("conv_general_dilated", lambda x, y: lax.conv_general_dilated(
        x, y, (2, 1), ((1, 0), (0, -1)), (1, 2), (2, 1), ("NHWC", "HWIO", "NHWC"),
        feature_group_count=2), [normal((1, 5, 3, 4)), normal((2, 2, 2, 4))]),
    ("conv_general_dilated", lambda x, y: lax.conv_general_dilated(
        x, y, (1,), "SAME", batch_group_count=2), [normal((2, 2, 4)), normal((2, 2, 3))]),
    ("cholesky", tnp.linalg.cholesky, [positive_definite(3)]),
    ("cholesky", tnp.linalg.cholesky, [positive_definite(3, complex_=True)]),
    ("triangular_solve", lambda a, b: triangular_solve(a, b, left_side=True, lower=True),
     [triangular((3, 3)), normal((3, 2))]),
    ("triangular_solve", lambda a, b: triangular_solve(a, b, transpose_a=True,
                                                       unit_diagonal=True),
     [triangular((2, 3, 3)), normal((2, 2, 3))]),
    ("triangular_solve", lambda a, b: triangular_solve(a, b, left_side=True, lower=True,
                                                       conjugate_a=True),
     [triangular((3, 3), True), cnormal((3, 2))]),
    ("lu", lambda a: lax.linalg.lu(a)[0], [normal((2, 4, 3))]),
    ("lu", lambda a: lax.linalg.lu(a)[0], [cnormal((2, 3))]),
    ("qr", lambda a: lax.mul(*lax.linalg.qr(a, full_matrices=False)), [normal((2, 3, 3))]),
    ("qr", lambda a: lax.linalg.qr(a)[0], [cnormal((4, 2))]),  # full Q of a tall matrix
    ("qr", lambda a: lax.linalg.qr(a)[1], [normal((2, 4))]),
    ("eigh", lambda a: (lambda v, w: v * w[..., None, :])(*lax.linalg.eigh(a)),
     [normal((2, 3, 3))]),
    # complex eigenvectors are defined up to a phase each: |v|² is not
    ("eigh", lambda a: (lambda v, w: tnp.real(v * tnp.conj(v)) * w)(*lax.linalg.eigh(a)),
     [cnormal((3, 3))]),
    ("svd", lambda a: (lambda u, s, vh: u * s[..., None, :] + vh[..., :1, :2])(
        *lax.linalg.svd(a, full_matrices=False)), [normal((2, 3, 2))]),  # signs fixed locally
    ("svd", lambda a: lax.linalg.svd(a, compute_uv=False), [cnormal((2, 3))]),
    # first order only: the rules differentiate eigenvectors, whose derivatives must be
    # opted in (JAX's hessian of eigvals raises too)
    ("eig", lambda a: lax.linalg.eig(a, compute_left_eigenvectors=False,
                                     compute_right_eigenvectors=False)[0],
     [normal((2, 3, 3))], 1),
    ("eig", lambda a: (lambda w, vl, vr: vl * vr[..., :1, :] + w[..., None, :])(
        *lax.linalg.eig(a, enable_eigvec_derivs=True)), [cnormal((3, 3))], 1),
    ("fft", lambda x: lax.fft(x, "ifft", (2, 3)), [cnormal()]),
    ("fft", lambda x: lax.fft(x, "rfft", (2, 3)), [normal()]),  # odd: one weight of 1
    ("fft", lambda x: lax.fft(x, "irfft", (2, 4)), [cnormal()]),  # even: two
    ("sort", lambda k, v: lax.mul(*lax.sort([k, v], dimension=1)), [distinct(), normal()]),
    ("top_k", lambda x: lax.top_k(x, 2)[0], [distinct()]),
    ("top_k", lambda x: lax.top_k(x, 1, axis=0)[0], [distinct()]),
    ("reduce_window_sum", lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 2),
                                                      ((1, 0), (0, 1)), (1, 2), (2, 1)),
     [normal((3, 4))]),
    ("reduce_window_max", lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1),
                                                      "SAME", (1, 2)), [distinct((3, 4))]),
    ("reduce_window_min", lambda x: lax.reduce_window(x, np.inf, lax.min, (2, 1), (2, 1),
                                                      ((1, 0), (0, 0))), [distinct((3, 4))]),
    ("select_and_gather_add", lambda t, x: select_and_gather_add_p.bind(
        t, x, select_prim="ge", window_dimensions=(2, 2), window_strides=(1, 1),
        padding=((0, 1), (1, 0)), base_dilation=(1, 1), window_dilation=(1, 1)),
     [normal((3, 4)), distinct((3, 4))]),
    ("select_and_scatter_add", lambda s, x: select_and_scatter_add_p.bind(
        s, x, select_prim="le", window_dimensions=(2, 2), window_strides=(1, 2),
        padding=((0, 1), (1, 0))), [normal((3, 2)), distinct((3, 4))]),
    ("name", lambda x: lax.mul(checkpoint_name(x, "h"), x), [normal()]),
    ("optimization_barrier", lambda x, y: lax.mul(*lax.optimization_barrier((x, y))),
     [normal(), normal()]),
    ("pjit", jitted_sin_mul, [normal(), normal()]),
    ("custom_jvp_call", tracehlo.jit(_softplus), [normal()]),  # the callee's rule
    ("cond", lambda x, y: lax.cond(lax.reduce_sum(x, (0, 1)) > 0, lambda a, b: lax.sin(a) * b,
                                   lambda a, b: a - b, x, y), [normal(), normal()]),
    ("scan", lambda x, y: lax.scan(lambda c, r: (lax.sin(c) * r, c + r), y[0], x)[1],
     [normal(), normal()]),
]

# primitives whose result does not change with their operands: zero tangents
ZERO_ROWS = [
    ("floor", lax.floor, [normal()]),
    ("ceil", lax.ceil, [normal()]),
    ("round", lax.round, [normal()]),
    ("sign", lax.sign, [normal()]),
    ("compare", lax.lt, [normal(), normal()]),
    ("is_finite", lax.is_finite, [normal()]),
    ("nextafter", lambda x: lax.nextafter(x, x + 1), [normal()]),
    ("argmax", lambda x: lax.argmax(x, 1), [normal()]),
    ("argmin", lambda x: lax.argmin(x, 0), [normal()]),
    ("iota", lambda x: lax.iota(np.int32, 3), [normal((3,))]),
    ("convert_element_type", lambda x: lax.convert_element_type(x, np.int32), [normal()]),
    ("bitcast_convert_type", lambda x: lax.bitcast_convert_type(x, np.int64), [normal()]),
    ("stop_gradient", lax.stop_gradient, [normal()]),
    ("and", lambda x: lax.bitwise_and(lax.lt(x, 0), lax.gt(x, -1)), [normal()]),
    ("or", lambda x: lax.bitwise_or(lax.lt(x, 0), lax.gt(x, 1)), [normal()]),
    ("xor", lambda x: lax.bitwise_xor(lax.lt(x, 0), lax.gt(x, -1)), [normal()]),
    ("not", lambda x: lax.bitwise_not(lax.lt(x, 0)), [normal()]),
    ("reduce_and", lambda x: lax.reduce_and(lax.lt(x, 0), (1,)), [normal()]),
    ("reduce_or", lambda x: lax.reduce_or(lax.lt(x, 0), (1,)), [normal()]),
]
_INT = lambda x: lax.convert_element_type(x, np.int32)  # noqa: E731
ZERO_ROWS += [(name, lambda x, op=op: op(_INT(x), _INT(lax.abs(x))), [normal()])
              for name, op in [("shift_left", lax.shift_left),
                               ("shift_right_arithmetic", lax.shift_right_arithmetic),
                               ("shift_right_logical", lax.shift_right_logical)]]
ZERO_ROWS += [("population_count", lambda x: lax.population_count(_INT(x)), [normal()])]

EXEMPT = {
    "while": "reverse mode needs a static trip count (JAX raises the same error); "
             "test_control_flow.py checks its jvp against finite differences",
    "custom_vjp_call": "forward mode raises (as in JAX); "
                       "test_custom_rules_apply_inside_control_flow_and_nested_jit checks its "
                       "reverse mode against JAX's",
}


def test_every_primitive_has_a_row_or_is_exempt():
    covered = {r[0] for r in ROWS + ZERO_ROWS} | set(EXEMPT)
    assert sorted(set(core.primitives) - covered) == []
    for name, *_ in ROWS:
        prim = core.primitives[name]
        assert prim in ad.jvp_rules and (prim in ad.vjp_rules or prim in ad.vjp_fwd_rules), name
    for name in {r[0] for r in ZERO_ROWS} - {r[0] for r in ROWS}:
        assert getattr(ad.jvp_rules[core.primitives[name]], "zero", False), name


@pytest.fixture
def x64():
    tracehlo.config.update("enable_x64", True)
    try:
        yield
    finally:
        tracehlo.config.update("enable_x64", False)


def _like(x):
    x = np.asarray(x)
    if np.iscomplexobj(x):
        return rng.normal(size=x.shape) + 1j * rng.normal(size=x.shape)
    return rng.normal(size=x.shape).astype(x.dtype)


def _inner(xs, ys):
    return sum(np.real(np.vdot(np.asarray(x).ravel(), np.asarray(y).ravel()))
               for x, y in zip(xs, ys))


def _close(a, b, what, scale=1.0):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5,
                               atol=1e-5 * scale, err_msg=what)


def check_jvp(f, args, what):
    """The JVP against central differences along a random direction."""
    v = [_like(a) for a in args]
    eps = 1e-5
    plus = f(*[a + eps * t for a, t in zip(args, v)])
    minus = f(*[a - eps * t for a, t in zip(args, v)])
    numeric = (np.asarray(plus) - np.asarray(minus)) / (2 * eps)
    out, t_out = tracehlo.jvp(f, tuple(args), tuple(v))
    _close(out, f(*args), what + ": primal")
    _close(t_out, numeric, what + ": jvp vs finite differences",
           1 + np.abs(numeric).max(initial=0))


def check_vjp(f, args, what):
    """The VJP against the JVP: <ct, J v> == <J^T ct, v> (JAX's check_vjp, conjugates
    included, for its convention on complex numbers)."""
    v = [_like(a) for a in args]
    out, f_vjp = tracehlo.vjp(f, *args)
    ct = _like(out)
    cts = [np.conj(np.asarray(c)) for c in f_vjp(np.conj(ct))]
    t_out = tracehlo.jvp(f, tuple(args), tuple(v))[1]
    expected = _inner([t_out], [ct])
    _close(_inner(v, cts), expected, what + ": vjp vs jvp", 1 + abs(expected))


def check_grads(f, args, what, order=2):
    check_jvp(f, args, what)
    check_vjp(f, args, what)
    if order > 1:
        v = [_like(a) for a in args]
        ct = _like(f(*args))
        check_grads(lambda *a: tracehlo.jvp(f, a, tuple(v))[1], args, what + " (jvp)", 1)
        check_grads(lambda *a: tracehlo.vjp(f, *a)[1](ct)[0], args, what + " (vjp)", 1)


@pytest.mark.parametrize("name,f,args,order", [(*r, 2)[:4] for r in ROWS],
                         ids=[r[0] for r in ROWS])
def test_check_grads(x64, name, f, args, order):
    assert re.search(rf"= {name}\b", str(tracehlo.make_ir(f)(*args))), "row misses its primitive"
    check_grads(f, args, name, order)
    for staged in [lambda *a: tracehlo.jvp(f, a, a),
                   lambda *a: (lambda out, f_vjp: f_vjp(out))(*tracehlo.vjp(f, *a))]:
        g = tracehlo.make_ir(staged)(*args)  # the rules staged under jit type-check
        verify(g)
        assert str(tracehlo.parse_ir(str(g))) == str(g)


@pytest.mark.parametrize("name,f,args", ZERO_ROWS, ids=[r[0] for r in ZERO_ROWS])
def test_zero_tangents(x64, name, f, args):
    assert re.search(rf"= {name}\b", str(tracehlo.make_ir(f)(*args))), "row misses its primitive"
    out, t = tracehlo.jvp(f, tuple(args), tuple(np.ones_like(a) for a in args))
    t = np.asarray(t)
    assert t.shape == np.shape(out)
    assert t.dtype == float0 or not t.any()
    cts = tracehlo.vjp(f, *args)[1](np.ones(np.shape(out), np.asarray(out).dtype))
    assert all(not np.asarray(c).any() for c in cts)


# tracehlo.numpy and tracehlo.nn functions with float operands, checked the same way
# (first order: their primitives' second order is checked above). `.at` on a concrete
# array is jax's own, so its rows trace through jit.
M = normal((3, 3))
NUMPY_ROWS = [
    ("arccos", tnp.arccos, [uniform(-0.8, 0.8)]),
    ("arccosh", tnp.arccosh, [uniform(1.5, 3)]),
    ("arcsin", tnp.arcsin, [uniform(-0.8, 0.8)]),
    ("arcsinh", tnp.arcsinh, [normal()]),
    ("arctan", tnp.arctan, [normal()]),
    ("arctan2", tnp.arctan2, [normal(), normal()]),
    ("arctanh", tnp.arctanh, [uniform(-0.8, 0.8)]),
    ("absolute", tnp.absolute, [normal()]),
    ("amax", lambda x: tnp.amax(x, axis=1), [distinct()]),
    ("amin", lambda x: tnp.amin(x, axis=0), [distinct()]),
    ("broadcast_to", lambda x: tnp.broadcast_to(x, (2, 2, 3)), [normal((1, 3))]),
    ("cbrt", tnp.cbrt, [uniform(0.5, 2)]),
    ("clip", lambda x: tnp.clip(x, -0.75, 0.75), [distinct()]),
    ("column_stack", lambda a, b: tnp.column_stack([a, b]), [normal((3,)), normal((3,))]),
    ("concatenate", lambda a, b: tnp.concatenate([a, b], axis=0), [normal(), normal()]),
    ("conjugate", tnp.conjugate, [cnormal()]),
    ("copysign", tnp.copysign, [normal(), normal()]),
    ("cosh", tnp.cosh, [normal()]),
    ("cummax", lambda x: tnp.cummax(x, axis=1), [distinct()]),
    ("cumprod", lambda x: tnp.cumprod(x, axis=0), [normal()]),
    ("cumsum", tnp.cumsum, [normal()]),
    ("deg2rad", tnp.deg2rad, [normal()]),
    ("diag", tnp.diag, [M]),
    ("diagonal", tnp.diagonal, [M]),
    ("divide", tnp.divide, [normal(), uniform(0.5, 2)]),
    ("dot", tnp.dot, [normal(), normal((3, 2))]),
    ("einsum", lambda a, b: tnp.einsum("ij,jk->ik", a, b), [normal(), normal((3, 2))]),
    ("exp2", tnp.exp2, [normal()]),
    ("expand_dims", lambda x: tnp.expand_dims(x, 1), [normal()]),
    ("flip", tnp.flip, [normal()]),
    ("float_power", tnp.float_power, [uniform(0.5, 2), normal()]),
    ("fmod", tnp.fmod, [uniform(2.1, 2.9), uniform(0.6, 0.9)]),
    ("hstack", lambda a, b: tnp.hstack([a, b]), [normal(), normal()]),
    ("hypot", tnp.hypot, [normal(), normal()]),
    ("inner", tnp.inner, [normal(), normal()]),
    ("linalg.norm", tnp.linalg.norm, [normal()]),
    ("log10", tnp.log10, [uniform(0.5, 2)]),
    ("log2", tnp.log2, [uniform(0.5, 2)]),
    ("logaddexp", tnp.logaddexp, [normal(), normal()]),
    ("matmul", tnp.matmul, [normal((2, 2, 3)), normal((3, 2))]),
    ("maximum", tnp.maximum, [distinct(), distinct() + 0.25]),
    ("mean", lambda x: tnp.mean(x, axis=0), [normal()]),
    ("minimum", tnp.minimum, [distinct(), distinct() + 0.25]),
    ("mod", tnp.mod, [uniform(2.1, 2.9), uniform(0.6, 0.9)]),
    ("moveaxis", lambda x: tnp.moveaxis(x, 0, -1), [normal((2, 3, 1))]),
    ("outer", tnp.outer, [normal((3,)), normal((2,))]),
    ("pad", lambda x: tnp.pad(x, ((1, 0), (2, 1))), [normal()]),
    ("power", tnp.power, [uniform(0.5, 2), normal()]),
    ("power (int)", lambda x: tnp.power(x, 3), [normal()]),
    ("prod", lambda x: tnp.prod(x, axis=1), [normal()]),
    ("ptp", lambda x: tnp.ptp(x, axis=1), [distinct()]),
    ("ravel", tnp.ravel, [normal()]),
    ("reciprocal", tnp.reciprocal, [uniform(0.5, 2)]),
    ("repeat", lambda x: tnp.repeat(x, 2, axis=1), [normal()]),
    ("reshape", lambda x: tnp.reshape(x, (3, 2)), [normal()]),
    ("roll", lambda x: tnp.roll(x, 1, axis=1), [normal()]),
    ("sinh", tnp.sinh, [normal()]),
    ("sort", lambda x: tnp.sort(x, axis=0), [distinct()]),
    ("split", lambda x: tnp.split(x, 3, axis=1)[1], [normal()]),
    ("square", tnp.square, [normal()]),
    ("squeeze", tnp.squeeze, [normal((1, 3))]),
    ("stack", lambda a, b: tnp.stack([a, b], axis=1), [normal(), normal()]),
    ("std", lambda x: tnp.std(x, axis=1), [normal()]),
    ("sum", lambda x: tnp.sum(x, axis=(0, 1)), [normal()]),
    ("swapaxes", lambda x: tnp.swapaxes(x, 0, 1), [normal()]),
    ("take", lambda x: tnp.take(x, np.array([2, 0, 2]), axis=1), [normal()]),
    ("take_along_axis", lambda x: tnp.take_along_axis(x, np.array([[1], [0]]), 1),
     [normal()]),
    ("tensordot", lambda a, b: tnp.tensordot(a, b, 1), [normal(), normal((3, 2))]),
    ("tile", lambda x: tnp.tile(x, (2, 1)), [normal()]),
    ("trace", tnp.trace, [M]),
    ("transpose", tnp.transpose, [normal()]),
    ("tril", tnp.tril, [M]),
    ("triu", tnp.triu, [M]),
    ("var", lambda x: tnp.var(x, axis=0), [normal()]),
    ("vdot", tnp.vdot, [normal(), normal()]),
    ("vstack", lambda a, b: tnp.vstack([a, b]), [normal(), normal()]),
    ("where", lambda a, b: tnp.where(PRED, a, b), [normal(), normal()]),
    ("getitem", lambda x: x[1:, ::-1][:, np.array([0, 0, 2])], [normal()]),
    ("at.add", tracehlo.jit(lambda x, u: x.at[np.array([0, 0])].add(u)),
     [normal(), normal((2, 3))]),
    ("at.set", tracehlo.jit(lambda x, u: x.at[:, 1].set(u)), [normal(), normal((2,))]),
    ("at.multiply", tracehlo.jit(lambda x, u: x.at[np.array([1, 0, 1])].multiply(u)),
     [normal(), normal((3, 3))]),
    ("at.min", tracehlo.jit(lambda x, u: x.at[0, np.array([2, 0, 2])].min(u)),
     [distinct(), distinct((3,)) + 0.25]),
    ("at.max", tracehlo.jit(lambda x, u: x.at[0, np.array([2, 0, 2])].max(u)),
     [distinct(), distinct((3,)) + 0.25]),
    ("delete", lambda x: tnp.delete(x, np.array([0, 2]), axis=1), [normal()]),
    ("diff", lambda x: tnp.diff(x, 2, axis=1, prepend=1.0), [normal()]),
    ("gradient", lambda x: tnp.gradient(x, np.array([0.0, 1.0, 3.0]), axis=1), [normal()]),
    ("interp", tracehlo.jit(lambda x, fp: tnp.interp(x, np.array([-2.0, 0.5, 1.0, 2.5]), fp)),
     [np.array([[-1.5, 0.0, 0.75], [1.5, 2.0, 3.0]]), normal((4,))]),
    ("piecewise", lambda x: tnp.piecewise(x, [PRED], [tnp.sin, tnp.cos]), [normal()]),
    ("select", lambda a, b: tnp.select([PRED, ~PRED], [a, b], 1.0), [normal(), normal()]),
    ("trapezoid", lambda y, x: tnp.trapezoid(y, x), [normal(), normal((3,))]),
    ("average", lambda x, w: tnp.average(x, axis=1, weights=w), [normal(), uniform(0.5, 1, (3,))]),
    ("cov", lambda x: tnp.cov(x, aweights=np.array([1.0, 2.0, 0.5])), [normal()]),
    ("nanvar", lambda x: tnp.nanvar(x, axis=1), [normal()]),
    ("convolve", lambda a, v: tnp.convolve(a, v, mode="same"), [normal((5,)), normal((3,))]),
    ("cross", tnp.cross, [normal(), normal()]),
    ("kron", tnp.kron, [normal(), normal((2, 2))]),
    ("polyval", tnp.polyval, [normal((4,)), normal()]),
    ("vectorize", lambda a, b: tnp.vectorize(lambda p, q: tnp.sin(p) * q[::-1],
                                             signature="(),(n)->(n)")(a, b), [normal((2, 1)), normal()]),
    ("fmax", tnp.fmax, [distinct(), distinct() + 0.25]),
    ("frexp", lambda x: tnp.frexp(x)[0], [uniform(0.6, 0.9)]),
    ("logaddexp2", tnp.logaddexp2, [normal(), normal()]),
    ("i0", tnp.i0, [normal() * 5]),
    ("sinc", tnp.sinc, [normal()]),
    ("nn.gelu", tracehlo.nn.gelu, [normal()]),
    ("nn.log_softmax", tracehlo.nn.log_softmax, [normal()]),
    ("nn.logsumexp", lambda x: tracehlo.nn.logsumexp(x, axis=1), [normal()]),
    ("nn.relu", tracehlo.nn.relu, [distinct() + 0.25]),
    ("nn.silu", tracehlo.nn.silu, [normal()]),
    ("nn.softmax", tracehlo.nn.softmax, [normal()]),
    ("nn.softplus", tracehlo.nn.softplus, [normal()]),
]


@pytest.mark.parametrize("name,f,args", NUMPY_ROWS, ids=[r[0] for r in NUMPY_ROWS])
def test_check_grads_numpy(x64, name, f, args):
    check_grads(f, args, name, order=1)


# ---------------------------------------------------------------- against jax

def test_sinc_derivatives_at_zero_match_jax():
    """sinc's derivatives at 0 come from its Maclaurin series (custom rules), as JAX's."""
    d1, d2 = tracehlo.grad(tnp.sinc), tracehlo.grad(tracehlo.grad(tnp.sinc))
    ours = tracehlo.jit(lambda x: (d1(x), d2(x)))(0.0)  # one compile
    np.testing.assert_allclose(ours, (jax.grad(jnp.sinc)(0.0),
                                      jax.grad(jax.grad(jnp.sinc))(0.0)), rtol=1e-6)


def test_seed_polynomial():
    f = lambda x, y: x ** 4 + 2 ** y + 3  # noqa: E731
    g = tracehlo.grad
    assert g(f)(1.0, 2.0) == 4.0
    assert g(g(f))(1.0, 2.0) == 12.0
    assert g(g(g(f)))(1.0, 2.0) == 24.0
    np.testing.assert_allclose(g(f, argnums=1)(1.0, 2.0), 2.7725887, rtol=1e-6)
    assert g(f, argnums=(0, 1))(1.0, 2.0) == pytest.approx((4.0, 2.7725887))


def _piecewise(x):
    return 3. * x ** 2 if x < 3 else -4 * x


def test_python_control_flow_on_concrete_values():
    assert tracehlo.grad(_piecewise)(2.) == 12.0 == jax.grad(_piecewise)(2.)
    assert tracehlo.grad(_piecewise)(4.) == -4.0
    assert tracehlo.jvp(_piecewise, (2.,), (1.,))[1] == 12.0
    with pytest.raises(tracehlo.TracerBoolConversionError, match=r"test_ad\.py:\d+: a Python `if`"):
        tracehlo.jit(tracehlo.grad(_piecewise))(2.)


def test_numpy_or_jax_code_given_a_differentiated_value_raises():
    """Outside jit a differentiated value is concrete for Python control flow, but an
    array conversion would hand NumPy or JAX its value without its derivative. JAX
    raises there too. A jax.Array's own methods given it (.at[]) are ours: JAX's
    gradient."""
    table = jnp.zeros(3)
    match = r"test_ad\.py:\d+: a value being differentiated was converted to a NumPy array"
    with pytest.raises(tracehlo.ConcretizationError, match=match):
        tracehlo.grad(lambda x: np.sin(np.asarray(x)) * x)(2.0)
    f = lambda x: (table.at[1].set(x) * x).sum()  # noqa: E731
    assert tracehlo.grad(f)(2.0) == jax.grad(f)(2.0) == 4.0


def _value_and_grad_aux(np_):
    def f(x):
        y = np_.sum(np_.tanh(x) * x)
        return y, {"norm": np_.sum(x * x)}
    return f


def test_value_and_grad_has_aux():
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    (v, aux), g = tracehlo.value_and_grad(_value_and_grad_aux(tnp), has_aux=True)(x)
    (jv, jaux), jg = jax.value_and_grad(_value_and_grad_aux(jnp), has_aux=True)(x)
    np.testing.assert_allclose(v, jv, rtol=1e-6)
    np.testing.assert_allclose(aux["norm"], jaux["norm"], rtol=1e-6)
    np.testing.assert_allclose(g, jg, rtol=1e-6)
    g2, aux2 = tracehlo.grad(_value_and_grad_aux(tnp), has_aux=True)(x)
    np.testing.assert_allclose(g2, jg, rtol=1e-6)


def test_aux_outputs_leave_as_values():
    x = np.linspace(-1, 1, 3, dtype=np.float32)
    f = lambda x: (tnp.sin(x), {"cos": tnp.cos(x)})  # noqa: E731
    jf = lambda x: (jnp.sin(x), {"cos": jnp.cos(x)})  # noqa: E731
    out, t, aux = tracehlo.jvp(f, (x,), (x,), has_aux=True)
    jout, jt, jaux = jax.jvp(jf, (x,), (x,), has_aux=True)
    _assert_trees_close((out, t, aux), (jout, jt, jaux))
    for ours, theirs in [(tracehlo.jacfwd, jax.jacfwd), (tracehlo.jacrev, jax.jacrev)]:
        _assert_trees_close(ours(f, has_aux=True)(x), theirs(jf, has_aux=True)(x))
    out, f_vjp, aux = tracehlo.vjp(f, x, has_aux=True)
    assert isinstance(aux["cos"], jax.Array)
    _assert_trees_close(f_vjp(x), jax.vjp(jf, x, has_aux=True)[1](x))


class Params(NamedTuple):
    w: np.ndarray
    b: np.ndarray


def test_registered_containers_and_closures():
    p = Params(np.ones((3, 2), np.float32), np.zeros(2, np.float32))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    loss = lambda p: tnp.sum(tnp.tanh(x @ p.w + p.b))  # noqa: E731  (closes over x)
    jloss = lambda p: jnp.sum(jnp.tanh(x @ p.w + p.b))  # noqa: E731
    g = tracehlo.grad(loss)(p)
    assert isinstance(g, Params)
    _assert_trees_close(g, jax.grad(jloss)(p))


def _mlp_loss(np_):
    def loss(params, x, labels):
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            if i < len(params) - 1:
                h = np_.maximum(np_.tanh(h), 0.1 * h)
        m = np_.max(h, axis=1, keepdims=True)
        logp = h - m - np_.log(np_.sum(np_.exp(h - m), axis=1, keepdims=True))
        return -np_.mean(np_.sum(logp * labels, axis=1))
    return loss


def _logistic_loss(np_):
    def loss(wb, x, y):
        p = 1 / (1 + np_.exp(-(x @ wb["w"] + wb["b"])))
        return -np_.mean(y * np_.log(p) + (1 - y) * np_.log(1 - p))
    return loss


def _softmax_xent(np_):
    def loss(logits, labels):
        e = np_.exp(logits - np_.max(logits, axis=-1, keepdims=True))
        return -np_.sum(labels * np_.log(e / np_.sum(e, axis=-1, keepdims=True)))
    return loss


def _problems():
    r = np.random.default_rng(1)
    f32 = lambda *s: r.normal(size=s).astype(np.float32)  # noqa: E731
    labels = np.eye(3, dtype=np.float32)[r.integers(0, 3, 6)]
    return [
        ("mlp", _mlp_loss, ([(f32(4, 5), f32(5)), (f32(5, 3), f32(3))], f32(6, 4), labels)),
        ("logistic", _logistic_loss, ({"w": f32(4), "b": np.float32(0.1)}, f32(6, 4),
                                      (r.uniform(size=6) > 0.5).astype(np.float32))),
        ("softmax_xent", _softmax_xent, (f32(6, 3), labels)),
    ]


def _assert_trees_close(a, b, rtol=2e-5):
    assert jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(x, y, rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("name,make,args", _problems(), ids=[p[0] for p in _problems()])
def test_gradients_equal_jax(name, make, args):
    expected = jax.grad(make(jnp))(*args)
    _assert_trees_close(tracehlo.grad(make(tnp))(*args), expected)
    _assert_trees_close(tracehlo.jit(tracehlo.grad(make(tnp)))(*args), expected)


def test_max_and_min_gradients_split_ties_as_jax_does():
    """Ties share a max's (min's) derivative: JAX divides the cotangent (tangent) by
    the tie count, not the indicator, and so must we for the same bits."""
    x = np.array([[1., 5., 5., 5.], [2., 2., 0., 1.], [3., 3., 3., 3.]], np.float32)
    w = np.array([0.7, 0.3, 0.1], np.float32)
    for reduce in ("max", "min"):
        def f(np_, x):
            return np_.sum(getattr(np_, reduce)(x, axis=1) * w)
        expected = jax.grad(lambda x: f(jnp, x))(x)
        np.testing.assert_array_equal(tracehlo.grad(lambda x: f(tnp, x))(x), expected)
        np.testing.assert_array_equal(tracehlo.jit(tracehlo.grad(lambda x: f(tnp, x)))(x),
                                      jax.jit(jax.grad(lambda x: f(jnp, x)))(x))
        _, tangent = tracehlo.jvp(lambda x: getattr(tnp, reduce)(x, axis=1), (x,), (x * w[:, None],))
        _, jax_tangent = jax.jvp(lambda x: getattr(jnp, reduce)(x, axis=1), (x,), (x * w[:, None],))
        np.testing.assert_array_equal(tangent, jax_tangent)


class _Namespaces(NamedTuple):
    np: object
    nn: object
    lax: object


_JAX = _Namespaces(jnp, jax.nn, jax.lax)
_OURS = _Namespaces(tnp, tracehlo.nn, lax)
_NAN, _INF = float("nan"), float("inf")
_INT_EXPONENTS = np.array([0, 0, 2, 1], np.int32)
_CASES = np.array([-1, 0, 1, 2], np.int16)

# (name, f(ns, x) elementwise in x, points x): derivatives where a function has a kink
# (or a 0 ** 0, a tie, an infinite value) follow each of JAX's rules, not the limit.
KINKS = [
    ("abs", lambda ns, x: ns.np.abs(x) + 2 * ns.lax.abs(x), [0., -0., _NAN, -1., 1.]),
    ("copysign", lambda ns, x: ns.np.copysign(x, 1.) + 2 * ns.np.copysign(x, -1.),
     [0., -0., _NAN, -1.]),
    ("nn.relu", lambda ns, x: ns.nn.relu(x), [0., -0., _NAN, -1., 1.]),
    ("hypot", lambda ns, x: ns.np.hypot(x, 0.) + 2 * ns.np.hypot(0., x) + 3 * ns.np.hypot(x, x)
     + 4 * ns.np.hypot(x, 1.), [0., -0., 1.]),
    ("logaddexp", lambda ns, x: ns.np.logaddexp(x, x) + 2 * ns.np.logaddexp(x, 1.),
     [0., 1., _INF, -_INF]),
    ("nn.softplus", lambda ns, x: ns.nn.softplus(x), [0., _INF, -_INF]),
    ("linalg.norm ord=1", lambda ns, x: ns.np.linalg.norm(x, 1), [0., -0., 1.]),
    ("cbrt", lambda ns, x: ns.np.cbrt(x), [0., -0., 1., _INF]),  # cbrt'' at 0: -inf
    ("x ** n", lambda ns, x: x ** 3 + 2 * x ** -2 + 3 * x ** 0, [0., -0., _INF]),
    # lax.pow's integer exponents (a Python int, an int32 array): 0 where the exponent is 0
    ("pow int exponent", lambda ns, x: ns.lax.pow(x, 0) + 2 * ns.lax.pow(x, _INT_EXPONENTS)
     + 3 * ns.np.power(x, _INT_EXPONENTS), [0., -0., _INF, 0.]),
    ("pow float exponent", lambda ns, x: ns.lax.pow(x, 0.) + 2 * x ** 0., [0., -0., 2.]),  # nan
    # a reduction over no axes is JAX's primitive too: max's and min's rules give nan at nan
    ("max min over no axes", lambda ns, x: ns.np.max(x, axis=()) + 2 * ns.np.min(x, axis=())
     + 3 * ns.np.max(x[0]), [0., 1., _NAN]),
    # select_n's transpose: an integer case index outside 0 and 1 passes no derivative
    ("select of an integer predicate", lambda ns, x: ns.lax.select(_CASES, x, 2 * x),
     [1., 2., 3., 4.]),
]


# Derivatives computed by JAX's own formulas round as JAX's do: bit-equal gradients of
# these, first and second order, under vmap. Each function of a row takes its own
# argument, so no cotangents of two functions add up (JAX's transposition sums them in
# another order than our tape). jnp's tan, arcsin, arccos, arctan, arcsinh are jitted
# functions whose 1 +- x * x XLA contracts into an FMA (so lax's here), and a primal
# used three times (tanh's second derivative, x / (x + 1)) sums in another order.
BIT_EQUAL_GRADS = [
    ("x**3 x**-2 log2 log10 reciprocal square",
     [lambda ns, x: x ** 3, lambda ns, x: x ** -2, lambda ns, x: ns.np.log2(x),
      lambda ns, x: ns.np.log10(x), lambda ns, x: ns.np.reciprocal(x),
      lambda ns, x: ns.np.square(x)]),
    ("lax cbrt sqrt log log1p exp2 atanh",
     [lambda ns, x: ns.lax.cbrt(x), lambda ns, x: ns.lax.sqrt(x), lambda ns, x: ns.lax.log(x),
      lambda ns, x: ns.lax.log1p(x), lambda ns, x: ns.lax.exp2(x),
      lambda ns, x: ns.lax.atanh(x * 0.3)]),
    ("lax tan asin acos atan asinh acosh rsqrt erf erfc erf_inv atan2_x atan2_y 2/x",
     [lambda ns, x: ns.lax.tan(x * 0.3), lambda ns, x: ns.lax.asin(x * 0.3),
      lambda ns, x: ns.lax.acos(x * 0.3), lambda ns, x: ns.lax.atan(x),
      lambda ns, x: ns.lax.asinh(x), lambda ns, x: ns.lax.acosh(x + 1.),
      lambda ns, x: ns.lax.rsqrt(x), lambda ns, x: ns.lax.erf(x), lambda ns, x: ns.lax.erfc(x),
      lambda ns, x: ns.lax.erf_inv(x * 0.3), lambda ns, x: ns.lax.atan2(x, 2.),
      lambda ns, x: ns.lax.atan2(1., x), lambda ns, x: 2. / x]),
]


@pytest.mark.parametrize("name,fs", BIT_EQUAL_GRADS, ids=[r[0] for r in BIT_EQUAL_GRADS])
def test_gradients_round_as_jax(name, fs):
    x = np.linspace(0.1, 3, 24).astype(np.float32)
    nums = tuple(range(len(fs)))

    def grads(ns, grad):
        d1 = grad(lambda *xs: sum(ns.np.sin(f(ns, v) * 1.3) for f, v in zip(fs, xs)), nums)
        return d1, grad(lambda *xs: sum(d1(*xs)), nums)
    for order, (d, want) in enumerate(zip(grads(_OURS, tracehlo.grad),
                                          grads(_JAX, jax.grad)), 1):
        for got, w, fname in zip(tracehlo.vmap(d)(*[x] * len(fs)),
                                 jax.vmap(want)(*[x] * len(fs)), name.split()[-len(fs):]):
            if JAX_RELEASE >= (0, 11):  # its log2, atanh and asin rules, at least, changed
                np.testing.assert_allclose(got, w, rtol=1e-6, atol=1e-7,
                                           err_msg=f"{fname}: order {order}")
            else:
                np.testing.assert_array_equal(got, w, err_msg=f"{fname}: order {order}")


@pytest.mark.parametrize("name,f,points", KINKS, ids=[r[0] for r in KINKS])
def test_derivatives_at_kinks_follow_jax(name, f, points):
    """First and second derivatives against jax.grad's, eagerly and under jit against
    JAX's under jit (each point's own: f is elementwise, so a nan at one point does not
    reach another; XLA folds a max over no axes away, and its nan with it)."""
    x = np.array(points, np.float32)

    def grads(ns, grad):
        d1 = grad(lambda x: ns.np.sum(f(ns, x)))
        return d1, grad(lambda x: ns.np.sum(d1(x)))
    ours = grads(_OURS, tracehlo.grad)
    for order, (want, d) in enumerate(zip(grads(_JAX, jax.grad), ours), 1):
        np.testing.assert_array_equal(d(x), want(x), err_msg=f"{name}: order {order}")
        np.testing.assert_array_equal(tracehlo.jit(d)(x), jax.jit(want)(x),
                                      err_msg=f"{name}: order {order}, jitted")


def test_max_min_gradients_keep_the_sign_of_zero_as_jax():
    """JAX scales g by 0, 1/2 or 1: where the other operand wins, a negative g gives -0."""
    x = np.array([1., 2., 3., _NAN], np.float32)

    def f(np_, v):
        return np_.sum(np_.maximum(v, 2.) * -2. + np_.minimum(v, 2.) * -3.)
    got, want = tracehlo.grad(lambda v: f(tnp, v))(x), jax.grad(lambda v: f(jnp, v))(x)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_grad_of_jit_and_jvp_of_jit():
    x = np.linspace(0.1, 1, 3).astype(np.float32)
    f = tracehlo.jit(lambda x: tnp.sum(tnp.sin(x) * x))
    jf = lambda x: jnp.sum(jnp.sin(x) * x)  # noqa: E731
    np.testing.assert_allclose(tracehlo.grad(f)(x), jax.grad(jf)(x), rtol=1e-6)
    np.testing.assert_allclose(tracehlo.jvp(f, (x,), (x,))[1], jax.jvp(jf, (x,), (x,))[1],
                               rtol=1e-6)


def test_jvp_of_a_call_is_staged_once_per_tangent_types():
    """So an eager loop of jvp(jit(f)) compiles the jvp'd callee once."""
    x = np.ones(3, np.float32)

    def callee_graph():
        g = tracehlo.make_ir(lambda x: tracehlo.jvp(jitted_sin_mul, (x, x), (x, x)))(x)
        (eqn,) = g.eqns
        return eqn.params["graph"]
    assert callee_graph() is callee_graph()


def test_compositions_with_jit():
    x = np.linspace(0.1, 1, 3).astype(np.float32)
    f = lambda x: tnp.sum(tnp.tanh(x) ** 2 * tnp.exp(x))  # noqa: E731
    jf = lambda x: jnp.sum(jnp.tanh(x) ** 2 * jnp.exp(x))  # noqa: E731
    jit_f = tracehlo.jit(f)
    T = tracehlo
    for ours, theirs in [
            (T.jit(T.jacfwd(T.grad(f))), jax.jacfwd(jax.grad(jf))),
            (T.grad(T.checkpoint(jit_f)), jax.grad(jf)),
            (T.jacrev(T.jit(T.grad(jit_f))), jax.jacrev(jax.grad(jf))),
            (T.hessian(jit_f), jax.hessian(jf)),
            (T.grad(lambda x: T.grad(lambda y: tnp.sum(jit_f(y) * y))(x).sum()),
             jax.grad(lambda x: jax.grad(lambda y: jnp.sum(jf(y) * y))(x).sum()))]:
        np.testing.assert_allclose(ours(x), theirs(x), rtol=2e-5, atol=1e-6)


def test_jacobians_and_hessian():
    x = np.linspace(0.1, 1, 3).astype(np.float32)
    f = lambda x: tnp.sin(x) * tnp.sum(x ** 2)  # noqa: E731
    jf = lambda x: jnp.sin(x) * jnp.sum(x ** 2)  # noqa: E731
    np.testing.assert_allclose(tracehlo.jacfwd(f)(x), jax.jacfwd(jf)(x), rtol=1e-5)
    np.testing.assert_allclose(tracehlo.jacrev(f)(x), jax.jacrev(jf)(x), rtol=1e-5)
    s = lambda x: tnp.sum(f(x))  # noqa: E731
    js = lambda x: jnp.sum(jf(x))  # noqa: E731
    np.testing.assert_allclose(tracehlo.hessian(s)(x), jax.hessian(js)(x), rtol=1e-5)
    np.testing.assert_allclose(tracehlo.jacfwd(tracehlo.jacrev(s))(x), jax.hessian(js)(x),
                               rtol=1e-5)
    # pytrees: an output tree of input trees, as in JAX
    g = lambda p: {"a": p[0] * p[1], "b": tnp.sum(p[0])}  # noqa: E731
    jg = lambda p: {"a": p[0] * p[1], "b": jnp.sum(p[0])}  # noqa: E731
    _assert_trees_close(tracehlo.jacrev(g)((x, x[::-1])), jax.jacrev(jg)((x, x[::-1])))
    _assert_trees_close(tracehlo.jacfwd(g)((x, x[::-1])), jax.jacfwd(jg)((x, x[::-1])))


def test_complex_inputs_follow_jax():
    z = np.complex64(1 + 2j)
    for f, jf in [(lambda z: tnp.real(tnp.sin(z) * z), lambda z: jnp.real(jnp.sin(z) * z)),
                  (lambda z: tnp.abs(z) ** 2, lambda z: jnp.abs(z) ** 2)]:
        np.testing.assert_allclose(tracehlo.grad(f)(z), jax.grad(jf)(z), rtol=1e-6)


def test_holomorphic_and_allow_int():
    z = np.complex64(1 + 2j)
    np.testing.assert_allclose(tracehlo.grad(lambda z: tnp.sin(z) * z, holomorphic=True)(z),
                               jax.grad(lambda z: jnp.sin(z) * z, holomorphic=True)(z),
                               rtol=1e-6)
    g = tracehlo.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert g[0] == 3.0 and np.asarray(g[1]).dtype == float0
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with complex dtype, "
                                        "but got float32"):
        tracehlo.grad(tnp.sin, holomorphic=True)(1.0)


def test_integer_inputs_have_float0_tangents():
    out, t = tracehlo.jvp(lambda x, n: x * n, (2.0, 3), (1.0, np.zeros((), float0)))
    assert (out, t) == (6.0, 3.0)
    _, f_vjp = tracehlo.vjp(lambda x, n: x * n, 2.0, 3)
    ct_x, ct_n = f_vjp(1.0)
    assert ct_x == 3.0 and np.asarray(ct_n).dtype == float0


def test_jit_returns_the_float0_tangents_of_integer_outputs_as_jax_jit_does():
    """jvp of a function with an integer output, under jit (and through a nested jit):
    its float0 tangent, which holds no data, is returned outside the compiled graph.
    Before, tracing refused it as an output that is not an array."""
    def f(x):
        return tnp.argmax(x), x * 2

    def jf(x):
        return jnp.argmax(x), x * 2

    jvp_of = (lambda M, g: lambda x, t: M.jvp(g, (x,), (t,)))
    (want_index, _), (want_t_index, want_t) = jax.jit(jvp_of(jax, jf))(XS, YS)
    for got in (tracehlo.jit(jvp_of(tracehlo, f))(XS, YS),
                tracehlo.jit(lambda x, t: tracehlo.jit(jvp_of(tracehlo, f))(x, t))(XS, YS)):
        (index, _), (t_index, t_doubled) = got
        assert int(index) == int(want_index)
        assert np.asarray(t_index).dtype == float0 and np.shape(t_index) == ()
        np.testing.assert_allclose(t_doubled, want_t)
    # per example: a float0 tangent per index
    _, (t_index, t_doubled) = tracehlo.vmap(tracehlo.jit(jvp_of(tracehlo, f)))(
        XS[:, None], YS[:, None])
    assert np.asarray(t_index).dtype == float0 and np.shape(t_index) == (3,)
    np.testing.assert_allclose(t_doubled, YS[:, None] * 2)
    for M, g in ((tracehlo, f), (jax, jf)):  # as jax.vmap places it
        shared = M.vmap(jvp_of(M, g), out_axes=((0, 0), (None, 1)))(XS[:, None], YS[:, None])
        assert np.shape(shared[1][0]) == () and np.shape(shared[1][1]) == (1, 3)
    assert "argmax" in str(tracehlo.make_ir(jvp_of(tracehlo, f))(XS, YS))


def test_linearize_and_stop_gradient():
    out, f_jvp = tracehlo.linearize(tnp.sin, 1.0)
    np.testing.assert_allclose(out, np.sin(1.0), rtol=1e-6)
    np.testing.assert_allclose(f_jvp(2.0), 2 * np.cos(1.0), rtol=1e-6)
    traced = []

    def f(x):
        traced.append(1)
        return tnp.sin(x) * x
    x = np.linspace(0, 1, 3).astype(np.float32)
    _, f_jvp = tracehlo.linearize(f, x)
    first = f_jvp(np.ones(3, np.float32))
    count = len(traced)
    np.testing.assert_allclose(f_jvp(2 * np.ones(3, np.float32)), 2 * first, rtol=1e-6)
    assert len(traced) == count, "f_jvp traced the forward pass again"
    np.testing.assert_allclose(tracehlo.jit(lambda x, t: tracehlo.linearize(f, x)[1](t))(x, x),
                               jax.jvp(lambda x: jnp.sin(x) * x, (x,), (x,))[1], rtol=1e-6)
    f = lambda x: x * lax.stop_gradient(x)  # noqa: E731
    assert tracehlo.grad(f)(3.0) == 3.0


# ---------------------------------------------------------------- user-defined rules

@tracehlo.custom_jvp
def _log1pexp(x):
    return tnp.log(1. + tnp.exp(x))


@_log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _log1pexp(x), t * (1. - 1. / (1. + tnp.exp(x)))


@jax.custom_jvp
def _jax_log1pexp(x):
    return jnp.log(1. + jnp.exp(x))


_jax_log1pexp.defjvp(lambda p, t: (_jax_log1pexp(p[0]), t[0] * (1. - 1. / (1. + jnp.exp(p[0])))))


def test_custom_jvp_is_used_by_both_modes():
    # at x = 100 the naive derivative is inf / inf = nan; the rule's is 1
    x = 100.0
    assert tracehlo.grad(_log1pexp)(x) == 1.0 == jax.grad(_jax_log1pexp)(x)
    assert tracehlo.jvp(_log1pexp, (x,), (2.0,))[1] == 2.0
    np.testing.assert_allclose(tracehlo.grad(tracehlo.grad(_log1pexp))(0.5),
                               jax.grad(jax.grad(_jax_log1pexp))(0.5), rtol=1e-6)
    assert tracehlo.jit(tracehlo.grad(_log1pexp))(x) == 1.0


@tracehlo.custom_vjp
def _clip_gradient(x):
    return x


_clip_gradient.defvjp(lambda x: (x, None), lambda res, g: (tnp.clip(g, -1.0, 1.0),))


def test_custom_vjp_uses_bwd():
    f = lambda x: tnp.sum(_clip_gradient(x) * 3.0)  # noqa: E731
    np.testing.assert_allclose(tracehlo.grad(f)(np.ones(3, np.float32)), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(tracehlo.jit(tracehlo.grad(f))(np.ones(3, np.float32)),
                               [1.0, 1.0, 1.0])
    with pytest.raises(TypeError, match=r"test_ad\.py:\d+: can't apply forward-mode "
                       r"autodiff \(jvp\) to a custom_vjp function\."):
        tracehlo.jvp(f, (np.ones(3, np.float32),), (np.ones(3, np.float32),))


def test_nondiff_argnums():
    @functools.partial(tracehlo.custom_vjp, nondiff_argnums=(0,))
    def clip(lo, x):
        return x

    clip.defvjp(lambda lo, x: (x, None), lambda lo, res, g: (tnp.clip(g, -lo, lo),))

    @functools.partial(tracehlo.custom_jvp, nondiff_argnums=(0,))
    def scaled(k, x):
        return x * k
    scaled.defjvp(lambda k, p, t: (p[0] * k, t[0] * (k + 1)))  # a deliberately wrong rule

    f = lambda x: tnp.sum(clip(0.5, x) * 3.0)  # noqa: E731
    np.testing.assert_allclose(tracehlo.grad(f)(np.ones(2, np.float32)), [0.5, 0.5])
    assert tracehlo.grad(lambda x: scaled(2.0, x))(1.0) == 3.0
    assert tracehlo.jvp(lambda x: scaled(2.0, x), (1.0,), (1.0,))[1] == 3.0


def test_custom_vjp_bwd_may_return_none_for_a_pytree_argument():
    @tracehlo.custom_vjp
    def f(params, x):
        return params["w"] * x
    f.defvjp(lambda p, x: (f(p, x), p["w"]), lambda w, g: (None, g * w))
    params = {"w": 3.0, "b": 1.0}
    g_params, g_x = tracehlo.grad(lambda p, x: f(p, x), argnums=(0, 1))(params, 2.0)
    assert g_x == 3.0 and g_params == {"w": 0.0, "b": 0.0}


def _doubled_sin(M, np_, kind):
    """sin whose custom_vjp or custom_jvp rule says 2 cos (JAX's or ours): a deliberately
    wrong rule, so a result that ignores it shows."""
    if kind == "vjp":
        @M.custom_vjp
        def f(x):
            return np_.sin(x)
        f.defvjp(lambda x: (np_.sin(x), np_.cos(x)), lambda c, g: (2.0 * g * c,))
        return f

    @M.custom_jvp
    def f(x):
        return np_.sin(x)
    f.defjvp(lambda p, t: (f(p[0]), 2.0 * np_.cos(p[0]) * t[0]))
    return f


def _derivatives_in_staged_code(M, np_, f, forward):
    """Derivatives of f called in a cond, a switch, a scan, a fori_loop, a map and a nested
    jit, by grad, vmap of grad, grad of vmap and (forward: custom_jvp only) jvp."""
    contexts = [lambda a: M.lax.cond(a > 0, f, lambda v: v, a),
                lambda a: M.lax.switch(1, [lambda v: v, f], a),
                lambda a: M.lax.scan(lambda c, _: (f(c), None), a, None, length=2)[0],
                lambda a: M.lax.fori_loop(0, 2, lambda i, c: f(c), a),
                lambda a: M.lax.map(f, a[None])[0],
                M.jit(f)]

    def run(x, xs):
        out = []
        for c in contexts:
            out += [M.grad(c)(x), M.vmap(M.grad(c))(xs),
                    M.grad(lambda v: np_.sum(M.vmap(c)(v)))(xs)]
            if forward:
                out.append(M.jvp(c, (x,), (np_.ones_like(x),))[1])
        return out
    return run


@pytest.mark.parametrize("kind", ["vjp", "jvp"])
def test_custom_rules_apply_inside_control_flow_and_nested_jit(kind):
    # the staged branch, body or callee holds a custom call carrying the rule, which
    # its derivative uses; one program per rule kind
    x, xs = np.float32(0.3), np.array([0.3, -0.2, 1.1], np.float32)
    got = tracehlo.jit(_derivatives_in_staged_code(
        tracehlo, tnp, _doubled_sin(tracehlo, tnp, kind), kind == "jvp"))(x, xs)
    want = _derivatives_in_staged_code(jax, jnp, _doubled_sin(jax, jnp, kind), kind == "jvp")(x, xs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)

def test_checkpoint_recomputes_in_the_backward_pass():
    calls = []

    def block(x):
        calls.append(1)
        return tnp.sin(tnp.sin(x))
    x = np.float32(0.5)
    g = tracehlo.grad(lambda x: tracehlo.checkpoint(block)(x) * 2.0)(x)
    np.testing.assert_allclose(g, jax.grad(lambda x: jnp.sin(jnp.sin(x)) * 2.0)(x), rtol=1e-6)
    assert len(calls) == 1  # staged once, as JAX traces it once; the backward pass reruns
    #                         its Graph
    assert tracehlo.remat is tracehlo.checkpoint
    # under jit the recomputation starts from a barrier, so CSE does not merge its sin
    # with the forward pass's two
    ir = str(tracehlo.make_ir(tracehlo.value_and_grad(
        lambda x: tracehlo.checkpoint(block)(x) * 2.0))(x))
    assert ir.count("= optimization_barrier") == 1 and ir.count("= sin") == 3, ir
    np.testing.assert_allclose(
        tracehlo.jit(tracehlo.grad(lambda x: tracehlo.checkpoint(block)(x) * 2.0))(x), g)



def test_checkpoint_policies_recompute_what_jax_recomputes():
    """value_and_grad of checkpoint(f, policy=p) holds as many matrix products, tanh, sin,
    cos and barriers as JAX's StableHLO: everything_saveable recomputes nothing,
    nothing_saveable (the default) both products and the tanh, dots_saveable the tanh
    only, from the saved product; prevent_cse=False leaves the recomputation to CSE.
    The gradients, of the inputs and of a weight the function closes over, agree."""
    rng = np.random.default_rng(0)
    x, w1, w2 = (rng.normal(size=s).astype(np.float32) for s in [(3, 4), (4, 4), (4, 4)])

    def f(lib, x, w1, w2):
        return lib.sum(lib.sin(lib.tanh(x @ w1) @ w2))
    ops = ["dot_general", "tanh", "sin", "cos", "optimization_barrier"]

    def both(name, cse):
        return [T.value_and_grad(lambda x, w1, T=T, L=L: T.checkpoint(
                    lambda x, a: f(L, x, a, w2), prevent_cse=cse,
                    policy=name and getattr(T.checkpoint_policies, name))(x, w1),
                    argnums=(0, 1))
                for T, L in [(tracehlo, tnp), (jax, jnp)]]
    merged = None
    for name in ["everything_saveable", "nothing_saveable", "dots_saveable", None]:
        for cse in (True, False):
            mine, theirs = both(name, cse)
            ir = str(tracehlo.make_ir(mine)(x, w1))
            counts = [ir.count(f"= {op}") for op in ops]
            if cse or name == "everything_saveable":
                hlo = jax.jit(theirs).lower(x, w1).as_text()
                want = [hlo.count(f"stablehlo.{op} ") for op in
                        ["dot_general", "tanh", "sine", "cosine", "optimization_barrier"]]
                assert counts == want, (name, cse, counts, want)
                merged = merged if cse else want  # everything_saveable's, no barrier
            else:  # JAX leaves the merge to XLA's CSE; ours merges it before make_ir
                assert counts == merged, (name, cse, counts)
            (v, g), (jv, jg) = tracehlo.jit(mine)(x, w1), theirs(x, w1)
            np.testing.assert_allclose(v, jv, rtol=1e-6)
            for a, b in zip(g, jg):
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    grad_w = lambda T, L: T.grad(lambda w: T.checkpoint(lambda x: f(L, x, w, w2))(x))  # noqa
    np.testing.assert_allclose(grad_w(tracehlo, tnp)(w1), grad_w(jax, jnp)(w1), rtol=1e-5)


def test_checkpoint_policies_by_name_recompute_what_jax_recomputes():
    """checkpoint_name names values; the policies that save by name (and the others JAX
    has) recompute as many sines, cosines, tanh and products as JAX's StableHLO, with
    JAX's gradients. The offloading policies save what they would offload."""
    from jax.ad_checkpoint import checkpoint_name as jax_name
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=(4, 4)).astype(np.float32)

    def f(L, name, x, w):
        h = name(L.sin(x @ w), "h")
        g = name(L.cos(h) * h, "g")
        return L.sum(L.tanh(g @ w))

    def policies(P):
        return {"only h": P.save_only_these_names("h"),
                "all but h": P.save_anything_except_these_names("h"),
                "names but h": P.save_any_names_but_these("h"),
                "g or dots": P.save_from_both_policies(P.save_only_these_names("g"),
                                                       P.dots_saveable),
                "unbatched dots": P.dots_with_no_batch_dims_saveable,
                "offload g": P.save_and_offload_only_these_names(
                    names_which_can_be_saved=["h"], names_which_can_be_offloaded=["g"],
                    offload_src="device", offload_dst="pinned_host")}
    ours, theirs = policies(tracehlo.checkpoint_policies), policies(jax.checkpoint_policies)
    ops = ["dot_general", "sin", "cos", "tanh"]
    for case in ours:
        mine = tracehlo.grad(tracehlo.checkpoint(
            lambda x, w: f(tnp, checkpoint_name, x, w), policy=ours[case]), (0, 1))
        want = jax.grad(jax.checkpoint(lambda x, w: f(jnp, jax_name, x, w),
                                       policy=theirs[case]), (0, 1))
        ir = str(tracehlo.make_ir(mine)(x, w))
        hlo = jax.jit(want).lower(x, w).as_text()
        counts = [ir.count(f"= {op}") for op in ops]
        if case != "offload g":  # JAX's offloading moves g, which ours saves
            assert counts == [hlo.count(f"stablehlo.{op} ") for op in
                              ["dot_general", "sine", "cosine", "tanh"]], (case, counts)
        for a, b in zip(tracehlo.jit(mine)(x, w), want(x, w)):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_checkpoint_static_argnames_are_python_values():
    f = tracehlo.checkpoint(lambda x, mode: tnp.sin(x) if mode == "sin" else tnp.cos(x),
                            static_argnames="mode")
    for mode in ("sin", "cos"):
        for call in (lambda x: f(x, mode), lambda x: f(x, mode=mode)):
            np.testing.assert_allclose(tracehlo.grad(call)(0.5),
                                       jax.grad(getattr(jnp, mode))(0.5), rtol=1e-6)


def test_checkpoint_static_argnums_are_python_values():
    """As in JAX: static arguments stay Python values (a loop count, a function name),
    and fun is staged anew per value; others are traced, so Python control flow on them
    raises. Bad static_argnums and prevent_cse raise JAX's errors at the user's line."""
    x = np.linspace(0.1, 1, 4).astype(np.float32)

    def g(lib, n, x, mode):
        for _ in range(n):
            x = getattr(lib, mode)(x)
        return x
    for T, L in [(tracehlo, tnp), (jax, jnp)]:
        f = T.checkpoint(lambda n, x, mode: g(L, n, x, mode), static_argnums=(0, -1))
        got = (T.grad(lambda x: f(3, x, "tanh").sum())(x),
               T.jit(T.grad(lambda x: f(2, x * x, "sin").sum()))(x),
               T.vmap(T.grad(lambda x: f(2, x, "cos")))(x),
               T.jvp(lambda x: f(2, x, "sin"), (x,), (x,)))
        if T is tracehlo:
            ours = got
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(got)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    f = tracehlo.checkpoint(lambda n, x: g(tnp, n, x, "sin"), static_argnums=0)
    ir = lambda n: str(tracehlo.make_ir(tracehlo.grad(lambda x: f(n, x).sum()))(x))  # noqa
    assert ir(2).count("= cos") == 2 and ir(3).count("= cos") == 3
    for ours, theirs in [
            (lambda: tracehlo.checkpoint(lambda x: x, static_argnums=(1,))(x),
             lambda: jax.checkpoint(lambda x: x, static_argnums=(1,))(x)),
            (lambda: tracehlo.checkpoint(lambda x: x, prevent_cse=1),
             lambda: jax.checkpoint(lambda x: x, prevent_cse=1))]:
        with pytest.raises((TypeError, ValueError)) as want:
            theirs()
        with pytest.raises(want.type, match=f"^{re.escape(__file__)}:") as got:
            ours()
        assert str(got.value).endswith(str(want.value).replace("jax.", "tracehlo."))
    with pytest.raises(tracehlo.TracerBoolConversionError, match=re.escape(__file__)):
        tracehlo.grad(tracehlo.checkpoint(lambda x: tnp.sin(x) if x > 0 else x))(1.0)


def _same_error(ours, theirs, line=None):
    """ours() raises JAX's error (what theirs() raises): its type (tracehlo's error of
    that name for JAX's own classes), its message, after the line of this file where
    the user's mistake is (`line`, where given)."""
    with pytest.raises(Exception) as want:
        theirs()
    kind = getattr(tracehlo, type(want.value).__name__, type(want.value))
    with pytest.raises(kind) as got:
        ours()
    message = str(want.value).split("\nSee https://docs.jax.dev")[0]
    # JAX 0.11 names the rule's function and line ("Custom VJP bwd rule attached to
    # <lambda> at f.py:12 must ..."); ours names the line first, as 0.10.2 does
    message = re.sub(r"(Custom VJP \w+ rule) attached to \S+ at \S+:\d+ ", r"\1 ", message)
    if "JitTracer(" in message:  # a traced value printed: ours as Tracer<f32[3]>
        message = message[:message.index("JitTracer(")]
        assert message in str(got.value) and "Tracer<" in str(got.value), str(got.value)
    else:
        assert str(got.value).endswith(message), (str(got.value), message)
    where = f"{__file__}:{line}: " if line else f"{__file__}:"
    assert str(got.value).startswith(where), (str(got.value), where)


def _bad_vjp_rules(M, np_):
    """custom_vjp functions of (x, (y, {"z": z})) whose fwd or bwd returns something JAX
    rejects, by name, with the line of the faulty rule."""
    good_fwd = lambda x, t: (x * t[0] * t[1]["z"], (x, t))  # noqa: E731

    def make(fwd, bwd):
        f = M.custom_vjp(lambda x, t: x * t[0] * t[1]["z"])
        f.defvjp(fwd, bwd)
        return f, (bwd if fwd is good_fwd else fwd).__code__.co_firstlineno
    return {
        "bwd returns one array": make(good_fwd, lambda r, g: g),
        "bwd tuple too short": make(good_fwd, lambda r, g: (g,)),
        "bwd misses a subtree": make(good_fwd, lambda r, g: (g, (g,))),
        "bwd cotangent of another shape": make(
            good_fwd, lambda r, g: (np_.sum(g), (g, {"z": g}))),
        "fwd returns no pair": make(lambda x, t: x * t[0], lambda r, g: r),
        "fwd residual a string": make(lambda x, t: (x * t[0], "abc"), lambda r, g: r)}


def test_custom_vjp_rule_results_are_checked_as_in_jax():
    """fwd must return a pair with array residuals, bwd a tuple of cotangents of the
    primal inputs' structure and shapes: JAX's errors, at the faulty rule's line, eager
    and under jit and vmap. A list for the tuple and another dtype pass, as in JAX
    (which keeps the dtype bwd gives)."""
    x, y, z = np.float32(2.0), np.ones(3, np.float32), np.float32(0.5)
    ours, theirs = _bad_vjp_rules(tracehlo, tnp), _bad_vjp_rules(jax, jnp)
    for name, (f, line) in ours.items():
        jf = theirs[name][0]
        for T, M in [(lambda g: g, lambda g: g), (tracehlo.jit, jax.jit)]:
            _same_error(lambda: T(tracehlo.grad(lambda x: tnp.sum(f(x, (y, {"z": z})))))(x),
                        lambda: M(jax.grad(lambda x: jnp.sum(jf(x, (y, {"z": z})))))(x),
                        line)
    f, jf = (ours["bwd cotangent of another shape"][0],
             theirs["bwd cotangent of another shape"][0])
    _same_error(lambda: tracehlo.vmap(tracehlo.grad(lambda x: tnp.sum(f(x, (y, {"z": z})))))(y),
                lambda: jax.vmap(jax.grad(lambda x: jnp.sum(jf(x, (y, {"z": z})))))(y))

    def fine(M, np_):
        f = M.custom_vjp(lambda x, y: x * y)
        f.defvjp(lambda x, y: (x * y, (x, y)),
                 lambda r, g: [np_.sum(g * r[1]).astype(np.float16), g * r[0]])
        return M.grad(lambda x: np_.sum(f(x, y)))(x)
    got, want = fine(tracehlo, tnp), fine(jax, jnp)
    assert got.dtype == want.dtype == np.float16 and got == want


def test_custom_vjp_fwd_output_is_checked_against_fun_where_fun_was_staged():
    """Where fun was staged first (grad of jit), fwd's primal output must match fun's, as
    JAX checks then: structure, then shapes and dtypes."""
    def make(M, np_, fwd_out):
        f = M.custom_vjp(lambda x: x * 2)
        f.defvjp(lambda x: (fwd_out(x), None), lambda r, g: (g,))
        return lambda x: M.grad(M.jit(lambda x: np_.sum(f(x))))(x)
    line = test_custom_vjp_fwd_output_is_checked_against_fun_where_fun_was_staged.__code__
    for fwd_out in [lambda x: (x, x), lambda x: x.astype(np.float16)]:
        _same_error(lambda: make(tracehlo, tnp, fwd_out)(np.float32(1)),
                    lambda: make(jax, jnp, fwd_out)(np.float32(1)), line.co_firstlineno + 5)


def _resolved_args(M, np_):
    """custom_jvp/custom_vjp called with keywords and defaults, defjvps, nondiff_argnums
    holding a function, an int and an array; derivatives by grad, jvp, vmap and jit."""
    @M.custom_jvp
    def f(x, y, scale=2.0):
        return np_.sin(x) * y * scale
    f.defjvps(lambda t, out, x, y, s: np_.cos(x) * y * s * t, None,
              lambda t, out, x, y, s: out / s * t)

    @M.custom_vjp
    def g(x, y=3.0):
        return x * y
    g.defvjp(lambda x, y=3.0: (g(x, y), (x, y)), lambda r, c: (np_.sum(c * r[1]) * 10, c * r[0]))

    @functools.partial(M.custom_jvp, nondiff_argnums=(0, 2))
    def h(fn, x, n):
        return fn(x) ** n
    h.defjvp(lambda fn, n, p, t: (h(fn, p[0], n), 5 * n * t[0]))
    x, y = np.float32(0.7), np.linspace(0.5, 1.5, 3).astype(np.float32)
    loss = lambda x, y: np_.sum(  # noqa: E731
        f(x, y=y) + f(x, scale=3.0, y=y) + g(x, y=y) + g(x) + h(np_.tanh, x, 3)
        + h(np_.tanh, x, y))
    return [M.grad(loss, argnums=(0, 1))(x, y), M.jit(M.grad(loss, argnums=(0, 1)))(x, y),
            M.jvp(lambda x, y: np_.sum(f(x, y=y) + h(np_.tanh, x, y)), (x, y),
                  (np.float32(1), y)),  # (no jvp of a custom_vjp function)
            M.vmap(M.grad(loss), (0, None))(y, y),
            M.grad(lambda n: h(np_.sin, x, n))(np.float32(2))]  # a nondiff array: zero


def test_custom_rules_take_keywords_defaults_defjvps_and_nondiff_values_as_jax():
    got, want = _resolved_args(tracehlo, tnp), _resolved_args(jax, jnp)
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(a, b, rtol=2e-6)


def _bad_jvp_rules(M, np_):
    """custom_jvp functions of (x, y) whose use or rule JAX rejects, by name, with the
    line of the faulty rule (None: of the call)."""
    def make(rule, fun=lambda x, y: x * y):
        f = M.custom_jvp(fun)
        f.defjvp(rule)
        return f, rule.__code__.co_firstlineno if fun.__code__.co_kwonlyargcount == 0 else None
    return {
        "rule returns one array": make(lambda p, t: p[0] * p[1]),
        "tangent of another structure": make(lambda p, t: (p[0] * p[1], (t[0],))),
        "tangent of another shape": make(lambda p, t: (p[0] * p[1], t[0])),
        "tangent of another dtype": make(lambda p, t: (
            p[0] * p[1], (t[0] * p[1]).astype(np.float16))),
        "a keyword-only argument": make(lambda p, t: p, lambda x, *, y: x * y)}


def _nondiff_by_name(M, np_):
    @functools.partial(M.custom_vjp, nondiff_argnames=("n",))
    def scale(x, n):
        return x * n
    scale.defvjp(lambda x, n: (x * n, None), lambda n, r, g: (g * n,), optimize_remat=True)

    @functools.partial(M.custom_jvp, nondiff_argnames="n")
    def sine(x, n):
        return np_.sin(x) * n
    sine.defjvp(lambda n, p, t: (np_.sin(p[0]) * n, np_.cos(p[0]) * t[0] * n))
    return [M.grad(lambda x: scale(x, 3.0))(2.0), M.grad(lambda x: sine(x, n=2.0))(1.0),
            M.jit(M.grad(lambda x: sine(x, 2.0)))(1.0)]


def test_custom_rules_take_nondiff_argnames_as_jax():
    np.testing.assert_allclose(_nondiff_by_name(tracehlo, tnp), _nondiff_by_name(jax, jnp),
                               rtol=1e-6)
    f = tracehlo.custom_jvp(lambda x: x)
    with pytest.raises(NotImplementedError, match=r"test_ad\.py:\d+: symbolic_zeros=True is "
                                                  r"not supported"):
        f.defjvp(lambda p, t: (p[0], t[0]), symbolic_zeros=True)


def test_custom_jvp_misuse_raises_as_jax():
    x, y = np.float32(2.0), np.ones(3, np.float32)
    ours, theirs = _bad_jvp_rules(tracehlo, tnp), _bad_jvp_rules(jax, jnp)
    for name, (f, line) in ours.items():
        jf = theirs[name][0]
        _same_error(lambda: tracehlo.jvp(lambda x: f(x, y=y), (x,), (x,)),
                    lambda: jax.jvp(lambda x: jf(x, y=y), (x,), (x,)), line)
        _same_error(lambda: tracehlo.jit(tracehlo.grad(lambda x: tnp.sum(f(x, y=y))))(x),
                    lambda: jax.jit(jax.grad(lambda x: jnp.sum(jf(x, y=y))))(x), line)
    def misuses(M):
        no_rule = M.custom_jvp(lambda x: x)
        staged = M.custom_jvp(lambda x: x * 2)
        staged.defjvp(lambda p, t: (p[0][None], t[0][None]))  # not fun's shape
        nondiff = functools.partial(M.custom_vjp, nondiff_argnums=(1,))(lambda x, n: x * n)
        nondiff.defvjp(lambda x, n: (x * n, None), lambda n, r, g: (g * n,))
        return [lambda: M.grad(no_rule)(x), lambda: M.jvp(M.jit(staged), (x,), (x,)),
                lambda: M.jit(M.grad(nondiff))(x, x),
                lambda: functools.partial(M.custom_jvp, nondiff_argnums=(0,))(
                    lambda x: x).defjvps(None)]
    mine, cases = misuses(tracehlo), misuses(jax)
    for a, b in zip(mine, cases):
        _same_error(a, b)


def _rule_of(M, np_, tangent_out):
    f = M.custom_jvp(np_.sin)
    f.defjvp(lambda p, t: (f(p[0]), tangent_out(np_, p[0], t[0])))
    return f


NOT_LINEAR = {  # a JVP rule's tangent output, not linear in the tangent t
    "mul of 2 tangents": lambda np_, x, t: np_.cos(x) * t * t,
    "sin of a tangent": lambda np_, x, t: np_.cos(x) * np_.sin(t),
    r"div of a tangent \(div is not linear in operand 1\)": lambda np_, x, t: x / t,
    "max of a tangent": lambda np_, x, t: np_.maximum(t, 0.0)}


@pytest.mark.parametrize("problem", NOT_LINEAR)
def test_a_custom_jvp_rule_not_linear_in_its_tangents_is_refused_by_reverse_mode(problem):
    """Reverse mode pulls cotangents back through the rule run on zero tangents, so a
    rule that is not linear in them gave a gradient of 0 (t * t: its derivative at
    t = 0). JAX fails when it transposes such a rule; we name the rule and the op."""
    f = _rule_of(tracehlo, tnp, NOT_LINEAR[problem])
    for grad in (tracehlo.grad(f), tracehlo.jit(tracehlo.grad(f))):
        with pytest.raises(TypeError, match=(
                r"test_ad\.py:\d+: the JVP rule <lambda> of custom_jvp function sin is not "
                rf"linear in its tangents: it applies {problem}")):
            grad(np.float32(0.5))
    # JAX: an assertion, or no transpose rule for the op, inside its transposition
    with pytest.raises((AssertionError, NotImplementedError)):
        jax.grad(_rule_of(jax, jnp, NOT_LINEAR[problem]))(np.float32(0.5))
    # forward mode needs no linearity, in JAX neither
    np.testing.assert_allclose(
        tracehlo.jvp(f, (np.float32(0.5),), (np.float32(2.0),))[1],
        jax.jvp(_rule_of(jax, jnp, NOT_LINEAR[problem]), (np.float32(0.5),),
                (np.float32(2.0),))[1], rtol=1e-6)


def test_linear_custom_jvp_rules_still_differentiate_in_reverse_mode():
    """Sums, negation, products and quotients by primal values, selects, converts,
    reshapes, slices and dots: all linear in the tangent."""
    def tangent_out(np_, x, t):
        v = np_.stack([t, -t, t / (x + 2.0), np_.where(x > 0, t, 0.0)])
        w = np_.reshape(v, (2, 2))[:, ::-1].astype(np_.float16).astype(np_.float32)
        return np_.sum(w @ np_.ones(2, np_.float32) * x)
    got = tracehlo.grad(_rule_of(tracehlo, tnp, tangent_out))(np.float32(0.5))
    want = jax.grad(_rule_of(jax, jnp, tangent_out))(np.float32(0.5))
    np.testing.assert_allclose(got, want, rtol=1e-6)


# ---------------------------------------------------------------- API details as in JAX

XS = np.arange(1.0, 4.0, dtype=np.float32)
YS = XS + 1


def _raises_as_jax(ours, theirs, match):
    """ours() raises the type of error theirs() (JAX) raises (its builtin class: JAX's
    ConcretizationTypeError is our ConcretizationError, both TypeErrors), with `match`
    in its message after the user's line in this file."""
    with pytest.raises(Exception) as want:
        theirs()
    kind = next(k for k in type(want.value).__mro__ if k.__module__ == "builtins")
    with pytest.raises(kind, match=r"test_ad\.py:\d+: " + match):
        ours()


def test_argnums_are_checked_as_jax_checks_them():
    f, jf = (lambda a, b: tnp.sum(a ** 2 * b)), (lambda a, b: jnp.sum(a ** 2 * b))
    for argnums in (np.int64(1), -1, (-2, 1), [0]):
        got, want = tracehlo.grad(f, argnums)(XS, YS), jax.grad(jf, argnums)(XS, YS)
        assert type(got) is type(want)
        np.testing.assert_allclose(got, want)
    _raises_as_jax(lambda: tracehlo.grad(f, -3)(XS, YS), lambda: jax.grad(jf, -3)(XS, YS),
                   r"Positional argument indices, e\.g\. for `argnums`, must have value "
                   r"greater than or equal to -len\(args\)")
    # JAX fails on these by accident (a TypeError, a ValueError from max()); a position
    # named twice gave one of the two a zero gradient, silently
    for M in (tracehlo.grad, tracehlo.jacfwd, tracehlo.jacrev):
        with pytest.raises(ValueError, match=r"test_ad\.py:\d+: argnums=\(1, -1\) names "
                                             r"argument 1 more than once"):
            M(f, (1, -1))(XS, YS)
        with pytest.raises(ValueError, match=r"argnums=\(\) differentiates with respect to "
                                             r"no argument"):
            M(f, ())(XS, YS)


def test_functions_and_reduce_axes_are_checked_when_transformed():
    for M, name in ((tracehlo, "tracehlo"), (jax, "jax")):
        for api in ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "vmap"):
            with pytest.raises(TypeError, match="Expected a callable value, got 3"):
                getattr(M, api)(3)
        np.testing.assert_allclose(M.grad(lambda a: a.sum(), reduce_axes=())(XS), 1.0)
        with pytest.raises(NotImplementedError, match="reduce_axes argument to grad is "
                                                      "deprecated"):
            M.grad(lambda a: a.sum(), reduce_axes=("i",))
        # has_aux takes a pair as a list too
        g, aux = M.grad(lambda a: [(a ** 2).sum(), a], has_aux=True)(XS)
        np.testing.assert_allclose(g, 2 * XS), np.testing.assert_allclose(aux, XS)


def test_jacobians_check_dtypes_and_take_holomorphic_and_allow_int_as_jax():
    z = XS.astype(np.complex64) * (1 + 1j)
    for api, f in (("jacfwd", lambda a: a ** 2), ("jacrev", lambda a: a ** 2),
                   ("hessian", lambda a: (a ** 3).sum())):
        got = getattr(tracehlo, api)(f, holomorphic=True)(z)
        np.testing.assert_allclose(got, getattr(jax, api)(f, holomorphic=True)(z), rtol=1e-6)
    # an integer output's forward block and an integer input's reverse block are zeros
    # of that integer dtype
    got = tracehlo.jacfwd(lambda a: (a > 1).astype(tnp.int32))(XS)
    want = jax.jacfwd(lambda a: (a > 1).astype(jnp.int32))(XS)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    n = np.arange(3, dtype=np.int32)
    got = tracehlo.jacrev(lambda a, b: a * b, (0, 1), allow_int=True)(n, XS)
    want = jax.jacrev(lambda a, b: a * b, (0, 1), allow_int=True)(n, XS)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w)
    cases = [("jacfwd", lambda a: a * 2.0, n, "jacfwd requires real-valued inputs .* got int32"),
             ("jacfwd", lambda a: a * 2.0, z, "jacfwd requires real-valued inputs .* got "
                                              "complex64"),
             ("jacrev", lambda a: a * 2.0, n, r"jacrev requires real- or complex-valued inputs "
                                              r".* got int32"),
             ("jacrev", lambda a: a * 2.0, z, r"jacrev requires real-valued outputs .* got "
                                              r"complex64\. For holomorphic"),
             ("jacrev", lambda a: (a > 1).astype(np.int32), XS,
              r"jacrev requires real-valued outputs .* got int32\. For differentiation of "
              r"functions with integer outputs, use tracehlo\.vjp directly"),
             ("grad", lambda a: (a > 1).sum(), XS,
              r"grad requires real-valued outputs .* got int32\. For differentiation of "
              r"functions with integer outputs")]
    for api, f, x, match in cases:
        _raises_as_jax(lambda: getattr(tracehlo, api)(f)(x), lambda: getattr(jax, api)(f)(x),
                       match)


def test_linearize_and_vjp_take_and_check_tangents_as_jax():
    for M in (tracehlo, jax):
        out, f_jvp = M.linearize(lambda a: a ** 2, 2.0)  # an array, weakly typed
        assert (out.dtype, out.weak_type, float(out)) == (np.float32, True, 4.0)
        out, f_jvp, aux = M.linearize(lambda a, b: (a * b, b), np.arange(3), XS, has_aux=True)
        np.testing.assert_allclose(f_jvp(np.zeros(3, float0), XS), [0, 2, 6])
        np.testing.assert_allclose(aux, XS)
        # an integer output's cotangent is float0, or zeros of its dtype
        _, f_vjp = M.vjp(lambda a: (a * 2, (a > 1).astype(np.int32)), XS)
        for ct in (np.zeros(3, float0), np.zeros(3, np.int32)):
            np.testing.assert_allclose(f_vjp((XS, ct))[0], 2 * XS)
    _raises_as_jax(lambda: tracehlo.linearize(lambda a: a ** 2, XS)[1](np.ones(4, np.float32)),
                   lambda: jax.linearize(lambda a: a ** 2, XS)[1](np.ones(4, np.float32)),
                   r"linearized function called on tangent values inconsistent with the "
                   r"original primal values: got float32\[4\] for primal aval float32\[3\]")
    f_vjp, jf_vjp = tracehlo.vjp(lambda a: a * 2, XS)[1], jax.vjp(lambda a: a * 2, XS)[1]
    _raises_as_jax(lambda: f_vjp(XS.astype(np.float16)), lambda: jf_vjp(XS.astype(np.float16)),
                   r"unexpected type \(shape/dtype\) for argument to vjp function: got "
                   r"float16\[3\], but expected float32\[3\]")
    _raises_as_jax(lambda: f_vjp((XS,)), lambda: jf_vjp((XS,)),
                   "unexpected tree structure of argument to vjp function")
    f, jf = (lambda a: a * 2), (lambda a: a * 2)
    _raises_as_jax(lambda: tracehlo.jvp(f, (XS,), (np.ones(4, np.float32),)),
                   lambda: jax.jvp(jf, (XS,), (np.ones(4, np.float32),)),
                   r"jvp called with different primal and tangent shapes; got primal shape "
                   r"\(3,\) and tangent shape as \(4,\)")
    _raises_as_jax(lambda: tracehlo.jvp(f, (XS,), (XS.astype(np.float16),)),
                   lambda: jax.jvp(jf, (XS,), (XS.astype(np.float16),)),
                   r"primal and tangent arguments to tracehlo\.jvp do not match; .* expected "
                   r"tangent dtype float32, but got tangent dtype float16 instead")


def test_python_conversions_of_a_differentiated_value_as_jax():
    """item() and int() give the value (without its derivative), as JAX's do; float()
    and tolist() raise, as in JAX, rather than drop the derivative silently."""
    for M in (tracehlo, jax):
        assert float(M.grad(lambda a: a * a.item())(np.float32(3.0))) == 3.0
        assert float(M.grad(lambda a: a * int(a))(3.0)) == 3.0
    for conversion in (float, lambda a: a.tolist()):
        _raises_as_jax(lambda: tracehlo.grad(lambda a: a * conversion(a))(3.0),
                       lambda: jax.grad(lambda a: a * conversion(a))(3.0),
                       r"float\(\) of a value being differentiated would drop its "
                       r"derivative|a value being differentiated was converted to a NumPy")


# ---------------------------------------------------------------- errors and IR

def test_errors_name_the_users_line():
    with pytest.raises(TypeError, match=r"test_ad\.py:\d+: Gradient only defined for "
                                        r"scalar-output functions\. Output had shape: \(3,\)\."):
        tracehlo.grad(lambda x: x * 2)(np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"test_ad\.py:\d+: grad requires real- or "
                                        r"complex-valued inputs .* but got int32"):
        tracehlo.grad(lambda x: x * 2)(1)
    with pytest.raises(TypeError, match=r"test_ad\.py:\d+: grad requires real-valued "
                                        r"outputs .* but got complex64"):
        tracehlo.grad(lambda x: x * 2j)(1.0)
    with pytest.raises(TypeError, match=r"argnums=2 requires at least 3 positional arguments"):
        tracehlo.grad(lambda x, y: x, argnums=2)(1.0)
    with pytest.raises(TypeError, match=r"must be tuples or lists; found float and float"):
        tracehlo.jvp(tnp.sin, 1.0, 1.0)
    with pytest.raises(ValueError, match=r"test_ad\.py:\d+: polygamma gradient with respect "
                                         r"to m is not supported"):
        tracehlo.grad(lambda m: lax.polygamma(m, 1.5))(2.0)


def test_transformed_graphs_verify_round_trip_and_lose_dead_code():
    x = np.ones(3, np.float32)
    graphs = [tracehlo.make_ir(tracehlo.grad(tnp.sin))(1.0),
              tracehlo.make_ir(lambda x: tracehlo.jvp(tnp.sin, (x,), (x,)))(x),
              tracehlo.make_ir(tracehlo.grad(tracehlo.grad(tnp.tanh)))(1.0),
              tracehlo.make_ir(lambda x: tracehlo.jvp(jitted_sin_mul, (x, x), (x, x)))(x)]
    for g in graphs:
        verify(g)
        assert str(tracehlo.parse_ir(str(g))) == str(g)
    assert [e.prim.name for e in graphs[0].eqns] == ["cos", "mul"]  # no unused sin


def _sum_sin_times(x):
    return tnp.sum(tnp.sin(x) * x)  # every equation of grad(_sum_sin_times) comes from here


def test_backward_equations_keep_the_forward_line():
    g = tracehlo.make_ir(tracehlo.grad(_sum_sin_times))(np.ones(3, np.float32))
    line = _sum_sin_times.__code__.co_firstlineno + 1
    assert {str(e.loc) for e in g.eqns} == {f"{__file__}:{line}"}


def test_jacobians_are_one_batched_pass():
    """jacfwd and jacrev vmap over the standard basis: their graphs do not grow with the
    number of basis vectors."""
    f = lambda x: tnp.sin(x) * tnp.sum(x ** 2)  # noqa: E731
    for jac in (tracehlo.jacfwd, tracehlo.jacrev):
        sizes = [len(str(tracehlo.make_ir(jac(f))(np.ones(n, np.float32))).splitlines())
                 for n in (2, 8)]
        assert sizes[0] == sizes[1], (jac.__name__, sizes)


def test_indexing_gradients_follow_what_the_forward_pass_did():
    """gather clamps out-of-bounds starts; in mode 'clip' its VJP adds the cotangent at
    the clamped position (jnp.take, x.at[i].get); of repeated 'set' indices only the
    winning update gets the cotangent, as in JAX."""
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    i = np.array([1, 7, 7, 2, -9])
    take = lambda np_: lambda x: np_.sum(np_.take(x, i, axis=0, mode="clip") * 2)  # noqa: E731
    np.testing.assert_allclose(tracehlo.grad(take(tnp))(x), jax.grad(take(jnp))(x))
    get = lambda np_: lambda x: np_.sum(np_.asarray(x).at[i].get(mode="clip") ** 2)  # noqa: E731
    np.testing.assert_allclose(tracehlo.grad(get(tnp))(x), jax.grad(get(jnp))(x))
    u = np.array([1., 2., 3.], np.float32)
    j = np.array([1, 1, 2])
    put = lambda np_: lambda x, u: np_.sum(x.at[j].set(u) * np_.arange(4.))  # noqa: E731
    x = np.ones(4, np.float32)
    for ours in (tracehlo.grad(put(tnp), (0, 1)), tracehlo.jit(tracehlo.grad(put(tnp), (0, 1)))):
        _assert_trees_close(ours(tnp.asarray(x), u), jax.grad(put(jnp), (0, 1))(x, u))


def _unique_multiplies(x, i, u):
    """x.at[i].multiply(u) one index at a time: JAX differentiates a multiply with
    respect to its updates only with unique_indices=True."""
    for k in range(len(i)):
        x = x.at[i[k]].multiply(u[k], unique_indices=True)
    return x


@pytest.mark.parametrize("i", [np.array([3, 0, 2]), np.array([1, 1, 2, 1, 9])],
                         ids=["unique", "repeated_and_dropped"])
def test_scatter_gradients_equal_jax(i):
    """.at[i].add/multiply/min/max/set against jax.grad, one jitted gradient for all:
    an update the scatter drops (index 9) gets no cotangent; tied min/max values share
    it equally, as in JAX; zero factors of a repeated multiply are exact."""
    x = np.array([[1., -2.], [0.5, 3.], [-1., 2.], [2., 0.25]], np.float32)
    u = np.array([[2., -3.], [0.5, 0.], [2., 2.], [-1., 3.], [0., 4.]], np.float32)[:len(i)]
    weights = np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2)
    methods = ["add", "multiply", "min", "max", "set"]

    def losses(np_, update):
        return [lambda x, u, m=m: np_.sum(update(x, m, u) ** 2 * weights) for m in methods]
    ours = tracehlo.jit(lambda x, u: [tracehlo.grad(f, (0, 1))(x, u) for f in losses(
        tnp, lambda x, m, u: getattr(x.at[i], m)(u))])(x, u)
    theirs = [jax.grad(f, (0, 1))(x, u) for f in losses(
        jnp, lambda x, m, u: _unique_multiplies(x, i, u) if m == "multiply"
        else getattr(x.at[i], m)(u))]
    for m, got, want in zip(methods, ours, theirs):
        _assert_trees_close(got, want, rtol=1e-5)


def test_eager_backward_pass_skips_operands_off_the_tape(monkeypatch):
    """grad with respect to w of x @ w runs one matmul backwards (for w), not one for the
    data x too."""
    bound = []
    original = tracehlo.Primitive.bind
    monkeypatch.setattr(tracehlo.Primitive, "bind",
                        lambda self, *xs, **ps: bound.append(self.name) or original(self, *xs, **ps))
    x = np.ones((4, 3), np.float32)
    g = tracehlo.grad(lambda w: tnp.sum(tnp.tanh(x @ w) * 2.0))(np.ones((3, 2), np.float32))
    np.testing.assert_allclose(g, jax.grad(lambda w: jnp.sum(jnp.tanh(x @ w) * 2.0))(
        np.ones((3, 2), np.float32)), rtol=1e-5)
    assert bound.count("dot_general") == 2, bound
