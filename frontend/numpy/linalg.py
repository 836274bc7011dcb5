"""tracehlo.numpy.linalg: norms and the Cholesky factorization (the other
factorizations arrive with custom calls later)."""
import numpy as _np

from ..core import at_user_line as _at_user_line
from ..primitives.linalg import cholesky_p as _cholesky_p
from .. import numpy as _tnp
from ._ufuncs import _abs_square
from ._util import _promote

__all__ = ["cholesky", "norm"]


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
    raise NotImplementedError(_at_user_line(
        f"linalg.norm with ord={ord!r} over {len(axes)} axes is not supported"))


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
