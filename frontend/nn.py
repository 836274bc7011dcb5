"""tracehlo.nn: the activation and normalization functions of JAX's nn module.

Arithmetic is spelled tnp.add/multiply/..., never `+ * -`: eagerly the operands are
jax.Arrays, whose operators would run JAX's own ops instead of ours."""
from __future__ import annotations

import numpy as _np

from . import lax
from . import numpy as tnp
from .numpy._util import _promote


def relu(x):
    return tnp.maximum(x, 0)


def sigmoid(x):
    (x,) = _promote(x, to_inexact=True)
    return lax.logistic(x)


def logsumexp(x, axis=None, keepdims=False):
    """Stable log(sum(exp(x))): shift by the max, which is stopped at inf."""
    (x,) = _promote(x, to_inexact=True)
    m = tnp.max(x, axis=axis, keepdims=True)
    m = tnp.where(tnp.isfinite(m), m, tnp.zeros_like(m))
    s = tnp.sum(tnp.exp(tnp.subtract(x, m)), axis=axis, keepdims=True)
    out = tnp.add(tnp.log(s), m)
    return out if keepdims else tnp.squeeze(out, axis=axis) if axis is not None else \
        tnp.reshape(out, ())


def log_softmax(x, axis=-1):
    (x,) = _promote(x, to_inexact=True)
    shifted = tnp.subtract(x, tnp.max(x, axis=axis, keepdims=True))
    return tnp.subtract(shifted, tnp.log(tnp.sum(tnp.exp(shifted), axis=axis, keepdims=True)))


def softmax(x, axis=-1):
    (x,) = _promote(x, to_inexact=True)
    unnormalized = tnp.exp(tnp.subtract(x, tnp.max(x, axis=axis, keepdims=True)))
    return tnp.divide(unnormalized, tnp.sum(unnormalized, axis=axis, keepdims=True))


def gelu(x, approximate=True):
    """GELU; the tanh approximation by default, as in JAX."""
    (x,) = _promote(x, to_inexact=True)
    if approximate:
        cubic = tnp.multiply(0.044715, tnp.multiply(x, tnp.multiply(x, x)))
        inner = tnp.multiply(float(_np.sqrt(2 / _np.pi)), tnp.add(x, cubic))
        return tnp.multiply(tnp.multiply(0.5, x), tnp.add(1, tnp.tanh(inner)))
    erf = lax.erf(tnp.multiply(x, float(1 / _np.sqrt(2))))
    return tnp.multiply(tnp.multiply(0.5, x), tnp.add(1, erf))


def silu(x):
    return tnp.multiply(x, sigmoid(x))


swish = silu


def softplus(x):
    (x,) = _promote(x, to_inexact=True)
    return tnp.logaddexp(x, 0)


def one_hot(x, num_classes, dtype=None):
    x = tnp.asarray(x) if not hasattr(x, "dtype") else x
    classes = lax.broadcasted_iota(x.dtype, tuple(x.shape) + (num_classes,), x.ndim)
    return tnp.astype(tnp.equal(tnp.expand_dims(x, -1), classes),
                      dtype or tnp.float32)
