"""tracehlo.numpy.linalg: norms, and the functions of the factorizations (Cholesky, LU)
with JAX's derivatives: custom rules where JAX has them, so that gradients are JAX's
formulas, not the derivative of the factorization."""
import functools as _functools
import math as _math
import operator as _operator
from typing import NamedTuple as _NamedTuple

import numpy as _np

from .. import lax_linalg as _lax_linalg
from ..core import at_user_line as _at_user_line
from ..custom_derivatives import custom_jvp as _custom_jvp
from ..primitives.linalg import cholesky_p as _cholesky_p
from .. import numpy as _tnp
from ._numeric import _arraylike
from ._ufuncs import _abs_square
from ._util import _inexact as _inexact_dtype, _promote, _promote_no_broadcast

__all__ = ["cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
           "eigvalsh", "inv",
           "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose",
           "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
           "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot", "vector_norm"]


def norm(x, ord=None, axis=None, keepdims=False):
    x = _tnp.asarray(x) if not hasattr(x, "shape") else x
    (x,) = _promote(x, to_inexact=True)
    if axis is None:
        if ord is None or (ord in ("fro", "f") and _tnp.ndim(x) == 2) or (
                ord == 2 and _tnp.ndim(x) == 1):
            out = _tnp.sqrt(_tnp.sum(_abs_square(x)))
            return _tnp.reshape(out, (1,) * _tnp.ndim(x)) if keepdims else out
        axis = tuple(range(_tnp.ndim(x)))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(axes) == 1:
        a = _tnp.abs(x)
        if ord is None or ord == 2:
            return _tnp.sqrt(_tnp.sum(_abs_square(x), axis=axes, keepdims=keepdims))
        if ord == _np.inf:
            return _tnp.max(a, axis=axes, keepdims=keepdims)
        if ord == -_np.inf:
            return _tnp.min(a, axis=axes, keepdims=keepdims)
        if ord == 0:
            return _tnp.sum(_tnp.astype(_tnp.not_equal(x, 0), x.dtype), axis=axes,
                           keepdims=keepdims)
        if ord == 1:
            return _tnp.sum(a, axis=axes, keepdims=keepdims)
        if isinstance(ord, (int, float)):
            return _tnp.power(_tnp.sum(_tnp.power(a, ord), axis=axes, keepdims=keepdims),
                             1.0 / ord)
    elif len(axes) == 2:
        r, c = (a % _tnp.ndim(x) for a in axes)
        if ord in (None, "fro", "f"):
            return _tnp.sqrt(_tnp.sum(_abs_square(x), axis=axes, keepdims=keepdims))
        if ord in (1, -1):
            col = _tnp.sum(_tnp.abs(x), axis=r, keepdims=True)
            red = _tnp.max if ord == 1 else _tnp.min
            out = red(col, axis=c, keepdims=True)
            return out if keepdims else _tnp.squeeze(out, axis=(r, c))
        if ord in (_np.inf, -_np.inf):
            row = _tnp.sum(_tnp.abs(x), axis=c, keepdims=True)
            red = _tnp.max if ord == _np.inf else _tnp.min
            out = red(row, axis=r, keepdims=True)
            return out if keepdims else _tnp.squeeze(out, axis=(r, c))
        if ord in ("nuc", 2, -2):
            s = svd(_tnp.moveaxis(x, axes, (-2, -1)), compute_uv=False)
            y = (_tnp.max(s, axis=-1, initial=0) if ord == 2 else
                 _tnp.min(s, axis=-1) if ord == -2 else _tnp.sum(s, axis=-1))
            return _tnp.expand_dims(y, axes) if keepdims else y
    if len(axes) == 1:  # a string ord: vector_norm says why not
        return vector_norm(x, ord=ord, axis=axes, keepdims=keepdims)
    if len(axes) == 2:
        raise ValueError(_at_user_line(f"Invalid order '{ord}' for matrix norm."))
    raise ValueError(_at_user_line(
        f"Improper number of axes for norm: axis={tuple(a % _tnp.ndim(x) for a in axes)}. "
        "Pass one axis to compute a vector-norm, or two axes to compute a matrix-norm."))


def cholesky(a, *, upper=False, symmetrize_input=True):
    """L with a = L Lᴴ (or its conjugate transpose with upper=True); NaNs where a is not
    positive definite. As in JAX, a is first symmetrized, (a + aᴴ) / 2, so the factor
    is that of the nearest Hermitian matrix whichever triangle holds noise."""
    (a,) = _promote(_tnp.asarray(a), to_inexact=True)
    if _tnp.ndim(a) < 2 or _tnp.shape(a)[-1] != _tnp.shape(a)[-2]:
        raise ValueError(_at_user_line(
            f"cholesky needs square matrices (..., n, n), got shape {_tnp.shape(a)}"))
    if symmetrize_input:
        a = _tnp.divide(_tnp.add(a, _tnp.conj(_tnp.swapaxes(a, -1, -2))), 2)
    factor = _tnp.tril(_cholesky_p.bind(a))
    return _tnp.conj(_tnp.swapaxes(factor, -1, -2)) if upper else factor


# ---------------------------------------------------------------- LU: solve, inv, det

def _inexact(*arrays):
    """JAX's promote_dtypes_inexact: one inexact dtype, shapes kept."""
    arrays = _promote_no_broadcast([_tnp.asarray(a) for a in arrays])
    return [a if _np.issubdtype(a.dtype, _np.inexact) else
            _tnp.astype(a, _inexact_dtype(a.dtype)) for a in arrays]


def _square(a, message):
    if _tnp.ndim(a) < 2 or _tnp.shape(a)[-1] != _tnp.shape(a)[-2]:
        raise ValueError(_at_user_line(message.format(_tnp.shape(a))))


def _lu_solve(factors, permutation, b):
    """x with a x = b from a's LU factors: b's rows permuted, then two triangular
    solves (JAX's lu_solve with trans=0)."""
    x = _tnp.take_along_axis(b, permutation[..., None], axis=-2)
    x = _lax_linalg.triangular_solve(factors, x, left_side=True, lower=True,
                                     unit_diagonal=True)
    return _lax_linalg.triangular_solve(factors, x, left_side=True, lower=False)


@_custom_jvp
def _solve(a, b):
    factors, _, permutation = _lax_linalg.lu(a)
    return _lu_solve(factors, permutation, b)


@_solve.defjvp
def _solve_jvp(primals, tangents):
    """ẋ = a⁻¹ (ḃ - ȧ x), with a's factors computed once (JAX's custom_linear_solve):
    reverse mode then transposes two triangular solves, not the factorization."""
    (a, b), (ta, tb) = primals, tangents
    factors, _, permutation = _lax_linalg.lu(a)
    x = _lu_solve(factors, permutation, b)
    return x, _lu_solve(factors, permutation, tb - _tnp.matmul(ta, x))


def solve(a, b):
    a, b = _inexact(a, b)
    if _tnp.ndim(a) < 2:
        raise ValueError(_at_user_line(
            f"left hand array must be at least two dimensional; got a.shape={_tnp.shape(a)}"))
    sa, sb = _tnp.shape(a), _tnp.shape(b)
    if len(sb) > 1 and len(sa) == len(sb) + 1 and sa[-1] == sb[-1] and sa[-1] != sb[-2]:
        raise ValueError(_at_user_line(
            f"Invalid shapes for solve: {sa}, {sb}. Prior to JAX v0.5.0, this would have been "
            "treated as a batched 1-dimensional solve. To recover this behavior, use "
            "solve(a, b[..., None]).squeeze(-1)."))
    vector = len(sb) == 1
    signature = "(m,m),(m)->(m)" if vector else "(m,m),(m,n)->(m,n)"
    m = sa[-2]
    for size in (sa[-1], sb[-1] if vector else sb[-2]):
        if size != m:  # as jnp.vectorize reports it
            raise ValueError(_at_user_line(
                f"inconsistent size for core dimension 'm': {size} vs {m} on vectorized "
                f"function with excluded=frozenset() and signature={signature!r}"))
    core_b = sb[-1:] if vector else sb[-2:]
    batch_b = sb[:len(sb) - len(core_b)]
    try:
        batch = _np.broadcast_shapes(sa[:-2], batch_b)
    except ValueError:
        raise ValueError(_at_user_line(
            f"Incompatible shapes for broadcasting: shapes=[{sa[:-2]}, {batch_b}]")) from None
    a = _tnp.broadcast_to(a, batch + sa[-2:])
    b = _tnp.broadcast_to(b, batch + core_b)
    x = _solve(a, b[..., None] if vector else b)
    return x[..., 0] if vector else x


def inv(a):
    a = _tnp.asarray(a)
    _square(a, "Argument to inv must have shape [..., n, n], got {}.")
    n = _tnp.shape(a)[-1]
    return solve(a, _tnp.broadcast_to(_tnp.eye(n, dtype=a.dtype), _tnp.shape(a)))


# JAX's result type, by name (jnp.linalg does not export it either)
_SlogdetResult = _NamedTuple("SlogdetResult", [("sign", object), ("logabsdet", object)])


def _complex(a):
    return _np.issubdtype(a.dtype, _np.complexfloating)


def _log_abs(det):
    return _tnp.real(_tnp.log(_tnp.abs(det)))


@_custom_jvp
def _slogdet_small(a):
    """n = 1 or 2: the determinant's formula, no factorization (JAX's)."""
    det = a[..., 0, 0] if _tnp.shape(a)[-1] == 1 else _det_2x2(a)
    return _tnp.sign(det), _log_abs(det)


@_slogdet_small.defjvp
def _slogdet_small_jvp(primals, tangents):
    (x,), (g,) = primals, tangents
    sign, ans = _slogdet_small(x)
    if _tnp.shape(x)[-1] == 1:
        ans_dot = g[..., 0, 0] / x[..., 0, 0]
    else:
        x00, x01, x10, x11 = x[..., 0, 0], x[..., 0, 1], x[..., 1, 0], x[..., 1, 1]
        ans_dot = (g[..., 0, 0] * x11 - g[..., 0, 1] * x10 - g[..., 1, 0] * x01
                   + g[..., 1, 1] * x00) / _det_2x2(x)
    return (sign, ans), _sign_and_log_tangents(x, sign, ans_dot)


def _sign_and_log_tangents(x, sign, ans_dot):
    """A real determinant's sign is piecewise constant; a complex one turns with the
    imaginary part of d log det."""
    if _complex(x):
        return (ans_dot - _tnp.astype(_tnp.real(ans_dot), ans_dot.dtype)) * sign, \
            _tnp.real(ans_dot)
    return _tnp.zeros_like(sign), ans_dot


def _parity(pivots):
    """How many rows the pivots swapped (each swap flips the determinant's sign)."""
    n = _tnp.shape(pivots)[-1]
    return _tnp.sum(pivots != _tnp.arange(n, dtype=pivots.dtype), axis=-1)


@_custom_jvp
def _slogdet_lu(a):
    factors, pivots, _ = _lax_linalg.lu(a)
    diag = _tnp.diagonal(factors, axis1=-2, axis2=-1)
    is_zero = _tnp.any(diag == 0, axis=-1)
    parity = _parity(pivots)
    if _complex(a):
        sign = _tnp.prod(diag / _tnp.astype(_tnp.abs(diag), diag.dtype), axis=-1)
    else:
        sign = _tnp.array(1, dtype=a.dtype)
        parity = parity + _tnp.sum(diag < 0, axis=-1)
    sign = _tnp.where(is_zero, _tnp.array(0, dtype=a.dtype),
                      sign * _tnp.astype(-2 * (parity % 2) + 1, a.dtype))
    logdet = _tnp.where(is_zero, _tnp.array(-_np.inf, dtype=a.dtype),
                        _tnp.sum(_tnp.astype(_tnp.log(_tnp.abs(diag)), a.dtype), axis=-1))
    return sign, _tnp.real(logdet)


@_slogdet_lu.defjvp
def _slogdet_jvp(primals, tangents):
    """d log|det a| = trace(a⁻¹ ȧ) (JAX's rule: sign(det) jumps at 0, so it is not
    the derivative of the LU's formula)."""
    (x,), (g,) = primals, tangents
    sign, ans = _slogdet_lu(x)
    ans_dot = _tnp.trace(solve(x, g), axis1=-1, axis2=-2)
    return (sign, ans), _sign_and_log_tangents(x, sign, ans_dot)


def slogdet(a, *, method=None):
    (a,) = _inexact(a)
    _square(a, "Argument to slogdet() must have shape [..., n, n], got {}")
    if method not in (None, "lu", "qr"):
        raise ValueError(_at_user_line(
            f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`), and "
            "'qr'."))
    if method == "qr":
        raise NotImplementedError(_at_user_line(
            "slogdet method='qr' is not supported yet: use method='lu' (the default)"))
    small = _tnp.shape(a)[-1] in (1, 2)
    return _SlogdetResult(*(_slogdet_small if small else _slogdet_lu)(a))


def _det_2x2(a):
    return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]


def _det_3x3(a):
    return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2] +
            a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0] +
            a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1] -
            a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0] -
            a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1] -
            a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])


def _cofactor_solve(a, b):
    """(det a, adj(a) b), finite for singular a (JAX's): from the LU, the last pivot of
    U replaced by 1 / (the product of the others) so that a rank n-1 matrix solves, and
    zeros where the solve still overflows (rank below n-1, whose adjugate is 0)."""
    n = _tnp.shape(a)[-1]
    if n == 1:
        return a[..., 0, 0], b
    factors, pivots, permutation = _lax_linalg.lu(a)
    diag = _tnp.diagonal(factors, axis1=-2, axis2=-1)
    sign = _tnp.astype(-2 * (_parity(pivots) % 2) + 1, a.dtype)
    partial_det = _tnp.cumprod(diag, axis=-1) * sign[..., None]
    corner = (_tnp.arange(n) == n - 1)[:, None] & (_tnp.arange(n) == n - 1)
    factors = _tnp.where(corner, (1.0 / partial_det[..., -2])[..., None, None], factors)
    solved = _lax_linalg.triangular_solve(factors, _tnp.ones(_tnp.shape(b)[:-1], b.dtype),
                                          left_side=True, lower=False)
    d = _tnp.any(_tnp.isnan(solved) | _tnp.isinf(solved), axis=-1)[..., None, None]
    x = _tnp.where(d, 0, b)
    x = _tnp.take_along_axis(x, permutation[..., None], axis=-2)
    x = _lax_linalg.triangular_solve(factors, x, left_side=True, lower=True,
                                     unit_diagonal=True)
    x = _tnp.concatenate((x[..., :-1, :] * partial_det[..., -1, None, None], x[..., -1:, :]),
                         axis=-2)
    x = _lax_linalg.triangular_solve(factors, x, left_side=True, lower=False)
    return partial_det[..., -1], _tnp.where(d, 0, x)


@_custom_jvp
def _det(a):
    sign, logdet = slogdet(a)
    return sign * _tnp.astype(_tnp.exp(logdet), sign.dtype)


@_det.defjvp
def _det_jvp(primals, tangents):
    """d det a = trace(adj(a) ȧ), defined at singular a too (JAX's rule)."""
    (x,), (g,) = primals, tangents
    y, z = _cofactor_solve(x, g)
    return y, _tnp.trace(z, axis1=-1, axis2=-2)


def det(a):
    (a,) = _inexact(a)
    _square(a, "Argument to _det() must have shape [..., n, n], got {}")
    n = _tnp.shape(a)[-1]
    return _det_2x2(a) if n == 2 else _det_3x3(a) if n == 3 else _det(a)


# ---------------------------------------------------------------- QR

_QRResult = _NamedTuple("QRResult", [("Q", object), ("R", object)])


def qr(a, mode="reduced"):
    """Q and R of a = Q R (mode 'reduced' or 'complete'), or R alone (mode 'r'), as
    JAX's: the derivative is qr's own rule, every shape."""
    (a,) = _inexact(a)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(_at_user_line(f"Unsupported QR decomposition mode '{mode}'"))
    q, r = _lax_linalg.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else _QRResult(q, r)


# ---------------------------------------------------------------- eigh

_EighResult = _NamedTuple("EighResult", [("eigenvalues", object), ("eigenvectors", object)])


def eigh(a, UPLO=None, symmetrize_input=True):
    if UPLO not in (None, "L", "U"):
        raise ValueError(_at_user_line(f"UPLO must be one of None, 'L', or 'U', got {UPLO}"))
    (a,) = _inexact(a)
    v, w = _lax_linalg.eigh(a, lower=UPLO != "U", symmetrize_input=symmetrize_input)
    return _EighResult(w, v)


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


# ---------------------------------------------------------------- eig

_EigResult = _NamedTuple("EigResult", [("eigenvalues", object), ("eigenvectors", object)])


def eig(a):
    (a,) = _inexact(*_arraylike("eig", a))
    w, v = _lax_linalg.eig(a, compute_left_eigenvectors=False)
    return _EigResult(w, v)


def eigvals(a):
    (a,) = _inexact(*_arraylike("eigvals", a))
    return _lax_linalg.eig(a, compute_left_eigenvectors=False,
                           compute_right_eigenvectors=False)[0]


# ---------------------------------------------------------------- built on the above

def matrix_power(a, n):
    """a to the integer power n by repeated squaring (JAX's order of products); a
    negative n inverts first."""
    a = _tnp.asarray(a)
    if _tnp.ndim(a) < 2:
        raise TypeError(_at_user_line(f"{_tnp.ndim(a)}-dimensional array given. Array must "
                                      "be at least two-dimensional"))
    if _tnp.shape(a)[-2] != _tnp.shape(a)[-1]:
        raise TypeError(_at_user_line("Last 2 dimensions of the array must be square"))
    try:
        n = _operator.index(n)
    except TypeError:
        raise TypeError(_at_user_line(f"exponent must be an integer, got {n}")) from None
    if n == 0:
        return _tnp.broadcast_to(_tnp.eye(_tnp.shape(a)[-2], dtype=a.dtype), _tnp.shape(a))
    if n < 0:
        a, n = inv(a), -n
    if n <= 3:
        return a if n == 1 else a @ a if n == 2 else (a @ a) @ a
    z = result = None
    while n > 0:
        z = a if z is None else z @ z
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else result @ z
    return result


def multi_dot(arrays, *, precision=None):
    """One einsum over the chain, whose contraction order einsum picks (as JAX's)."""
    arrays = [_tnp.asarray(a) for a in arrays]
    shapes = [_tnp.shape(a) for a in arrays]
    if len(arrays) < 2:
        raise ValueError(_at_user_line(
            f"multi_dot requires at least two arrays; got len(arrays)={len(arrays)}"))
    if not (len(shapes[0]) in (1, 2) and len(shapes[-1]) in (1, 2)
            and all(len(s) == 2 for s in shapes[1:-1])):
        raise ValueError(_at_user_line(
            "multi_dot: input arrays must all be two-dimensional, except for the first and "
            f"last array which may be 1 or 2 dimensional. Got array shapes {shapes}"))
    if any(a[-1] != b[0] for a, b in zip(shapes[:-1], shapes[1:])):
        raise ValueError(_at_user_line(
            "multi_dot: last dimension of each array must match first dimension of "
            f"following array. Got array shapes {shapes}"))
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    specs = [letters[i:i + 2] for i in range(len(arrays))]
    if len(shapes[0]) == 1:
        specs[0] = specs[0][1:]
    if len(shapes[-1]) == 1:
        specs[-1] = specs[-1][:1]
    out = "".join(sorted(set("".join(specs)), key=letters.index))
    out = "".join(c for c in out if "".join(specs).count(c) == 1)
    return _tnp.einsum(",".join(specs) + "->" + out, *arrays, optimize="auto",
                       precision=precision)


def tensorinv(a, ind=2):
    a = _tnp.asarray(a)
    ind = _operator.index(ind)
    if ind <= 0:
        raise ValueError(_at_user_line(f"ind must be a positive integer; got ind={ind}"))
    contracting, batch = _tnp.shape(a)[:ind], _tnp.shape(a)[ind:]
    rows, cols = _math.prod(contracting), _math.prod(batch)
    if rows != cols:
        raise ValueError(_at_user_line(
            "tensorinv is only possible when the product of the first `ind` dimensions "
            f"equals that of the remaining dimensions. got arr.shape={_tnp.shape(a)} with "
            f"ind={ind}."))
    return _tnp.reshape(inv(_tnp.reshape(a, (rows, cols))), (*batch, *contracting))


def tensorsolve(a, b, axes=None):
    a, b = _tnp.asarray(a), _tnp.asarray(b)
    if axes is not None:
        a = _tnp.moveaxis(a, axes, len(axes) * (_tnp.ndim(a) - 1,))
    sa, sb = _tnp.shape(a), _tnp.shape(b)
    out_shape = sa[len(sb):]
    if sa[:len(sb)] != sb:
        raise ValueError(_at_user_line(
            "After moving axes to end, leading shape of a must match shape of b. got "
            f"a.shape={sa}, b.shape={sb}"))
    if _math.prod(sb) != _math.prod(out_shape):
        raise ValueError(_at_user_line(
            "Input arrays must have prod(a.shape[:b.ndim]) == prod(a.shape[b.ndim:]); got "
            f"a.shape={sa}, b.ndim={len(sb)}."))
    flat = _tnp.reshape(a, (_math.prod(sb), _math.prod(out_shape)))
    return _tnp.reshape(solve(flat, _tnp.ravel(b)), out_shape)


# The array API's names in linalg, over the last axes (as JAX's).

def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    return _tnp.matmul(x1, x2)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    return _tnp.tensordot(x1, x2, axes)


def outer(x1, x2, /):
    x1, x2 = _tnp.asarray(x1), _tnp.asarray(x2)
    if _tnp.ndim(x1) != 1 or _tnp.ndim(x2) != 1:
        raise ValueError(_at_user_line(
            "Input arrays must be one-dimensional, but they are "
            f"x1.ndim={_tnp.ndim(x1)} x2.ndim={_tnp.ndim(x2)}"))
    return x1[:, None] * x2[None, :]


def trace(x, /, *, offset=0, dtype=None):
    return _tnp.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def diagonal(x, /, *, offset=0):
    return _tnp.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def matrix_transpose(x, /):
    x = _tnp.asarray(x)
    if _tnp.ndim(x) < 2:
        raise ValueError(_at_user_line(
            f"matrix_transpose requires at least 2 dimensions; got ndim={_tnp.ndim(x)}"))
    return _tnp.swapaxes(x, -1, -2)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """tracehlo.numpy.vecdot, as JAX's."""
    return _tnp.vecdot(x1, x2, axis=axis, precision=precision,
                       preferred_element_type=preferred_element_type)


def cross(x1, x2, /, *, axis=-1):
    x1, x2 = _promote_no_broadcast([_tnp.asarray(x1), _tnp.asarray(x2)])
    if _tnp.shape(x1)[axis] != 3 or _tnp.shape(x2)[axis] != 3:
        raise ValueError(_at_user_line(
            "Both input arrays must be (arrays of) 3-dimensional vectors, but they have "
            f"x1.shape[axis]={_tnp.shape(x1)[axis]} and x2.shape[axis]={_tnp.shape(x2)[axis]}"))
    a, b = (_tnp.moveaxis(x, axis, -1) for x in (x1, x2))
    parts = [a[..., i] * b[..., j] - a[..., j] * b[..., i] for i, j in ((1, 2), (2, 0), (0, 1))]
    return _tnp.moveaxis(_tnp.stack(parts, -1), -1, axis)


# ---------------------------------------------------------------- SVD

_SVDResult = _NamedTuple("SVDResult", [("U", object), ("S", object), ("Vh", object)])


def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    (a,) = _inexact(a)
    if subset_by_index is not None:
        raise NotImplementedError(_at_user_line("svd with subset_by_index is not supported"))
    if hermitian:
        return _hermitian_svd(a, compute_uv)
    out = _lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return _SVDResult(*out) if compute_uv else out


def _hermitian_svd(a, compute_uv):
    """JAX's: from eigh, singular values |w| sorted descending, U the eigenvectors in
    that order, Vh = (U sign(w))ᴴ."""
    from .. import lax
    v, w = _lax_linalg.eigh(a)
    s = _tnp.abs(w)
    last = _tnp.ndim(s) - 1
    if not compute_uv:
        return lax.rev(lax.sort(s, dimension=-1), (last,))
    idxs = lax.broadcasted_iota(_np.uint32, _tnp.shape(s), last)
    s, idxs, sign = (lax.rev(x, (last,)) for x in
                     lax.sort((s, idxs, _tnp.sign(w)), dimension=-1, num_keys=1))
    u = _tnp.take_along_axis(v, idxs[..., None, :], axis=-1)
    return _SVDResult(u, s, _adjoint(u * sign[..., None, :].astype(u.dtype)))


def _adjoint(x):
    return _tnp.conj(_tnp.matrix_transpose(x))


def svdvals(x, /):
    return svd(x, compute_uv=False)


def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):
    """How many singular values exceed rtol times the largest (by default that times
    max(m, n) times the dtype's epsilon), as JAX's."""
    if tol is not None:
        rtol = tol
    (M,) = _inexact(M)
    if _tnp.ndim(M) < 2:
        return _tnp.any(M != 0).astype(_np.int32)
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rtol = (_tnp.max(s, axis=-1) * _np.asarray(max(_tnp.shape(M)[-2:]), s.dtype)
                * _tnp.finfo(s.dtype).eps)
    rtol = _tnp.expand_dims(rtol, _tnp.ndim(rtol))
    return _tnp.sum(s > rtol, axis=-1)


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    if rcond is not None:
        if rtol is not None:
            raise ValueError(_at_user_line("pinv: only one of rtol and rcond may be specified."))
        rtol = rcond
    return _pinv(a, rtol, hermitian)


@_functools.partial(_custom_jvp, nondiff_argnums=(1, 2))
def _pinv(a, rtol=None, hermitian=False):
    """NumPy's algorithm, as JAX's: Vh conj(S⁺ Uᴴ) of conj(a), singular values at or
    below rtol times the largest (default 10 max(m, n) eps) taken as zero."""
    (arr,) = _inexact(a)
    *batch, m, n = _tnp.shape(arr)
    if m == 0 or n == 0:
        return _tnp.empty((*batch, n, m), arr.dtype)
    arr = _tnp.conj(arr)
    if rtol is None:
        rtol = 10. * max(m, n) * _tnp.array(_tnp.finfo(arr.dtype).eps)
    rtol = _tnp.asarray(rtol)
    u, s, vh = svd(arr, full_matrices=False, hermitian=hermitian)
    rtol = _tnp.expand_dims(rtol[..., None], tuple(range(_tnp.ndim(s) - _tnp.ndim(rtol) - 1)))
    s = _tnp.where(s > rtol * s[..., 0:1], s, _np.inf).astype(u.dtype)
    res = _tnp.matmul(_tnp.matrix_transpose(vh),
                      _tnp.divide(_tnp.matrix_transpose(u), s[..., None]))
    return res.astype(arr.dtype)


@_pinv.defjvp
def _pinv_jvp(rtol, hermitian, primals, tangents):
    """Golub and Pereyra (1973), as JAX's rule, in its order of products."""
    (a,), (a_dot,) = primals, tangents
    p = pinv(a, rtol=rtol, hermitian=hermitian)
    if hermitian:  # the hermitian svd symmetrizes its input: so does its derivative
        a, a_dot = (a + _adjoint(a)) / 2, (a_dot + _adjoint(a_dot)) / 2
    m, n = _tnp.shape(a)[-2:]
    if m >= n:
        s = (p @ _adjoint(p)) @ _adjoint(a_dot)
        t = (_adjoint(a_dot) @ _adjoint(p)) @ p
        return p, -(p @ a_dot) @ p + s - (s @ a) @ p + t - (p @ a) @ t
    s = p @ (_adjoint(p) @ _adjoint(a_dot))
    t = _adjoint(a_dot) @ (_adjoint(p) @ p)
    return p, -p @ (a_dot @ p) + s - s @ (a @ p) + t - p @ (a @ t)


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """(x, residuals, rank, singular values) of min |a x - b| from a's SVD, as JAX's: the
    residuals always (numpy_resid=True: empty where NumPy leaves them so, which needs a
    concrete rank)."""
    a, b = _inexact(*_arraylike("lstsq", a, b))
    if _tnp.shape(a)[0] != _tnp.shape(b)[0]:
        raise ValueError(_at_user_line("Leading dimensions of input arrays must match"))
    vector = _tnp.ndim(b) == 1
    if vector:
        b = b[:, None]
    if _tnp.ndim(a) != 2:
        raise TypeError(_at_user_line(
            f"{_tnp.ndim(a)}-dimensional array given. Array must be two-dimensional"))
    if _tnp.ndim(b) != 2:
        raise TypeError(_at_user_line(
            f"{_tnp.ndim(b)}-dimensional array given. Array must be one or two-dimensional"))
    m, n = _tnp.shape(a)
    dtype = a.dtype
    if m * n == 0:
        s = _tnp.empty(0, dtype=dtype)
        rank = _tnp.array(0, dtype=int)
        x = _tnp.zeros((n, *_tnp.shape(b)[1:]), dtype=dtype)
    else:
        eps = _tnp.finfo(dtype).eps
        rcond = float(eps) * max(n, m) if rcond is None else _tnp.where(rcond < 0, eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        mask = (s > 0) & (s >= _tnp.array(rcond, dtype=s.dtype) * s[0])
        rank = mask.sum()
        safe_s = _tnp.where(mask, s, 1).astype(dtype)
        s_inv = _tnp.where(mask, 1 / safe_s, 0)[:, None]
        x = _tnp.matmul(_adjoint(vt), s_inv * _tnp.matmul(_adjoint(u), b))
    if numpy_resid and (rank < n or m <= n):
        resid = _tnp.asarray([])
    else:
        resid = norm(b - _tnp.matmul(a, x), axis=0) ** 2
    return (_tnp.ravel(x) if vector else x), resid, rank, s


def cond(x, p=None):
    """The condition number in the norm p: by singular values for p None, 2 or -2, else
    norm(x) norm(inv(x)), with NaN (from a singular x) read as infinity, as JAX's."""
    (arr,) = _arraylike("cond", x)
    shape = _tnp.shape(arr)
    if len(shape) < 2:
        raise ValueError(_at_user_line(
            f"tracehlo.numpy.linalg.cond: input array must be at least 2D; got arr.shape={shape}"))
    if shape[-1] == 0 or shape[-2] == 0:
        raise ValueError(_at_user_line(
            f"tracehlo.numpy.linalg.cond: input array must not be empty; got arr.shape={shape}"))
    if p is None or p == 2:
        s = svdvals(x)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        if shape[-2] != shape[-1]:
            raise ValueError(_at_user_line(
                f"tracehlo.numpy.linalg.cond: for p={p!r}, array must be square; got "
                f"arr.shape={shape}"))
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    return _tnp.where(_tnp.isnan(r) & ~_tnp.isnan(x).any(axis=(-2, -1)), _np.inf, r)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    (x,) = _arraylike("matrix_norm", x)
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """JAX's: a reduction over axis (every axis if None), whatever x's rank."""
    (x,) = _arraylike("vector_norm", x)
    if ord is None or ord == 2:
        return _tnp.sqrt(_tnp.sum(_tnp.real(x * _tnp.conj(x)), axis=axis, keepdims=keepdims))
    if ord == _np.inf:
        return _tnp.max(_tnp.abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -_np.inf:
        return _tnp.min(_tnp.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return _tnp.sum(x != 0, dtype=_tnp.finfo(x.dtype).dtype, axis=axis, keepdims=keepdims)
    if ord == 1:
        return _tnp.sum(_tnp.abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        hint = {"inf": "Use 'tracehlo.numpy.inf' instead.",
                "-inf": "Use '-tracehlo.numpy.inf' instead."}.get(ord, "")
        raise ValueError(_at_user_line(f"Invalid order '{ord}' for vector norm.{hint}"))
    abs_x = _tnp.abs(x)
    ord_arr = _np.asarray(ord, abs_x.dtype)
    out = _tnp.sum(abs_x ** ord_arr, axis=axis, keepdims=keepdims)
    return _tnp.power(out, _np.asarray(1. / ord_arr, abs_x.dtype))
