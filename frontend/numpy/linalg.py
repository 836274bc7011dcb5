"""tracehlo.numpy.linalg: norms (factorizations arrive with custom calls later)."""
from __future__ import annotations

import builtins

import numpy as _np

from ..core import at_user_line
from .. import numpy as tnp
from ._ufuncs import _abs_square
from ._util import _promote


def norm(x, ord=None, axis=None, keepdims=False):
    x = tnp.asarray(x) if not hasattr(x, "shape") else x
    (x,) = _promote(x, to_inexact=True)
    if axis is None:
        if ord is None or (ord in ("fro", "f") and tnp.ndim(x) == 2) or (
                ord == 2 and tnp.ndim(x) == 1):
            out = tnp.sqrt(tnp.sum(_abs_square(x)))
            return tnp.reshape(out, (1,) * tnp.ndim(x)) if keepdims else out
        axis = tuple(range(tnp.ndim(x)))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(axes) == 1:
        a = tnp.abs(x)
        if ord is None or ord == 2:
            return tnp.sqrt(tnp.sum(_abs_square(x), axis=axes, keepdims=keepdims))
        if ord == _np.inf:
            return tnp.max(a, axis=axes, keepdims=keepdims)
        if ord == -_np.inf:
            return tnp.min(a, axis=axes, keepdims=keepdims)
        if ord == 0:
            return tnp.sum(tnp.astype(tnp.not_equal(x, 0), x.dtype), axis=axes,
                           keepdims=keepdims)
        if ord == 1:
            return tnp.sum(a, axis=axes, keepdims=keepdims)
        if isinstance(ord, (int, float)):
            return tnp.power(tnp.sum(tnp.power(a, ord), axis=axes, keepdims=keepdims),
                             1.0 / ord)
    elif len(axes) == 2:
        r, c = (a % tnp.ndim(x) for a in axes)
        if ord in (None, "fro", "f"):
            return tnp.sqrt(tnp.sum(_abs_square(x), axis=axes, keepdims=keepdims))
        if ord in (1, -1):
            col = tnp.sum(tnp.abs(x), axis=r, keepdims=True)
            red = tnp.max if ord == 1 else tnp.min
            out = red(col, axis=c, keepdims=True)
            return out if keepdims else tnp.squeeze(out, axis=(r, c))
        if ord in (_np.inf, -_np.inf):
            row = tnp.sum(tnp.abs(x), axis=c, keepdims=True)
            red = tnp.max if ord == _np.inf else tnp.min
            out = red(row, axis=r, keepdims=True)
            return out if keepdims else tnp.squeeze(out, axis=(r, c))
    raise NotImplementedError(at_user_line(
        f"linalg.norm with ord={ord!r} over {builtins.len(axes)} axes is not supported"))
