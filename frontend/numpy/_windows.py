"""Window functions (bartlett, blackman, hamming, hanning, kaiser) with JAX's formulas
and default float dtype, so the values round as JAX's do."""
from __future__ import annotations

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from .. import numpy as t
from ..core import at_user_line
from ._util import _static


def _iota(M, fn):
    """(n, M): n = 0..M-1 in the default float dtype; n is None for M <= 1, whose
    window is all ones."""
    M = int(_static(M, f"M argument of jnp.{fn}"))  # int(), as JAX: 2.5 is 2
    dt = _dtypes.default_float()
    return (None if M <= 1 else lax.iota(dt, M)), M


def _ones(M):
    if M < 0:  # JAX's TypeError, from its broadcast of the ones
        raise TypeError(at_user_line(f"a window's length M must be non-negative, got {M}"))
    return t.ones((M,), _dtypes.default_float())


def bartlett(M):
    n, M = _iota(M, "bartlett")
    if n is None:
        return _ones(M)
    return t.subtract(1, t.divide(t.abs(t.subtract(t.add(t.multiply(2, n), 1), M)), M - 1))


def _cos_term(n, M, k):
    return t.cos(t.divide(t.multiply(k * _np.pi, n), M - 1))


def blackman(M):
    n, M = _iota(M, "blackman")
    if n is None:
        return _ones(M)
    return t.add(t.subtract(0.42, t.multiply(0.5, _cos_term(n, M, 2))),
                 t.multiply(0.08, _cos_term(n, M, 4)))


def hamming(M):
    n, M = _iota(M, "hamming")
    if n is None:
        return _ones(M)
    return t.subtract(0.54, t.multiply(0.46, _cos_term(n, M, 2)))


def hanning(M):
    n, M = _iota(M, "hanning")
    if n is None:
        return _ones(M)
    return t.multiply(0.5, t.subtract(1, _cos_term(n, M, 2)))


def kaiser(M, beta):
    n, M = _iota(M, "kaiser")
    if n is None:
        return _ones(M)
    alpha = 0.5 * (M - 1)
    r = t.divide(t.subtract(n, alpha), alpha)
    return t.divide(t.i0(t.multiply(beta, t.sqrt(t.subtract(1, t.square(r))))), t.i0(beta))
