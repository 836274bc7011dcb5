"""tracehlo.nn: the activation and normalization functions of JAX's nn module.

Arithmetic is spelled tnp.add/multiply/..., never `+ * -`: eagerly the operands are
jax.Arrays, whose operators would run JAX's own ops instead of ours."""
import numpy as _np

from . import lax as _lax
from . import numpy as _tnp
from .numpy._util import _promote

__all__ = ["gelu", "log_softmax", "logsumexp", "one_hot", "relu", "sigmoid", "silu", "softmax",
           "softplus", "swish"]


def relu(x):
    """max(x, 0) with JAX's derivative: 1 where x > 0, else 0, also at the kink x = 0
    (where max's own is 1/2): a select of x, and of the max with its gradient stopped
    (JAX's is a custom_jvp of the same derivative)."""
    return _tnp.where(_tnp.greater(x, 0), x, _lax.stop_gradient(_tnp.maximum(x, 0)))


def sigmoid(x):
    (x,) = _promote(x, to_inexact=True)
    return _lax.logistic(x)


def logsumexp(x, axis=None, keepdims=False):
    """Stable log(sum(exp(x))): shift by the max, which is stopped at inf."""
    (x,) = _promote(x, to_inexact=True)
    m = _tnp.max(x, axis=axis, keepdims=True)
    m = _tnp.where(_tnp.isfinite(m), m, _tnp.zeros_like(m))
    s = _tnp.sum(_tnp.exp(_tnp.subtract(x, m)), axis=axis, keepdims=True)
    out = _tnp.add(_tnp.log(s), m)
    return out if keepdims else _tnp.squeeze(out, axis=axis) if axis is not None else \
        _tnp.reshape(out, ())


def log_softmax(x, axis=-1):
    (x,) = _promote(x, to_inexact=True)
    shifted = _tnp.subtract(x, _tnp.max(x, axis=axis, keepdims=True))
    return _tnp.subtract(shifted, _tnp.log(_tnp.sum(_tnp.exp(shifted), axis=axis, keepdims=True)))


def softmax(x, axis=-1):
    (x,) = _promote(x, to_inexact=True)
    unnormalized = _tnp.exp(_tnp.subtract(x, _tnp.max(x, axis=axis, keepdims=True)))
    return _tnp.divide(unnormalized, _tnp.sum(unnormalized, axis=axis, keepdims=True))


def gelu(x, approximate=True):
    """GELU; the tanh approximation by default, as in JAX."""
    (x,) = _promote(x, to_inexact=True)
    if approximate:
        cubic = _tnp.multiply(0.044715, _tnp.multiply(x, _tnp.multiply(x, x)))
        inner = _tnp.multiply(float(_np.sqrt(2 / _np.pi)), _tnp.add(x, cubic))
        return _tnp.multiply(_tnp.multiply(0.5, x), _tnp.add(1, _tnp.tanh(inner)))
    erf = _lax.erf(_tnp.multiply(x, float(1 / _np.sqrt(2))))
    return _tnp.multiply(_tnp.multiply(0.5, x), _tnp.add(1, erf))


def silu(x):
    return _tnp.multiply(x, sigmoid(x))


swish = silu


def softplus(x):
    (x,) = _promote(x, to_inexact=True)
    return _tnp.logaddexp(x, 0)


def one_hot(x, num_classes, dtype=None):
    x = _tnp.asarray(x) if not hasattr(x, "dtype") else x
    classes = _lax.broadcasted_iota(x.dtype, tuple(x.shape) + (num_classes,), x.ndim)
    return _tnp.astype(_tnp.equal(_tnp.expand_dims(x, -1), classes),
                      dtype or _tnp.float32)
