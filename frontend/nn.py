"""tracehlo.nn: the activation and normalization functions of jax.nn."""
from __future__ import annotations

import numpy as _np

from . import lax
from . import numpy as tnp


def relu(x):
    return tnp.maximum(x, 0)


def sigmoid(x):
    (x,) = tnp._promote(x, to_inexact=True)
    return lax.logistic(x)


def logsumexp(x, axis=None, keepdims=False):
    """Stable log(sum(exp(x))): shift by the max, which is stopped at inf."""
    (x,) = tnp._promote(x, to_inexact=True)
    m = tnp.max(x, axis=axis, keepdims=True)
    m = tnp.where(tnp.isfinite(m), m, tnp.zeros_like(m))
    s = tnp.sum(tnp.exp(x - m), axis=axis, keepdims=True)
    out = tnp.log(s) + m
    return out if keepdims else tnp.squeeze(out, axis=axis) if axis is not None else \
        tnp.reshape(out, ())


def log_softmax(x, axis=-1):
    (x,) = tnp._promote(x, to_inexact=True)
    shifted = x - tnp.max(x, axis=axis, keepdims=True)
    return shifted - tnp.log(tnp.sum(tnp.exp(shifted), axis=axis, keepdims=True))


def softmax(x, axis=-1):
    (x,) = tnp._promote(x, to_inexact=True)
    unnormalized = tnp.exp(x - tnp.max(x, axis=axis, keepdims=True))
    return unnormalized / tnp.sum(unnormalized, axis=axis, keepdims=True)


def gelu(x, approximate=True):
    """GELU; the tanh approximation by default, as jax.nn.gelu."""
    (x,) = tnp._promote(x, to_inexact=True)
    if approximate:
        c = _np.sqrt(2 / _np.pi)
        return 0.5 * x * (1 + tnp.tanh(c * (x + 0.044715 * (x * x * x))))
    return 0.5 * x * (1 + lax.erf(x / _np.sqrt(2)))


def silu(x):
    return x * sigmoid(x)


swish = silu


def softplus(x):
    (x,) = tnp._promote(x, to_inexact=True)
    return tnp.logaddexp(x, 0)


def one_hot(x, num_classes, dtype=None):
    x = tnp.asarray(x) if not hasattr(x, "dtype") else x
    classes = lax.broadcasted_iota(x.dtype, tuple(x.shape) + (num_classes,), x.ndim)
    return tnp.astype(tnp.equal(tnp.expand_dims(x, -1), classes),
                      dtype or tnp.float32)
